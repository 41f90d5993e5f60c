//! `hco corpus lint` on the starter corpus, and `hco corpus generate` against a stand-in
//! OpenAI-compatible endpoint on 127.0.0.1 (valid, malformed and script-answerable replies), and
//! `hco corpus timing` with the production budgets.

use axum::Json;
use axum::routing::post;
use serde_json::{Value, json};

use crate::support::{hco, hco_json, serve_stub, succeed};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");

#[test]
fn the_starter_corpus_passes_the_linter_and_a_broken_one_does_not() {
    succeed(hco().args(["corpus", "lint", CORPUS]));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.json"),
        r#"{"domain": "x", "parts": []}"#,
    )
    .unwrap();
    let out = hco()
        .args(["corpus", "lint"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// Serves chat completions whose content is `reply`, in a code fence as models often do.
fn endpoint(reply: String) -> String {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |Json(req): Json<Value>| {
            let reply = reply.clone();
            async move {
                assert!(req["messages"][0]["content"].as_str().unwrap().contains("Three-Part"));
                Json(json!({ "choices": [{ "message": { "role": "assistant", "content": format!("```json\n{reply}\n```") } }] }))
            }
        }),
    );
    format!("{}/v1", serve_stub(app))
}

fn generate(endpoint: &str, out: &std::path::Path) -> Value {
    let (ok, v) = hco_json(&[
        "corpus",
        "generate",
        "--endpoint",
        endpoint,
        "--model",
        "stand-in",
        "--domain",
        "biochemistry",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{v}");
    v
}

#[test]
fn generate_accepts_only_sets_that_validate_and_pass_the_linter() {
    let good = std::fs::read_to_string(format!("{CORPUS}/biochemistry-01.json")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let v = generate(&endpoint(good.clone()), dir.path());
    assert_eq!(v["accepted"].as_array().unwrap().len(), 1, "{v}");
    let written = v["accepted"][0].as_str().unwrap();
    assert!(
        std::fs::read_to_string(written)
            .unwrap()
            .contains("\"parts\"")
    );

    // Not a set: nothing is written.
    let dir = tempfile::tempdir().unwrap();
    let v = generate(
        &endpoint(r#"{"domain": "biochemistry", "parts": [{"narrative": "short"}]}"#.into()),
        dir.path(),
    );
    assert_eq!(v["accepted"].as_array().unwrap().len(), 0);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // A set whose answers a script finds (the answer sits in the question): refused by the linter.
    let mut set: Value = serde_json::from_str(&good).unwrap();
    let answer = set["parts"][0]["questions"][0]["answer"]
        .as_str()
        .unwrap()
        .to_owned();
    set["parts"][0]["questions"][0]["question"] = json!(format!("Is the answer {answer}?"));
    let dir = tempfile::tempdir().unwrap();
    let v = generate(&endpoint(set.to_string()), dir.path());
    assert_eq!(v["accepted"].as_array().unwrap().len(), 0, "{v}");
}

/// The timing model over the starter corpus with the production budgets: even the modelled
/// fastest person needs several times τ for the shortest round.
#[test]
fn corpus_timing_sets_the_human_model_beside_tau() {
    let prod = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/prod.toml");
    let (ok, report) = hco_json(&["corpus", "timing", "--config", prod, "--json"]);
    assert!(ok, "{report}");
    assert_eq!(report["round_budget_s"], 15.0);
    assert_eq!(report["chain_deadline_s"], 45.0);
    assert!(
        report["round_separation"].as_f64().unwrap() > 2.0,
        "{report}"
    );
    assert!(
        report["chain_separation"].as_f64().unwrap() > 2.0,
        "{report}"
    );
    assert!(report["human_round_s"]["min"].as_f64().unwrap() > 15.0);
}
