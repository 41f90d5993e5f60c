//! A member that reveals each window to one member alone (`--unsafe-byzantine reveal-to-one`):
//! its reveal is never gossiped, and only the first member to ask for the window's reveals gets
//! it. Before the relay rule (hco_oracle::relay) such a reveal could leave honest members with
//! different exclusion lists; now the member that got it counts it and relays it with its
//! receipt, every honest member counts it, none leaves the member out, and the certificate
//! holds the honest agents it served beside the others.

use std::time::Duration;

use ed25519_dalek::SigningKey;
use hco_oracle::testing;

use super::*;
use crate::support::{Devnet, get, wait_until};

#[test]
fn devnet_byzantine_reveal_to_one_member_counts_at_every_member() {
    let net = Devnet::up_with(4, WINDOW, false, &["--unsafe-byzantine", "reveal-to-one"]);
    let committee = committee(&net);
    let now = current(&net)["t"].as_u64().unwrap();
    let t = (now + 1).max(FIRST_FAULTY_WINDOW);
    let at_cheat = |k: &SigningKey| issuer(&committee, k, t) == FAULTY;
    let keys: Vec<SigningKey> = (30_000u64..40_000).map(testing::key).collect();
    let agents: Vec<SigningKey> = keys
        .iter()
        .filter(|k| at_cheat(k))
        .take(2)
        .chain(keys.iter().filter(|k| !at_cheat(k)).take(2))
        .cloned()
        .collect();
    let params = register_everywhere(&net, &agents);
    wait_for_window(&net, t);
    for key in &agents {
        let node = issuer(&committee, key, t);
        let (c, right) = challenge(&net, node, key, t);
        let (status, verdict) = respond(&net, node, key, c, right);
        assert_eq!(status, 200, "{verdict}");
    }

    let expected = expected_summary(t, &agents, params);
    for node in HONEST {
        wait_until(Duration::from_secs(120), || {
            certificate(&net, node, t).is_some()
        });
        assert_eq!(
            certificate(&net, node, t).unwrap().summary,
            expected,
            "node {node} certifies other identities than the four agents"
        );
        let view = get(&net.url(node), &format!("/v1/windows/{t}")).unwrap();
        assert_eq!(
            view["excluded_members"],
            serde_json::json!([]),
            "node {node}: {view}"
        );
    }
    assert!(
        net.log(FAULTY)
            .contains("revealing this window to one member alone"),
        "the cheat never revealed to one member alone"
    );
}
