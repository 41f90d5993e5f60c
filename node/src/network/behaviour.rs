//! The composed libp2p behaviour.

use std::time::Duration;

use libp2p::request_response::{self, ProtocolSupport, cbor};
use libp2p::swarm::NetworkBehaviour;
use libp2p::{
    StreamProtocol, allow_block_list, connection_limits, gossipsub, identify, identity, kad, ping,
};

use super::protocol::{
    CertReply, CertRpc, ChallengeReply, ChallengeRpc, MAX_GOSSIP_FRAME, ReconcileReply,
    ReconcileRpc, Topic,
};
use crate::config::P2pSection;

/// Everything the swarm runs.
#[derive(NetworkBehaviour)]
pub struct Behaviour {
    pub limits: connection_limits::Behaviour,
    pub blocked: allow_block_list::Behaviour<allow_block_list::BlockedPeers>,
    pub identify: identify::Behaviour,
    pub ping: ping::Behaviour,
    pub kad: kad::Behaviour<kad::store::MemoryStore>,
    pub gossipsub: gossipsub::Behaviour,
    pub challenge: cbor::Behaviour<ChallengeRpc, ChallengeReply>,
    pub reconcile: cbor::Behaviour<ReconcileRpc, ReconcileReply>,
    pub cert: cbor::Behaviour<CertRpc, CertReply>,
}

/// The identify protocol version; the agent version carries the parameter digest.
pub const PROTOCOL_VERSION: &str = "/hco/1.0.0";

fn rpc<Req, Resp>(
    name: &'static str,
    max_request: u64,
    max_response: u64,
) -> cbor::Behaviour<Req, Resp>
where
    Req: Send + Clone + serde::Serialize + serde::de::DeserializeOwned + 'static,
    Resp: Send + Clone + serde::Serialize + serde::de::DeserializeOwned + 'static,
{
    let codec = cbor::codec::Codec::default()
        .set_request_size_maximum(max_request)
        .set_response_size_maximum(max_response);
    request_response::Behaviour::with_codec(
        codec,
        [(StreamProtocol::new(name), ProtocolSupport::Full)],
        request_response::Config::default().with_request_timeout(Duration::from_secs(10)),
    )
}

fn gossip_scoring() -> (gossipsub::PeerScoreParams, gossipsub::PeerScoreThresholds) {
    let mut params = gossipsub::PeerScoreParams::default();
    for topic in Topic::ALL {
        let hash = gossipsub::IdentTopic::new(topic.name()).hash();
        let topic_params = gossipsub::TopicScoreParams {
            invalid_message_deliveries_weight: -100.0,
            invalid_message_deliveries_decay: 0.9,
            ..Default::default()
        };
        params.topics.insert(hash, topic_params);
    }
    let thresholds = gossipsub::PeerScoreThresholds {
        gossip_threshold: -100.0,
        publish_threshold: -500.0,
        graylist_threshold: -1000.0,
        ..Default::default()
    };
    (params, thresholds)
}

impl Behaviour {
    /// Builds the behaviour for `key`, advertising `params_digest`.
    pub fn new(
        key: &identity::Keypair,
        config: &P2pSection,
        params_digest: &str,
    ) -> anyhow::Result<Self> {
        let peer_id = key.public().to_peer_id();
        if config.max_message_bytes < MAX_GOSSIP_FRAME {
            anyhow::bail!(
                "p2p.max_message_bytes = {} is below the largest gossip frame nodes send ({MAX_GOSSIP_FRAME}); raise it",
                config.max_message_bytes
            );
        }
        let gossip_config = gossipsub::ConfigBuilder::default()
            .validation_mode(gossipsub::ValidationMode::Strict)
            .validate_messages()
            .max_transmit_size(config.max_message_bytes)
            .heartbeat_interval(Duration::from_millis(500))
            // Content-addressed ids: the same summary published twice is one message.
            .message_id_fn(|m: &gossipsub::Message| {
                gossipsub::MessageId::from(blake3::hash(&m.data).to_hex().to_string())
            })
            .build()
            .map_err(|e| anyhow::anyhow!("gossipsub config: {e}"))?;
        let mut gossipsub = gossipsub::Behaviour::new(
            gossipsub::MessageAuthenticity::Signed(key.clone()),
            gossip_config,
        )
        .map_err(|e| anyhow::anyhow!("gossipsub: {e}"))?;
        let (score, thresholds) = gossip_scoring();
        gossipsub
            .with_peer_score(score, thresholds)
            .map_err(|e| anyhow::anyhow!("gossipsub scoring: {e}"))?;
        for topic in Topic::ALL {
            gossipsub.subscribe(&gossipsub::IdentTopic::new(topic.name()))?;
        }
        let limits = connection_limits::ConnectionLimits::default()
            .with_max_established(Some(config.max_connections))
            .with_max_established_per_peer(Some(config.max_connections_per_peer))
            .with_max_pending_incoming(Some(config.max_connections));
        let mut kad_config = kad::Config::new(StreamProtocol::new("/hco/kad/1.0.0"));
        kad_config.set_query_timeout(Duration::from_secs(30));
        Ok(Self {
            limits: connection_limits::Behaviour::new(limits),
            blocked: allow_block_list::Behaviour::default(),
            identify: identify::Behaviour::new(
                identify::Config::new(PROTOCOL_VERSION.into(), key.public()).with_agent_version(
                    format!("hco/{} params={params_digest}", env!("CARGO_PKG_VERSION")),
                ),
            ),
            ping: ping::Behaviour::new(ping::Config::new()),
            kad: kad::Behaviour::with_config(
                peer_id,
                kad::store::MemoryStore::new(peer_id),
                kad_config,
            ),
            gossipsub,
            challenge: rpc("/hco/challenge/1", 96 * 1024, 1 << 20),
            reconcile: rpc("/hco/reconcile/3", 64 * 1024, 16 << 20),
            cert: rpc("/hco/cert/1", 1024, 1 << 20),
        })
    }
}
