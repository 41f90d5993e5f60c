//! Key files, benchmarks and the simulator through the real command line.

use std::process::Command;

use crate::support::{hco_json, succeed};

fn hco() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hco"))
}

#[test]
fn keys_and_identities_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("node.key");
    let out = succeed(hco().args(["keys", "gen", "--out"]).arg(&node));
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
    let out = succeed(hco().args([
        "bench",
        "verify",
        "--json",
        "--responses",
        "300",
        "--batch",
        "64",
    ]));
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
    // One phase per try, whatever the policy's length.
    let steps = bound["inputs"]["steps"].as_array().unwrap().len() as u64;
    assert_eq!(
        bound["phases"],
        steps + bound["inputs"]["spares"].as_u64().unwrap()
    );
    // Presence steps are touch prompts of the global slot (and only they): a model answering
    // the cognitive steps still needs a person's touch per prompt, so that figure is bounded
    // too.
    let presence: Vec<bool> = bound["inputs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"] == "presence")
        .collect();
    assert!(presence.contains(&true), "{bound}");
    for (i, &p) in presence.iter().enumerate() {
        let prompt = &bound["inputs"]["steps"][i]["prompt_reaction_ms"];
        assert_eq!(prompt.is_u64(), p, "{i}: {bound}");
    }
    let model = bound["identities_per_person_model_solves"]
        .as_u64()
        .unwrap();
    assert_eq!(bound["model_solves"]["identities_per_person"], model);
    assert_eq!(
        bound["model_solves"]["touches_per_identity_window"],
        presence.iter().filter(|&&p| p).count()
    );
    assert!(model >= n, "{bound}");
    // A member answering for its own sybils adds one relay round to the beats' span, and
    // production still holds it to ten.
    let member = bound["identities_per_person_one_malicious_member"]
        .as_u64()
        .unwrap();
    assert!((model..=10).contains(&member), "{bound}");
    assert_eq!(
        bound["model_solves"]["one_malicious_member"]["relay_round_s"],
        bound["inputs"]["relay_round_ms"].as_f64().unwrap() / 1000.0
    );
}

/// A node config shaped like the earlier `configs/prod.toml`: one presence step (due 20 s after
/// its beat's opening, so that the four beats fit at the end of the 2-minute slot) and two drawn
/// steps.
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
deadline = "20s"
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
    // Presence is a touch prompt due 20 s after its beat's opening (1 s of jitter by default);
    // its two beats (try 0, or 1 after a miss) do not bind a person at 3 s a touch (14).
    assert_eq!(json["inputs"]["steps"][0]["prompt_reaction_ms"], 20_000);
    assert!(json["inputs"]["steps"][1]["prompt_reaction_ms"].is_null());
    assert_eq!(json["inputs"]["prompt_jitter_ms"], 1000);
    assert_eq!(json["bound_by"], "work");
    // A model answering the cognitive steps, one touch 1 s: 2·(1 + 20)/(1·1) = 42.
    assert_eq!(json["identities_per_person_model_solves"], 42);
    let model = &json["model_solves"];
    assert_eq!(model["identities_per_person"], 42);
    assert_eq!(model["basis"], "beats");
    assert_eq!(model["beats"], 2);
    assert_eq!(model["prompt_tries"], serde_json::json!([0, 1]));
    assert_eq!(model["touches_per_identity_window"], 1);
    assert_eq!(model["person_seconds_per_identity_window"], 1.0);
    assert_eq!(model["touch_s"], 1.0);
    assert_eq!(model["rig"]["touch_s"], 0.25);
    assert_eq!(model["rig"]["identities_per_key"], 168);
    let notes = model["hardware"].as_array().unwrap();
    assert_eq!(notes.len(), 3, "{model}");
    let notes = model["hardware"].to_string();
    for word in ["batch attestation", "rig", "biometric", "PIN"] {
        assert!(notes.contains(word), "{word}: {notes}");
    }
    let mc = &model["monte_carlo"];
    assert!(
        (1..=42).contains(&mc["identities_per_person"].as_u64().unwrap()),
        "{mc}"
    );
    let held = mc["active_by_held"].as_array().unwrap();
    assert_eq!(held.len(), 84);
    assert_eq!(held[0]["held"], 1);
    assert_eq!(held[0]["active"], 1.0);
    assert!(
        held.iter().all(|h| h["active"].as_f64().unwrap() <= 42.0),
        "{mc}"
    );
    // A 2 s touch halves it.
    let (ok, out, err) = sim_bound(NODE_CONFIG, &["--json", "--touch-ms", "2000"]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["identities_per_person_model_solves"], 21);
    assert_eq!(json["model_solves"]["touch_s"], 2.0);
    assert_eq!(json["identities_per_person"], 6);
    // A slower attention solve lowers the bound; the table says what it is.
    let (ok, out, err) = sim_bound(NODE_CONFIG, &["--json", "--solve-time", "attention=30s"]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["identities_per_person"], 4); // min(165/35, 135/32, 105/16)
    let (ok, table, err) = sim_bound(NODE_CONFIG, &[]);
    assert!(ok, "{err}");
    assert!(table.contains("at most 6 identities"), "{table}");
    assert!(
        table.contains("a model answering every cognitive step: at most 42 identities"),
        "{table}"
    );
    let (ok, _, err) = sim_bound(NODE_CONFIG, &["--touch-ms", "0"]);
    assert!(!ok && err.contains("--touch-ms"), "{err}");
}

#[test]
fn sim_bound_of_the_touch_prompt_policy_counts_the_beats() {
    // Three presence steps due 5 s after their beats' openings, two cognitive ones, one spare,
    // a 100 s slot: tries 0..=3 may serve a prompt, four beats of 1 + 5 s.
    let config = NODE_CONFIG
        .replace("slot = \"2m\"", "slot = \"100s\"")
        .replace(
            "steps = [\"presence\", \"cognitive\", \"cognitive\"]",
            "steps = [\"presence\", \"presence\", \"presence\", \"cognitive\", \"cognitive\"]",
        )
        .replace(
            "name = \"presence\"\ndeadline = \"20s\"",
            "name = \"presence\"\ndeadline = \"5s\"",
        );
    let (ok, out, err) = sim_bound(&config, &["--json"]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["phases"], 6);
    // A person at 3 s a touch: three touches in 24 s of beats, 2.7.
    assert_eq!(json["identities_per_person"], 2);
    assert_eq!(json["bound_by"], "touches");
    // A model answering the cognitive steps, 1 s a touch: 4·6/(3·1) = 8.
    assert_eq!(json["identities_per_person_model_solves"], 8);
    let model = &json["model_solves"];
    assert_eq!(model["beats"], 4);
    assert_eq!(model["touches_per_identity_window"], 3);
    assert_eq!(model["person_seconds_per_identity_window"], 3.0);
    assert_eq!(model["rig"]["identities_per_key"], 32);
    let mc = &model["monte_carlo"];
    assert!(
        (1..=8).contains(&mc["identities_per_person"].as_u64().unwrap()),
        "{mc}"
    );
    let held = mc["active_by_held"].as_array().unwrap();
    assert_eq!(held.len(), 16);
    assert_eq!(held[0]["active"], 1.0);
    let active: Vec<f64> = held.iter().map(|h| h["active"].as_f64().unwrap()).collect();
    assert!(active.windows(2).all(|w| w[1] >= w[0]), "{mc}");
    assert!(active.iter().all(|&a| a <= 8.0), "{mc}");
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
    // An open window has no touch prompt: nothing bounds a model there.
    assert!(
        json["identities_per_person_model_solves"].is_null(),
        "{json}"
    );
    assert_eq!(json["model_solves"]["basis"], "none");
    assert!(
        json["model_solves"]["note"]
            .as_str()
            .unwrap()
            .contains("unbounded"),
        "{json}"
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
    succeed(
        hco()
            .args(["sim", "run", scenario, "--out"])
            .arg(dir.path()),
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
