//! Devnets of four real node processes where node 3 is a cheating committee member
//! (`hco node run --unsafe-byzantine`), and the refusal of that mode outside a loopback test
//! network. Helpers shared by the scenarios live here:
//! - [`member`]: a member with every fault; what the committee certifies is checked against
//!   the test's own ground truth, and the member is named by the evidence.
//! - [`own_sybils`]: a member answering every try of its own sybils, with tries rotating
//!   between members; none is certified.
//! - [`late`]: a member that is honest except that it adds to windows once they are certified.

mod late;
mod member;
mod own_sybils;

use std::time::Duration;

use ed25519_dalek::SigningKey;
use hco_challenges::Registry;
use hco_oracle::secret::issuer_order;
use hco_oracle::{
    Class, Digest, IdentityId, NodeId, Response, SignedChallenge, SignedRegister, SignedRequest,
    WindowCertificate, WindowSummary, testing,
};
use serde_json::Value;

use crate::support::{Devnet, get, hco, post, wait_until};

pub const FAULTY: usize = 3;
pub const HONEST: [usize; 3] = [0, 1, 2];
/// Honest agents per honest issuer in the first window.
pub const PER_ISSUER: usize = 2;
/// Generous windows: the machine running the test may be loaded.
pub const WINDOW: &str = "12s";
/// The first window in which the cheat acts (`FIRST_WINDOW` of the node's byzantine module).
pub const FIRST_FAULTY_WINDOW: u64 = 2;

pub fn id_of(key: &SigningKey) -> IdentityId {
    testing::identity_id(key)
}

pub fn committee(net: &Devnet) -> Vec<NodeId> {
    (0..4).map(|i| net.node_id(i).parse().unwrap()).collect()
}

/// The devnet node that is `key`'s assigned issuer in `t`.
pub fn issuer(committee: &[NodeId], key: &SigningKey, t: u64) -> usize {
    let first = issuer_order(committee, &id_of(key), t)[0];
    committee.iter().position(|n| *n == first).unwrap()
}

pub fn current(net: &Devnet) -> Value {
    get(&net.url(0), "/v1/windows/current").unwrap()
}

pub fn wait_for_window(net: &Devnet, t: u64) {
    wait_until(Duration::from_secs(90), || {
        current(net)["t"].as_u64().unwrap() >= t
    });
}

pub fn register(net: &Devnet, key: &SigningKey) {
    let now = current(net)["now"].as_u64().unwrap();
    let reg = SignedRegister::new(key, Class::Agent, now);
    let (status, body) = post(&net.url(0), "/v1/identities", &reg);
    assert_eq!(status, 201, "{body}");
}

/// Asks `node` for challenge `(key, t, 0)`; returns it with its right answer.
pub fn challenge(
    net: &Devnet,
    node: usize,
    key: &SigningKey,
    t: u64,
) -> (SignedChallenge, Vec<u8>) {
    challenge_at(net, node, key, t, 0)
}

/// Asks `node` for challenge `(key, t, j)`; returns it with its right answer.
pub fn challenge_at(
    net: &Devnet,
    node: usize,
    key: &SigningKey,
    t: u64,
    j: u32,
) -> (SignedChallenge, Vec<u8>) {
    let (status, view) = post(
        &net.url(node),
        "/v1/challenges",
        &SignedRequest::new(key, t, j),
    );
    assert_eq!(status, 200, "challenge from node {node}: {view}");
    let challenge: SignedChallenge = serde_json::from_value(view["challenge"].clone()).unwrap();
    assert_eq!(challenge.challenge.t, t, "issued in another window");
    let prompt = hco_challenges::Prompt {
        family: view["prompt"]["family"].as_str().unwrap().into(),
        text: view["prompt"]["text"].as_str().unwrap().into(),
        data: serde_json::to_vec(&view["prompt"]["data"]).unwrap(),
    };
    let right = Registry::builtin()
        .get(&prompt.family)
        .unwrap()
        .solve(&prompt)
        .unwrap();
    (challenge, right)
}

/// Answers `answer` to `node`; returns the status and verdict.
pub fn respond(
    net: &Devnet,
    node: usize,
    key: &SigningKey,
    c: SignedChallenge,
    answer: Vec<u8>,
) -> (u16, Value) {
    post(
        &net.url(node),
        "/v1/responses",
        &Response::new(key, c, answer),
    )
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

pub fn certificate(net: &Devnet, node: usize, t: u64) -> Option<WindowCertificate> {
    get(&net.url(node), &format!("/v1/windows/{t}/certificate"))
        .map(|v| serde_json::from_value(v).unwrap())
}

/// The root a certificate of `t` must carry if exactly `agents` were active.
pub fn expected_summary(t: u64, agents: &[SigningKey], params: Digest) -> WindowSummary {
    let active = agents.iter().map(|k| (id_of(k), Class::Agent)).collect();
    WindowSummary::of(t, active, params).0
}

pub fn evidence(net: &Devnet, node: usize) -> Vec<Value> {
    get(&net.url(node), "/v1/evidence").unwrap()["evidence"]
        .as_array()
        .unwrap()
        .clone()
}

/// The sum of the metric lines of `name` whose labels contain every one of `labels`.
pub fn metric(net: &Devnet, node: usize, name: &str, labels: &[&str]) -> f64 {
    crate::support::metrics_text(&net.metrics_url(node))
        .lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .filter(|l| labels.iter().all(|want| l.contains(want)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

pub fn active_count(net: &Devnet, node: usize, t: u64) -> u64 {
    get(&net.url(node), &format!("/v1/windows/{t}")).unwrap()["active_count_local"]
        .as_u64()
        .unwrap()
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
