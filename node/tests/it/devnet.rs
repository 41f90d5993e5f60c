//! Committees of real node processes on 127.0.0.1: the four scenarios of the node issue.

use std::collections::BTreeSet;
use std::time::Duration;

use hco_oracle::secret::issuer_order;
use hco_oracle::{IdentityId, NodeId};
use serde_json::Value;

use crate::support::{Devnet, get, hco, hco_json, next_window, post, wait_until};

/// A registered agent identity (key file in the devnet directory).
struct Agent {
    key: String,
    id: String,
}

fn new_agent(net: &Devnet, name: &str, node: usize) -> Agent {
    let key = net.dir.path().join(format!("{name}.key"));
    let out = hco()
        .args(["identity", "new", "--out"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(out.status.success());
    let id = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let key = key.to_str().unwrap().to_owned();
    let (ok, v) = hco_json(&[
        "client",
        "register",
        "--node",
        &net.url(node),
        "--key",
        &key,
        "--class",
        "agent",
    ]);
    assert!(ok, "register: {v}");
    Agent { key, id }
}

/// Registers a person on `node` and enrols a software passkey for them there; returns the id.
fn person_with_passkey(net: &Devnet, seed: u8, node: usize) -> String {
    use hco_challenges::presence::{Presence, PresencePolicy, SoftAuthenticator};
    let key = ed25519_dalek::SigningKey::from_bytes(&[seed; 32]);
    let id = hex::encode(key.verifying_key().to_bytes());
    let now = get(&net.url(node), "/v1/windows/current").unwrap()["now"]
        .as_u64()
        .unwrap();
    let reg = hco_oracle::SignedRegister::new(&key, hco_oracle::Class::Human, now);
    assert_eq!(post(&net.url(node), "/v1/identities", &reg).0, 201);
    let presence = Presence::new(PresencePolicy::default()).unwrap();
    let mut soft = SoftAuthenticator::new("http://localhost:1").unwrap();
    let credential = soft
        .enrol(&presence, &key.verifying_key().to_bytes(), now)
        .unwrap();
    let enrolment =
        hco_oracle::SignedEnrolment::new(&key, now, String::from_utf8(credential).unwrap());
    let path = format!("/v1/identities/{id}/passkeys");
    let (status, body) = post(&net.url(node), &path, &enrolment);
    assert_eq!(status, 201, "{body}");
    id
}

fn passkey_count(net: &Devnet, node: usize, id: &str) -> usize {
    get(&net.url(node), &format!("/v1/identities/{id}/passkeys"))
        .and_then(|v| v["passkeys"].as_array().map(Vec::len))
        .unwrap_or(0)
}

fn solve(net: &Devnet, agent: &Agent, node: usize) -> Value {
    hco_json(&[
        "client",
        "solve",
        "--node",
        &net.url(node),
        "--key",
        &agent.key,
    ])
    .1
}

fn assigned_issuer(net: &Devnet, id: &str, t: u64) -> usize {
    let committee: Vec<NodeId> = net
        .nodes
        .iter()
        .map(|n| n["node"].as_str().unwrap().parse().unwrap())
        .collect();
    let first = issuer_order(&committee, &id.parse::<IdentityId>().unwrap(), t)[0];
    committee.iter().position(|n| *n == first).unwrap()
}

fn window(net: &Devnet, node: usize, t: u64) -> Value {
    get(&net.url(node), &format!("/v1/windows/{t}")).unwrap()
}

fn certified_root(net: &Devnet, node: usize, t: u64) -> Option<String> {
    let w = window(net, node, t);
    w["certified"]
        .as_bool()
        .unwrap()
        .then(|| w["certificate_root"].as_str().unwrap().to_owned())
}

fn summary_root_of(net: &Devnet, at: usize, signer: usize, t: u64) -> Option<String> {
    let w = window(net, at, t);
    let signer = net.node_id(signer);
    w["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["signer"] == signer.as_str())
        .map(|s| s["root"].as_str().unwrap().to_owned())
}

fn wait_certified(net: &Devnet, node: usize, t: u64) -> String {
    let mut root = None;
    wait_until(Duration::from_secs(30), || {
        root = certified_root(net, node, t);
        root.is_some()
    });
    root.unwrap()
}

#[test]
fn devnet_window_certificate_and_offline_proof() {
    let net = Devnet::up(4, "8s", false);
    let t = next_window(&net.url(0));
    let agent = new_agent(&net, "a", 0);
    let verdict = solve(&net, &agent, 0);
    assert_eq!(verdict["verdict"], "accepted", "{verdict}");
    assert_eq!(verdict["window"], t);
    assert_eq!(verdict["family"], "proof_of_work");
    for i in 0..4 {
        wait_until(Duration::from_secs(5), || {
            window(&net, i, t)["active_count_local"] == 1
        });
    }
    let root = wait_certified(&net, 3, t);
    let (ok, proof) = hco_json(&[
        "client",
        "proof",
        "--node",
        &net.url(3),
        "--id",
        &agent.id,
        "--window",
        &t.to_string(),
    ]);
    assert!(ok, "{proof}");
    assert_eq!(proof["valid"], true);
    assert_eq!(proof["root"], root.as_str());
    // The window's one step passed: nothing more to answer; and a stranger has no proof.
    let again = solve(&net, &agent, 1);
    assert!(
        again["verdict"] == "steps_complete" || again["window"] != t,
        "{again}"
    );
    let stranger = "11".repeat(32);
    let (ok, _) = hco_json(&[
        "client",
        "proof",
        "--node",
        &net.url(0),
        "--id",
        &stranger,
        "--window",
        &t.to_string(),
    ]);
    assert!(!ok);
}

#[test]
fn devnet_certifies_without_a_stopped_node_which_then_catches_up() {
    let mut net = Devnet::up(4, "8s", false);
    net.kill(3, "-TERM");
    let t = next_window(&net.url(0));
    let mut accepted = 0;
    for k in 0..6 {
        let agent = new_agent(&net, &format!("s{k}"), 0);
        if assigned_issuer(&net, &agent.id, t) == 3 {
            let v = solve(&net, &agent, 0);
            assert_eq!(v["verdict"], "issuer_unreachable", "{v}");
        } else {
            let v = solve(&net, &agent, 1);
            assert_eq!(v["verdict"], "accepted", "{v}");
            accepted += 1;
        }
    }
    assert!(accepted > 0);
    let root = wait_certified(&net, 0, t);
    assert_eq!(window(&net, 0, t)["active_count_local"], accepted);
    // A passkey enrolled while node 3 is down reaches the others by gossip…
    let person = person_with_passkey(&net, 9, 0);
    wait_until(Duration::from_secs(10), || {
        passkey_count(&net, 1, &person) == 1
    });
    net.restart(3);
    // The restarted node reconciles the window it missed and signs the certified root.
    wait_until(Duration::from_secs(30), || {
        summary_root_of(&net, 3, 3, t).is_some()
    });
    assert_eq!(
        summary_root_of(&net, 3, 3, t).as_deref(),
        Some(root.as_str())
    );
    assert_eq!(window(&net, 3, t)["active_count_local"], accepted);
    // …and node 3 by the registry synchronisation at start.
    wait_until(Duration::from_secs(10), || {
        passkey_count(&net, 3, &person) == 1
    });
    // And it takes part in the next windows as an issuer and a signer.
    let t2 = next_window(&net.url(3));
    let agent = new_agent(&net, "after", 3);
    assert_eq!(solve(&net, &agent, 3)["verdict"], "accepted");
    let root2 = wait_certified(&net, 3, t2);
    wait_until(Duration::from_secs(20), || {
        summary_root_of(&net, 0, 3, t2).is_some()
    });
    assert_eq!(
        summary_root_of(&net, 0, 3, t2).as_deref(),
        Some(root2.as_str())
    );
}

#[test]
fn devnet_reconciliation_heals_a_cut_link_before_signing() {
    let net = Devnet::up(4, "8s", true);
    let t = next_window(&net.url(0));
    // Cut node 1 off from everyone for the first part of the window.
    for j in [0, 2, 3] {
        let (status, body) = post(
            &net.url(1),
            &format!("/admin/peers/{}/block", net.node_id(j)),
            &Value::Null,
        );
        assert_eq!(status, 200, "{body}");
    }
    wait_until(Duration::from_secs(5), || {
        get(&net.url(1), "/healthz").unwrap()["peers"] == 0
    });
    let mut solved = BTreeSet::new();
    for k in 0..6 {
        let agent = new_agent(&net, &format!("c{k}"), 0);
        if assigned_issuer(&net, &agent.id, t) != 1 {
            assert_eq!(solve(&net, &agent, 0)["verdict"], "accepted");
            solved.insert(agent.id);
        }
    }
    assert!(!solved.is_empty());
    // Gossip did not reach node 1; let the gossip history expire before reconnecting.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(window(&net, 1, t)["active_count_local"], 0);
    for j in [0, 2, 3] {
        post(
            &net.url(1),
            &format!("/admin/peers/{}/unblock", net.node_id(j)),
            &Value::Null,
        );
    }
    let root = wait_certified(&net, 0, t);
    wait_until(Duration::from_secs(20), || {
        summary_root_of(&net, 0, 1, t).is_some()
    });
    assert_eq!(
        summary_root_of(&net, 0, 1, t).as_deref(),
        Some(root.as_str()),
        "node 1 signed another root"
    );
    assert_eq!(window(&net, 1, t)["active_count_local"], solved.len());
}

#[test]
fn devnet_acknowledged_acceptances_survive_kill_9_under_load() {
    use hco_challenges::{Class, Registry};
    use hco_oracle::{Response, SignedChallenge, SignedRegister, SignedRequest};

    let mut net = Devnet::up(1, "20s", false);
    let url = net.url(0);
    let acked = std::sync::Mutex::new(Vec::new());
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for worker in 0..4u64 {
            let (url, acked, stop) = (&url, &acked, &stop);
            s.spawn(move || {
                let registry = Registry::builtin();
                for i in 0..10_000u64 {
                    if stop.load(std::sync::atomic::Ordering::SeqCst) {
                        return;
                    }
                    let key = hco_oracle::testing::key(worker * 1_000_000 + i + 1);
                    let Some(now) = get(url, "/v1/windows/current") else {
                        return;
                    };
                    let t = now["t"].as_u64().unwrap();
                    let reg = SignedRegister::new(&key, Class::Agent, now["now"].as_u64().unwrap());
                    if post(url, "/v1/identities", &reg).0 != 201 {
                        return;
                    }
                    let (status, view) =
                        post(url, "/v1/challenges", &SignedRequest::new(&key, t, 0));
                    if status != 200 {
                        return;
                    }
                    let challenge: SignedChallenge =
                        serde_json::from_value(view["challenge"].clone()).unwrap();
                    let prompt = hco_challenges::Prompt {
                        family: view["prompt"]["family"].as_str().unwrap().into(),
                        text: view["prompt"]["text"].as_str().unwrap().into(),
                        data: serde_json::to_vec(&view["prompt"]["data"]).unwrap(),
                    };
                    let answer = registry
                        .get(&prompt.family)
                        .unwrap()
                        .solve(&prompt)
                        .unwrap();
                    let (status, verdict) = post(
                        url,
                        "/v1/responses",
                        &Response::new(&key, challenge, answer),
                    );
                    if status == 200 {
                        acked.lock().unwrap().push((
                            verdict["id"].as_str().unwrap().to_owned(),
                            verdict["window"].as_u64().unwrap(),
                        ));
                    }
                }
            });
        }
        wait_until(Duration::from_secs(60), || {
            acked.lock().unwrap().len() >= 150
        });
        net.kill(0, "-KILL");
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let acked = acked.into_inner().unwrap();
    net.restart(0);
    for (id, t) in &acked {
        let status = get(&url, &format!("/v1/identities/{id}"))
            .unwrap_or_else(|| panic!("identity {id} lost"));
        assert_eq!(
            status["last_active"].as_u64(),
            Some(*t),
            "acceptance of {id} in window {t} lost: {status}"
        );
    }
}
