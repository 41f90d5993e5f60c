//! One cheating member with every fault: node 3 runs with `--unsafe-byzantine all` (accepts
//! wrong answers, mints acceptances for its sybils and for an identity whose key it lacks,
//! backdates, withholds the reveals of odd windows, signs two summaries of every window, and
//! passes off an acceptance as an honest member's under a copy of that member's seal signature).
//! Honest agents answer correctly through honest issuers in an even window and the odd one
//! after it; a friend of the cheat answers wrongly through it.
//!
//! Checked against the test's own ground truth: every certificate any honest node holds is the
//! Merkle root of exactly the honest agents that answered in that window (none in the others),
//! no certificate carries the cheat's signature after it starts cheating, each honest agent has
//! a proof, and every honest node names the cheat, and only it, in `/v1/evidence`, the window
//! views and the `hco_evidence_total` metric.

use std::time::Duration;

use ed25519_dalek::SigningKey;
use hco_oracle::testing;

use super::*;
use crate::support::{Devnet, get, wait_until};

#[test]
fn devnet_byzantine_member_is_excluded_and_named() {
    let net = Devnet::up_with(4, WINDOW, false, &["--unsafe-byzantine", "all"]);
    let committee = committee(&net);
    let cheat = net.node_id(FAULTY);
    let health = get(&net.url(FAULTY), "/healthz").unwrap();
    assert!(
        health["unsafe_byzantine"]
            .as_array()
            .is_some_and(|f| f.len() == 7),
        "{health}"
    );
    assert!(get(&net.url(0), "/healthz").unwrap()["unsafe_byzantine"].is_null());

    // An even window `a` (the cheat reveals it, so what it accepted is audited) and the odd
    // one after it (withheld), both starting after the agents are registered.
    let now = current(&net)["t"].as_u64().unwrap();
    let a = (now + 1).max(FIRST_FAULTY_WINDOW);
    let a = a + a % 2;
    let b = a + 1;
    let mut honest: Vec<SigningKey> = Vec::new();
    let mut per_issuer = [0; 4];
    let mut friend = None;
    for seed in 10_000u64..20_000 {
        let key = testing::key(seed);
        let (in_a, in_b) = (issuer(&committee, &key, a), issuer(&committee, &key, b));
        if in_a == FAULTY {
            friend.get_or_insert(key);
        } else if in_b != FAULTY && per_issuer[in_a] < PER_ISSUER {
            per_issuer[in_a] += 1;
            honest.push(key);
        }
        if friend.is_some() && honest.len() == PER_ISSUER * HONEST.len() {
            break;
        }
    }
    let friend = friend.unwrap();
    assert_eq!(honest.len(), PER_ISSUER * HONEST.len());
    let params = register_everywhere(&net, honest.iter().chain([&friend]));

    // Window a: honest agents at honest issuers; the friend's wrong answer accepted by the cheat.
    wait_for_window(&net, a);
    for key in &honest {
        solve_honestly(&net, &committee, key, a);
    }
    let (c, _) = challenge(&net, FAULTY, &friend, a);
    let (status, verdict) = respond(&net, FAULTY, &friend, c, b"wrong".to_vec());
    assert_eq!(status, 200, "the cheat accepts a wrong answer: {verdict}");
    assert_eq!(verdict["verdict"], "accepted", "{verdict}");

    // Window b: the same agents again (the cheat withholds its reveal of b).
    wait_for_window(&net, b);
    for key in &honest {
        solve_honestly(&net, &committee, key, b);
    }

    for t in [a, b] {
        for node in HONEST {
            wait_until(Duration::from_secs(120), || {
                certificate(&net, node, t).is_some()
            });
        }
    }

    // Zero invalid identities in any certificate: each is exactly the ground truth.
    for node in HONEST {
        for t in 0..=b {
            let Some(cert) = certificate(&net, node, t) else {
                continue;
            };
            let agents: &[SigningKey] = if t == a || t == b { &honest } else { &[] };
            assert_eq!(
                cert.summary,
                expected_summary(t, agents, params),
                "node {node} holds a certificate of window {t} with other identities"
            );
            assert!(cert.signatures.len() >= 3);
            // Before it starts cheating its summaries are honest; after, it signs two of
            // each window and counts for none.
            assert!(
                t < FIRST_FAULTY_WINDOW
                    || cert
                        .signatures
                        .iter()
                        .all(|(signer, _)| *signer != committee[FAULTY]),
                "the equivocating cheat co-signed window {t}"
            );
        }
        for t in [a, b] {
            for key in &honest {
                let path = format!("/v1/windows/{t}/proofs/{}", id_of(key));
                assert!(get(&net.url(node), &path).is_some(), "no proof at {path}");
            }
            let path = format!("/v1/windows/{t}/proofs/{}", id_of(&friend));
            assert!(get(&net.url(node), &path).is_none());
            let view = get(&net.url(node), &format!("/v1/windows/{t}")).unwrap();
            assert_eq!(
                view["excluded_members"],
                serde_json::json!([cheat]),
                "node {node}, window {t}: {view}"
            );
        }
    }

    // The cheat is named, and only it: a failed audit (window a) and a double summary.
    for node in HONEST {
        wait_until(Duration::from_secs(30), || {
            let found = evidence(&net, node);
            let has = |kind: &str| found.iter().any(|e| e["kind"] == kind && e["t"] == a);
            has("failed_audit") && has("double_summary")
        });
        let found = evidence(&net, node);
        assert!(
            found.iter().all(|e| e["accused"] == cheat.as_str()),
            "node {node} accuses an honest member: {found:?}"
        );
        let accused = format!("accused=\"{cheat}\"");
        for kind in ["failed_audit", "double_summary"] {
            let kind = format!("kind=\"{kind}\"");
            let counted = metric(&net, node, "hco_evidence_total", &[&kind, &accused]);
            assert!(counted >= 1.0, "node {node}: no {kind} counted");
        }
        for honest_member in HONEST {
            let other = format!("accused=\"{}\"", net.node_id(honest_member));
            assert_eq!(metric(&net, node, "hco_evidence_total", &[&other]), 0.0);
        }
    }
    // Its backdated and impersonating acceptances were refused on receipt.
    let refused: f64 = HONEST
        .iter()
        .map(|&n| {
            metric(
                &net,
                n,
                "hco_gossip_validations_total",
                &["topic=\"acceptance\"", "result=\"reject\""],
            )
        })
        .sum();
    assert!(
        refused >= 1.0,
        "no acceptance batch of the cheat was refused"
    );
    // The framing pair went out (the honest member it names is among those checked above:
    // never accused, never left out).
    assert!(
        net.log(FAULTY)
            .contains("framing a member with its own seal signature"),
        "the cheat never found another member's acceptance to frame it with"
    );
}
