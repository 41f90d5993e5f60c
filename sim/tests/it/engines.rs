//! The exact engine (the real oracle core) and the aggregate engine agree within sampling error.

use hco_sim::engine::{EngineKind, WindowRecord};
use hco_sim::run::{RunConfig, RunOutput, run};
use hco_sim::scenario::Scenario;

fn run_with(s: &Scenario, engine: EngineKind, seed: u64) -> RunOutput {
    let mut cfg = RunConfig::new(s.clone());
    cfg.engine = engine;
    cfg.seed = Some(seed);
    run(&cfg).expect("the run succeeds")
}

/// Mean and variance of a per-window metric.
fn stats(records: &[WindowRecord], f: impl Fn(&WindowRecord) -> f64) -> (f64, f64) {
    let n = records.len() as f64;
    let mean = records.iter().map(&f).sum::<f64>() / n;
    let var = records.iter().map(|r| (f(r) - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

fn assert_agree(
    name: &str,
    a: &[WindowRecord],
    e: &[WindowRecord],
    f: impl Fn(&WindowRecord) -> f64 + Copy,
) {
    let ((ma, va), (me, ve)) = (stats(a, f), stats(e, f));
    let se = (va / a.len() as f64 + ve / e.len() as f64).sqrt();
    // Four standard errors, plus 2 % for the aggregate model's approximations.
    let tol = 4.0 * se + 0.02 * ma.abs().max(me.abs()) + 1e-9;
    assert!(
        (ma - me).abs() <= tol,
        "{name}: aggregate {ma:.3} vs exact {me:.3} (tolerance {tol:.3})"
    );
}

fn check(s: &Scenario) {
    let agg = run_with(s, EngineKind::Aggregate, 3);
    let exact = run_with(s, EngineKind::Exact, 3);
    let (a, e) = (&agg.records, &exact.records);
    assert_eq!(exact.lemma1_violations, 0);
    assert!(
        e.iter().all(|r| r.human_active > 0),
        "the core accepted no human work"
    );
    assert_agree("human-run active", a, e, |r| r.human_active as f64);
    assert_agree("human attempts", a, e, |r| r.human_attempts as f64);
    assert_agree("bot-run active", a, e, |r| r.bot_active as f64);
    assert_agree("bot attempts", a, e, |r| r.bot_attempts as f64);
    assert_agree("honest participating", a, e, |r| {
        r.honest_participating as f64
    });
    assert_agree("honest rejected", a, e, |r| r.honest_rejected() as f64);
}

#[test]
fn engines_agree_on_a_global_slot() {
    let mut s = Scenario::load(&crate::config("small.toml")).unwrap();
    s.windows = 16;
    check(&s);
}

#[test]
fn engines_agree_on_an_open_window_with_two_drawn_steps() {
    let mut s = Scenario::load(&crate::config("small.toml")).unwrap();
    s.windows = 12;
    s.window_len = std::time::Duration::from_secs(120);
    s.slots.mode = hco_sim::scenario::SlotMode::Open;
    s.steps = vec!["cognitive".into(), "cognitive".into()];
    s.honest.population = 150;
    s.adversary.bot_identities = 40;
    check(&s);
}

#[test]
fn the_exact_engine_refuses_what_the_core_cannot_run() {
    let mut s = Scenario::load(&crate::config("small.toml")).unwrap();
    s.honest.population = 10_000_000;
    let mut cfg = RunConfig::new(s);
    cfg.engine = EngineKind::Exact;
    let err = run(&cfg).unwrap_err().to_string();
    assert!(err.contains("--engine aggregate"), "{err}");
}
