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

/// The flood bench, small: junk without the network's proof is refused for it (nothing
/// registered), then junk that needs none registers and is pruned once idle; honest
/// identities answer in both phases.
#[test]
fn bench_flood_refuses_proofless_junk_and_prunes_registered_junk() {
    let flood = |extra: &[&str]| {
        let mut args = vec![
            "bench",
            "flood",
            "--json",
            "--junk-threads",
            "2",
            "--quiet-seconds",
            "2",
            "--honest-identities",
            "12",
            "--honest-clients",
            "2",
            "--window-seconds",
            "2",
        ];
        args.extend_from_slice(extra);
        let (ok, v) = hco_json(&args);
        assert!(ok, "{v}");
        assert!(v["quiet_honest_accepted"].as_u64().unwrap() > 0, "{v}");
        assert!(v["quiet_p99_ms"].as_f64().unwrap() > 0.0, "{v}");
        v
    };
    let v = flood(&[
        "--junk",
        "2000",
        "--junk-rate",
        "1000",
        "--registration-pow-bits",
        "6",
        "--junk-proof",
        "omit",
    ]);
    assert_eq!(v["junk_sent"], 2000, "{v}");
    assert_eq!(v["junk_registered"], 0, "{v}");
    assert_eq!(v["junk_codes"]["registration_proof_missing"], 2000, "{v}");
    assert!(v["flood_honest_accepted"].as_u64().unwrap() > 0, "{v}");
    let v = flood(&["--junk", "300", "--junk-rate", "300"]);
    assert_eq!(v["junk_registered"], 300, "{v}");
    assert!(v["identities_pruned"].as_u64().unwrap() >= 300, "{v}");
    // The member was stopped and its ledger compacted: a number, not null.
    assert!(
        v["disk_mb_per_member_after_compaction"].as_f64().unwrap() > 0.0,
        "{v}"
    );
}

#[test]
fn node_compact_gives_back_what_pruning_freed_and_refuses_a_ledger_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("node.toml");
    std::fs::write(&config, "[node]\ndata_dir = \"ledger\"\n").unwrap();
    let ledger = dir.path().join("ledger");
    let compact = || {
        hco()
            .args(["node", "compact", "--config"])
            .arg(&config)
            .output()
            .unwrap()
    };
    {
        let db = sled::open(&ledger).unwrap();
        for i in 0u32..10_000 {
            db.insert(i.to_be_bytes(), vec![1; 400]).unwrap();
        }
        db.flush().unwrap();
        for i in 100u32..10_000 {
            db.remove(i.to_be_bytes()).unwrap();
        }
        db.flush().unwrap();
        let refused = compact();
        assert!(!refused.status.success());
        let why = String::from_utf8_lossy(&refused.stderr);
        assert!(why.contains("is the node still running"), "{why}");
    }
    let out = compact();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let done: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (before, after) = (
        done["before_bytes"].as_u64().unwrap(),
        done["after_bytes"].as_u64().unwrap(),
    );
    assert!(after < before, "{done}");
    assert_eq!(sled::open(&ledger).unwrap().len(), 100);
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

/// A node config shaped like `configs/prod.toml` with a 2-minute slot.
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

/// `hco sim bound` with args; exit success, stdout and stderr.
fn sim_bound(config: &str, extra: &[&str]) -> (bool, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("node.toml");
    std::fs::write(&path, config).unwrap();
    let out = hco()
        .args(["sim", "bound", "--config"])
        .arg(&path)
        .args(extra)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn sim_bound_reads_a_node_config_and_prints_json_and_a_table() {
    let (ok, out, err) = sim_bound(NODE_CONFIG, &["--json"]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
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
    // min_solve left out: the family's own floor.
    assert_eq!(
        json["inputs"]["steps"][1]["families"][0]["min_solve_ms"],
        1500
    );
    let mc = json["monte_carlo"]["identities_per_person"]
        .as_u64()
        .unwrap();
    assert!((1..=11).contains(&mc), "{json}");
    // A slower attention solve lowers the bound; the table says what it is.
    let (ok, out, err) = sim_bound(NODE_CONFIG, &["--json", "--solve-time", "attention=30s"]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["identities_per_person"], 4); // min(165/35, 135/32, 105/16)
    let (ok, table, err) = sim_bound(NODE_CONFIG, &[]);
    assert!(ok, "{err}");
    assert!(table.contains("at most 6 identities"), "{table}");
}

#[test]
fn sim_bound_takes_the_node_defaults_and_names_what_is_wrong() {
    // No [network]: the node's defaults (open 1-minute windows, one drawn step from
    // arithmetic_reasoning, the only default human family).
    let (ok, out, err) = sim_bound("[node]\nkey_file = \"k\"\n", &["--json"]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["inputs"]["slot_mode"], "open");
    assert_eq!(json["steps"].as_array().unwrap().len(), 1);
    assert_eq!(
        json["inputs"]["steps"][0]["families"][0]["name"],
        "arithmetic_reasoning"
    );
    let (ok, _, err) = sim_bound(
        "[network.policy.human]\nsteps = [\"presence\"]\n[[network.families]]\nname = \"attention\"\ndeadline = \"40s\"\ndifficulty = 2\n",
        &[],
    );
    assert!(
        !ok && err.contains("steps[0]") && err.contains("`presence`"),
        "{err}"
    );
    let (ok, _, err) = sim_bound(
        "[[network.families]]\nname = \"captcha\"\ndeadline = \"40s\"\ndifficulty = 1\n",
        &[],
    );
    assert!(!ok && err.contains("unknown family `captcha`"), "{err}");
    let (ok, _, err) = sim_bound("[network]\nslot = 5\n", &[]);
    assert!(!ok && err.contains("invalid config"), "{err}");
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

/// The attack bench's JSON, small: the software passkey against the production policy (its
/// enrolment is refused, so it fails every try) and a few script-held identity-windows under
/// the development configuration.
#[test]
fn bench_attack_prints_first_try_rates_with_intervals_and_end_to_end_windows() {
    let (ok, v) = hco_json(&[
        "bench",
        "attack",
        "--json",
        "--families",
        "presence",
        "--tries",
        "4",
        "--end-to-end",
        "single",
        "--identity-windows",
        "3",
        "--per-window",
        "3",
    ]);
    assert!(ok, "{v}");
    let presence = &v["families"]["presence"];
    assert_eq!(presence["tries"], 4, "{v}");
    assert_eq!(presence["successes"], 0, "{v}");
    assert_eq!(presence["attacker"], "soft-passkey");
    assert_eq!(presence["config"], "prod");
    assert_eq!(presence["refusals"]["no_passkey_enrolled"], 4, "{v}");
    let high = presence["wilson_high"].as_f64().unwrap();
    assert!(
        presence["wilson_low"] == 0.0 && high > 0.4 && high < 0.6,
        "{v}"
    );
    let single = &v["end_to_end"]["single"];
    assert_eq!(
        single["identity_windows"].as_u64().unwrap() + single["unknown"].as_u64().unwrap(),
        3,
        "{v}"
    );
    let answered: u64 = single["answered"]
        .as_object()
        .unwrap()
        .values()
        .map(|a| a["answered"].as_u64().unwrap())
        .sum();
    assert!(
        answered >= 3,
        "every identity answered at least its first step: {v}"
    );
}

/// The agent families in the attack bench, small: a lock family falls to template inversion
/// at every noise level and is marked a baseline; `narrative_chain` on the public starter
/// corpus falls to the lookup of its shipped key, and the keyless readers are measured beside
/// it.
#[test]
fn bench_attack_measures_the_agent_families_at_every_difficulty() {
    let (ok, v) = hco_json(&[
        "bench",
        "attack",
        "--json",
        "--families",
        "obfuscated_text_lock,narrative_chain",
        "--each-difficulty",
        "obfuscated_text_lock",
        "--tries",
        "3",
        "--identity-windows",
        "0",
    ]);
    assert!(ok, "{v}");
    let lock = &v["families"]["obfuscated_text_lock"];
    assert_eq!(lock["class"], "agent", "{v}");
    assert_eq!(lock["baseline"], true, "{v}");
    assert_eq!(lock["attacker"], "template-inversion", "{v}");
    let levels = lock["by_difficulty"].as_object().unwrap();
    assert_eq!(levels.len(), 3, "{v}");
    for rates in levels.values() {
        assert_eq!(rates["template-inversion"]["successes"], 3, "{v}");
    }
    let narrative = &v["families"]["narrative_chain"];
    assert_eq!(narrative["baseline"], false, "{v}");
    assert_eq!(narrative["attacker"], "starter-lookup", "{v}");
    assert_eq!(narrative["successes"], 3, "{v}");
    for attacker in ["keyword", "qa-ranking"] {
        assert_eq!(narrative["attackers"][attacker]["tries"], 3, "{v}");
    }
    assert!(narrative.get("by_difficulty").is_none(), "{v}");
}

/// `hco bench http`, small: the one-step figures as before, and whole identity-windows of a
/// 3-step policy, each counted only when every step was accepted, as the node confirms.
#[test]
fn bench_http_reports_one_step_and_whole_identity_window_figures() {
    let small = [
        "bench",
        "http",
        "--json",
        "--identities",
        "40",
        "--concurrency",
        "4",
        "--seconds",
        "120",
    ];
    let (ok, v) = hco_json(&small);
    assert!(ok, "{v}");
    assert_eq!(v["accepted"], 40, "{v}");
    assert_eq!(v["errors"], 0, "{v}");
    for field in ["accepted_per_s", "p50_ms", "p99_ms", "registrations_per_s"] {
        assert!(v[field].as_f64().unwrap() > 0.0, "{field} in {v}");
    }
    assert_eq!(v["steps_per_identity_window"], 3, "{v}");
    assert_eq!(v["identity_windows_attempted"], 40, "{v}");
    assert_eq!(v["identity_windows"], 40, "{v}");
    assert_eq!(v["identity_windows_confirmed"], 40, "{v}");
    assert_eq!(v["identity_window_errors"], 0, "{v}");
    assert!(v["identity_windows_per_s"].as_f64().unwrap() > 0.0, "{v}");
    // Three steps answered per window (no spare used when none fails).
    let steps_per_s = v["steps_accepted_per_s"].as_f64().unwrap();
    let windows_per_s = v["identity_windows_per_s"].as_f64().unwrap();
    assert!((steps_per_s / windows_per_s - 3.0).abs() < 0.1, "{v}");
    let (p50, p99) = (
        v["identity_window_p50_ms"].as_f64().unwrap(),
        v["identity_window_p99_ms"].as_f64().unwrap(),
    );
    assert!(p50 > 0.0 && p99 >= p50, "{v}");
    assert!(v["server_cpu_ms_per_identity_window"].as_f64().unwrap() >= 0.0);
    assert_eq!(v["identity_window_step_family"], "proof_of_work", "{v}");
    assert_eq!(v["identity_window_presence_verified"], false, "{v}");

    // Without the phase, the report is the one-step report alone.
    let mut without = small.to_vec();
    without.extend(["--policy-steps", "0"]);
    let (ok, v) = hco_json(&without);
    assert!(ok, "{v}");
    assert_eq!(v["accepted"], 40, "{v}");
    assert!(v.get("identity_windows").is_none(), "{v}");
}
