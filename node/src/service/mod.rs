//! The node's application layer between the network, the HTTP gateway and the oracle. This file
//! is its facade: [`Node`], its start, and issuance and verification (locally when this node is
//! the assigned issuer, forwarded to the issuer otherwise). Its other jobs have a file each:
//!
//! - [`batcher`]: verification on this node ([`Node::respond_local`]): queues responses,
//!   verifies them in batches and seals the acceptances;
//! - [`gossip_out`]: gossips this node's acceptances and registrations, coalesced under load;
//! - [`network_events`]: validates gossip and answers peers' challenge requests;
//! - [`sync`]: all reconciliation with the committee (registry, passkeys, a window's acceptances,
//!   reveals and certificate), both serving peers' requests and pulling from peers.
//!
//! The oracle is synchronous (sled and signatures). Calls that may wait for a flush run on the
//! blocking pool; issuance, which never flushes, runs on the calling task.

mod batcher;
mod earlier;
pub mod faults;
mod gossip_out;
pub(crate) use gossip_out::relay_acceptances;
mod network_events;
mod observers;
mod queue;
mod registrar;
mod request_checks;
pub mod sync;
pub mod withheld;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use hco_oracle::ledger::PasskeyRecord;
use hco_oracle::secret::issuers_of;
use hco_oracle::{
    ChallengeRequest, CheckedRequest, Clock, NodeId, Oracle, Reason, Response, SealedAcceptance,
    SignedEnrolment, SignedRegister, SignedRequest, codec,
};
use libp2p::PeerId;

use crate::metrics::{FamilyLabel, Metrics};
use crate::network::NetworkClient;
use crate::network::protocol::{
    ChallengeReply, ChallengeRpc, Rejection, Topic, acceptance_payloads, registration_payloads,
};
use crate::supervise::Supervisor;

#[cfg(test)]
pub use batcher::MAX_BATCH;
pub use network_events::run_events;
pub use registrar::RegisterError;

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
    verify_queue: batcher::VerifyQueue,
    /// Challenge requests waiting for their signature check.
    request_checks: request_checks::CheckQueue,
    acceptance_gossip: gossip_out::GossipOut<SealedAcceptance>,
    registration_gossip: gossip_out::GossipOut<SignedRegister>,
    register_queue: registrar::RegistrationQueue,
    sync_limits: sync::Limits,
    /// Earlier tries other members reported failed (final), so a later try's repeated
    /// requests do not ask again (see `earlier`).
    failed_tries: earlier::FailedTries,
    /// Verdicts withheld until their window closes (`[agent] withhold_verdicts`).
    pub withheld: withheld::Withheld,
    /// What a test-only faulty member changes; [`faults::Honest`] unless one is installed.
    faults: std::sync::OnceLock<Arc<dyn faults::FaultHook>>,
    /// Stops the node when a critical task ends or storage fails.
    pub supervisor: Supervisor,
    /// The runtime that serves clients (the one [`Node::start`] was called in): where
    /// challenge requests forwarded by peers are handled, below the committee's work.
    clients: tokio::runtime::Handle,
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
    /// Wires the node (its metrics count the oracle's evidence) and starts its verification
    /// batcher and registrar (supervised: see [`Node::supervisor`], whose token stops the node).
    pub fn start(
        oracle: Arc<Oracle>,
        net: NetworkClient,
        metrics: Arc<Metrics>,
        clock: Arc<dyn Clock>,
    ) -> Arc<Self> {
        Self::start_with(oracle, net, metrics, clock, sync::Limits::default())
    }

    /// [`Node::start`] with other reconciliation limits than the protocol's.
    pub fn start_with(
        oracle: Arc<Oracle>,
        net: NetworkClient,
        metrics: Arc<Metrics>,
        clock: Arc<dyn Clock>,
        sync_limits: sync::Limits,
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
        observers::install(&oracle, &metrics);
        let (verify_queue, verifications) = batcher::channel();
        let (request_checks, requests_to_check) = request_checks::channel();
        let (register_queue, registrations) = registrar::channel();
        let (acceptance_gossip, acceptance_task) = gossip_out::start(
            net.clone(),
            metrics.clone(),
            (Topic::Acceptance, gossip_out::LINGER),
            "acceptance_gossip",
            acceptance_payloads,
        );
        let (registration_gossip, registration_task) = gossip_out::start(
            net.clone(),
            metrics.clone(),
            (Topic::RegistryBatch, gossip_out::REGISTRATION_LINGER),
            "registration_gossip",
            registration_payloads,
        );
        let node = Arc::new(Self {
            oracle,
            net,
            metrics,
            clock,
            peers,
            verify_queue,
            request_checks,
            acceptance_gossip,
            registration_gossip,
            register_queue,
            sync_limits,
            failed_tries: earlier::FailedTries::default(),
            withheld: withheld::Withheld::default(),
            faults: std::sync::OnceLock::new(),
            supervisor: Supervisor::new(),
            clients: tokio::runtime::Handle::current(),
        });
        node.supervisor.spawn_critical(
            "verification batcher",
            batcher::run(node.clone(), verifications),
        );
        node.supervisor
            .spawn_critical("registrar", registrar::run(node.clone(), registrations));
        node.supervisor.spawn_critical(
            "request signature checks",
            request_checks::run(node.clone(), requests_to_check),
        );
        // This node's gossip goes out from the committee's runtime, ahead of client work.
        let network = node.net.runtime();
        node.supervisor
            .spawn_critical_on(network, "acceptance gossip", acceptance_task);
        node.supervisor
            .spawn_critical_on(network, "registration gossip", registration_task);
        node
    }

    /// Installs a fault hook (test networks only; once, before the node serves).
    #[cfg(feature = "unsafe-byzantine")]
    pub fn install_faults(&self, hook: Arc<dyn faults::FaultHook>) {
        let _ = self.faults.set(hook);
    }

    /// The fault hook: [`faults::Honest`] unless one was installed.
    pub fn faults(&self) -> &dyn faults::FaultHook {
        match self.faults.get() {
            Some(hook) => hook.as_ref(),
            None => &faults::Honest,
        }
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

    /// The peer ids of the committee members other than this node that are connected now.
    pub async fn connected_members(&self) -> Vec<PeerId> {
        let connected: HashSet<_> = self.net.peers().await.into_iter().collect();
        self.other_members()
            .into_iter()
            .map(|(_, peer)| peer)
            .filter(|peer| connected.contains(peer))
            .collect()
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Oracle) -> T + Send + 'static,
    ) -> anyhow::Result<T> {
        let oracle = self.oracle.clone();
        Ok(tokio::task::spawn_blocking(move || f(&oracle)).await?)
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

    /// Gossips sealed acceptances of this node (coalesced with others made meanwhile, split
    /// into payloads every peer decodes).
    pub fn publish_acceptances(&self, accepted: Vec<SealedAcceptance>) {
        self.acceptance_gossip.queue(accepted);
    }

    /// Gossips registrations this node's gateway accepted, coalesced like acceptances, on the
    /// members' batch topic.
    pub fn publish_registrations(&self, accepted: Vec<SignedRegister>) {
        self.registration_gossip.queue(accepted);
    }

    /// Issues a challenge here if this node may, otherwise forwards to the assigned issuer.
    pub async fn issue(&self, req: impl Into<IssueRequest>) -> anyhow::Result<ChallengeReply> {
        let req = req.into();
        let body = &req.request().body;
        let params = self.oracle.params();
        let allowed = issuers_of(params, &body.id, body.t, body.j);
        if allowed.contains(&self.oracle.node_id()) {
            return self.issue_local(req).await;
        }
        let req = req.into_request();
        let mut last = String::new();
        for issuer in &allowed {
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
    ///
    /// Issuance runs on the calling task, not the blocking pool: it is a signature check (none
    /// for a request the gateway checked), a signature, a few ledger reads and one unflushed
    /// write (tens of microseconds), and the hop to a blocking thread and back cost more than
    /// that under load (a profile of `hco bench http` showed a fifth of the server's time in
    /// the pool's hand-offs).
    pub async fn issue_local(
        &self,
        req: impl Into<IssueRequest>,
    ) -> anyhow::Result<ChallengeReply> {
        let req = match req.into() {
            IssueRequest::Checked(req) => req,
            IssueRequest::Unchecked(req) => match self.oracle.check_request_signature(req) {
                Ok(req) => req,
                Err(reason) => {
                    self.metrics.reject(reason.code(), None);
                    return Ok(rejected(&reason));
                }
            },
        };
        let earlier = self.earlier_tries(&req.request().body).await?;
        let issue_at = |now| {
            if earlier.is_empty() {
                self.oracle.issue_checked(&req, now)
            } else {
                self.oracle.issue_after(&req, now, &earlier)
            }
        };
        let now = self.now();
        let mut outcome = issue_at(now)?;
        if let Err(Reason::StepNotOpen { opens_at }) = outcome
            && let Some(at) = self.faults().serve_early(self, opens_at, now)
        {
            outcome = issue_at(at)?;
        }
        Ok(match outcome {
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
                let reason = self.withheld_steps_complete(reason, &req.request().body);
                self.metrics.reject(reason.code(), None);
                rejected(&reason)
            }
        })
    }

    /// `steps_complete` (asked for a try past the last, with every step passed) would tell an
    /// agent's withheld verdict: it is told as the try out of range a failed one hears.
    fn withheld_steps_complete(&self, reason: Reason, body: &ChallengeRequest) -> Reason {
        if reason != Reason::StepsComplete || !self.withheld.covers(&self.oracle, &body.id) {
            return reason;
        }
        let tries = self
            .oracle
            .params()
            .policy(hco_challenges::Class::Agent)
            .tries();
        Reason::IndexOutOfRange {
            j: body.j,
            k: tries,
        }
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
}

/// A challenge request as the gateway hands it on: with its signature checked here already
/// (the gateway checks it before charging the identity's rate limit), or not.
pub enum IssueRequest {
    /// Checked by this node's oracle.
    Checked(CheckedRequest),
    /// Not checked yet.
    Unchecked(SignedRequest),
}

impl IssueRequest {
    fn request(&self) -> &SignedRequest {
        match self {
            Self::Checked(req) => req.request(),
            Self::Unchecked(req) => req,
        }
    }

    fn into_request(self) -> SignedRequest {
        match self {
            Self::Checked(req) => req.into_request(),
            Self::Unchecked(req) => req,
        }
    }
}

impl From<SignedRequest> for IssueRequest {
    fn from(req: SignedRequest) -> Self {
        Self::Unchecked(req)
    }
}

impl From<CheckedRequest> for IssueRequest {
    fn from(req: CheckedRequest) -> Self {
        Self::Checked(req)
    }
}

#[cfg(test)]
mod tests;
