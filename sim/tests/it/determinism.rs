//! A fixed seed gives byte-identical outputs; another seed gives others.

use std::path::Path;

use hco_sim::report::{FILES, write_all};
use hco_sim::run::{RunConfig, run};
use hco_sim::scenario::Scenario;

fn run_into(dir: &Path, seed: u64, threads: usize) {
    let s = Scenario::load(&crate::config("small.toml")).expect("small.toml loads");
    let mut cfg = RunConfig::new(s);
    cfg.seed = Some(seed);
    cfg.threads = threads;
    let out = run(&cfg).expect("the run succeeds");
    write_all(&out, dir).expect("outputs are written");
}

#[test]
fn fixed_seed_gives_byte_identical_files() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    run_into(&a, 42, 1);
    run_into(&b, 42, 2);
    run_into(&c, 43, 2);
    for f in FILES {
        let fa = std::fs::read(a.join(f)).unwrap();
        assert!(!fa.is_empty(), "{f} is empty");
        assert_eq!(
            fa,
            std::fs::read(b.join(f)).unwrap(),
            "{f} differs for the same seed"
        );
    }
    assert_ne!(
        std::fs::read(a.join("windows.csv")).unwrap(),
        std::fs::read(c.join("windows.csv")).unwrap()
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(a.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["seed"], 42);
    for key in [
        "scenario",
        "lemma1_violations",
        "theorem2_violations",
        "profit_max_identities",
        "honest_false_reject_rate",
    ] {
        assert!(!summary[key].is_null(), "summary.json lacks {key}");
    }
    for key in ["slope", "intercept", "r2"] {
        assert!(
            summary["fit"][key].is_number(),
            "summary.json lacks fit.{key}"
        );
    }
    let svg = std::fs::read_to_string(a.join("lemma1.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Lemma 1"));
}
