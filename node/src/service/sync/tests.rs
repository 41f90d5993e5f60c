//! Reconciliation between two real members (sled ledgers, libp2p on 127.0.0.1): what one member
//! holds and the other missed — never gossiped — is copied by the pull side from the reply side.

use std::sync::Arc;

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_oracle::{Clock, SealedAcceptance, SignedRegister, testing};

use super::{
    Limits, complete_certificate, pull_acceptances, pull_registry, pull_reveals, serve, serve_cert,
};
use crate::network::protocol::{ReconcileReply, ReconcileRpc};
use crate::testnet::Testnet;

/// Registers `key` on member `i` alone, as if its gossip never reached the others.
fn register_at(net: &Testnet, i: usize, key: &SigningKey) {
    let now = net.clock.now();
    let reg = SignedRegister::new(key, Class::Agent, now);
    net.nodes[i].oracle.register(&reg, now).unwrap().unwrap();
}

fn known(net: &Testnet, i: usize, key: &SigningKey) -> bool {
    let id = testing::identity_id(key);
    net.nodes[i]
        .oracle
        .ledger()
        .identity(&id)
        .unwrap()
        .is_some()
}

/// `n` identities (from `from` up) issued by member 0 in `t`, registered and accepted there
/// alone: another member must copy the registrations too before it can record the acceptances.
async fn accepted_at_0(net: &Testnet, t: u64, n: usize, from: u64) -> Vec<SigningKey> {
    let keys: Vec<SigningKey> = (from..)
        .map(testing::key)
        .filter(|k| net.issuer_of(k, t) == 0)
        .take(n)
        .collect();
    for key in &keys {
        register_at(net, 0, key);
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
    assert_eq!(sealed.len(), n);
    assert!(net.acceptances(1, t).is_empty());
    keys
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_a_window_larger_than_one_reply_is_pulled_whole() {
    // Replies of two keys: five acceptances take three replies, each saying whether more follow.
    let limits = Limits {
        keys_per_reply: 2,
        key_rounds: 8,
    };
    let net = Testnet::start_tuned(2, limits, |_| {}).await;
    let t = 0;
    let keys = accepted_at_0(&net, t, 5, 5_000).await;
    let mut pages = Vec::new();
    let mut after = None;
    loop {
        let request = ReconcileRpc::Keys {
            t,
            after,
            limit: u32::MAX,
        };
        let Ok(ReconcileReply::Keys { keys, more }) =
            serve(&net.nodes[0], libp2p::PeerId::random(), request).await
        else {
            panic!("no keys page");
        };
        after = keys.last().copied();
        pages.push((keys.len(), more));
        if !more {
            break;
        }
    }
    assert_eq!(pages, [(2, true), (2, true), (1, false)]);

    let (fetched, answered) = pull_acceptances(&net.nodes[1], t).await;

    assert_eq!((fetched, answered), (keys.len(), 1));
    let mut held: Vec<_> = net.acceptances(1, t);
    held.sort_by_key(|a| a.acceptance.challenge().id);
    let mut at_0: Vec<_> = net.acceptances(0, t);
    at_0.sort_by_key(|a| a.acceptance.challenge().id);
    assert_eq!(held, at_0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_a_pull_stops_after_its_rounds() {
    let limits = Limits {
        keys_per_reply: 2,
        key_rounds: 2,
    };
    let net = Testnet::start_tuned(2, limits, |_| {}).await;
    let t = 0;
    accepted_at_0(&net, t, 5, 6_000).await;

    // Two replies of two keys: the fifth is left for a larger bound.
    assert_eq!(pull_acceptances(&net.nodes[1], t).await, (4, 1));
    assert_eq!(net.acceptances(1, t).len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_a_member_pulls_the_registry_it_missed() {
    let net = Testnet::start(2).await;
    let keys: Vec<SigningKey> = (2_000..2_003).map(testing::key).collect();
    for key in &keys {
        register_at(&net, 0, key);
    }
    assert!(keys.iter().all(|k| !known(&net, 1, k)));

    assert!(pull_registry(&net.nodes[1]).await);

    assert!(keys.iter().all(|k| known(&net, 1, k)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_a_member_pulls_a_windows_acceptances_and_reveals_it_missed() {
    let net = Testnet::start(2).await;
    let t = 0;
    let keys = accepted_at_0(&net, t, 5, 3_000).await;
    assert!(net.acceptances(1, t).is_empty());

    let (fetched, answered) = pull_acceptances(&net.nodes[1], t).await;

    assert_eq!((fetched, answered), (keys.len(), 1));
    assert_eq!(net.acceptances(1, t).len(), keys.len());
    assert!(keys.iter().all(|k| known(&net, 1, k)));
    // Pulling again finds nothing missing.
    assert_eq!(pull_acceptances(&net.nodes[1], t).await, (0, 1));

    // Once the window has closed, member 0's reveal (not gossiped) is copied on request.
    net.clock.set(net.params.closes_at(t) + 1);
    let oracle = net.nodes[0].oracle.clone();
    let now = net.clock.now();
    tokio::task::spawn_blocking(move || oracle.reveal(t, now).unwrap().unwrap())
        .await
        .unwrap();
    let member_0 = net.nodes[0].oracle.node_id();
    let counts = |net: &Testnet| {
        net.nodes[1]
            .oracle
            .ledger()
            .reveal_counts(t, &member_0)
            .unwrap()
    };
    assert!(!counts(&net));

    pull_reveals(&net.nodes[1], t).await;

    // Heard within the first deadline: it counts.
    assert!(counts(&net));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_replies_keep_to_the_requested_page() {
    let net = Testnet::start(1).await;
    let keys: Vec<SigningKey> = (4_000..4_003).map(testing::key).collect();
    for key in &keys {
        register_at(&net, 0, key);
    }
    let node: Arc<_> = net.nodes[0].clone();
    let page = |after, limit| ReconcileRpc::Identities { after, limit };

    let Ok(ReconcileReply::Identities(first)) =
        serve(&node, libp2p::PeerId::random(), page(None, 2)).await
    else {
        panic!("no identities page");
    };
    assert_eq!(first.len(), 2);
    let after = first.last().map(|r| r.body.id);
    let Ok(ReconcileReply::Identities(rest)) =
        serve(&node, libp2p::PeerId::random(), page(after, 2)).await
    else {
        panic!("no second identities page");
    };
    assert_eq!(rest.len(), 1);
    let mut all: Vec<_> = first.iter().chain(&rest).map(|r| r.body.id).collect();
    all.sort();
    let mut want: Vec<_> = keys.iter().map(testing::identity_id).collect();
    want.sort();
    assert_eq!(all, want);

    // A window nobody answered in: empty pages, not errors.
    let keys_page = ReconcileRpc::Keys {
        t: 0,
        after: None,
        limit: u32::MAX,
    };
    assert!(matches!(
        serve(&node, libp2p::PeerId::random(), keys_page).await,
        Ok(ReconcileReply::Keys { keys, more: false }) if keys.is_empty()
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_a_member_completes_a_certificate_it_could_not_form() {
    let net = Testnet::start(2).await;
    let t = 0;
    net.clock.set(net.params.closes_at(t) + 1);
    let now = net.clock.now();
    let summarize = |i: usize| {
        let oracle = net.nodes[i].oracle.clone();
        tokio::task::spawn_blocking(move || oracle.summarize(t, now).unwrap().unwrap())
    };
    let (first, second) = (summarize(0).await.unwrap(), summarize(1).await.unwrap());
    // Member 0 holds both summaries and so the certificate; member 1 only its own.
    let oracle = net.nodes[0].oracle.clone();
    let formed = tokio::task::spawn_blocking(move || oracle.add_summary(&second).unwrap())
        .await
        .unwrap()
        .unwrap()
        .expect("a quorum of two summaries certifies");
    assert_eq!(formed.summary, first.summary);
    assert!(
        net.nodes[1]
            .oracle
            .ledger()
            .certificate(t)
            .unwrap()
            .is_none()
    );
    let asked = serve_cert(&net.nodes[1], t).await;
    assert!(asked.0.is_none(), "no certificate to give yet");

    complete_certificate(&net.nodes[1], t).await;

    let held = net.nodes[1].oracle.ledger().certificate(t).unwrap();
    assert_eq!(held, Some(formed.clone()));
    assert_eq!(serve_cert(&net.nodes[1], t).await.0, Some(formed));
    assert_eq!(net.metrics[1].last_certified_window.get(), t as i64);
}
