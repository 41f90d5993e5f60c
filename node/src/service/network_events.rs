//! What the node does with events from the network: validates gossip (recording what checks,
//! telling the network task whether to forward, ignore or penalise), and answers peers' challenge
//! requests. Reconciliation and certificate requests are answered by [`super::sync`].

use std::sync::Arc;

use hco_oracle::relay::Heard;
use hco_oracle::{Reason, SealedAcceptance, SignedEnrolment, SignedRegister, codec};
use tokio::sync::{Semaphore, mpsc};

use super::{Node, gateway_error, sync};
use crate::network::protocol::{
    AcceptanceRelay, CertRpc, ChallengeRpc, MAX_GOSSIP_PAYLOAD, ReconcileReply, Rejection, Topic,
    WitnessGossip,
};
use crate::network::{NetworkEvent, Validation};

/// Peer events handled at once.
const CONCURRENT_EVENTS: usize = 256;
/// Largest gossip payload decoded: what every node publishes at most.
const MAX_GOSSIP: usize = MAX_GOSSIP_PAYLOAD;

impl Node {
    /// Handles one event from the network.
    pub async fn on_network_event(self: &Arc<Self>, event: NetworkEvent) {
        match event {
            NetworkEvent::Gossip {
                topic,
                data,
                id,
                source,
                received,
            } => {
                let result = self.validate_gossip(topic, &data).await;
                if topic == Topic::Acceptance {
                    self.metrics
                        .gossip_acceptance_handling
                        .observe(received.elapsed().as_secs_f64());
                }
                self.net.validate(id, source, topic, result).await;
            }
            NetworkEvent::Challenge { id, request } => {
                let reply = match request {
                    ChallengeRpc::Issue(req) => self.issue_local(req).await,
                    ChallengeRpc::Respond(response) => self.respond_local(*response).await,
                    ChallengeRpc::Stage(response) => self.answer_stage_local(*response).await,
                    ChallengeRpc::Status { id, t, j } => self.try_status_local(id, t, j).await,
                };
                let reply = reply.unwrap_or_else(|e| gateway_error("internal", e.to_string()));
                self.net.reply_challenge(id, reply).await;
            }
            NetworkEvent::Reconcile { id, peer, request } => {
                let reply = sync::serve(self, peer, request).await.unwrap_or_else(|e| {
                    ReconcileReply::Rejected(Rejection {
                        code: "internal".into(),
                        message: e.to_string(),
                        opens_at: None,
                    })
                });
                self.net.reply_reconcile(id, reply).await;
            }
            NetworkEvent::Cert {
                id,
                request: CertRpc { t },
            } => {
                let reply = sync::serve_cert(self, t).await;
                self.net.reply_cert(id, reply).await;
            }
            NetworkEvent::Listening(_) => {}
        }
    }

    async fn validate_gossip(&self, topic: Topic, data: &[u8]) -> Validation {
        match topic {
            Topic::Registry => return self.validate_registration(data).await,
            Topic::RegistryBatch => return self.validate_registration_batch(data).await,
            _ => {}
        }
        let now = self.now();
        let data = data.to_vec();
        let (clock, delay_metric, net) = (
            self.clock.clone(),
            self.metrics.gossip_acceptance_delay.clone(),
            self.net.clone(),
        );
        let verdict = self
            .blocking(move |o| -> Result<Validation, hco_oracle::LedgerError> {
                Ok(match topic {
                    // Batched with other registrations by the registrar (above).
                    Topic::Registry | Topic::RegistryBatch => Validation::Ignore,
                    Topic::Passkey => match codec::decode::<SignedEnrolment>(&data, MAX_GOSSIP) {
                        Err(_) => Validation::Reject,
                        Ok(enrolment) => match o.record_enrolment(&enrolment)? {
                            Ok(_) => Validation::Accept,
                            // Not yet registered here, or at the passkey limit: not the
                            // sender's fault.
                            Err(Reason::UnknownIdentity | Reason::TooManyPasskeys { .. }) => {
                                Validation::Ignore
                            }
                            Err(_) => Validation::Reject,
                        },
                    },
                    Topic::Acceptance | Topic::AcceptanceRelay => {
                        let decoded = if topic == Topic::Acceptance {
                            codec::decode::<Vec<SealedAcceptance>>(&data, MAX_GOSSIP)
                                .map(|batch| (batch, Vec::new()))
                        } else {
                            codec::decode::<AcceptanceRelay>(&data, MAX_GOSSIP)
                        };
                        match decoded {
                            Err(_) => Validation::Reject,
                            Ok((batch, receipts)) => {
                                let (fresh, refused, relay) =
                                    o.record_remote_each(&batch, &receipts, Heard::ByGossip, now)?;
                                super::relay_acceptances(&net, &batch, &receipts, relay);
                                let recorded = clock.now();
                                if fresh > 0 {
                                    for s in &batch {
                                        let delay =
                                            recorded.saturating_sub(s.acceptance.accepted_at);
                                        delay_metric.observe(delay as f64 / 1000.0);
                                    }
                                }
                                // The good acceptances are recorded either way; the sender is
                                // struck only when one proves it wrong.
                                match refused {
                                    None => Validation::Accept,
                                    Some(reason) if hco_oracle::blames_sender(&reason) => {
                                        tracing::warn!(%reason, "acceptance refused");
                                        Validation::Reject
                                    }
                                    Some(_) => Validation::Ignore,
                                }
                            }
                        }
                    }
                    Topic::Summary => match codec::decode(&data, MAX_GOSSIP) {
                        Err(_) => Validation::Reject,
                        Ok(summary) => match o.add_summary(&summary)? {
                            Ok(_) => Validation::Accept,
                            Err(_) => Validation::Reject,
                        },
                    },
                    Topic::Evidence => match codec::decode(&data, MAX_GOSSIP) {
                        Err(_) => Validation::Reject,
                        Ok(evidence) => match o.add_evidence(&evidence)? {
                            Ok(_) => Validation::Accept,
                            // Checked by signatures alone, or re-audited here (which may
                            // need a reveal not yet held): refuse without blaming.
                            Err(Reason::Malformed(_)) => Validation::Ignore,
                            Err(_) => Validation::Reject,
                        },
                    },
                    // A reveal that counts here with at most f signers goes on with this
                    // node's receipt (hco_oracle::relay), as a message of its own.
                    Topic::Reveal => match codec::decode(&data, MAX_GOSSIP) {
                        Err(_) => Validation::Reject,
                        Ok(relayed) => match o.hear_reveal(&relayed, now)? {
                            Ok(relay) => {
                                if let Some(relay) = relay {
                                    net.publish(Topic::Reveal, codec::encode(&relay));
                                }
                                Validation::Accept
                            }
                            Err(Reason::WindowNotClosed { .. }) => Validation::Ignore,
                            Err(_) => Validation::Reject,
                        },
                    },
                    // A statement kept here with at most f receipts goes on with this node's
                    // receipt (hco_oracle::relay's link rule), as a message of its own.
                    Topic::Link => match codec::decode(&data, MAX_GOSSIP) {
                        Err(_) => Validation::Reject,
                        Ok(relayed) => match o.hear_link(&relayed, now)? {
                            Ok(heard) => {
                                if let Some(relay) = heard.relay {
                                    net.publish(Topic::Link, codec::encode(&relay));
                                }
                                Validation::Accept
                            }
                            Err(reason) => link_verdict(&reason),
                        },
                    },
                    // Repeated every few seconds by its member (a small message): forwarded
                    // every time, so a member that joined late gets it through any path.
                    Topic::Witness => match codec::decode::<WitnessGossip>(&data, MAX_GOSSIP) {
                        Err(_) => Validation::Reject,
                        Ok((witness, _)) => match o.record_witness(&witness, now)? {
                            Ok(_) => Validation::Accept,
                            // A clock further off than the skew, not proof of misbehaviour.
                            Err(Reason::WrongWindow { .. }) => Validation::Ignore,
                            Err(_) => Validation::Reject,
                        },
                    },
                })
            })
            .await;
        match verdict {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => {
                self.supervisor.storage_failed("gossip validation", e);
                Validation::Ignore
            }
            Err(e) => {
                tracing::error!(error = %e, "gossip validation task failed");
                Validation::Ignore
            }
        }
    }
}

impl Node {
    /// A relayed registration, written through the registrar's batches.
    async fn validate_registration(&self, data: &[u8]) -> Validation {
        let Ok(reg) = codec::decode::<SignedRegister>(data, MAX_GOSSIP) else {
            return Validation::Reject;
        };
        self.relay_registration(reg).await
    }

    /// A member's coalesced registrations, each written as a relayed one: the message is
    /// rejected when any of them proves the sender wrong, accepted when none does and at least
    /// one was handled.
    async fn validate_registration_batch(&self, data: &[u8]) -> Validation {
        let batch = match codec::decode::<Vec<SignedRegister>>(data, MAX_GOSSIP) {
            Ok(batch) if !batch.is_empty() => batch,
            _ => return Validation::Reject,
        };
        let verdicts =
            futures::future::join_all(batch.into_iter().map(|r| self.relay_registration(r))).await;
        if verdicts.contains(&Validation::Reject) {
            Validation::Reject
        } else if verdicts.contains(&Validation::Accept) {
            Validation::Accept
        } else {
            Validation::Ignore
        }
    }

    /// The verdict on one registration relayed by a peer.
    async fn relay_registration(&self, reg: SignedRegister) -> Validation {
        match self.register_relayed(reg).await {
            Ok(Ok(_)) => Validation::Accept,
            // Its age is read on this node's clock, and relaying can cross a window boundary:
            // not proof that the sender is at fault.
            Ok(Err(Reason::RegistrationProofStale { .. })) => Validation::Ignore,
            // An honest member relays only what passed its gateway under the same parameters,
            // so a missing or weak proof is the sender's doing.
            Ok(Err(
                Reason::BadIdentityKey
                | Reason::BadIdentitySignature
                | Reason::UnknownVersion { .. }
                | Reason::RegistrationProofMissing { .. }
                | Reason::RegistrationProofInsufficient { .. },
            )) => Validation::Reject,
            // Refused for a reason that is not the sender's fault, or not handled now (queue
            // full, storage failed: the supervisor stops the node on the latter).
            Ok(Err(_)) | Err(_) => Validation::Ignore,
        }
    }
}

/// The verdict on a relayed link statement this node does not keep, by why.
fn link_verdict(reason: &Reason) -> Validation {
    match reason {
        // Not registered here yet, outside its window here, outranked by what this member
        // holds, or carrying a registration dated ahead of this node's clock (clocks differ):
        // not the sender's fault. A registration that does not check otherwise is (an honest
        // member attaches only what it verified under the same parameters).
        Reason::UnknownIdentity
        | Reason::WrongWindow { .. }
        | Reason::BeforeGenesis { .. }
        | Reason::TooManyLinks { .. }
        | Reason::LinkOutranked
        | Reason::RegistrationFromFuture { .. } => Validation::Ignore,
        _ => Validation::Reject,
    }
}

/// Feeds network events to the node, a bounded number at a time.
pub async fn run_events(node: Arc<Node>, mut events: mpsc::Receiver<NetworkEvent>) {
    let permits = Arc::new(Semaphore::new(CONCURRENT_EVENTS));
    while let Some(event) = events.recv().await {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            break;
        };
        // A challenge request forwarded by a peer is a client's work: it runs where clients
        // are served, below the committee's (see `priority`).
        let on = match event {
            NetworkEvent::Challenge { .. } => node.clients.clone(),
            _ => tokio::runtime::Handle::current(),
        };
        let node = node.clone();
        on.spawn(async move {
            node.on_network_event(event).await;
            drop(permit);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_refused_for_this_nodes_clock_or_state_does_not_count_against_its_sender() {
        for not_its_fault in [
            Reason::UnknownIdentity,
            Reason::LinkOutranked,
            Reason::WrongWindow { t: 3, current: 1 },
            Reason::RegistrationFromFuture {
                created_at: 10,
                now: 1,
            },
        ] {
            assert!(
                link_verdict(&not_its_fault) == Validation::Ignore,
                "{not_its_fault}"
            );
        }
        for its_fault in [
            Reason::BadIdentitySignature,
            Reason::BadLink("bad_account_signature".into()),
            Reason::BadReceipt("twice".into()),
        ] {
            assert!(
                link_verdict(&its_fault) == Validation::Reject,
                "{its_fault}"
            );
        }
    }
}
