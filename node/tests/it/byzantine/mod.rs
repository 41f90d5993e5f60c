//! Devnets of four real node processes where node 3 is a cheating committee member
//! (`hco node run --unsafe-byzantine`), and the refusal of that mode outside a loopback test
//! network, in builds with the node's `unsafe-byzantine` feature. The helpers they share are in
//! [`crate::committee`]. The scenarios:
//! - [`member`]: a member with every fault; what the committee certifies is checked against
//!   the test's own ground truth, and the member is named by the evidence.
//! - [`own_sybils`]: a member answering every try of its own sybils, with tries rotating
//!   between members; none is certified.
//! - [`late`]: a member that is honest except that it adds to windows once they are certified.
//! - [`reveal`]: a member that reveals each window to one member alone.

mod late;
mod member;
mod own_sybils;
mod reveal;

use ed25519_dalek::SigningKey;
use hco_oracle::NodeId;

pub use crate::committee::*;
use crate::support::{Devnet, hco};

pub const FAULTY: usize = 3;
pub const HONEST: [usize; 3] = [0, 1, 2];
/// Honest agents per honest issuer in the first window.
pub const PER_ISSUER: usize = 2;
/// Generous windows: the machine running the test may be loaded.
pub const WINDOW: &str = "12s";
/// The first window in which the cheat acts (`FIRST_WINDOW` of the node's byzantine module).
pub const FIRST_FAULTY_WINDOW: u64 = 2;

/// Registers each of `keys` (at node 0) and waits until every member holds it; returns the
/// network's parameters digest, which the expected summaries commit to.
pub fn register_everywhere<'a>(
    net: &Devnet,
    keys: impl IntoIterator<Item = &'a SigningKey> + Clone,
) -> hco_oracle::Digest {
    for key in keys.clone() {
        register(net, key);
    }
    for node in 0..4 {
        for key in keys.clone() {
            let path = format!("/v1/identities/{}", id_of(key));
            crate::support::wait_until(std::time::Duration::from_secs(20), || {
                crate::support::get(&net.url(node), &path).is_some()
            });
        }
    }
    serde_json::from_value(current(net)["params_digest"].clone()).unwrap()
}

/// An honest agent answers `t`'s challenge correctly at its (honest) issuer.
pub fn solve_honestly(net: &Devnet, committee: &[NodeId], key: &SigningKey, t: u64) {
    let node = issuer(committee, key, t);
    assert!(HONEST.contains(&node));
    let (c, right) = challenge(net, node, key, t);
    let (status, verdict) = respond(net, node, key, c, right);
    assert_eq!(status, 200, "{verdict}");
    assert_eq!(verdict["verdict"], "accepted", "{verdict}");
}

#[test]
fn the_faulty_mode_is_refused_outside_a_loopback_test_network() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("node.toml");
    let run = |faults: &str| {
        hco()
            .args(["node", "run", "--config"])
            .arg(&config)
            .args(["--unsafe-byzantine", faults])
            .output()
            .unwrap()
    };
    std::fs::write(
        &config,
        "[node]\nkey_file = \"node.key\"\ndata_dir = \"ledger\"\n[http]\nlisten = \"0.0.0.0:0\"\n[network]\ndevelopment = true\n",
    )
    .unwrap();
    let out = run("all");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("local test networks only"), "{stderr}");
    assert!(stderr.contains("http.listen 0.0.0.0:0"), "{stderr}");
    std::fs::write(
        &config,
        "[node]\nkey_file = \"node.key\"\ndata_dir = \"ledger\"\n[http]\nlisten = \"127.0.0.1:0\"\n[p2p]\nlisten = [\"/ip4/127.0.0.1/tcp/0\"]\n[network]\ndevelopment = true\n",
    )
    .unwrap();
    let out = run("mint,fly");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown fault `fly`"), "{stderr}");
    // Nothing was started: no ledger, no key.
    assert!(!dir.path().join("ledger").exists());
}
