//! The paper scenario reproduces the paper's claims.

use hco_sim::analysis::{Baseline, baseline_cost};
use hco_sim::run::{RunConfig, run};
use hco_sim::scenario::Scenario;

#[test]
fn paper_scenario_meets_lemma_1_theorems_and_linear_cost() {
    let s = Scenario::load(&crate::config("paper.toml")).unwrap();
    let out = run(&RunConfig::new(s.clone())).unwrap();
    assert_eq!(out.records.len(), 1000);
    assert_eq!(out.lemma1_violations, 0);
    assert_eq!(out.steady.violations, 0);
    assert!(out.steady.mean_human_active <= out.steady.bound);
    // The humans are really working: the bound is not vacuous.
    assert!(out.steady.mean_human_active > 0.5 * out.steady.bound);
    assert!(out.fit.r2 >= 0.99, "R² = {}", out.fit.r2);
    assert!(out.fit.slope > 0.0);
    // PoS is constant in s, PoW nearly so, HCO grows linearly past both.
    let w = s.window_len.as_secs_f64();
    let s_max = out.cost_points.last().unwrap().identities;
    let pos: Vec<f64> = [1.0, s_max / 2.0, s_max]
        .iter()
        .map(|&x| baseline_cost(&s.baselines, Baseline::Pos, w, x))
        .collect();
    assert!(pos.iter().all(|&c| c == pos[0]), "{pos:?}");
    let pow_growth = baseline_cost(&s.baselines, Baseline::Pow, w, s_max)
        / baseline_cost(&s.baselines, Baseline::Pow, w, 1.0);
    assert!(pow_growth < 3.0, "PoW should be sublinear: ×{pow_growth}");
    let hco_growth = out.cost_points.last().unwrap().cost / out.cost_points[0].cost;
    let s_growth = s_max / out.cost_points[0].identities;
    assert!(
        (hco_growth / s_growth - 1.0).abs() < 0.05,
        "HCO cost ×{hco_growth}, s ×{s_growth}"
    );
    // Honest users mostly get through with the paper's deadlines.
    assert!(out.honest_false_reject_rate < 0.05);
}

#[test]
fn a_global_slot_caps_what_one_human_can_do_and_an_open_window_does_not() {
    let global = Scenario::from_toml("windows = 24").unwrap();
    let open = Scenario::from_toml("windows = 24\n[slots]\nmode = \"open\"").unwrap();
    let g = run(&RunConfig::new(global)).unwrap();
    let o = run(&RunConfig::new(open)).unwrap();
    assert_eq!(g.lemma1_violations + o.lemma1_violations, 0);
    // An hour of open window is 12× a 5-minute slot: about 12× the identities per human.
    let ratio = o.steady.mean_human_active / g.steady.mean_human_active;
    assert!((10.0..14.0).contains(&ratio), "ratio {ratio}");
    assert!(o.model.tau_h > 8.0 * g.model.tau_h);
    // Humans are paid by the hour, so the money per identity is the same: the slot changes how
    // many humans the attacker needs, not what each identity costs.
    assert!((o.fit.slope / g.fit.slope - 1.0).abs() < 0.1);
}

#[test]
fn cheap_automation_is_flagged_as_profitable() {
    let s = Scenario::load(&crate::config("automation.toml")).unwrap();
    let out = run(&RunConfig::new(s)).unwrap();
    let summary = hco_sim::report::Summary::new(&out);
    assert!(summary.automation_profitable);
    assert!(summary.mean_bot_active > 0.0);
}
