//! The `hco sim` entry points as the binary calls them.

use std::time::Duration;

use hco_sim::cli::{SimCommand, bound_output, execute};
use hco_sim::engine::EngineKind;

#[test]
fn run_writes_every_output_and_applies_measured_eps() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    execute(SimCommand::Run {
        scenario: crate::config("small.toml"),
        out: out.clone(),
        seed: Some(5),
        engine: EngineKind::Aggregate,
        eps_from: Some(crate::config("eps_measured.example.json")),
        threads: 2,
    })
    .unwrap();
    for f in hco_sim::report::FILES {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["seed"], 5);
    assert_eq!(summary["eps_overrides"].as_array().unwrap().len(), 2);
    assert_eq!(
        summary["scenario"]["families"]["visual_match"]["eps_auto"],
        0.03
    );
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

/// A node config shaped like `configs/prod.toml`: the `[network]` fields the bound reads among
/// others it ignores.
const NODE_CONFIG: &str = r#"
[node]
key_file = "/var/lib/hco/node.key"
data_dir = "/var/lib/hco/ledger"

[http]
listen = "127.0.0.1:8080"

[network]
genesis = "2026-01-01T00:00:00Z"
window = "1h"
grace = "2m"
slot_mode = "global"
slot = "2m"
committee = []
quorum = 0

[network.policy.human]
steps = ["presence", "cognitive", "cognitive"]
spares = 1

[network.policy.agent]
steps = ["narrative_chain"]
spares = 0

[[network.families]]
name = "visual_match"
deadline = "30s"
difficulty = 5

[[network.families]]
name = "attention"
deadline = "40s"
difficulty = 2

[[network.families]]
name = "interactive_reasoning"
deadline = "45s"
difficulty = 2

[[network.families]]
name = "presence"
deadline = "30s"
difficulty = 1
min_solve = "500ms"

[[network.families]]
name = "narrative_chain"
deadline = "45s"
difficulty = 3

[agent]
enabled = true
"#;

#[test]
fn bound_reads_a_node_config_and_prints_json_and_a_table() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("node.toml");
    std::fs::write(&path, NODE_CONFIG).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&bound_output(&path, true, &[]).unwrap()).unwrap();
    assert_eq!(json["identities_per_person"], 6);
    assert_eq!(json["identities_per_person_cheapest_draws"], 11);
    assert_eq!(json["phases"], 4);
    assert_eq!(json["steps"][0]["step"], "presence");
    assert_eq!(json["inputs"]["slot_mode"], "global");
    assert_eq!(json["inputs"]["slot_ms"], 120_000);
    assert_eq!(json["inputs"]["spares"], 1);
    assert_eq!(
        json["inputs"]["steps"][1]["families"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let mc = json["monte_carlo"]["identities_per_person"]
        .as_u64()
        .unwrap();
    assert!((1..=11).contains(&mc), "{json}");
    // A slower attention solve lowers the bound; the table says what it is.
    let slow = [("attention".to_owned(), Duration::from_secs(30))];
    let json: serde_json::Value =
        serde_json::from_str(&bound_output(&path, true, &slow).unwrap()).unwrap();
    assert_eq!(json["identities_per_person"], 4); // min(165/35, 135/32, 105/16)
    let table = bound_output(&path, false, &[]).unwrap();
    assert!(table.contains("at most 6 identities"), "{table}");
    execute(SimCommand::Bound {
        config: path,
        json: true,
        solve_time: Vec::new(),
    })
    .unwrap();
}

#[test]
fn bound_of_the_production_config() {
    let prod = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../configs/prod.toml");
    let json: serde_json::Value =
        serde_json::from_str(&bound_output(&prod, true, &[]).unwrap()).unwrap();
    let n = json["identities_per_person"].as_u64().unwrap();
    assert!((1..=10).contains(&n), "{json}");
}
