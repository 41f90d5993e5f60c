//! The task that owns the swarm: one `select!` over swarm events and commands.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use libp2p::multiaddr::Protocol;
use libp2p::request_response::{self, OutboundRequestId, ResponseChannel};
use libp2p::swarm::SwarmEvent;
use libp2p::{Multiaddr, PeerId, Swarm, gossipsub, identify, identity, kad};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::behaviour::{Behaviour, BehaviourEvent};
use super::guard::{GossipGate, Guard, MAX_STRIKES};
use super::peers::check_identify;
use super::protocol::{CertReply, ChallengeReply, ReconcileReply, Rejection, Topic};
use super::{Command, NetworkEvent, RpcError, Validation};
use crate::config::P2pSection;
use crate::metrics::{GossipLabel, Metrics};

type Pending<T> = HashMap<OutboundRequestId, oneshot::Sender<Result<T, RpcError>>>;

/// Owns the swarm; run it with [`EventLoop::run`].
pub struct EventLoop {
    swarm: Swarm<Behaviour>,
    commands: mpsc::Receiver<Command>,
    events: mpsc::Sender<NetworkEvent>,
    metrics: Arc<Metrics>,
    params_digest: String,
    bootstrap: Vec<Multiaddr>,
    next_inbound: u64,
    challenge_in: HashMap<u64, ResponseChannel<ChallengeReply>>,
    reconcile_in: HashMap<u64, ResponseChannel<ReconcileReply>>,
    cert_in: HashMap<u64, ResponseChannel<CertReply>>,
    challenge_out: Pending<ChallengeReply>,
    reconcile_out: Pending<ReconcileReply>,
    cert_out: Pending<CertReply>,
    guard: Guard,
}

fn build_swarm(
    key: identity::Keypair,
    config: &P2pSection,
    behaviour: Behaviour,
) -> anyhow::Result<Swarm<Behaviour>> {
    let tcp = libp2p::tcp::Config::default().nodelay(true);
    let builder = libp2p::SwarmBuilder::with_existing_identity(key)
        .with_tokio()
        .with_tcp(
            tcp,
            libp2p::noise::Config::new,
            libp2p::yamux::Config::default,
        )?;
    let swarm_config =
        |c: libp2p::swarm::Config| c.with_idle_connection_timeout(Duration::from_secs(120));
    if config.quic {
        #[cfg(feature = "quic")]
        {
            return Ok(builder
                .with_quic()
                .with_behaviour(|_| behaviour)?
                .with_swarm_config(swarm_config)
                .build());
        }
        #[cfg(not(feature = "quic"))]
        anyhow::bail!("p2p.quic = true needs a build with `--features quic`");
    }
    Ok(builder
        .with_behaviour(|_| behaviour)?
        .with_swarm_config(swarm_config)
        .build())
}

impl EventLoop {
    pub(super) fn new(
        key: identity::Keypair,
        config: &P2pSection,
        params_digest: String,
        members: Vec<PeerId>,
        commands: mpsc::Receiver<Command>,
        events: mpsc::Sender<NetworkEvent>,
        metrics: Arc<Metrics>,
    ) -> anyhow::Result<Self> {
        let behaviour = Behaviour::new(&key, config, &params_digest)?;
        let mut swarm = build_swarm(key, config, behaviour)?;
        swarm.behaviour_mut().kad.set_mode(Some(kad::Mode::Server));
        for addr in &config.listen {
            let addr: Multiaddr = addr
                .parse()
                .map_err(|e| anyhow::anyhow!("p2p.listen `{addr}`: {e}"))?;
            swarm.listen_on(addr.clone()).map_err(|e| {
                anyhow::anyhow!("cannot listen on {addr}: {e}; choose another p2p.listen address")
            })?;
        }
        let bootstrap = config
            .bootstrap
            .iter()
            .map(|a| {
                a.parse()
                    .map_err(|e| anyhow::anyhow!("p2p.bootstrap `{a}`: {e}"))
            })
            .collect::<anyhow::Result<Vec<Multiaddr>>>()?;
        Ok(Self {
            swarm,
            commands,
            events,
            metrics,
            params_digest,
            bootstrap,
            next_inbound: 0,
            challenge_in: HashMap::new(),
            reconcile_in: HashMap::new(),
            cert_in: HashMap::new(),
            challenge_out: HashMap::new(),
            reconcile_out: HashMap::new(),
            cert_out: HashMap::new(),
            guard: Guard::new(members, config),
        })
    }

    /// Runs until `shutdown` is cancelled or every client handle is dropped.
    pub async fn run(mut self, shutdown: CancellationToken) {
        self.dial_bootstrap();
        let mut redial = tokio::time::interval(Duration::from_secs(5));
        let mut expire = tokio::time::interval(Duration::from_secs(1));
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => break,
                event = self.swarm.select_next_some() => self.on_swarm_event(event),
                command = self.commands.recv() => match command {
                    Some(command) => self.on_command(command),
                    None => break,
                },
                _ = redial.tick() => self.dial_bootstrap(),
                _ = expire.tick() => self.expire_bans(),
            }
        }
        tracing::info!("network stopped");
    }

    /// Dials the bootstrap peers that are not connected (also how a restarted peer is found).
    fn dial_bootstrap(&mut self) {
        for addr in self.bootstrap.clone() {
            let Some(Protocol::P2p(peer)) = addr.iter().last() else {
                continue;
            };
            if peer == *self.swarm.local_peer_id() || self.swarm.is_connected(&peer) {
                continue;
            }
            self.swarm
                .behaviour_mut()
                .kad
                .add_address(&peer, addr.clone());
            if let Err(e) = self.swarm.dial(addr.clone()) {
                tracing::debug!(%addr, error = %e, "dial failed");
            }
        }
    }

    fn emit(&mut self, event: NetworkEvent, queue: &str) -> bool {
        match self.events.try_send(event) {
            Ok(()) => true,
            Err(_) => {
                self.metrics.drop_in(queue);
                false
            }
        }
    }

    fn expire_bans(&mut self) {
        for peer in self.guard.expire(Instant::now()) {
            tracing::info!(%peer, "ban ended");
            self.swarm.behaviour_mut().blocked.unblock_peer(peer);
        }
    }

    fn inbound_id(&mut self) -> u64 {
        self.next_inbound += 1;
        self.next_inbound
    }

    fn on_swarm_event(&mut self, event: SwarmEvent<BehaviourEvent>) {
        match event {
            SwarmEvent::NewListenAddr { address, .. } => {
                let full = address
                    .clone()
                    .with(Protocol::P2p(*self.swarm.local_peer_id()));
                tracing::info!(address = %full, "p2p listening");
                self.emit(NetworkEvent::Listening(full), "events");
            }
            SwarmEvent::ConnectionEstablished { peer_id, .. } => {
                tracing::debug!(%peer_id, "connected");
                self.metrics
                    .peers
                    .set(self.swarm.connected_peers().count() as i64);
            }
            SwarmEvent::ConnectionClosed {
                peer_id,
                num_established,
                ..
            } => {
                if num_established == 0 {
                    tracing::debug!(%peer_id, "disconnected");
                }
                self.metrics
                    .peers
                    .set(self.swarm.connected_peers().count() as i64);
            }
            SwarmEvent::Behaviour(event) => self.on_behaviour_event(event),
            _ => {}
        }
    }

    fn on_behaviour_event(&mut self, event: BehaviourEvent) {
        match event {
            BehaviourEvent::Gossipsub(gossipsub::Event::Message {
                propagation_source,
                message_id,
                message,
            }) => {
                let Some(topic) = Topic::from_name(message.topic.as_str()) else {
                    self.report(&message_id, &propagation_source, None, Validation::Reject);
                    return;
                };
                let gate =
                    self.guard
                        .gossip(topic, propagation_source, message.source, Instant::now());
                if let GossipGate::Settle(result, why) = gate {
                    tracing::debug!(peer = %propagation_source, author = ?message.source, topic = topic.label(), why, "gossip settled before validation");
                    self.report_as(&message_id, &propagation_source, Some(topic), result, why);
                    return;
                }
                let event = NetworkEvent::Gossip {
                    topic,
                    data: message.data,
                    id: message_id.clone(),
                    source: propagation_source,
                    received: std::time::Instant::now(),
                };
                if !self.emit(event, "gossip") {
                    self.report(
                        &message_id,
                        &propagation_source,
                        Some(topic),
                        Validation::Ignore,
                    );
                }
            }
            // Messages gossipsub gave up sending to a peer whose queue stayed full (a publish
            // waits 5 s, a forward 1 s): lost for that peer until reconciliation.
            BehaviourEvent::Gossipsub(gossipsub::Event::SlowPeer {
                peer_id,
                failed_messages,
            }) => {
                let lost = failed_messages.priority + failed_messages.non_priority;
                self.metrics.drop_many("gossip_send", lost as u64);
                tracing::warn!(%peer_id, priority = failed_messages.priority, non_priority = failed_messages.non_priority, "gossip messages to a slow peer dropped");
            }
            BehaviourEvent::Identify(identify::Event::Received { peer_id, info, .. }) => {
                let member = self.guard.is_member(&peer_id);
                if let Err(refusal) = check_identify(
                    member,
                    &info.protocol_version,
                    &info.agent_version,
                    &self.params_digest,
                ) {
                    tracing::warn!(
                        %peer_id,
                        member,
                        check = refusal.check,
                        why = %refusal.why,
                        agent = %info.agent_version,
                        protocol = %info.protocol_version,
                        "refusing peer at identify; disconnecting"
                    );
                    self.ban(peer_id);
                    return;
                }
                for addr in info.listen_addrs {
                    self.swarm.behaviour_mut().kad.add_address(&peer_id, addr);
                }
            }
            // An inbound request the node cannot take (its event queue is full) is answered at
            // once: its channel is not kept waiting for a reply that will never come.
            BehaviourEvent::Challenge(event) => {
                let Some((peer, channel, request)) = inbound(event, &mut self.challenge_out) else {
                    return;
                };
                if let Err(refusal) = self.guard.rpc(peer, false, Instant::now()) {
                    self.metrics.drop_in(&format!("rpc_{}", refusal.code()));
                    let reply = ChallengeReply::Rejected(refused(refusal.code()));
                    let _ = self
                        .swarm
                        .behaviour_mut()
                        .challenge
                        .send_response(channel, reply);
                    return;
                }
                let id = self.inbound_id();
                self.challenge_in.insert(id, channel);
                if !self.emit(NetworkEvent::Challenge { id, request }, "rpc") {
                    let reply = Box::new(ChallengeReply::Rejected(overloaded()));
                    self.on_command(Command::ReplyChallenge { id, reply });
                }
            }
            BehaviourEvent::Reconcile(event) => {
                let Some((peer, channel, request)) = inbound(event, &mut self.reconcile_out) else {
                    return;
                };
                if let Err(refusal) = self.guard.rpc(peer, true, Instant::now()) {
                    self.metrics.drop_in(&format!("rpc_{}", refusal.code()));
                    let reply = ReconcileReply::Rejected(refused(refusal.code()));
                    let _ = self
                        .swarm
                        .behaviour_mut()
                        .reconcile
                        .send_response(channel, reply);
                    return;
                }
                let id = self.inbound_id();
                self.reconcile_in.insert(id, channel);
                if !self.emit(NetworkEvent::Reconcile { id, peer, request }, "rpc") {
                    let reply = ReconcileReply::Rejected(overloaded());
                    self.on_command(Command::ReplyReconcile { id, reply });
                }
            }
            BehaviourEvent::Cert(event) => {
                let Some((peer, channel, request)) = inbound(event, &mut self.cert_out) else {
                    return;
                };
                if let Err(refusal) = self.guard.rpc(peer, false, Instant::now()) {
                    // The certificate protocol has no rejection: dropping the channel fails
                    // the request at the peer.
                    self.metrics.drop_in(&format!("rpc_{}", refusal.code()));
                    return;
                }
                let id = self.inbound_id();
                self.cert_in.insert(id, channel);
                if !self.emit(NetworkEvent::Cert { id, request }, "rpc") {
                    self.on_command(Command::ReplyCert {
                        id,
                        reply: CertReply(None),
                    });
                }
            }
            _ => {}
        }
    }

    fn report(
        &mut self,
        id: &gossipsub::MessageId,
        source: &PeerId,
        topic: Option<Topic>,
        result: Validation,
    ) {
        let label = match result {
            Validation::Accept => "accept",
            Validation::Reject => "reject",
            Validation::Ignore => "ignore",
        };
        self.report_as(id, source, topic, result, label);
    }

    /// Reports a verdict to gossipsub, counting it under `label` (the verdict, or why the
    /// event loop settled the message itself).
    fn report_as(
        &mut self,
        id: &gossipsub::MessageId,
        source: &PeerId,
        topic: Option<Topic>,
        result: Validation,
        label: &str,
    ) {
        let acceptance = match result {
            Validation::Accept => gossipsub::MessageAcceptance::Accept,
            Validation::Reject => gossipsub::MessageAcceptance::Reject,
            Validation::Ignore => gossipsub::MessageAcceptance::Ignore,
        };
        self.swarm
            .behaviour_mut()
            .gossipsub
            .report_message_validation_result(id, source, acceptance);
        let label = GossipLabel {
            topic: topic.map(Topic::label).unwrap_or("unknown").into(),
            result: label.into(),
        };
        self.metrics.gossip.get_or_create(&label).inc();
        if result == Validation::Reject && self.guard.strike(*source) {
            tracing::warn!(peer = %source, member = self.guard.is_member(source), "peer sent {MAX_STRIKES} invalid gossip messages; disconnecting");
            self.ban(*source);
        }
    }

    /// Blocks `peer` for the configured ban duration and drops its connections.
    fn ban(&mut self, peer: PeerId) {
        self.guard.ban(peer, Instant::now());
        self.swarm.behaviour_mut().blocked.block_peer(peer);
        let _ = self.swarm.disconnect_peer_id(peer);
        self.metrics.peers_banned.inc();
    }

    fn on_command(&mut self, command: Command) {
        let b = self.swarm.behaviour_mut();
        match command {
            Command::Publish { topic, data } => {
                match b
                    .gossipsub
                    .publish(gossipsub::IdentTopic::new(topic.name()), data)
                {
                    Ok(_) => {}
                    // No peers yet (a single node) or a duplicate: nothing is lost.
                    Err(
                        e @ (gossipsub::PublishError::NoPeersSubscribedToTopic
                        | gossipsub::PublishError::Duplicate),
                    ) => {
                        tracing::debug!(topic = topic.label(), error = %e, "publish skipped");
                    }
                    // Every peer's send queue full, or worse: the message is lost here
                    // (reconciliation repairs acceptances and registrations, later).
                    Err(e) => {
                        self.metrics.drop_in("publish_failed");
                        tracing::warn!(topic = topic.label(), error = %e, "publish failed");
                    }
                }
            }
            Command::Validate {
                id,
                source,
                result,
                topic,
            } => self.report(&id, &source, Some(topic), result),
            Command::Challenge {
                peer,
                request,
                reply,
            } => {
                let id = b.challenge.send_request(&peer, request);
                self.challenge_out.insert(id, reply);
            }
            Command::Reconcile {
                peer,
                request,
                reply,
            } => {
                let id = b.reconcile.send_request(&peer, request);
                self.reconcile_out.insert(id, reply);
            }
            Command::Cert {
                peer,
                request,
                reply,
            } => {
                let id = b.cert.send_request(&peer, request);
                self.cert_out.insert(id, reply);
            }
            Command::ReplyChallenge { id, reply } => {
                if let Some(channel) = self.challenge_in.remove(&id) {
                    let _ = self
                        .swarm
                        .behaviour_mut()
                        .challenge
                        .send_response(channel, *reply);
                }
            }
            Command::ReplyReconcile { id, reply } => {
                if let Some(channel) = self.reconcile_in.remove(&id) {
                    let _ = self
                        .swarm
                        .behaviour_mut()
                        .reconcile
                        .send_response(channel, reply);
                }
            }
            Command::ReplyCert { id, reply } => {
                if let Some(channel) = self.cert_in.remove(&id) {
                    let _ = self
                        .swarm
                        .behaviour_mut()
                        .cert
                        .send_response(channel, reply);
                }
            }
            Command::Peers { reply } => {
                let _ = reply.send(self.swarm.connected_peers().copied().collect());
            }
            Command::Block { peer } => {
                b.blocked.block_peer(peer);
                let _ = self.swarm.disconnect_peer_id(peer);
            }
            Command::Unblock { peer } => {
                b.blocked.unblock_peer(peer);
            }
        }
    }
}

/// The reply to a request the node has no room for.
fn overloaded() -> Rejection {
    Rejection {
        code: "overloaded".into(),
        message: "the node's event queue is full; retry shortly".into(),
        opens_at: None,
    }
}

/// The reply to a request this peer may not make, or not so often.
fn refused(code: &str) -> Rejection {
    Rejection {
        code: code.into(),
        message: match code {
            "not_a_member" => "this protocol answers committee members only".into(),
            _ => "too many requests from this peer; retry after a pause".into(),
        },
        opens_at: None,
    }
}

/// Handles a request-response event: completes outbound requests, returns inbound ones with
/// the requesting peer.
fn inbound<Req, Resp>(
    event: request_response::Event<Req, Resp>,
    pending: &mut Pending<Resp>,
) -> Option<(PeerId, ResponseChannel<Resp>, Req)> {
    match event {
        request_response::Event::Message { peer, message, .. } => match message {
            request_response::Message::Request {
                request, channel, ..
            } => Some((peer, channel, request)),
            request_response::Message::Response {
                request_id,
                response,
            } => {
                if let Some(tx) = pending.remove(&request_id) {
                    let _ = tx.send(Ok(response));
                }
                None
            }
        },
        request_response::Event::OutboundFailure {
            request_id, error, ..
        } => {
            if let Some(tx) = pending.remove(&request_id) {
                let _ = tx.send(Err(RpcError::Failed(error.to_string())));
            }
            None
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "event_loop_tests.rs"]
mod tests;
