//! Key files, benchmarks and the simulator through the real command line.

use std::process::Command;

use crate::support::hco_json;

fn hco() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hco"))
}

#[test]
fn keys_and_identities_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("node.key");
    let out = hco()
        .args(["keys", "gen", "--out"])
        .arg(&node)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(printed.trim().len(), 64);

    let shown = hco()
        .args(["keys", "show", "--key"])
        .arg(&node)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(shown.stdout).unwrap(), printed);

    // Never overwrite a key silently.
    let again = hco()
        .args(["keys", "gen", "--out"])
        .arg(&node)
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));

    // A node key is not an identity key.
    let wrong = hco()
        .args(["identity", "show", "--key"])
        .arg(&node)
        .output()
        .unwrap();
    assert!(!wrong.status.success());

    let id = dir.path().join("me.key");
    let out = hco()
        .args(["identity", "new", "--out"])
        .arg(&id)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_ne!(String::from_utf8(out.stdout).unwrap(), printed);
}

#[test]
fn a_missing_key_file_says_what_to_do() {
    let out = hco()
        .args(["keys", "show", "--key", "/nonexistent/k.json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("hco keys gen"));
}

#[test]
fn bench_verify_prints_the_json_object() {
    let out = hco()
        .args([
            "bench",
            "verify",
            "--json",
            "--responses",
            "300",
            "--batch",
            "64",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for field in [
        "raw_ed25519_verifies_per_s",
        "responses_per_s",
        "ratio",
        "threads",
    ] {
        assert!(v[field].as_f64().unwrap() > 0.0, "{field} in {v}");
    }
    assert_eq!(v["responses"].as_u64(), Some(300));
}

#[test]
fn sim_bound_of_the_production_policy_is_at_most_ten_identities_per_person() {
    let prod = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/prod.toml");
    let (ok, bound) = hco_json(&["sim", "bound", "--config", prod, "--json"]);
    assert!(ok, "{bound}");
    let n = bound["identities_per_person"].as_u64().unwrap();
    let cheapest = bound["identities_per_person_cheapest_draws"]
        .as_u64()
        .unwrap();
    assert!((1..=10).contains(&n), "{bound}");
    assert!(cheapest <= 10, "{bound}");
    assert_eq!(bound["phases"], 4);
    assert_eq!(bound["steps"][0]["step"], "presence");
}

#[test]
fn sim_run_writes_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/sim/small.toml");
    let out = hco()
        .args(["sim", "run", scenario, "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["lemma1_violations"].as_u64(), Some(0));
    assert!(summary["fit"]["r2"].as_f64().unwrap() > 0.9);
}

#[test]
fn devnet_operator_example_script_runs_end_to_end() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/operator.sh");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(script)
        .arg(dir.path().join("devnet"))
        .env("HCO", env!("CARGO_BIN_EXE_hco"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("\"verdict\":\"accepted\""), "{stdout}");
    assert!(stdout.contains("\"valid\":true"), "{stdout}");
}
