//! The libp2p side of the node, in the shape of rust-libp2p's file-sharing example:
//! [`new`] returns a [`NetworkClient`] (commands over a bounded channel, each with a oneshot for
//! its reply), a bounded receiver of [`NetworkEvent`]s, and the [`EventLoop`] that owns the swarm.
//! Nothing outside this module touches the swarm.

mod behaviour;
mod event_loop;
mod guard;
mod peers;
pub mod protocol;
mod rate;

use std::sync::Arc;

use libp2p::gossipsub::MessageId;
use libp2p::{Multiaddr, PeerId, identity};
use tokio::sync::{mpsc, oneshot};

pub use event_loop::EventLoop;
use protocol::{
    CertReply, CertRpc, ChallengeReply, ChallengeRpc, ReconcileReply, ReconcileRpc, Topic,
};

use crate::config::P2pSection;
use crate::metrics::Metrics;

/// Capacity of the command and event channels.
const CHANNEL: usize = 1024;

/// The verdict on a gossip message after the oracle checked it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validation {
    /// Valid: deliver and forward.
    Accept,
    /// Invalid: do not forward; penalise the sender.
    Reject,
    /// Not forwarded, no penalty (duplicate, too old, not ours to judge).
    Ignore,
}

/// What the network tells the node.
#[derive(Debug)]
pub enum NetworkEvent {
    /// A gossip message to validate (report the result with [`NetworkClient::validate`]).
    Gossip {
        /// Its topic.
        topic: Topic,
        /// The payload.
        data: Vec<u8>,
        /// Id for the validation report.
        id: MessageId,
        /// The peer that forwarded it.
        source: PeerId,
        /// When the network task handed it up (after gossipsub's own checks).
        received: std::time::Instant,
    },
    /// A challenge request from a peer; answer with [`NetworkClient::reply_challenge`].
    Challenge {
        /// Reply handle.
        id: u64,
        /// The request.
        request: ChallengeRpc,
    },
    /// A reconciliation request; answer with [`NetworkClient::reply_reconcile`].
    Reconcile {
        /// Reply handle.
        id: u64,
        /// The member asking.
        peer: PeerId,
        /// The request.
        request: ReconcileRpc,
    },
    /// A certificate request; answer with [`NetworkClient::reply_cert`].
    Cert {
        /// Reply handle.
        id: u64,
        /// The request.
        request: CertRpc,
    },
    /// Now listening on an address.
    Listening(Multiaddr),
}

/// Why a request to a peer failed.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// The network task is gone (shutting down).
    #[error("the network task has stopped")]
    Stopped,
    /// The request failed on the wire.
    #[error("request to peer failed: {0}")]
    Failed(String),
}

pub(crate) enum Command {
    Publish {
        topic: Topic,
        data: Vec<u8>,
    },
    Validate {
        id: MessageId,
        source: PeerId,
        result: Validation,
        topic: Topic,
    },
    Challenge {
        peer: PeerId,
        request: ChallengeRpc,
        reply: oneshot::Sender<Result<ChallengeReply, RpcError>>,
    },
    Reconcile {
        peer: PeerId,
        request: ReconcileRpc,
        reply: oneshot::Sender<Result<ReconcileReply, RpcError>>,
    },
    Cert {
        peer: PeerId,
        request: CertRpc,
        reply: oneshot::Sender<Result<CertReply, RpcError>>,
    },
    ReplyChallenge {
        id: u64,
        reply: Box<ChallengeReply>,
    },
    ReplyReconcile {
        id: u64,
        reply: ReconcileReply,
    },
    ReplyCert {
        id: u64,
        reply: CertReply,
    },
    Peers {
        reply: oneshot::Sender<Vec<PeerId>>,
    },
    Block {
        peer: PeerId,
    },
    Unblock {
        peer: PeerId,
    },
}

/// The handle the rest of the node uses to talk to the network task.
#[derive(Clone)]
pub struct NetworkClient {
    tx: mpsc::Sender<Command>,
    metrics: Arc<Metrics>,
    runtime: tokio::runtime::Handle,
}

impl NetworkClient {
    /// The runtime the network was made in (the committee's, see `priority`): where the tasks
    /// that publish this node's gossip run too.
    pub fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }

    async fn send(&self, command: Command) -> Result<(), RpcError> {
        self.tx.send(command).await.map_err(|_| RpcError::Stopped)
    }

    /// Publishes on a gossip topic. Never blocks: a full queue drops (and counts) the message;
    /// reconciliation repairs what gossip loses.
    pub fn publish(&self, topic: Topic, data: Vec<u8>) {
        if self.tx.try_send(Command::Publish { topic, data }).is_err() {
            self.metrics.drop_in("publish");
        }
    }

    /// Reports the oracle's verdict on a gossip message.
    pub async fn validate(&self, id: MessageId, source: PeerId, topic: Topic, result: Validation) {
        let _ = self
            .send(Command::Validate {
                id,
                source,
                result,
                topic,
            })
            .await;
    }

    /// Sends a challenge request or response to a peer (the assigned issuer).
    pub async fn challenge(
        &self,
        peer: PeerId,
        request: ChallengeRpc,
    ) -> Result<ChallengeReply, RpcError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Challenge {
            peer,
            request,
            reply,
        })
        .await?;
        rx.await.map_err(|_| RpcError::Stopped)?
    }

    /// Sends a reconciliation request.
    pub async fn reconcile(
        &self,
        peer: PeerId,
        request: ReconcileRpc,
    ) -> Result<ReconcileReply, RpcError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Reconcile {
            peer,
            request,
            reply,
        })
        .await?;
        rx.await.map_err(|_| RpcError::Stopped)?
    }

    /// Asks a peer for a window certificate.
    pub async fn cert(&self, peer: PeerId, t: u64) -> Result<CertReply, RpcError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Cert {
            peer,
            request: CertRpc { t },
            reply,
        })
        .await?;
        rx.await.map_err(|_| RpcError::Stopped)?
    }

    /// Answers an inbound challenge request.
    pub async fn reply_challenge(&self, id: u64, reply: ChallengeReply) {
        let reply = Box::new(reply);
        let _ = self.send(Command::ReplyChallenge { id, reply }).await;
    }

    /// Answers an inbound reconciliation request.
    pub async fn reply_reconcile(&self, id: u64, reply: ReconcileReply) {
        let _ = self.send(Command::ReplyReconcile { id, reply }).await;
    }

    /// Answers an inbound certificate request.
    pub async fn reply_cert(&self, id: u64, reply: CertReply) {
        let _ = self.send(Command::ReplyCert { id, reply }).await;
    }

    /// Currently connected peers.
    pub async fn peers(&self) -> Vec<PeerId> {
        let (reply, rx) = oneshot::channel();
        if self.send(Command::Peers { reply }).await.is_err() {
            return Vec::new();
        }
        rx.await.unwrap_or_default()
    }

    /// Blocks a peer (and drops its connections): how tests cut a link.
    pub async fn block(&self, peer: PeerId) {
        let _ = self.send(Command::Block { peer }).await;
    }

    /// Unblocks a peer.
    pub async fn unblock(&self, peer: PeerId) {
        let _ = self.send(Command::Unblock { peer }).await;
    }
}

/// Builds the swarm and its channels in the current runtime, which polls its sockets.
/// `params_digest` is advertised and checked on every peer; `members` are the committee's peer
/// ids (see [`peer_id`]).
pub fn new(
    key: identity::Keypair,
    config: &P2pSection,
    params_digest: String,
    members: Vec<PeerId>,
    metrics: Arc<Metrics>,
) -> anyhow::Result<(NetworkClient, mpsc::Receiver<NetworkEvent>, EventLoop)> {
    let (command_tx, command_rx) = mpsc::channel(CHANNEL);
    let (event_tx, event_rx) = mpsc::channel(CHANNEL);
    let event_loop = EventLoop::new(
        key,
        config,
        params_digest,
        members,
        command_rx,
        event_tx,
        metrics.clone(),
    )?;
    Ok((
        NetworkClient {
            tx: command_tx,
            metrics,
            runtime: tokio::runtime::Handle::current(),
        },
        event_rx,
        event_loop,
    ))
}

/// The libp2p keypair of an ed25519 signing key: the node's one key.
pub fn keypair(key: &ed25519_dalek::SigningKey) -> anyhow::Result<identity::Keypair> {
    identity::Keypair::ed25519_from_bytes(key.to_bytes())
        .map_err(|e| anyhow::anyhow!("node key: {e}"))
}

/// The peer id of a committee member.
pub fn peer_id(node: &hco_oracle::NodeId) -> Option<PeerId> {
    let public = identity::ed25519::PublicKey::try_from_bytes(&node.0).ok()?;
    Some(identity::PublicKey::from(public).to_peer_id())
}
