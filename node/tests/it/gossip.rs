//! A raw libp2p peer against a real node process: a peer with other network parameters is
//! refused, and a peer that keeps sending invalid gossip is scored down and disconnected.

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
                identify::Config::new("/hco/1.0.0".into(), key.public())
                    .with_agent_version(format!("test params={params_digest}")),
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
    let text = crate::support::agent()
        .get(&format!("{}/metrics", node.url))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    text.lines()
        .filter(|l| l.starts_with(name))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
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
    let node = Single::start("");
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
    let node = Single::start("");
    let digest = get(&node.url, "/v1/params").unwrap()["digest"]
        .as_str()
        .unwrap()
        .to_owned();
    let (addr, peer) = node_address(&node);
    let mut s = swarm(&digest);
    let topic = gossipsub::IdentTopic::new("hco/acceptance/1");
    s.behaviour_mut().gossipsub.subscribe(&topic).unwrap();
    s.dial(addr).unwrap();
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
    let validations = metric(
        &node,
        "hco_gossip_validations_total{topic=\"acceptance\",result=\"reject\"}",
    );
    assert!(
        closed,
        "the node kept a peer that sent invalid gossip ({validations} rejected)"
    );
    assert!(
        metric(
            &node,
            "hco_gossip_validations_total{topic=\"acceptance\",result=\"reject\"}"
        ) >= 5.0
    );
    assert!(metric(&node, "hco_peers_banned_total") >= 1.0);
    // Nothing it sent was recorded.
    assert_eq!(
        get(&node.url, "/v1/windows/0").unwrap()["active_count_local"],
        0
    );
}
