//! The agent-admission game over real HTTP: a scripted client that knows the answer key plays a
//! whole session; late, skipped and replayed steps are refused with their codes, and a wrong
//! answer only at the session's end (`not_admitted`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hco_challenges::narrative::Corpus;
use serde_json::{Value, json};

use crate::support::{
    Single, agent_key_file, agent_start, get, hco, hco_json, post, register_agent, serve_stub,
};

/// The answer the corpus gives for a round's narrative and question.
fn answer_for(round: &Value) -> String {
    let narrative = round["narrative"].as_str().unwrap();
    let question = round["question"].as_str().unwrap();
    Corpus::embedded()
        .sets()
        .iter()
        .flat_map(|s| &s.parts)
        .filter(|p| p.narrative == narrative)
        .flat_map(|p| &p.questions)
        .find(|q| q.question == question)
        .map(|q| q.answer.clone())
        .expect("the round comes from the embedded corpus")
}

/// Starts a session as a freshly registered agent identity.
fn start(node: &Single) -> Value {
    static NEXT: AtomicU64 = AtomicU64::new(1_000);
    let key = register_agent(&node.url, NEXT.fetch_add(1, Ordering::Relaxed));
    let (status, body) = post(
        &node.url,
        "/v1/agent/sessions",
        &agent_start(&node.url, &key),
    );
    assert_eq!(status, 201, "{body}");
    body
}

fn send(node: &Single, round: &Value, answer: &str) -> (u16, Value) {
    post(
        &node.url,
        round["answer_endpoint"].as_str().unwrap(),
        &json!({ "answer": answer }),
    )
}

#[test]
fn agent_session_with_the_answer_key_is_admitted_once() {
    let node = Single::start(DEVELOPMENT);
    let r1 = start(&node);
    assert_eq!(r1["round"], 1);
    let (status, r2) = send(&node, &r1, &answer_for(&r1));
    assert_eq!(status, 200, "{r2}");
    assert_eq!(r2["round"], 2);
    assert_ne!(
        r2["answer_endpoint"], r1["answer_endpoint"],
        "each round has a new endpoint"
    );
    // Answers are matched after NFKC and case folding: shout the answer in full width.
    let shouted: String = answer_for(&r2)
        .to_uppercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                char::from_u32(c as u32 + 0xFEE0).unwrap()
            } else {
                c
            }
        })
        .collect();
    let (status, r3) = send(&node, &r2, &format!("  {shouted} "));
    assert_eq!(status, 200, "{r3}");
    let (status, done) = send(&node, &r3, &answer_for(&r3));
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["admitted"], true);
    // Replaying the last step of a completed session is refused.
    let (status, replay) = send(&node, &r3, &answer_for(&r3));
    assert_eq!(
        (status, replay["code"].as_str()),
        (409, Some("session_closed"))
    );

    // The credential verifies offline, pinned to the node's key, and not to another.
    let file = node.dir.path().join("cred.json");
    std::fs::write(&file, serde_json::to_vec(&done["credential"]).unwrap()).unwrap();
    let node_key = done["credential"]["admission"]["node"].as_str().unwrap();
    let (ok, v) = hco_json(&[
        "client",
        "admission",
        "verify",
        file.to_str().unwrap(),
        "--node-key",
        node_key,
    ]);
    assert!(ok && v["valid"] == true && v["status"] == "valid", "{v}");
    let (ok, v) = hco_json(&[
        "client",
        "admission",
        "verify",
        file.to_str().unwrap(),
        "--node-key",
        &"22".repeat(32),
    ]);
    assert!(!ok && v["code"] == "untrusted_node", "{v}");
}

/// Without a pinned node key a credential is never valid: any key signs one that verifies
/// under the key it names, and `verify` says so (`unpinned`, exit 2) whoever signed it.
#[test]
fn an_unpinned_credential_is_not_valid_whoever_signed_it() {
    use hco_oracle::{AdmissionCredential, testing};
    let dir = tempfile::tempdir().unwrap();
    let real = testing::key(1);
    let start = hco_oracle::SessionStart::sign(
        &testing::key(3),
        &testing::node_id(&real),
        0,
        hco_oracle::Digest([4; 32]),
    );
    let admission = hco_oracle::Admission {
        version: 1,
        node: testing::node_id(&real),
        identity: start.identity,
        window: start.window,
        nonce: start.nonce,
        start_sig: start.sig,
        session: hco_oracle::Digest([3; 32]),
        round_ms: [900, 1200, 1500],
        issued_at: 0,
        expires_at: u64::MAX,
    };
    // The forger holds an identity key and a key of its own, and signs both.
    let forger = testing::key(2);
    let forged_start = hco_oracle::SessionStart::sign(
        &testing::key(3),
        &testing::node_id(&forger),
        0,
        hco_oracle::Digest([4; 32]),
    );
    let forged = AdmissionCredential::sign(
        &forger,
        hco_oracle::Admission {
            node: testing::node_id(&forger),
            start_sig: forged_start.sig,
            ..admission.clone()
        },
    );
    for (name, cred) in [
        ("real", AdmissionCredential::sign(&real, admission)),
        ("forged", forged),
    ] {
        let file = dir.path().join(format!("{name}.json"));
        std::fs::write(&file, serde_json::to_vec(&cred).unwrap()).unwrap();
        let (ok, v) = hco_json(&["client", "admission", "verify", file.to_str().unwrap()]);
        assert!(!ok, "{name}: {v}");
        assert_eq!(
            (&v["valid"], &v["unpinned"], &v["status"]),
            (&Value::Bool(false), &Value::Bool(true), &json!("unpinned")),
            "{name}: {v}"
        );
        // Pinned to the real node's key, only its own credential is valid.
        let (ok, v) = hco_json(&[
            "client",
            "admission",
            "verify",
            file.to_str().unwrap(),
            "--node-key",
            &hex::encode(testing::node_id(&real).0),
        ]);
        assert_eq!(ok, name == "real", "{name}: {v}");
        assert_eq!(v["valid"] == true, name == "real", "{name}: {v}");
    }
}

#[test]
fn agent_session_failures_have_codes() {
    let node = Single::start(&format!("{DEVELOPMENT}[agent]\nround_budget = \"1s\"\n"));
    // A late round (the budget is 1 s here).
    let r1 = start(&node);
    std::thread::sleep(Duration::from_millis(1300));
    let (status, late) = send(&node, &r1, &answer_for(&r1));
    assert_eq!(
        (status, late["code"].as_str()),
        (422, Some("round_expired")),
        "{late}"
    );
    // A wrong answer in round 2 is not said: round 3 follows, and the session ends
    // `not_admitted` without naming the round.
    let r1 = start(&node);
    let (_, r2) = send(&node, &r1, &answer_for(&r1));
    let (status, r3) = send(&node, &r2, "certainly not this");
    assert_eq!((status, r3["round"].as_u64()), (200, Some(3)), "{r3}");
    let (status, end) = send(&node, &r3, &answer_for(&r3));
    assert_eq!(
        (status, end["code"].as_str()),
        (422, Some("not_admitted")),
        "{end}"
    );
    let (status, after) = send(&node, &r3, &answer_for(&r3));
    assert_eq!(
        (status, after["code"].as_str()),
        (409, Some("session_closed"))
    );
    // A skipped endpoint: answering round 2 at round 1's endpoint, or at a guessed one.
    let r1 = start(&node);
    let (_, r2) = send(&node, &r1, &answer_for(&r1));
    let (status, skipped) = send(&node, &r1, &answer_for(&r2));
    assert_eq!(
        (status, skipped["code"].as_str()),
        (404, Some("wrong_endpoint"))
    );
    let guessed = format!(
        "/v1/agent/sessions/{}/rounds/{}",
        r2["session"].as_str().unwrap(),
        "00".repeat(32)
    );
    let (status, _) = post(&node.url, &guessed, &json!({ "answer": answer_for(&r2) }));
    assert_eq!(status, 404);
    // Starts by an identity that is not a registered agent, or not signed for this node.
    let stranger = hco_oracle::testing::key(990);
    let (status, body) = post(
        &node.url,
        "/v1/agent/sessions",
        &agent_start(&node.url, &stranger),
    );
    assert_eq!(body["code"], "unknown_identity", "{status} {body}");
    let human = hco_oracle::testing::key(991);
    let now = get(&node.url, "/v1/windows/current").unwrap()["now"]
        .as_u64()
        .unwrap();
    let reg = hco_oracle::SignedRegister::new(&human, hco_oracle::Class::Human, now);
    assert_eq!(post(&node.url, "/v1/identities", &reg).0, 201);
    let (status, body) = post(
        &node.url,
        "/v1/agent/sessions",
        &agent_start(&node.url, &human),
    );
    assert_eq!(body["code"], "wrong_class", "{status} {body}");
    let agent = register_agent(&node.url, 992);
    let mut forged = agent_start(&node.url, &agent);
    forged.window += 1;
    let (status, body) = post(&node.url, "/v1/agent/sessions", &forged);
    assert_eq!(
        (status, body["code"].as_str()),
        (422, Some("wrong_window")),
        "{body}"
    );
    let (status, body) = post(&node.url, "/v1/agent/sessions", &json!({ "nonce": "t" }));
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("malformed")),
        "{body}"
    );
    // Bad input.
    let (status, unknown) = post(
        &node.url,
        &format!(
            "/v1/agent/sessions/{}/rounds/{}",
            "ab".repeat(32),
            "cd".repeat(32)
        ),
        &json!({ "answer": "x" }),
    );
    assert_eq!(
        (status, unknown["code"].as_str()),
        (404, Some("unknown_session"))
    );
    let r1 = start(&node);
    let raw = crate::support::agent()
        .post(&format!(
            "{}{}",
            node.url,
            r1["answer_endpoint"].as_str().unwrap()
        ))
        .content_type("application/octet-stream")
        .send(&[0xff, 0xfe, 0x00][..])
        .unwrap();
    // Not text: judged with the rest at the end, like any wrong answer.
    assert_eq!(raw.status().as_u16(), 200);
    let r1 = start(&node);
    let (status, big) = send(&node, &r1, &"x".repeat(5000));
    assert_eq!(
        (status, big["code"].as_str()),
        (400, Some("message_too_large")),
        "{big}"
    );
    let (status, long) = send(&node, &r1, &"x".repeat(300));
    assert_eq!((status, long["round"].as_u64()), (200, Some(2)), "{long}");
}

#[test]
fn client_agent_plugs_a_command_into_a_whole_session() {
    let node = Single::start(DEVELOPMENT);
    // The "agent": a script that looks the answer up in the corpus files (a stand-in for an LLM).
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
    let script = format!(
        "python3 -c 'import json,sys,glob\nr=json.load(sys.stdin)\nfor f in glob.glob(\"{corpus}/*.json\"):\n  for p in json.load(open(f))[\"parts\"]:\n    for q in p[\"questions\"]:\n      if p[\"narrative\"]==r[\"narrative\"] and q[\"question\"]==r[\"question\"]: print(q[\"answer\"])'"
    );
    let out_file = node.dir.path().join("admission.json");
    let key = agent_key_file(&node, "agent");
    // A member whose share of the window's questions makes no session is named first: the
    // client goes on to the next.
    let elsewhere = member_not_here(&node.url);
    let out = hco()
        .args([
            "client",
            "agent",
            "--node",
            &elsewhere,
            "--node",
            &node.url,
            "--key",
            &key,
            "--answer-cmd",
            &script,
            "--out",
        ])
        .arg(&out_file)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        out.status.success(),
        "{v} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["admitted"], true);
    // Not valid unpinned; valid against the node's key.
    let path = out_file.to_str().unwrap();
    let (ok, v) = hco_json(&["client", "admission", "verify", path]);
    assert!(!ok && v["valid"] == false && v["unpinned"] == true, "{v}");
    let node_key = v["node"].as_str().unwrap().to_owned();
    let (ok, v) = hco_json(&[
        "client",
        "admission",
        "verify",
        path,
        "--node-key",
        &node_key,
    ]);
    assert!(ok && v["valid"] == true, "{v}");
    // A command that does not understand the text is refused at round 1.
    let out = hco()
        .args([
            "client",
            "agent",
            "--node",
            &node.url,
            "--key",
            &key,
            "--answer-cmd",
            "echo 42",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// A private corpus: the starter sets with every narrative edited, under new ids.
fn private_corpus(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).unwrap();
    for set in Corpus::embedded().sets() {
        let mut s = set.clone();
        s.id = format!("private-{}", s.id);
        for p in &mut s.parts {
            p.narrative = format!("{} [Operator's private edition.]", p.narrative);
        }
        let path = dir.join(format!("{}.json", s.id));
        std::fs::write(path, serde_json::to_string(&s).unwrap()).unwrap();
    }
}

/// The test nodes' network, whose agent class runs on proof_of_work alone: a development one.
/// A development network whose game draws 5 starter sets a window (15 questions a part), so
/// the sessions a test leaves failed or open do not spend them.
const DEVELOPMENT: &str =
    "[network]\ndevelopment = true\n[network.narrative]\nsets_per_window = 10\nreuse = true\n";

/// The agent family of a production network (a node refuses to start without one that no
/// script passes, outside development).
const NARRATIVE_CHAIN: &str =
    "[[network.families]]\nname = \"narrative_chain\"\ndeadline = \"15s\"\ndifficulty = 3\n";

#[test]
fn a_production_node_refuses_the_public_starter_corpus_and_serves_its_private_one() {
    // Refused: the agent class on the starter corpus with `allow_starter_corpus = false`.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("node.toml");
    std::fs::write(
        &config,
        format!(
            "[node]\nkey_file = \"node.key\"\ndata_dir = \"ledger\"\n[http]\nlisten = \"127.0.0.1:0\"\n\
             [agent]\nallow_starter_corpus = false\n{NARRATIVE_CHAIN}"
        ),
    )
    .unwrap();
    let out = hco()
        .args(["node", "run", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("hco corpus generate"), "{stderr}");

    // Refused: a private corpus under the development default `reuse = true`.
    let corpus = tempfile::tempdir().unwrap();
    private_corpus(corpus.path());
    std::fs::write(
        &config,
        format!(
            "[node]\nkey_file = \"node.key\"\ndata_dir = \"ledger\"\n[http]\nlisten = \"127.0.0.1:0\"\n\
             [agent]\nallow_starter_corpus = false\ncorpus_dir = \"{}\"\n{NARRATIVE_CHAIN}",
            corpus.path().display()
        ),
    )
    .unwrap();
    let out = hco()
        .args(["node", "run", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("reuse = false"), "{stderr}");

    // Refused: the agent class on lock families alone, which a script passes, outside a
    // network that says it is a development one.
    std::fs::write(
        &config,
        format!(
            "[node]\nkey_file = \"node.key\"\ndata_dir = \"ledger\"\n[http]\nlisten = \"127.0.0.1:0\"\n\
             [network.narrative]\nreuse = false\n[network.policy.agent]\nsteps = [\"multi_pass_lock\"]\n\
             [[network.families]]\nname = \"multi_pass_lock\"\ndeadline = \"15s\"\ndifficulty = 1\n\
             [agent]\nallow_starter_corpus = false\ncorpus_dir = \"{}\"\n",
            corpus.path().display()
        ),
    )
    .unwrap();
    let out = hco()
        .args(["node", "run", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("agent class") && stderr.contains("multi_pass_lock"),
        "{stderr}"
    );

    // Served: the operator's corpus, in the admission game's rounds, the game's set of the window. The
    // windows are long enough that the test runs in window 0, where the schedule starts.
    let node = Single::start(&format!(
        "[network]\nwindow = \"36500d\"\n[network.narrative]\nreuse = false\n\
         [agent]\nallow_starter_corpus = false\ncorpus_dir = \"{}\"\n{NARRATIVE_CHAIN}",
        corpus.path().display()
    ));
    // Three sessions at once: the window's one game set has three questions a part, each shown
    // to one open session at a time, so a fourth waits (`game_busy`).
    let mut narratives = std::collections::BTreeSet::new();
    for _ in 0..3 {
        let round = start(&node);
        let narrative = round["narrative"].as_str().unwrap();
        assert!(
            narrative.contains("[Operator's private edition.]"),
            "{narrative}"
        );
        narratives.insert(narrative.to_owned());
    }
    let key = register_agent(&node.url, 4_000);
    let (status, busy) = post(
        &node.url,
        "/v1/agent/sessions",
        &agent_start(&node.url, &key),
    );
    assert_eq!(
        (status, busy["code"].as_str()),
        (503, Some("game_busy")),
        "{busy}"
    );
    let view = get(&node.url, "/v1/windows/current").unwrap();
    assert_eq!(view["agent_corpus"]["public_answer_key"], false, "{view}");
    let sets = Corpus::embedded().sets().len();
    assert_eq!(view["agent_corpus"]["sets"], sets);
    // Window 0 uses the first of `sets / 2` windows of fresh sets (two a window: one for its
    // challenges, one for the game); every session shows the game's set.
    let schedule = &view["agent_corpus"]["schedule"];
    assert_eq!(view["t"], 0, "{view}");
    assert_eq!(schedule["windows_remaining"], sets / 2, "{view}");
    assert_eq!(schedule["sets_this_window"], 2, "{view}");
    assert_eq!(
        narratives.len(),
        1,
        "one game set this window: {narratives:?}"
    );
    assert_eq!(
        crate::support::metric(&node.metrics_url, "hco_narrative_windows_remaining"),
        (sets / 2) as f64
    );
}

/// A stand-in for a committee member whose share of the window's game questions makes no
/// session: it reports `real`'s health and refuses every start `game_not_here`.
fn member_not_here(real: &str) -> String {
    use axum::Json;
    use axum::routing::{get as get_route, post};
    let health = get(real, "/healthz").unwrap();
    let refuse = (
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        Json(json!({ "code": "game_not_here", "message": "start at another member" })),
    );
    serve_stub(
        axum::Router::new()
            .route("/healthz", get_route(move || async move { Json(health) }))
            .route("/v1/agent/sessions", post(move || async move { refuse })),
    )
}

/// The starter corpus's answer to the question quoted in `text` with its narrative.
fn key_answer(text: &str) -> String {
    Corpus::embedded()
        .sets()
        .iter()
        .flat_map(|s| &s.parts)
        .filter(|p| text.contains(p.narrative.as_str()))
        .flat_map(|p| &p.questions)
        .find(|q| text.contains(q.question.as_str()))
        .map_or("unknown".to_owned(), |q| q.answer.clone())
}

/// A stand-in for a model behind an OpenAI-compatible endpoint: it holds the starter corpus's
/// key and answers the question whose narrative and question the user message quotes.
fn stand_in_model() -> String {
    use axum::Json;
    use axum::routing::post;
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(|Json(req): Json<Value>| async move {
            let user = req["messages"][1]["content"].as_str().unwrap_or_default();
            let answer = if user.contains("=== Part ") {
                // A narrative_chain prompt: one answer per part, as a JSON array.
                let parts: Vec<String> = user.split("=== Part ").skip(1).map(key_answer).collect();
                format!("Here you go: {}", serde_json::to_string(&parts).unwrap())
            } else {
                // An admission round: the current round is the last report quoted.
                key_answer(user.rsplit("Report:\n").next().unwrap_or_default())
            };
            Json(json!({ "choices": [{ "message": { "role": "assistant", "content": answer } }] }))
        }),
    );
    format!("{}/v1", serve_stub(app))
}

/// How many sessions or identity-windows a stand-in test plays: `default`, or
/// `HCO_STAND_IN_RUNS` for a measurement large enough to bound the pass rate (300 gives a 95 %
/// Wilson lower bound of 98.7 % when all pass).
fn stand_in_runs(default: u32) -> u32 {
    std::env::var("HCO_STAND_IN_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `scripts/llm-agent --help` states what it reads and prints, and by default it gives the
/// model the round's budget τ less a margin: a model that never answers is given up on before
/// τ, with a non-zero exit.
#[test]
fn llm_agent_script_states_its_contract_and_gives_up_before_tau() {
    use std::io::Write;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/llm-agent");
    let help = std::process::Command::new("python3")
        .args([script, "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for word in [
        "stdin:",
        "stdout:",
        "exit status:",
        "budget_ms",
        "--timeout",
        "--margin",
    ] {
        assert!(help.contains(word), "{word} missing from:\n{help}");
    }
    // A "model" that takes the request and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/v1", silent.local_addr().unwrap());
    let round = json!({
        "round": 1, "domain": "d", "narrative": "n", "question": "q",
        "budget_ms": 4_500, "earlier_rounds": [],
    });
    let started = std::time::Instant::now();
    let mut child = std::process::Command::new("python3")
        .args([script, "--endpoint", &endpoint, "--model", "m"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(round.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && out.stdout.is_empty(), "{stderr}");
    // 4.5 s of budget less the 3 s margin.
    assert!(stderr.contains("timeout 1.5 s"), "{stderr}");
    assert!(elapsed < Duration::from_millis(4_500), "{elapsed:?}");
    drop(silent);
}

/// `scripts/llm-agent` plays whole sessions through `hco client agent` against a model
/// endpoint; a stand-in agent that holds the key passes at least 99 % of them within τ.
#[test]
fn llm_agent_script_with_the_answer_key_passes_sessions_within_tau() {
    let node = Single::start(DEVELOPMENT);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/llm-agent");
    let cmd = format!(
        "python3 {script} --endpoint {} --model stand-in",
        stand_in_model()
    );
    let sessions = stand_in_runs(30);
    let mut admitted = 0;
    let mut round_ms = Vec::new();
    for i in 0..sessions {
        // An agent plays once: a fresh identity per session.
        let key = agent_key_file(&node, &format!("agent{i}"));
        let out = hco()
            .args([
                "client",
                "agent",
                "--node",
                &node.url,
                "--key",
                &key,
                "--answer-cmd",
                &cmd,
            ])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        if v["admitted"] == true {
            admitted += 1;
            round_ms.extend(
                v["round_ms"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_u64),
            );
        } else {
            eprintln!("{v} {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    round_ms.sort_unstable();
    eprintln!(
        "stand-in agent through scripts/llm-agent: {admitted}/{sessions} sessions admitted, \
         effective round time median {:?} ms, max {:?} ms (τ = 15000 ms)",
        round_ms.get(round_ms.len() / 2),
        round_ms.last()
    );
    assert!(admitted * 100 >= sessions * 99, "{admitted}/{sessions}");
}

/// The per-window step of the agent class (`narrative_chain`) through `hco client solve` and
/// `scripts/llm-agent`: every identity-window of a stand-in agent holding the key is active.
#[test]
fn llm_agent_script_keeps_agent_identities_active_window_after_window() {
    let node = Single::start(
        "[network]\nslot_mode = \"open\"\ngrace = \"50s\"\n[network.policy.agent]\nsteps = [\"narrative_chain\"]\n\
         spares = 0\n[[network.families]]\nname = \"narrative_chain\"\ndeadline = \"45s\"\n\
         difficulty = 3\n",
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/llm-agent");
    let cmd = format!(
        "python3 {script} --endpoint {} --model stand-in",
        stand_in_model()
    );
    let identities = stand_in_runs(12);
    let mut active = 0;
    for i in 0..identities {
        let key = agent_key_file(&node, &format!("agent{i}"));
        let key = key.as_str();
        let out = hco()
            .args([
                "client",
                "solve",
                "--node",
                &node.url,
                "--key",
                key,
                "--answer-cmd",
                &cmd,
            ])
            .output()
            .unwrap();
        if out.status.success() {
            active += 1;
        } else {
            eprintln!(
                "{} {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    eprintln!("stand-in agent, narrative_chain windows: {active}/{identities} active");
    assert!(active * 100 >= identities * 99, "{active}/{identities}");
}
