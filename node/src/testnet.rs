//! An in-process committee for tests: each member a real oracle on its own sled ledger, a real
//! libp2p swarm on 127.0.0.1 and the node's service layer, all on one manual clock. No HTTP and
//! no window driver: tests call the service and the oracles directly.

use std::sync::Arc;
use std::time::Duration;

use ed25519_dalek::SigningKey;
use hco_challenges::{Class, Registry};
use hco_oracle::{
    Clock, Ledger, ManualClock, NetworkParams, NodeId, Oracle, Response, SealedAcceptance,
    SignedRegister, SignedRequest, testing,
};
use tokio_util::sync::CancellationToken;

use crate::config::P2pSection;
use crate::metrics::{GossipLabel, Metrics};
use crate::network::{self, NetworkEvent};
use crate::service::{self, Node};

/// A running in-process committee.
pub struct Testnet {
    pub params: NetworkParams,
    pub clock: ManualClock,
    pub nodes: Vec<Arc<Node>>,
    pub metrics: Vec<Arc<Metrics>>,
    shutdown: CancellationToken,
    _dirs: Vec<tempfile::TempDir>,
}

impl Testnet {
    /// Starts `n` members, each dialling the ones started before it, and waits (bounded) until
    /// every member is connected to every other.
    pub async fn start(n: u64) -> Self {
        Self::start_tuned(n, service::sync::Limits::default(), |_| {}).await
    }

    /// [`Testnet::start`] with every member on reconciliation limits `limits`, under the test
    /// parameters as `tweak` changes them.
    pub async fn start_tuned(
        n: u64,
        limits: service::sync::Limits,
        tweak: impl FnOnce(&mut NetworkParams),
    ) -> Self {
        let keys: Vec<SigningKey> = (1..=n).map(testing::key).collect();
        let ids: Vec<NodeId> = keys.iter().map(testing::node_id).collect();
        let mut params = testing::params_for(&ids);
        tweak(&mut params);
        let members: Vec<_> = ids.iter().filter_map(network::peer_id).collect();
        let clock = ManualClock::new(params.window_start(0) + 1_000);
        let shutdown = CancellationToken::new();
        let (mut nodes, mut metrics, mut dirs, mut addrs) = (vec![], vec![], vec![], vec![]);
        for key in keys {
            let dir = tempfile::tempdir().expect("temporary directory");
            let ledger = Ledger::open(dir.path(), params.digest()).expect("ledger");
            let oracle = Oracle::new(params.clone(), Registry::builtin(), key.clone(), ledger)
                .expect("oracle");
            let config = P2pSection {
                listen: vec!["/ip4/127.0.0.1/tcp/0".into()],
                bootstrap: addrs.clone(),
                ..Default::default()
            };
            let mut registry = prometheus_client::registry::Registry::default();
            let m = Arc::new(Metrics::new(&mut registry));
            let (net, mut events, event_loop) = network::new(
                network::keypair(&key).expect("keypair"),
                &config,
                params.digest().to_hex(),
                members.clone(),
                m.clone(),
            )
            .expect("network");
            tokio::spawn(event_loop.run(shutdown.clone()));
            match tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
                Ok(Some(NetworkEvent::Listening(addr))) => addrs.push(addr.to_string()),
                other => panic!("no listen address: {other:?}"),
            }
            let clock: Arc<dyn Clock> = Arc::new(clock.clone());
            let node = Node::start_with(Arc::new(oracle), net, m.clone(), clock, limits);
            tokio::spawn(service::run_events(node.clone(), events));
            nodes.push(node);
            metrics.push(m);
            dirs.push(dir);
        }
        let net = Self {
            params,
            clock,
            nodes,
            metrics,
            shutdown,
            _dirs: dirs,
        };
        net.wait_connected().await;
        net
    }

    async fn wait_connected(&self) {
        let want = self.nodes.len() - 1;
        for _ in 0..300 {
            let mut all = true;
            for node in &self.nodes {
                all &= node.net.peers().await.len() >= want;
            }
            if all {
                // Subscriptions are exchanged as connections open; one heartbeat grafts.
                tokio::time::sleep(Duration::from_secs(1)).await;
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the committee did not connect within 30 s");
    }

    /// Registers `key` on every member's oracle (as gossip would), with the proof of work the
    /// params require.
    pub fn register(&self, key: &SigningKey, class: Class) {
        let now = self.clock.now();
        let reg = SignedRegister::proven(key, class.into(), now, self.params.registration_pow_bits);
        for node in &self.nodes {
            node.oracle.register(&reg, now).unwrap().unwrap();
        }
    }

    /// The index of `key`'s issuer in window `t`.
    pub fn issuer_of(&self, key: &SigningKey, t: u64) -> usize {
        let order =
            hco_oracle::secret::issuer_order(&self.params.committee, &testing::identity_id(key), t);
        self.nodes
            .iter()
            .position(|n| n.oracle.node_id() == order[0])
            .unwrap()
    }

    /// Issues `(t, 0)` to each key at member `at` and answers correctly: the responses.
    pub fn answered(&self, at: usize, keys: &[SigningKey], t: u64) -> Vec<Response> {
        let oracle = &self.nodes[at].oracle;
        let now = self.clock.now();
        keys.iter()
            .map(|key| {
                let issued = oracle
                    .issue(&SignedRequest::new(key, t, 0), now)
                    .unwrap()
                    .unwrap();
                let answer = oracle
                    .registry()
                    .get(&issued.prompt.family)
                    .unwrap()
                    .solve(&issued.prompt)
                    .unwrap();
                Response::new(key, issued.challenge, answer)
            })
            .collect()
    }

    /// Member `i`'s acceptances of window `t`.
    pub fn acceptances(&self, i: usize, t: u64) -> Vec<SealedAcceptance> {
        self.nodes[i]
            .oracle
            .ledger()
            .acceptances(t)
            .map(Result::unwrap)
            .collect()
    }

    /// Gossip messages member `i` judged on `topic` with verdict `result`.
    pub fn gossip_count(&self, i: usize, topic: &str, result: &str) -> u64 {
        self.metrics[i]
            .gossip
            .get_or_create(&GossipLabel {
                topic: topic.into(),
                result: result.into(),
            })
            .get()
    }
}

impl Drop for Testnet {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::protocol::MAX_GOSSIP_PAYLOAD;
    use crate::service::MAX_BATCH;

    /// A busy issuer's full verification batch is gossiped in payloads every peer decodes, and
    /// every peer records every acceptance without striking the issuer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn gossip_a_full_batch_is_recorded_by_every_peer() {
        let net = Testnet::start(4).await;
        let t = 0;
        // MAX_BATCH identities all assigned to member 0.
        let keys: Vec<SigningKey> = (1_000..)
            .map(testing::key)
            .filter(|k| net.issuer_of(k, t) == 0)
            .take(MAX_BATCH)
            .collect();
        for key in &keys {
            net.register(key, Class::Agent);
        }
        let responses = net.answered(0, &keys, t);
        let issuer = net.nodes[0].clone();
        let now = net.clock.now();
        let sealed: Vec<SealedAcceptance> = tokio::task::spawn_blocking(move || {
            issuer.oracle.verify_responses(&responses, now).unwrap()
        })
        .await
        .unwrap()
        .into_iter()
        .map(Result::unwrap)
        .collect();
        assert_eq!(sealed.len(), MAX_BATCH);
        // One batch, one seal: as the batcher produces it. Too large for one payload.
        assert!(sealed.iter().all(|s| s.seal == sealed[0].seal));
        assert!(hco_oracle::codec::encode(&sealed).len() > MAX_GOSSIP_PAYLOAD);

        // Every payload decodes within the receivers' limit.
        let payloads = crate::network::protocol::acceptance_payloads(&sealed);
        for p in &payloads {
            let decoded = hco_oracle::codec::decode::<Vec<SealedAcceptance>>(p, MAX_GOSSIP_PAYLOAD);
            assert!(decoded.is_ok(), "{} bytes: {:?}", p.len(), decoded.err());
        }
        net.nodes[0].publish_acceptances(sealed);

        for _ in 0..150 {
            if (1..4).all(|i| net.acceptances(i, t).len() == MAX_BATCH) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Gossip is best effort: on a loaded machine a payload can be dropped from a slow peer's
        // send queue or a full event channel. Whatever a member lacks, it pulls as it would
        // before signing — and whatever it got by gossip it accepted, never rejected.
        let mut by_gossip = 0;
        for i in 1..4 {
            by_gossip += net.gossip_count(i, "acceptance", "accept");
            assert_eq!(net.gossip_count(i, "acceptance", "reject"), 0, "member {i}");
            if net.acceptances(i, t).len() < MAX_BATCH {
                crate::service::sync::pull_acceptances(&net.nodes[i], t).await;
            }
            assert_eq!(net.acceptances(i, t).len(), MAX_BATCH, "member {i}");
        }
        assert!(by_gossip >= 2, "no payload arrived by gossip");
        for m in &net.metrics {
            assert_eq!(m.peers_banned.get(), 0);
        }
    }
}
