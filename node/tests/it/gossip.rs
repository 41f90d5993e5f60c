//! A raw libp2p peer against a real node process: a peer with other network parameters is
//! refused, a peer that keeps sending invalid gossip is scored down and disconnected, and an
//! observer of another implementation reads gossip and publishes registrations only within its
//! rate limit.

use std::time::Duration;

use futures::StreamExt;
use libp2p::swarm::{NetworkBehaviour, SwarmEvent};
use libp2p::{Multiaddr, PeerId, gossipsub, identify, identity, noise, tcp, yamux};
use serde_json::Value;

use crate::support::{Single, get};

#[derive(NetworkBehaviour)]
struct Peer {
    gossipsub: gossipsub::Behaviour,
    identify: identify::Behaviour,
}

fn swarm(params_digest: &str) -> libp2p::Swarm<Peer> {
    client_swarm("/hco/1.0.0", &format!("test params={params_digest}"))
}

/// A swarm with the identify strings of the caller's choice.
fn client_swarm(protocol_version: &str, agent_version: &str) -> libp2p::Swarm<Peer> {
    let key = identity::Keypair::generate_ed25519();
    libp2p::SwarmBuilder::with_existing_identity(key.clone())
        .with_tokio()
        .with_tcp(
            tcp::Config::default(),
            noise::Config::new,
            yamux::Config::default,
        )
        .unwrap()
        .with_behaviour(|key| Peer {
            gossipsub: gossipsub::Behaviour::new(
                gossipsub::MessageAuthenticity::Signed(key.clone()),
                gossipsub::ConfigBuilder::default()
                    .heartbeat_interval(Duration::from_millis(200))
                    .build()
                    .unwrap(),
            )
            .unwrap(),
            identify: identify::Behaviour::new(
                identify::Config::new(protocol_version.into(), key.public())
                    .with_agent_version(agent_version.into()),
            ),
        })
        .unwrap()
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(30)))
        .build()
}

fn node_address(node: &Single) -> (Multiaddr, PeerId) {
    let info: Value =
        serde_json::from_slice(&std::fs::read(node.dir.path().join("ledger/node.json")).unwrap())
            .unwrap();
    let addr: Multiaddr = info["p2p"][0].as_str().unwrap().parse().unwrap();
    let Some(libp2p::multiaddr::Protocol::P2p(peer)) = addr.iter().last() else {
        panic!("{addr}")
    };
    (addr, peer)
}

fn metric(node: &Single, name: &str) -> f64 {
    crate::support::metric(&node.metrics_url, name)
}

/// Runs the swarm until `done` says so or the time runs out; returns whether it finished.
async fn drive(
    swarm: &mut libp2p::Swarm<Peer>,
    limit: Duration,
    mut done: impl FnMut(&SwarmEvent<PeerEvent>) -> bool,
) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, swarm.select_next_some()).await {
            Ok(event) if done(&event) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn devnet_gossip_a_peer_with_other_parameters_is_disconnected() {
    let node = Single::start("[network]\ndevelopment = true\n");
    let (addr, peer) = node_address(&node);
    let mut s = swarm(&"00".repeat(32));
    s.dial(addr).unwrap();
    let closed = drive(
        &mut s,
        Duration::from_secs(15),
        |e| matches!(e, SwarmEvent::ConnectionClosed { peer_id, .. } if *peer_id == peer),
    )
    .await;
    assert!(closed, "the node kept a peer with other network parameters");
    assert!(metric(&node, "hco_peers_banned_total") >= 1.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn devnet_gossip_invalid_messages_get_a_peer_scored_down_and_disconnected() {
    let node = Single::start("[p2p]\nban_duration = \"2s\"\n[network]\ndevelopment = true\n");
    let digest = get(&node.url, "/v1/params").unwrap()["digest"]
        .as_str()
        .unwrap()
        .to_owned();
    let (addr, peer) = node_address(&node);
    let mut s = swarm(&digest);
    let topic = gossipsub::IdentTopic::new("hco/acceptance/1");
    s.behaviour_mut().gossipsub.subscribe(&topic).unwrap();
    s.dial(addr.clone()).unwrap();
    let subscribed = drive(&mut s, Duration::from_secs(15), |e| {
        matches!(e, SwarmEvent::Behaviour(PeerEvent::Gossipsub(gossipsub::Event::Subscribed { peer_id, .. })) if *peer_id == peer)
    })
    .await;
    assert!(subscribed, "the node never subscribed us to its topics");
    // Garbage that does not decode as sealed acceptances, distinct so none is a duplicate.
    let is_close = |e: &SwarmEvent<PeerEvent>| matches!(e, SwarmEvent::ConnectionClosed { peer_id, .. } if *peer_id == peer);
    let mut closed = false;
    for i in 0..8u8 {
        if closed {
            break;
        }
        let _ = s
            .behaviour_mut()
            .gossipsub
            .publish(topic.clone(), vec![0xff, i, 0x13, 0x37]);
        closed = drive(&mut s, Duration::from_millis(150), is_close).await;
    }
    closed = closed || drive(&mut s, Duration::from_secs(15), is_close).await;
    // Refused as invalid, here already because the author is not a committee member.
    let validations = metric(
        &node,
        "hco_gossip_validations_total{topic=\"acceptance\",result=\"reject\"}",
    ) + metric(
        &node,
        "hco_gossip_validations_total{topic=\"acceptance\",result=\"not_a_member\"}",
    );
    assert!(
        closed,
        "the node kept a peer that sent invalid gossip ({validations} rejected)"
    );
    assert!(validations >= 5.0, "{validations} rejected");
    assert!(metric(&node, "hco_peers_banned_total") >= 1.0);
    // Nothing it sent was recorded.
    assert_eq!(
        get(&node.url, "/v1/windows/0").unwrap()["active_count_local"],
        0
    );
    // The ban ends on its own: the same peer is let in again.
    let mut back = false;
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if s.dial(addr.clone()).is_err() {
            continue;
        }
        back = drive(&mut s, Duration::from_secs(2), |e| {
            matches!(e, SwarmEvent::Behaviour(PeerEvent::Gossipsub(gossipsub::Event::Subscribed { peer_id, .. })) if *peer_id == peer)
        })
        .await;
        if back {
            break;
        }
    }
    assert!(back, "the peer was still refused after its ban ended");
}

fn now_ms() -> u64 {
    use hco_oracle::Clock;
    hco_oracle::SystemClock.now()
}

fn registered(node: &Single, key: &ed25519_dalek::SigningKey) -> bool {
    let id = hco_oracle::IdentityId(key.verifying_key().to_bytes());
    get(&node.url, &format!("/v1/identities/{id}")).is_some()
}

#[tokio::test(flavor = "multi_thread")]
async fn devnet_gossip_an_observer_reads_gossip_and_publishes_registrations_within_its_limit() {
    use hco_challenges::Class;
    use hco_oracle::{SignedRegister, codec, testing};

    const BURST: u32 = 3;
    const PER_SECOND: u32 = 1;
    const SENT: u64 = 20;
    let node = Single::start(&format!(
        "[p2p]\nobserver_gossip_per_second = {PER_SECOND}\nobserver_gossip_burst = {BURST}\n\
         [network]\ndevelopment = true\n"
    ));
    let (addr, peer) = node_address(&node);
    // What a stock client of another implementation sends: its own protocol version and an
    // agent string without the network parameters.
    let mut s = client_swarm("ipfs/0.1.0", "js-libp2p/3.3.0 UserAgent=node");
    let topic = gossipsub::IdentTopic::new("hco/registry/1");
    s.behaviour_mut().gossipsub.subscribe(&topic).unwrap();
    // Members publish their gateways' registrations coalesced, on a topic of their own.
    let batches = gossipsub::IdentTopic::new("hco/registry-batch/1");
    s.behaviour_mut().gossipsub.subscribe(&batches).unwrap();
    s.dial(addr).unwrap();
    let subscribed = drive(&mut s, Duration::from_secs(15), |e| {
        matches!(e, SwarmEvent::Behaviour(PeerEvent::Gossipsub(gossipsub::Event::Subscribed { peer_id, .. })) if *peer_id == peer)
    })
    .await;
    assert!(subscribed, "the node never subscribed us to its topics");

    // Reading: registrations made over HTTP reach the observer as gossip.
    let mut heard = false;
    for i in 0..10 {
        let key = testing::key(7_000 + i);
        let reg = SignedRegister::new(&key, Class::Agent, now_ms());
        let url = node.url.clone();
        let status = tokio::task::spawn_blocking(move || {
            crate::support::post(&url, "/v1/identities", &reg).0
        })
        .await
        .unwrap();
        assert_eq!(status, 201);
        let id = key.verifying_key().to_bytes();
        heard = drive(&mut s, Duration::from_secs(2), |e| match e {
            SwarmEvent::Behaviour(PeerEvent::Gossipsub(gossipsub::Event::Message {
                message,
                ..
            })) => codec::decode::<Vec<SignedRegister>>(&message.data, 1 << 16)
                .is_ok_and(|regs| regs.iter().any(|r| r.body.id.0 == id)),
            _ => false,
        })
        .await;
        if heard {
            break;
        }
    }
    assert!(heard, "the observer never received registry gossip");

    // Publishing: as fast as it can, more registrations than its burst.
    let keys: Vec<_> = (0..SENT).map(|i| testing::key(8_000 + i)).collect();
    let started = std::time::Instant::now();
    for key in &keys {
        let reg = SignedRegister::new(key, Class::Agent, now_ms());
        s.behaviour_mut()
            .gossipsub
            .publish(topic.clone(), codec::encode(&reg))
            .unwrap();
    }
    // Let the swarm send them (and keep the connection alive) while the node judges them.
    let judged = |node: &Single| {
        ["accept", "ignore", "reject", "rate_limited"]
            .iter()
            .map(|r| {
                metric(
                    node,
                    &format!("hco_gossip_validations_total{{topic=\"registry\",result=\"{r}\"}}"),
                )
            })
            .sum::<f64>()
    };
    for _ in 0..100 {
        drive(&mut s, Duration::from_millis(100), |_| false).await;
        if judged(&node) >= SENT as f64 {
            break;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let recorded = keys.iter().filter(|k| registered(&node, k)).count() as f64;
    let limited = metric(
        &node,
        "hco_gossip_validations_total{topic=\"registry\",result=\"rate_limited\"}",
    );
    // The bucket allows its burst and what it refilled while the messages arrived.
    let allowed = f64::from(BURST) + (elapsed * f64::from(PER_SECOND)).ceil();
    assert!(
        recorded >= 1.0,
        "nothing the observer published was recorded"
    );
    assert!(
        recorded <= allowed,
        "{recorded} of {SENT} recorded, at most {allowed} allowed"
    );
    assert!(limited >= SENT as f64 - allowed, "{limited} rate-limited");
    // Dropped over its limit, not punished: the observer is still connected.
    assert_eq!(metric(&node, "hco_peers_banned_total"), 0.0);
    assert!(s.is_connected(&peer));
}

#[tokio::test(flavor = "multi_thread")]
async fn devnet_gossip_registrations_are_rechecked_for_their_proof_of_work() {
    use hco_challenges::Class;
    use hco_oracle::{SignedRegister, codec, register_pow, testing};

    const BITS: u32 = 10;
    let node = Single::start(&format!(
        "[network]\ndevelopment = true\nregistration_pow_bits = {BITS}\n"
    ));
    let (addr, peer) = node_address(&node);
    let mut s = client_swarm("ipfs/0.1.0", "js-libp2p/3.3.0 UserAgent=node");
    let topic = gossipsub::IdentTopic::new("hco/registry/1");
    s.behaviour_mut().gossipsub.subscribe(&topic).unwrap();
    s.dial(addr).unwrap();
    let subscribed = drive(&mut s, Duration::from_secs(15), |e| {
        matches!(e, SwarmEvent::Behaviour(PeerEvent::Gossipsub(gossipsub::Event::Subscribed { peer_id, .. })) if *peer_id == peer)
    })
    .await;
    assert!(subscribed, "the node never subscribed us to its topics");

    let now = now_ms();
    let (missing, weak, proven) = (
        testing::key(9_001),
        testing::key(9_002),
        testing::key(9_003),
    );
    let weak_id = testing::identity_id(&weak);
    let nonce = (0..)
        .find(|n| register_pow::leading_zero_bits(&register_pow::hash(&weak_id, now, *n)) < BITS)
        .unwrap();
    let sent = [
        SignedRegister::new(&missing, Class::Agent, now),
        SignedRegister::with_nonce(&weak, Class::Agent.into(), now, Some(nonce)),
        SignedRegister::proven(&proven, Class::Agent.into(), now, BITS),
    ];
    for reg in &sent {
        s.behaviour_mut()
            .gossipsub
            .publish(topic.clone(), codec::encode(reg))
            .unwrap();
    }
    let judged = |node: &Single| {
        ["accept", "ignore", "reject", "rate_limited"]
            .iter()
            .map(|r| {
                metric(
                    node,
                    &format!("hco_gossip_validations_total{{topic=\"registry\",result=\"{r}\"}}"),
                )
            })
            .sum::<f64>()
    };
    for _ in 0..100 {
        drive(&mut s, Duration::from_millis(100), |_| false).await;
        if judged(&node) >= sent.len() as f64 {
            break;
        }
    }
    let limited = metric(
        &node,
        "hco_gossip_validations_total{topic=\"registry\",result=\"rate_limited\"}",
    );
    assert_eq!(limited, 0.0, "within the observer's burst");
    assert!(
        registered(&node, &proven),
        "the proven registration was not recorded"
    );
    assert!(!registered(&node, &missing), "recorded without a proof");
    assert!(!registered(&node, &weak), "recorded with too weak a proof");
    let accepted = metric(
        &node,
        "hco_gossip_validations_total{topic=\"registry\",result=\"accept\"}",
    );
    assert_eq!(accepted, 1.0);
    // A missing or weak proof is the sender's fault: rejected (a strike), not ignored.
    let rejected = metric(
        &node,
        "hco_gossip_validations_total{topic=\"registry\",result=\"reject\"}",
    );
    assert_eq!(rejected, 2.0);
}
