//! The six plots of a run.

use std::path::{Path, PathBuf};

use super::Summary;
use super::svg::{ALERT, BOUND, CYCLE, HCO, Mark, POS, POW, Series, chart};
use crate::analysis::{Baseline, baseline_cost, profit_curve, running_means};
use crate::error::SimError;
use crate::run::RunOutput;

/// Draws one plot.
type Draw = fn(&RunOutput, &Summary, &Path) -> Result<(), SimError>;

/// Draw every plot into `dir`.
pub fn draw_all(out: &RunOutput, summary: &Summary, dir: &Path) -> Result<Vec<PathBuf>, SimError> {
    let plots: [(&str, Draw); 6] = [
        ("lemma1.svg", lemma1),
        ("cost.svg", cost),
        ("steady_state.svg", steady_state),
        ("profit.svg", profit),
        ("baselines.svg", baselines),
        ("false_rejects.svg", false_rejects),
    ];
    plots
        .iter()
        .map(|(name, draw)| {
            let path = dir.join(name);
            draw(out, summary, &path).map(|()| path)
        })
        .collect()
}

fn lemma1(out: &RunOutput, summary: &Summary, path: &Path) -> Result<(), SimError> {
    let (ok, bad): (Vec<_>, Vec<_>) = out.records.iter().partition(|r| !r.violates_lemma1());
    let pt = |r: &&crate::engine::WindowRecord| (r.humans as f64, r.human_active as f64);
    let max_m = out.records.iter().map(|r| r.humans).max().unwrap_or(0) as f64;
    let mut series = vec![
        Series::new(
            format!("m·τh (τh = {:.1})", out.model.tau_h),
            BOUND,
            Mark::Line,
            vec![(0.0, 0.0), (max_m, max_m * out.model.tau_h)],
        ),
        Series::new(
            "active human-run identities",
            HCO,
            Mark::Dots,
            ok.iter().map(pt).collect(),
        ),
    ];
    if !bad.is_empty() {
        series.push(Series::new(
            "violations",
            ALERT,
            Mark::Dots,
            bad.iter().map(pt).collect(),
        ));
    }
    chart(
        path,
        &format!(
            "Lemma 1: identities per window vs humans m ({} violations)",
            summary.lemma1_violations
        ),
        "humans m in the window",
        "active identities",
        &series,
    )
}

fn cost(out: &RunOutput, summary: &Summary, path: &Path) -> Result<(), SimError> {
    let fit = summary.fit;
    let s_max = summary.baselines.identities;
    let mut series = vec![
        Series::new(
            "least-squares fit",
            BOUND,
            Mark::Line,
            vec![
                (0.0, fit.intercept),
                (s_max, fit.slope * s_max + fit.intercept),
            ],
        ),
        Series::new(
            "measured (hired humans)",
            HCO,
            Mark::Dots,
            out.cost_points
                .iter()
                .map(|p| (p.identities, p.cost))
                .collect(),
        ),
    ];
    let automation = match summary.automation_cost_per_identity_window {
        Some(c) => {
            series.push(Series::new(
                format!("automation ({c:.4}/identity)"),
                POW,
                Mark::Line,
                vec![(0.0, 0.0), (s_max, c * s_max)],
            ));
            format!("automation {c:.4}/identity")
        }
        None => "automation impossible (a step no script passes)".to_owned(),
    };
    chart(
        path,
        &format!(
            "Theorem 1: C_A(s) = {:.4}·s + {:.3}  (R² = {:.4}); {automation}",
            fit.slope, fit.intercept, fit.r2
        ),
        "identities kept active s",
        "attacker cost per window",
        &series,
    )
}

fn steady_state(out: &RunOutput, summary: &Summary, path: &Path) -> Result<(), SimError> {
    let means = running_means(&out.records);
    let x = |i: usize| (i + 1) as f64;
    chart(
        path,
        &format!(
            "Theorem 2: mean active {:.1} vs m̄·τh = {:.1} ({} violations)",
            summary.mean_human_active, summary.steady_state_bound, summary.theorem2_violations
        ),
        "window",
        "identities",
        &[
            Series::new(
                "active this window",
                RGB_LIGHT,
                Mark::Line,
                out.records
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (x(i), r.human_active as f64))
                    .collect(),
            ),
            Series::new(
                "running mean of m·τh",
                BOUND,
                Mark::Line,
                means.iter().enumerate().map(|(i, m)| (x(i), m.1)).collect(),
            ),
            Series::new(
                "running mean of active",
                HCO,
                Mark::Line,
                means.iter().enumerate().map(|(i, m)| (x(i), m.0)).collect(),
            ),
        ],
    )
}

const RGB_LIGHT: plotters::style::RGBColor = plotters::style::RGBColor(170, 200, 230);

fn profit(out: &RunOutput, summary: &Summary, path: &Path) -> Result<(), SimError> {
    let be = summary.break_even_reward;
    let mut rewards = vec![("scenario reward", summary.reward_per_identity_window)];
    if be > 0.0 {
        rewards.push(("½ × break-even", 0.5 * be));
        rewards.push(("1.5 × break-even", 1.5 * be));
    }
    let series: Vec<Series> = rewards
        .iter()
        .zip(CYCLE)
        .map(|((label, r), color)| {
            Series::new(
                format!("{label}: {r:.4} per identity-window"),
                color,
                Mark::Line,
                profit_curve(&out.cost_points, *r)
                    .iter()
                    .map(|p| (p.identities, p.profit))
                    .collect(),
            )
        })
        .collect();
    chart(
        path,
        &format!(
            "Profit: best at {:.0} identities; pays above {:.4} per identity-window",
            summary.profit_max_identities, be
        ),
        "identities kept active s",
        "reward − cost per window",
        &series,
    )
}

fn baselines(out: &RunOutput, summary: &Summary, path: &Path) -> Result<(), SimError> {
    let s = &out.scenario;
    let s_max = summary.baselines.identities;
    let window_s = s.window_len.as_secs_f64();
    let grid: Vec<f64> = (0..=50).map(|i| s_max * f64::from(i) / 50.0).collect();
    let curve = |b| {
        grid.iter()
            .map(|&x| (x, baseline_cost(&s.baselines, b, window_s, x)))
            .collect()
    };
    chart(
        path,
        "The same attack priced three ways",
        "identities kept active s",
        "attacker cost per window",
        &[
            Series::new(
                "HCO (measured)",
                HCO,
                Mark::Dots,
                out.cost_points
                    .iter()
                    .map(|p| (p.identities, p.cost))
                    .collect(),
            ),
            Series::new(
                "HCO fit",
                HCO,
                Mark::Line,
                vec![
                    (0.0, summary.fit.intercept),
                    (s_max, summary.fit.slope * s_max + summary.fit.intercept),
                ],
            ),
            Series::new(
                "PoW (reusable devices + energy)",
                POW,
                Mark::Line,
                curve(Baseline::Pow),
            ),
            Series::new(
                "PoS (opportunity cost of stake)",
                POS,
                Mark::Line,
                curve(Baseline::Pos),
            ),
        ],
    )
}

fn false_rejects(out: &RunOutput, _summary: &Summary, path: &Path) -> Result<(), SimError> {
    let mut slots: Vec<f64> = out.sweep.iter().map(|p| p.slot_s).collect();
    slots.dedup();
    let series: Vec<Series> = slots
        .iter()
        .zip(CYCLE.iter().cycle())
        .map(|(&slot, &color)| {
            Series::new(
                format!("slot {slot} s"),
                color,
                Mark::Line,
                out.sweep
                    .iter()
                    .filter(|p| p.slot_s == slot)
                    .map(|p| (p.deadline_scale, p.false_reject))
                    .collect(),
            )
        })
        .collect();
    chart(
        path,
        "Honest users who miss a window, by deadline and slot length",
        "deadline multiplier (1 = scenario deadlines)",
        "false-reject share",
        &series,
    )
}
