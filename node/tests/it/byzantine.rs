//! One cheating member in a devnet of four real node processes: node 3 runs with
//! `--unsafe-byzantine all` (accepts wrong answers, mints acceptances for its sybils and for
//! an identity whose key it lacks, backdates, withholds the reveals of odd windows, signs two
//! summaries of every window). Honest agents answer correctly through honest issuers in an
//! even window and the odd one after it; a friend of the cheat answers wrongly through it.
//!
//! Checked against the test's own ground truth: every certificate any honest node holds is the
//! Merkle root of exactly the honest agents that answered in that window (none in the others),
//! no certificate carries the cheat's signature, each honest agent has a proof, and every honest
//! node names the cheat, and only it, in `/v1/evidence`, the window views and the
//! `hco_evidence_total` metric.
//!
//! A second devnet has a member that is honest except that it adds to each window once the
//! window is certified: the honest members' certified sets and proofs must not change.

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

const FAULTY: usize = 3;
const HONEST: [usize; 3] = [0, 1, 2];
/// Honest agents per honest issuer in the first window.
const PER_ISSUER: usize = 2;
/// Generous windows: the machine running the test may be loaded.
const WINDOW: &str = "12s";
/// The first window in which the cheat acts (`FIRST_WINDOW` of the node's byzantine module).
const FIRST_FAULTY_WINDOW: u64 = 2;

fn id_of(key: &SigningKey) -> IdentityId {
    testing::identity_id(key)
}

fn committee(net: &Devnet) -> Vec<NodeId> {
    (0..4).map(|i| net.node_id(i).parse().unwrap()).collect()
}

/// The devnet node that is `key`'s assigned issuer in `t`.
fn issuer(committee: &[NodeId], key: &SigningKey, t: u64) -> usize {
    let first = issuer_order(committee, &id_of(key), t)[0];
    committee.iter().position(|n| *n == first).unwrap()
}

fn current(net: &Devnet) -> Value {
    get(&net.url(0), "/v1/windows/current").unwrap()
}

fn wait_for_window(net: &Devnet, t: u64) {
    wait_until(Duration::from_secs(90), || {
        current(net)["t"].as_u64().unwrap() >= t
    });
}

fn register(net: &Devnet, key: &SigningKey) {
    let now = current(net)["now"].as_u64().unwrap();
    let reg = SignedRegister::new(key, Class::Agent, now);
    let (status, body) = post(&net.url(0), "/v1/identities", &reg);
    assert_eq!(status, 201, "{body}");
}

/// Asks `node` for challenge `(key, t, 0)`; returns it with its prompt.
fn challenge(net: &Devnet, node: usize, key: &SigningKey, t: u64) -> (SignedChallenge, Vec<u8>) {
    let (status, view) = post(
        &net.url(node),
        "/v1/challenges",
        &SignedRequest::new(key, t, 0),
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
fn respond(
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
fn solve_honestly(net: &Devnet, committee: &[NodeId], key: &SigningKey, t: u64) {
    let node = issuer(committee, key, t);
    assert!(HONEST.contains(&node));
    let (c, right) = challenge(net, node, key, t);
    let (status, verdict) = respond(net, node, key, c, right);
    assert_eq!(status, 200, "{verdict}");
    assert_eq!(verdict["verdict"], "accepted", "{verdict}");
}

fn certificate(net: &Devnet, node: usize, t: u64) -> Option<WindowCertificate> {
    get(&net.url(node), &format!("/v1/windows/{t}/certificate"))
        .map(|v| serde_json::from_value(v).unwrap())
}

/// The root a certificate of `t` must carry if exactly `agents` were active.
fn expected_summary(t: u64, agents: &[SigningKey], params: Digest) -> WindowSummary {
    let active = agents.iter().map(|k| (id_of(k), Class::Agent)).collect();
    WindowSummary::of(t, active, params).0
}

fn evidence(net: &Devnet, node: usize) -> Vec<Value> {
    get(&net.url(node), "/v1/evidence").unwrap()["evidence"]
        .as_array()
        .unwrap()
        .clone()
}

/// The sum of the metric lines of `name` whose labels contain every one of `labels`.
fn metric(net: &Devnet, node: usize, name: &str, labels: &[&str]) -> f64 {
    let text = crate::support::agent()
        .get(&format!("{}/metrics", net.url(node)))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .filter(|l| labels.iter().all(|want| l.contains(want)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn devnet_byzantine_member_is_excluded_and_named() {
    let net = Devnet::up_with(4, WINDOW, false, &["--unsafe-byzantine", "all"]);
    let committee = committee(&net);
    let cheat = net.node_id(FAULTY);
    let health = get(&net.url(FAULTY), "/healthz").unwrap();
    assert!(
        health["unsafe_byzantine"]
            .as_array()
            .is_some_and(|f| f.len() == 6),
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
    for key in honest.iter().chain([&friend]) {
        register(&net, key);
    }
    for node in 0..4 {
        for key in honest.iter().chain([&friend]) {
            let path = format!("/v1/identities/{}", id_of(key));
            wait_until(Duration::from_secs(20), || {
                get(&net.url(node), &path).is_some()
            });
        }
    }
    let params: Digest = serde_json::from_value(current(&net)["params_digest"].clone()).unwrap();

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
}

fn active_count(net: &Devnet, node: usize, t: u64) -> u64 {
    get(&net.url(node), &format!("/v1/windows/{t}")).unwrap()["active_count_local"]
        .as_u64()
        .unwrap()
}

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
    for key in &honest {
        register(&net, key);
    }
    for node in 0..4 {
        for key in &honest {
            let path = format!("/v1/identities/{}", id_of(key));
            wait_until(Duration::from_secs(20), || {
                get(&net.url(node), &path).is_some()
            });
        }
    }
    let params: Digest = serde_json::from_value(current(&net)["params_digest"].clone()).unwrap();
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
        "[node]\nkey_file = \"node.key\"\ndata_dir = \"ledger\"\n[http]\nlisten = \"0.0.0.0:0\"\n",
    )
    .unwrap();
    let out = run("all");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("local test networks only"), "{stderr}");
    assert!(stderr.contains("http.listen 0.0.0.0:0"), "{stderr}");
    std::fs::write(
        &config,
        "[node]\nkey_file = \"node.key\"\ndata_dir = \"ledger\"\n[http]\nlisten = \"127.0.0.1:0\"\n[p2p]\nlisten = [\"/ip4/127.0.0.1/tcp/0\"]\n",
    )
    .unwrap();
    let out = run("mint,fly");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown fault `fly`"), "{stderr}");
    // Nothing was started: no ledger, no key.
    assert!(!dir.path().join("ledger").exists());
}
