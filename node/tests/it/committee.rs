//! Helpers for tests that drive a four-member devnet by hand: identities registered and
//! answered at their assigned issuers, certificates, evidence and metrics read back. Shared by
//! the faulty-member scenarios (`crate::byzantine`, with the node's `unsafe-byzantine`
//! feature) and the class-split test; without the feature some are unused.
#![cfg_attr(not(feature = "unsafe-byzantine"), allow(dead_code))]

use std::time::Duration;

use ed25519_dalek::SigningKey;
use hco_challenges::Registry;
use hco_oracle::secret::issuer_order;
use hco_oracle::{
    Class, Digest, IdentityId, NodeId, Response, SignedChallenge, SignedRegister, SignedRequest,
    WindowCertificate, WindowSummary, testing,
};
use serde_json::Value;

use crate::support::{Devnet, get, post, wait_until};

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
