//! A member that is honest except that, once a window is certified, it makes up an
//! acceptance of that window (dated inside it) and gossips it: the honest members must keep
//! the certified set and every proof of the window.

use std::time::Duration;

use ed25519_dalek::SigningKey;
use hco_oracle::testing;

use super::*;
use crate::support::{Devnet, get, wait_until};

#[test]
fn devnet_byzantine_member_cannot_change_a_certified_window() {
    let net = Devnet::up_with(4, WINDOW, false, &["--unsafe-byzantine", "late"]);
    let committee = committee(&net);
    let now = current(&net)["t"].as_u64().unwrap();
    let t = (now + 1).max(FIRST_FAULTY_WINDOW);
    let honest: Vec<SigningKey> = (30_000u64..40_000)
        .map(testing::key)
        .filter(|k| issuer(&committee, k, t) != FAULTY)
        .take(3)
        .collect();
    let params = register_everywhere(&net, &honest);
    wait_for_window(&net, t);
    for key in &honest {
        solve_honestly(&net, &committee, key, t);
    }
    let expected = expected_summary(t, &honest, params);
    for node in HONEST {
        wait_until(Duration::from_secs(120), || {
            certificate(&net, node, t).is_some()
        });
        assert_eq!(certificate(&net, node, t).unwrap().summary, expected);
    }
    // The member records a made-up acceptance of the certified window and gossips it.
    wait_until(Duration::from_secs(60), || {
        active_count(&net, FAULTY, t) > honest.len() as u64
    });
    // Each honest member has settled it (refused it, or recorded it: the hole).
    for node in HONEST {
        wait_until(Duration::from_secs(30), || {
            let settled = metric(
                &net,
                node,
                "hco_gossip_validations_total",
                &["topic=\"acceptance\"", "result=\"ignore\""],
            ) + metric(
                &net,
                node,
                "hco_gossip_validations_total",
                &["topic=\"acceptance\"", "result=\"reject\""],
            );
            settled >= 1.0 || active_count(&net, node, t) != honest.len() as u64
        });
    }
    for node in HONEST {
        assert_eq!(
            active_count(&net, node, t),
            honest.len() as u64,
            "node {node} let a certified window change"
        );
        for key in &honest {
            let path = format!("/v1/windows/{t}/proofs/{}", id_of(key));
            assert!(get(&net.url(node), &path).is_some(), "no proof at {path}");
        }
    }
}
