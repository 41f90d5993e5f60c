//! Withheld verdicts between two real members (sled ledgers, libp2p on 127.0.0.1): the issuer
//! answers a right and a wrong answer alike and gossips the acceptance only at the close.

use std::time::Duration;

use hco_challenges::{Class, Reject};
use hco_oracle::policy::{Step, WindowPolicy};
use hco_oracle::{Clock, FamilyConfig, Reason, Response, SignedRequest, testing};

use super::*;
use crate::attack::agent::{parts, starter_answer};
use crate::testnet::Testnet;

#[test]
fn only_the_verdicts_of_the_withheld_family_are_masked() {
    let w = Withheld::default();
    let mismatch = Err(Reason::Answer(Reject::AnswerMismatch));
    assert!(
        w.mask(WITHHELD_FAMILY, &mismatch, 9).is_none(),
        "off by default"
    );
    w.set(true);
    let Some(ChallengeReply::Rejected(r)) = w.mask(WITHHELD_FAMILY, &mismatch, 9) else {
        panic!("a wrong answer is not masked");
    };
    assert_eq!((r.code.as_str(), r.opens_at), (VERDICT_WITHHELD, Some(9)));
    // Refusals that do not depend on the answer being right are told as they are.
    for told in [
        Reason::AlreadyAnswered,
        Reason::Answer(Reject::InvalidAnswerFormat("x")),
        Reason::Answer(Reject::MissingAnswer),
    ] {
        assert!(
            w.mask(WITHHELD_FAMILY, &Err(told.clone()), 9).is_none(),
            "{told:?}"
        );
    }
    assert!(w.mask("arithmetic_reasoning", &mismatch, 9).is_none());
    assert!(w.release(u64::MAX).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withheld_acceptance_reaches_the_other_member_only_at_the_close() {
    let net = Testnet::start_tuned(2, crate::service::sync::Limits::default(), |p| {
        p.policies.agent = WindowPolicy {
            steps: vec![Step::Family("narrative_chain".into())],
            spares: 0,
        };
        p.families.push(FamilyConfig {
            name: "narrative_chain".into(),
            deadline_ms: 15_000,
            difficulty: 3,
            min_solve_ms: 0,
        });
    })
    .await;
    for node in &net.nodes {
        node.withheld.set(true);
    }
    let t = 0;
    let keys: Vec<_> = (90_000..)
        .map(testing::key)
        .filter(|k| net.issuer_of(k, t) == 0)
        .take(2)
        .collect();
    let mut replies = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        net.register(key, Class::Agent);
        let now = net.clock.now();
        let issued = net.nodes[0]
            .oracle
            .issue(&SignedRequest::new(key, t, 0), now)
            .unwrap()
            .unwrap();
        let answers: Vec<String> = parts(&issued.prompt.text)
            .into_iter()
            .map(|(n, q)| starter_answer(n, q).expect("a starter question"))
            .map(|a| if i == 0 { a } else { "none".into() })
            .collect();
        let answer = serde_json::to_vec(&answers).unwrap();
        let reply = net.nodes[0]
            .respond_local(Response::new(key, issued.challenge, answer))
            .await
            .unwrap();
        replies.push(format!("{reply:?}"));
    }
    assert_eq!(replies[0], replies[1], "a right and a wrong answer differ");
    assert!(replies[0].contains(VERDICT_WITHHELD), "{}", replies[0]);
    assert_eq!(
        net.acceptances(0, t).len(),
        1,
        "the right one is durable at the issuer"
    );

    // Past the gossip's linger: the other member has heard nothing.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        net.acceptances(1, t).is_empty(),
        "gossiped before the close"
    );

    // Not released before the close, then released once, as the release task does it.
    let closes = |t| net.params.closes_at(t);
    let before = net.params.closes_at(t) - 1;
    assert!(
        net.nodes[0]
            .withheld
            .release_closed(before, closes)
            .is_empty()
    );
    let held = net.nodes[0]
        .withheld
        .release_closed(net.params.closes_at(t), closes);
    assert_eq!(held.len(), 1);
    assert!(net.nodes[0].withheld.release(t).is_empty(), "released once");
    net.nodes[0].publish_acceptances(held);
    for _ in 0..100 {
        if net.acceptances(1, t).len() == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the released acceptance did not reach the other member");
}
