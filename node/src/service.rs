//! The node's application layer between the network, the HTTP gateway and the oracle: issuance
//! and verification (locally when this node is the assigned issuer, forwarded otherwise), the
//! verification batcher, and the handlers of gossip and peer requests.
//!
//! The oracle is synchronous (sled and signatures); every call into it runs on the blocking pool.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hco_oracle::ledger::PasskeyRecord;
use hco_oracle::secret::issuer_order;
use hco_oracle::{
    Clock, IdentityId, NodeId, Oracle, Reason, Response, SealedAcceptance, SignedEnrolment,
    SignedRegister, SignedRequest, codec,
};
use libp2p::PeerId;
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::metrics::{FamilyLabel, Metrics};
use crate::network::protocol::{
    CertReply, CertRpc, ChallengeReply, ChallengeRpc, MAX_FETCH, MAX_GOSSIP_PAYLOAD, MAX_KEYS,
    MAX_PASSKEY_FETCH, ReconcileReply, ReconcileRpc, Rejection, Topic, acceptance_payloads,
};
use crate::network::{NetworkClient, NetworkEvent, Validation};
use crate::supervise::Supervisor;

/// Most responses verified in one batch (one batched signature check, one seal, one flush).
/// Its acceptances are gossiped in as many messages as their encoded size needs.
pub const MAX_BATCH: usize = 512;
/// Batches verified at once: one is checked while another waits for its flush.
const CONCURRENT_BATCHES: usize = 3;
/// Peer events handled at once.
const CONCURRENT_EVENTS: usize = 256;
/// Largest gossip payload decoded: what every node publishes at most.
const MAX_GOSSIP: usize = MAX_GOSSIP_PAYLOAD;

type VerdictTx = oneshot::Sender<Result<SealedAcceptance, Reason>>;

/// The running node's shared state.
pub struct Node {
    /// The protocol core.
    pub oracle: Arc<Oracle>,
    /// The network task's handle.
    pub net: NetworkClient,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    clock: Arc<dyn Clock>,
    peers: HashMap<NodeId, PeerId>,
    verify_tx: mpsc::Sender<(Response, Instant, VerdictTx)>,
    /// Stops the node when a critical task ends or storage fails.
    pub supervisor: Supervisor,
}

fn rejected(reason: &Reason) -> ChallengeReply {
    ChallengeReply::Rejected(Rejection::from(reason))
}

fn gateway_error(code: &str, message: impl Into<String>) -> ChallengeReply {
    ChallengeReply::Rejected(Rejection {
        code: code.into(),
        message: message.into(),
        opens_at: None,
    })
}

impl Node {
    /// Wires the node and starts its verification batcher (supervised: see
    /// [`Node::supervisor`], whose token stops the node).
    pub fn start(
        oracle: Arc<Oracle>,
        net: NetworkClient,
        metrics: Arc<Metrics>,
        clock: Arc<dyn Clock>,
    ) -> Arc<Self> {
        let peers = oracle
            .params()
            .committee
            .iter()
            .filter_map(|n| crate::network::peer_id(n).map(|p| (*n, p)))
            .collect();
        let families: Vec<&str> = oracle
            .params()
            .families
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        metrics.preregister(&families);
        let (verify_tx, verify_rx) = mpsc::channel(8 * MAX_BATCH);
        let node = Arc::new(Self {
            oracle,
            net,
            metrics,
            clock,
            peers,
            verify_tx,
            supervisor: Supervisor::new(),
        });
        node.supervisor
            .spawn_critical("verification batcher", batcher(node.clone(), verify_rx));
        node
    }

    /// The current time.
    pub fn now(&self) -> u64 {
        self.clock.now()
    }

    /// The peer id of a committee member.
    pub fn peer_of(&self, node: &NodeId) -> Option<PeerId> {
        self.peers.get(node).copied()
    }

    /// Committee members other than this node.
    pub fn other_members(&self) -> Vec<(NodeId, PeerId)> {
        let me = self.oracle.node_id();
        self.peers
            .iter()
            .filter(|(n, _)| **n != me)
            .map(|(n, p)| (*n, *p))
            .collect()
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Oracle) -> T + Send + 'static,
    ) -> anyhow::Result<T> {
        let oracle = self.oracle.clone();
        Ok(tokio::task::spawn_blocking(move || f(&oracle)).await?)
    }

    /// Registers an identity and gossips the registration.
    pub async fn register(
        &self,
        reg: SignedRegister,
    ) -> anyhow::Result<Result<hco_oracle::ledger::IdentityRecord, Reason>> {
        let now = self.now();
        let gossip = reg.clone();
        let result = self
            .blocking(move |o| o.register_from_client(&reg, now))
            .await??;
        match &result {
            Ok(_) => self.net.publish(Topic::Registry, codec::encode(&gossip)),
            Err(reason) => self.metrics.reject(reason.code(), None),
        }
        Ok(result)
    }

    /// Enrols a passkey for the presence family and gossips the enrolment.
    pub async fn enrol_passkey(
        &self,
        enrolment: SignedEnrolment,
    ) -> anyhow::Result<Result<PasskeyRecord, Reason>> {
        let now = self.now();
        let gossip = enrolment.clone();
        let result = self
            .blocking(move |o| o.enrol_passkey(&enrolment, now))
            .await??;
        match &result {
            Ok(_) => self.net.publish(Topic::Passkey, codec::encode(&gossip)),
            Err(reason) => self.metrics.reject(reason.code(), None),
        }
        Ok(result)
    }

    /// Gossips sealed acceptances of this node, split into payloads every peer decodes.
    pub fn publish_acceptances(&self, accepted: &[SealedAcceptance]) {
        for payload in acceptance_payloads(accepted) {
            self.net.publish(Topic::Acceptance, payload);
        }
    }

    /// Issues a challenge here if this node may, otherwise forwards to the assigned issuer.
    pub async fn issue(&self, req: SignedRequest) -> anyhow::Result<ChallengeReply> {
        let params = self.oracle.params();
        let order = issuer_order(&params.committee, &req.body.id, req.body.t);
        let allowed =
            &order[..=(params.issuer_fallback as usize).min(order.len().saturating_sub(1))];
        if allowed.contains(&self.oracle.node_id()) {
            return self.issue_local(req).await;
        }
        let mut last = String::new();
        for issuer in allowed {
            let Some(peer) = self.peer_of(issuer) else {
                continue;
            };
            match self
                .net
                .challenge(peer, ChallengeRpc::Issue(req.clone()))
                .await
            {
                Ok(reply) => return Ok(reply),
                Err(e) => last = e.to_string(),
            }
        }
        Ok(gateway_error(
            "issuer_unreachable",
            format!("the assigned issuer could not be reached ({last}); try again shortly"),
        ))
    }

    /// Issues a challenge on this node.
    pub async fn issue_local(&self, req: SignedRequest) -> anyhow::Result<ChallengeReply> {
        let now = self.now();
        Ok(match self.blocking(move |o| o.issue(&req, now)).await?? {
            Ok(issued) => {
                let family = issued.prompt.family.clone();
                self.metrics
                    .issued
                    .get_or_create(&FamilyLabel { family })
                    .inc();
                ChallengeReply::Issued {
                    challenge: issued.challenge,
                    prompt: issued.prompt,
                }
            }
            Err(reason) => {
                self.metrics.reject(reason.code(), None);
                rejected(&reason)
            }
        })
    }

    /// Verifies a response here if this node issued it, otherwise forwards it to its issuer.
    pub async fn respond(&self, response: Response) -> anyhow::Result<ChallengeReply> {
        let issuer = response.challenge.challenge.issuer;
        if issuer == self.oracle.node_id() {
            return self.respond_local(response).await;
        }
        self.to_issuer(issuer, ChallengeRpc::Respond(Box::new(response)))
            .await
    }

    /// Checks the partial answer to a multi-stage challenge here if this node issued it,
    /// otherwise forwards it to its issuer; the reply is the next stage.
    pub async fn answer_stage(&self, response: Response) -> anyhow::Result<ChallengeReply> {
        let issuer = response.challenge.challenge.issuer;
        if issuer == self.oracle.node_id() {
            return self.answer_stage_local(response).await;
        }
        self.to_issuer(issuer, ChallengeRpc::Stage(Box::new(response)))
            .await
    }

    /// Sends a request about one of `issuer`'s challenges to `issuer`.
    async fn to_issuer(
        &self,
        issuer: NodeId,
        request: ChallengeRpc,
    ) -> anyhow::Result<ChallengeReply> {
        let Some(peer) = self.peer_of(&issuer) else {
            return Ok(rejected(&Reason::NotInCommittee(issuer)));
        };
        match self.net.challenge(peer, request).await {
            Ok(reply) => Ok(reply),
            Err(e) => Ok(gateway_error(
                "issuer_unreachable",
                format!("the issuer could not be reached ({e}); try again shortly"),
            )),
        }
    }

    /// Checks a stage answer on this node; durable when it returns (a wrong one is final).
    pub async fn answer_stage_local(&self, response: Response) -> anyhow::Result<ChallengeReply> {
        let now = self.now();
        Ok(
            match self
                .blocking(move |o| o.answer_stage(&response, now))
                .await??
            {
                Ok((stage, prompt)) => ChallengeReply::Stage {
                    stage: stage as u32,
                    prompt,
                },
                Err(reason) => {
                    self.metrics.reject(reason.code(), None);
                    rejected(&reason)
                }
            },
        )
    }

    /// Verifies a response on this node (batched with concurrent ones); durable when it returns.
    pub async fn respond_local(&self, response: Response) -> anyhow::Result<ChallengeReply> {
        let (tx, rx) = oneshot::channel();
        if self
            .verify_tx
            .try_send((response, Instant::now(), tx))
            .is_err()
        {
            self.metrics.drop_in("verify");
            return Ok(gateway_error(
                "overloaded",
                "the verification queue is full; retry after a short pause",
            ));
        }
        Ok(match rx.await? {
            Ok(sealed) => ChallengeReply::Accepted(Box::new(sealed)),
            Err(reason) => rejected(&reason),
        })
    }

    /// Handles one event from the network.
    pub async fn on_network_event(self: &Arc<Self>, event: NetworkEvent) {
        match event {
            NetworkEvent::Gossip {
                topic,
                data,
                id,
                source,
            } => {
                let result = self.validate_gossip(topic, &data).await;
                self.net.validate(id, source, topic, result).await;
            }
            NetworkEvent::Challenge { id, request } => {
                let reply = match request {
                    ChallengeRpc::Issue(req) => self.issue_local(req).await,
                    ChallengeRpc::Respond(response) => self.respond_local(*response).await,
                    ChallengeRpc::Stage(response) => self.answer_stage_local(*response).await,
                };
                let reply = reply.unwrap_or_else(|e| gateway_error("internal", e.to_string()));
                self.net.reply_challenge(id, reply).await;
            }
            NetworkEvent::Reconcile { id, request } => {
                let reply = self.reconcile_reply(request).await.unwrap_or_else(|e| {
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
                let cert = self.blocking(move |o| o.ledger().certificate(t)).await;
                let reply = CertReply(cert.ok().and_then(Result::ok).flatten());
                self.net.reply_cert(id, reply).await;
            }
            NetworkEvent::Listening(_) => {}
        }
    }

    async fn validate_gossip(&self, topic: Topic, data: &[u8]) -> Validation {
        let now = self.now();
        let data = data.to_vec();
        let verdict = self
            .blocking(move |o| -> Result<Validation, hco_oracle::LedgerError> {
                Ok(match topic {
                    Topic::Registry => match codec::decode::<SignedRegister>(&data, MAX_GOSSIP) {
                        Err(_) => Validation::Reject,
                        Ok(reg) => match o.register(&reg, now)? {
                            Ok(_) => Validation::Accept,
                            Err(
                                Reason::BadIdentityKey
                                | Reason::BadIdentitySignature
                                | Reason::UnknownVersion { .. },
                            ) => Validation::Reject,
                            Err(_) => Validation::Ignore,
                        },
                    },
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
                    Topic::Acceptance => {
                        match codec::decode::<Vec<SealedAcceptance>>(&data, MAX_GOSSIP) {
                            Err(_) => Validation::Reject,
                            Ok(batch) => match o.record_remote(&batch)? {
                                Ok(_) => Validation::Accept,
                                // Nothing of the batch is recorded either way; the sender is
                                // struck only when the batch proves it wrong.
                                Err(reason) if hco_oracle::blames_sender(&reason) => {
                                    tracing::warn!(%reason, "acceptance batch rejected");
                                    Validation::Reject
                                }
                                Err(_) => Validation::Ignore,
                            },
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
                    Topic::Reveal => match codec::decode(&data, MAX_GOSSIP) {
                        Err(_) => Validation::Reject,
                        Ok(reveal) => match o.add_reveal(&reveal, now)? {
                            Ok(()) => Validation::Accept,
                            Err(Reason::WindowNotClosed { .. }) => Validation::Ignore,
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

    async fn reconcile_reply(&self, request: ReconcileRpc) -> anyhow::Result<ReconcileReply> {
        self.blocking(move |o| -> anyhow::Result<ReconcileReply> {
            let ledger = o.ledger();
            Ok(match request {
                ReconcileRpc::Keys { t, after, limit } => {
                    let limit = (limit as usize).min(MAX_KEYS);
                    ReconcileReply::Keys(ledger.accepted_keys_after(t, after, limit)?)
                }
                ReconcileRpc::Fetch { t, keys } => {
                    let mut out = Vec::new();
                    for (id, j) in keys.into_iter().take(MAX_FETCH) {
                        if let Some(a) = ledger.accepted(t, &id, j)? {
                            out.push(a);
                        }
                    }
                    ReconcileReply::Acceptances(out)
                }
                ReconcileRpc::Identities { after, limit } => {
                    let limit = (limit as usize).min(MAX_FETCH);
                    ReconcileReply::Identities(ledger.identities_after(after.as_ref(), limit)?)
                }
                ReconcileRpc::Reveals { t } => {
                    let mut reveals = ledger.reveals(t)?;
                    reveals.truncate(o.params().committee.len());
                    ReconcileReply::Reveals(reveals)
                }
                ReconcileRpc::Passkeys { after, limit } => {
                    let limit = (limit as usize).min(MAX_PASSKEY_FETCH);
                    let after = after.as_ref().map(|(id, c)| (id, c.as_slice()));
                    ReconcileReply::Passkeys(
                        ledger
                            .passkeys_after(after, limit)?
                            .into_iter()
                            .map(|r| (r.enrolment, r.credential_id))
                            .collect(),
                    )
                }
            })
        })
        .await?
    }

    /// Copies from `peer` every registration this node lacks (used at start).
    pub async fn sync_identities(&self, peer: PeerId) -> anyhow::Result<usize> {
        let mut after: Option<IdentityId> = None;
        let mut added = 0;
        loop {
            let reply = self
                .net
                .reconcile(
                    peer,
                    ReconcileRpc::Identities {
                        after,
                        limit: MAX_FETCH as u32,
                    },
                )
                .await?;
            let ReconcileReply::Identities(page) = reply else {
                break;
            };
            let Some(last) = page.last().map(|r| r.body.id) else {
                break;
            };
            let now = self.now();
            let n = page.len();
            added += self
                .blocking(move |o| {
                    page.iter()
                        .filter(|r| matches!(o.register(r, now), Ok(Ok(_))))
                        .count()
                })
                .await?;
            if n < MAX_FETCH {
                break;
            }
            after = Some(last);
        }
        Ok(added)
    }

    /// Copies from `peer` every passkey enrolment this node lacks (used at start, after the
    /// registrations). Each is re-verified here.
    pub async fn sync_passkeys(&self, peer: PeerId) -> anyhow::Result<usize> {
        let mut after: Option<(IdentityId, Vec<u8>)> = None;
        let mut added = 0;
        loop {
            let request = ReconcileRpc::Passkeys {
                after: after.clone(),
                limit: MAX_PASSKEY_FETCH as u32,
            };
            let ReconcileReply::Passkeys(page) = self.net.reconcile(peer, request).await? else {
                break;
            };
            let Some((last, credential)) = page.last() else {
                break;
            };
            let next = (last.body.id, credential.clone());
            let n = page.len();
            added += self
                .blocking(move |o| {
                    page.iter()
                        .filter(|(e, credential)| {
                            let known = o.passkeys(&e.body.id).is_ok_and(|all| {
                                all.iter().any(|r| &r.credential_id == credential)
                            });
                            !known && matches!(o.record_enrolment(e), Ok(Ok(_)))
                        })
                        .count()
                })
                .await?;
            if n < MAX_PASSKEY_FETCH {
                break;
            }
            after = Some(next);
        }
        Ok(added)
    }
}

/// Collects responses into batches and verifies them on the blocking pool.
async fn batcher(node: Arc<Node>, mut rx: mpsc::Receiver<(Response, Instant, VerdictTx)>) {
    let permits = Arc::new(Semaphore::new(CONCURRENT_BATCHES));
    while let Some(first) = rx.recv().await {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            break;
        };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(item) => batch.push(item),
                Err(_) => break,
            }
        }
        let node = node.clone();
        tokio::spawn(async move {
            let (responses, meta): (Vec<Response>, Vec<(Instant, VerdictTx)>) =
                batch.into_iter().map(|(r, at, tx)| (r, (at, tx))).unzip();
            let now = node.now();
            let families: Vec<String> = responses
                .iter()
                .map(|r| r.challenge.challenge.family.clone())
                .collect();
            let result = node
                .blocking(move |o| o.verify_responses(&responses, now))
                .await;
            let verdicts = match result {
                Ok(Ok(v)) => v,
                Ok(Err(e)) => {
                    // Nothing was acknowledged: the waiting clients get an internal error.
                    node.supervisor
                        .storage_failed("the verification batcher", e);
                    return;
                }
                Err(e) => {
                    tracing::error!(error = %e, "verification task failed");
                    return;
                }
            };
            let mut accepted = Vec::new();
            for ((verdict, (at, tx)), family) in verdicts.into_iter().zip(meta).zip(families) {
                node.metrics
                    .verify_latency
                    .observe(at.elapsed().as_secs_f64());
                match &verdict {
                    Ok(sealed) => {
                        node.metrics
                            .accepted
                            .get_or_create(&FamilyLabel { family })
                            .inc();
                        accepted.push(sealed.clone());
                    }
                    Err(reason) => {
                        if reason.is_final_answer() {
                            node.metrics
                                .answered_wrong
                                .get_or_create(&FamilyLabel {
                                    family: family.clone(),
                                })
                                .inc();
                        }
                        node.metrics.reject(reason.code(), Some(&family));
                    }
                }
                let _ = tx.send(verdict);
            }
            node.publish_acceptances(&accepted);
            drop(permit);
        });
    }
}

/// Feeds network events to the node, a bounded number at a time.
pub async fn run_events(node: Arc<Node>, mut events: mpsc::Receiver<NetworkEvent>) {
    let permits = Arc::new(Semaphore::new(CONCURRENT_EVENTS));
    while let Some(event) = events.recv().await {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            break;
        };
        let node = node.clone();
        tokio::spawn(async move {
            node.on_network_event(event).await;
            drop(permit);
        });
    }
}

/// How long a node waits after a window closes before reconciling, so in-flight gossip lands.
pub const SETTLE: Duration = Duration::from_millis(1500);
