//! The service between real members (sled ledgers, libp2p gossip on 127.0.0.1): evidence that
//! arrives after its window was summarized is kept and counted like any other; a gossiped
//! registration with a stale proof of work is refused as a client's is; a member's coalesced
//! registrations are recorded whole, and a batch with one bad entry is rejected.

use std::time::Duration;

use hco_challenges::Class;
use hco_oracle::{
    Clock, Digest, Evidence, RelayedReveal, SignedRegister, SignedReveal, codec, testing,
};

use crate::metrics::EvidenceLabel;
use crate::network::protocol::Topic;
use crate::service::sync::Limits;
use crate::testnet::Testnet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_arriving_after_the_window_is_summarized_is_kept_and_counted() {
    let net = Testnet::start(2).await;
    let t = 0;
    net.clock.set(net.params.closes_at(t) + 1);
    let now = net.clock.now();
    let (first, cheat) = (net.nodes[0].clone(), net.nodes[0].oracle.node_id());
    let late = net.nodes[1].clone();
    tokio::task::spawn_blocking(move || {
        let reveal = first.oracle.reveal(t, now).unwrap().unwrap();
        late.oracle.hear_reveal(&reveal, now).unwrap().unwrap();
        late.oracle.summarize(t, now).unwrap().unwrap();
        assert!(late.oracle.ledger().excluded(t).unwrap().is_some());
    })
    .await
    .unwrap();
    let counted = || {
        net.metrics[1]
            .evidence
            .get_or_create(&EvidenceLabel {
                kind: "double_reveal".into(),
                accused: cheat.to_string(),
            })
            .get()
    };
    assert_eq!(counted(), 0);

    // Member 0 gossips a second, different reveal of the summarized window.
    let second = SignedReveal::new(&testing::key(1), t, Digest([9; 32]), Digest([9; 32]));
    net.nodes[0].net.publish(
        Topic::Reveal,
        codec::encode(&RelayedReveal::direct(second.clone())),
    );
    for _ in 0..100 {
        if counted() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    assert_eq!(counted(), 1);
    let held = net.nodes[1].oracle.ledger().evidence(t).unwrap();
    assert!(matches!(&held[..], [Evidence::DoubleReveal { second: s, .. }] if *s == second));
    // The same evidence received again (as a peer gossips it) is not counted twice.
    let again = held[0].clone();
    let oracle = net.nodes[1].oracle.clone();
    let fresh = tokio::task::spawn_blocking(move || oracle.add_evidence(&again).unwrap())
        .await
        .unwrap();
    assert_eq!(fresh, Ok(false));
    assert_eq!(counted(), 1);
}

/// Whether member `i` holds the identity `reg` registers.
fn holds(net: &Testnet, i: usize, reg: &SignedRegister) -> bool {
    net.nodes[i]
        .oracle
        .ledger()
        .identity(&reg.body.id)
        .unwrap()
        .is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gossiped_registration_with_a_stale_proof_is_refused() {
    const BITS: u32 = 4;
    let net = Testnet::start_tuned(2, Limits::default(), |p| p.registration_pow_bits = BITS).await;
    net.clock.set(net.params.window_start(3) + 1_000);
    let now = net.clock.now();
    // Dated in window 1, before the previous window: what a client's gateway refuses.
    let old = net.params.window_start(1) + 10;
    let stale = SignedRegister::proven(&testing::key(9_001), Class::Agent.into(), old, BITS);
    let fresh = SignedRegister::proven(&testing::key(9_002), Class::Agent.into(), now, BITS);
    let oracle = net.nodes[0].oracle.clone();
    let gateway = stale.clone();
    let refused =
        tokio::task::spawn_blocking(move || oracle.register_fresh(&gateway, now).unwrap())
            .await
            .unwrap();
    assert_eq!(refused.unwrap_err().code(), "registration_proof_stale");

    for reg in [&stale, &fresh] {
        net.nodes[0]
            .net
            .publish(Topic::Registry, codec::encode(reg));
    }
    let known = |reg: &SignedRegister| holds(&net, 1, reg);
    for _ in 0..100 {
        if known(&fresh) && net.gossip_count(1, "registry", "ignore") > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    assert!(known(&fresh), "the fresh registration arrived");
    assert!(!known(&stale), "the stale one is not recorded");
    assert_eq!(net.gossip_count(1, "registry", "ignore"), 1);
    assert_eq!(net.gossip_count(1, "registry", "reject"), 0);
    // Reconciliation still copies it once a member holds it (old registrations replay).
    let (oracle, copied) = (net.nodes[1].oracle.clone(), stale.clone());
    let replayed = tokio::task::spawn_blocking(move || oracle.register(&copied, now).unwrap())
        .await
        .unwrap();
    assert!(replayed.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_registration_batch_is_recorded_whole_and_one_bad_entry_rejects_it() {
    const BITS: u32 = 4;
    let net = Testnet::start_tuned(2, Limits::default(), |p| p.registration_pow_bits = BITS).await;
    net.clock.set(net.params.window_start(3) + 1_000);
    let now = net.clock.now();
    let proven = |i| SignedRegister::proven(&testing::key(i), Class::Agent.into(), now, BITS);
    let good: Vec<SignedRegister> = (9_100..9_110).map(proven).collect();
    // Through the node's own publisher: coalesced onto the members' batch topic.
    net.nodes[0].publish_registrations(good.clone());
    let known = |reg: &SignedRegister| holds(&net, 1, reg);
    for _ in 0..100 {
        if good.iter().all(known) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        good.iter().all(known),
        "every registration of the batch arrived"
    );
    // In one message or a few (the first may go alone, the rest a linger later).
    let accepted = net.gossip_count(1, "registry_batch", "accept");
    assert!(
        (1..=good.len() as u64 / 2).contains(&accepted),
        "{accepted} messages"
    );
    assert_eq!(net.gossip_count(1, "registry_batch", "reject"), 0);

    // A batch with one registration lacking its proof of work is the sender's fault.
    let unproven = SignedRegister::new(&testing::key(9_200), Class::Agent, now);
    let bad = vec![proven(9_201), unproven];
    net.nodes[0]
        .net
        .publish(Topic::RegistryBatch, codec::encode(&bad));
    for _ in 0..100 {
        if net.gossip_count(1, "registry_batch", "reject") > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(net.gossip_count(1, "registry_batch", "reject"), 1);
    assert!(!known(&bad[1]), "the unproven registration is not recorded");
    // An empty batch proves nothing but costs the receiver: rejected too.
    net.nodes[0].net.publish(
        Topic::RegistryBatch,
        codec::encode(&Vec::<SignedRegister>::new()),
    );
    for _ in 0..100 {
        if net.gossip_count(1, "registry_batch", "reject") > 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(net.gossip_count(1, "registry_batch", "reject"), 2);
}
