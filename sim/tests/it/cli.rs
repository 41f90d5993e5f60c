//! The `hco sim` entry points as the binary calls them.

use std::path::{Path, PathBuf};

use hco_sim::cli::{SimCommand, execute};
use hco_sim::engine::EngineKind;
use hco_sim::scenario::EpsPick;

/// Runs `scenario` (aggregate engine, two threads) into `out` with the measured ε of
/// `eps_from`; its summary.json.
fn run_with_eps(
    scenario: &str,
    out: &Path,
    seed: Option<u64>,
    eps_from: PathBuf,
    eps_pick: EpsPick,
) -> serde_json::Value {
    execute(SimCommand::Run {
        scenario: crate::config(scenario),
        out: out.to_owned(),
        seed,
        engine: EngineKind::Aggregate,
        eps_from: Some(eps_from),
        eps_pick,
        threads: 2,
    })
    .unwrap_or_else(|e| panic!("{scenario}: {e:#}"));
    let summary = std::fs::read(out.join("summary.json"))
        .unwrap_or_else(|e| panic!("{scenario}: no summary.json: {e}"));
    serde_json::from_slice(&summary).unwrap_or_else(|e| panic!("{scenario}: summary.json: {e}"))
}

#[test]
fn run_writes_every_output_and_applies_measured_eps() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let summary = run_with_eps(
        "small.toml",
        &out,
        Some(5),
        crate::config("eps_measured.example.json"),
        EpsPick::Point,
    );
    for f in hco_sim::report::FILES {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    assert_eq!(summary["seed"], 5);
    assert_eq!(summary["eps_overrides"].as_array().unwrap().len(), 2);
    assert_eq!(
        summary["scenario"]["families"]["visual_match"]["eps_auto"],
        0.03
    );
}

#[test]
fn run_reads_the_attack_bench_and_can_take_the_upper_end_of_its_interval() {
    let tmp = tempfile::tempdir().unwrap();
    // The shape `hco bench attack --json` prints (figures made up for the test).
    let measured = tmp.path().join("attack.json");
    std::fs::write(
        &measured,
        r#"{"families": {"visual_match": {"tries": 500, "successes": 5, "wilson_low": 0.0043,
            "wilson_high": 0.0232, "median_ms": 2500, "attacker": "tesseract", "config": "single"}},
            "end_to_end": {"single": {"identity_windows": 400, "active": 0}}}"#,
    )
    .unwrap();
    let out = tmp.path().join("out");
    let summary = run_with_eps("small.toml", &out, Some(5), measured, EpsPick::Upper);
    let o = &summary["eps_overrides"][0];
    assert_eq!(o["source"], "attack:tesseract");
    assert_eq!(o["to"], 0.0232);
    assert_eq!(
        summary["scenario"]["families"]["visual_match"]["eps_auto"],
        0.0232
    );
}

/// The shipped file of the strongest measured attackers applies to every cognitive family, and
/// against a policy without a presence step (automation.toml) it keeps nearly every bot-run
/// identity active: the cognitive steps are no Sybil barrier against a trained model.
#[test]
fn the_strongest_measured_attackers_keep_bots_active_without_a_presence_step() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = run_with_eps(
        "automation.toml",
        &tmp.path().join("out"),
        None,
        crate::config("eps_strongest.json"),
        EpsPick::Point,
    );
    let families: Vec<&str> = summary["eps_overrides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["family"].as_str().unwrap())
        .collect();
    assert_eq!(
        families,
        ["attention", "interactive_reasoning", "visual_match"]
    );
    assert_eq!(
        summary["scenario"]["families"]["visual_match"]["eps_auto"],
        104.0 / 150.0
    );
    let bots = summary["mean_bot_active"].as_f64().unwrap();
    assert!(bots > 0.9 * 2000.0, "{bots} of 2000 bot identities active");
    assert_eq!(summary["automation_profitable"], true);
}

#[test]
fn run_reports_a_bad_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "[honest]\nparticipation = 3.0\n").unwrap();
    let err = execute(SimCommand::Run {
        scenario: bad,
        out: tmp.path().join("out"),
        seed: None,
        engine: EngineKind::Aggregate,
        eps_from: None,
        eps_pick: EpsPick::Point,
        threads: 1,
    })
    .unwrap_err();
    assert!(
        format!("{err:#}").contains("honest.participation"),
        "{err:#}"
    );
}

#[test]
fn bench_runs_small() {
    execute(SimCommand::Bench {
        json: true,
        identities: 20_000,
        windows: 10,
        threads: 2,
    })
    .unwrap();
}
