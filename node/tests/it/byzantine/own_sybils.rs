//! A member answers for its own sybils (`--unsafe-byzantine own-sybils`) on a devnet whose
//! tries rotate between members (`--rotate-issuers`, two steps and a spare): it derives every
//! try of each of its 32 sybils from its own window secret and answers it right. Only the try
//! it may issue counts; in even windows it also gossips the others (one batch), which is refused
//! and kept as evidence naming it.
//!
//! Checked against the test's ground truth: every certificate of the two windows holds exactly
//! the honest agents (no sybil), the cheat is named (only it, with `not_assigned_issuer`) and
//! left out of neither window — a refused acceptance counts for nobody, and evidence alone
//! leaves no member out (its arrival is up to its sender: hco_oracle::relay) — and in the odd
//! window honest agents that had a try at the cheat are certified too: a member's own tries of
//! an identity-window are one of three, and each identity needs two passes.

use std::time::Duration;

use ed25519_dalek::SigningKey;
use hco_oracle::secret::issuers_of;
use hco_oracle::{NetworkParams, NodeId, testing};

use super::*;
use crate::support::{Devnet, get, wait_until};

/// Steps per window (`--steps`); one spare on top.
const STEPS: u32 = 2;

/// The devnet nodes that may issue each try of `key`'s window `t` (no fallback).
fn issuers(committee: &[NodeId], key: &SigningKey, t: u64) -> Vec<usize> {
    let params = NetworkParams {
        rotate_issuers: true,
        ..testing::params_for(committee)
    };
    (0..=STEPS)
        .map(|j| {
            let n = issuers_of(&params, &id_of(key), t, j)[0];
            committee.iter().position(|c| *c == n).unwrap()
        })
        .collect()
}

/// An honest agent passes every step of `t`, asking node 0 for each try in turn.
fn solve_every_step(net: &Devnet, key: &SigningKey, t: u64) {
    let mut passed = 0;
    for j in 0..=STEPS {
        let (c, right) = challenge_at(net, 0, key, t, j);
        let (status, verdict) = respond(net, 0, key, c, right);
        assert_eq!(status, 200, "try {j}: {verdict}");
        passed += 1;
        if passed == STEPS {
            return;
        }
    }
}

#[test]
fn devnet_own_sybils_of_a_member_are_never_certified() {
    let net = Devnet::up_with(
        4,
        WINDOW,
        false,
        &[
            "--unsafe-byzantine",
            "own-sybils",
            "--rotate-issuers",
            "--steps",
            "2",
        ],
    );
    let committee = committee(&net);
    let cheat = net.node_id(FAULTY);

    // An even window `a` (the cheat also gossips tries it may not issue) and the odd one after.
    let now = current(&net)["t"].as_u64().unwrap();
    let a = (now + 1).max(FIRST_FAULTY_WINDOW);
    let a = a + a % 2;
    let b = a + 1;
    // Honest agents: in `a` none has a try at the cheat; in `b` some have one, some not.
    let (mut honest, mut through_cheat) = (Vec::new(), 0);
    for seed in 30_000u64..40_000 {
        let key = testing::key(seed);
        if issuers(&committee, &key, a).contains(&FAULTY) {
            continue;
        }
        let at_cheat = issuers(&committee, &key, b)[..STEPS as usize].contains(&FAULTY);
        if at_cheat && through_cheat < 3 {
            through_cheat += 1;
            honest.push(key);
        } else if !at_cheat && honest.len() - through_cheat < 3 {
            honest.push(key);
        }
        if honest.len() == 6 {
            break;
        }
    }
    assert_eq!((honest.len(), through_cheat), (6, 3));
    let params = register_everywhere(&net, &honest);

    for t in [a, b] {
        wait_for_window(&net, t);
        for key in &honest {
            solve_every_step(&net, key, t);
        }
    }
    for t in [a, b] {
        for node in HONEST {
            wait_until(Duration::from_secs(120), || {
                certificate(&net, node, t).is_some()
            });
        }
    }

    for node in HONEST {
        for t in [a, b] {
            let cert = certificate(&net, node, t).unwrap();
            assert_eq!(
                cert.summary,
                expected_summary(t, &honest, params),
                "node {node}: window {t} certifies other identities than the honest agents"
            );
            let view = get(&net.url(node), &format!("/v1/windows/{t}")).unwrap();
            assert_eq!(
                view["excluded_members"],
                serde_json::json!([]),
                "node {node}, window {t}: {view}"
            );
        }
        // The sybils' acceptances the cheat may not issue are refused and name it.
        let found = evidence(&net, node);
        assert!(
            found
                .iter()
                .any(|e| e["kind"] == "failed_audit" && e["t"] == a),
            "node {node} holds no evidence of window {a}: {found:?}"
        );
        assert!(
            found.iter().all(|e| e["accused"] == cheat.as_str()),
            "node {node} accuses an honest member: {found:?}"
        );
    }
    assert!(
        net.log(FAULTY).contains("answering for own sybils"),
        "the cheat never answered for its sybils"
    );
}
