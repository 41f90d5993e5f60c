//! Checks and derived results: Lemma 1 and Theorem 2 on the run, the cost curve and its fit
//! (Theorem 1), the PoW/PoS baselines, the attacker's profit, and honest false rejects.

mod cost;
mod sweep;

pub use cost::{
    Baseline, CostPoint, ProfitPoint, baseline_cost, cost_curve, profit_curve, profit_max,
};
pub use sweep::{SweepPoint, false_reject_sweep};

use serde::Serialize;

use crate::engine::WindowRecord;

/// A least-squares line `y = slope · x + intercept`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fit {
    /// Slope: cost per identity per window on the cost curve.
    pub slope: f64,
    /// Intercept.
    pub intercept: f64,
    /// Coefficient of determination.
    pub r2: f64,
}

/// Ordinary least squares over `(x, y)` points (at least two distinct `x`).
pub fn least_squares(points: &[(f64, f64)]) -> Fit {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let intercept = my - slope * mx;
    let ss_res: f64 = points
        .iter()
        .map(|p| (p.1 - slope * p.0 - intercept).powi(2))
        .sum();
    let r2 = if syy > 0.0 { 1.0 - ss_res / syy } else { 1.0 };
    Fit {
        slope,
        intercept,
        r2,
    }
}

/// Steady state over a run (Theorem 2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SteadyState {
    /// Mean humans m̄.
    pub mean_humans: f64,
    /// Mean human-run active identities.
    pub mean_human_active: f64,
    /// Mean bot-run active identities.
    pub mean_bot_active: f64,
    /// Theorem 2 bound m̄ · τh.
    pub bound: f64,
    /// Windows whose running mean of active identities exceeded the running mean of m·τh.
    pub violations: u64,
}

/// Running means `(active, bound)` after each window.
pub fn running_means(records: &[WindowRecord]) -> Vec<(f64, f64)> {
    let (mut a, mut b) = (0.0, 0.0);
    records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            a += r.human_active as f64;
            b += r.bound;
            let n = (i + 1) as f64;
            (a / n, b / n)
        })
        .collect()
}

/// Theorem 2 over the run.
pub fn steady_state(records: &[WindowRecord], tau_h: f64) -> SteadyState {
    let n = records.len().max(1) as f64;
    let mean_humans = records.iter().map(|r| r.humans as f64).sum::<f64>() / n;
    SteadyState {
        mean_humans,
        mean_human_active: records.iter().map(|r| r.human_active as f64).sum::<f64>() / n,
        mean_bot_active: records.iter().map(|r| r.bot_active as f64).sum::<f64>() / n,
        bound: mean_humans * tau_h,
        violations: running_means(records).iter().filter(|(a, b)| a > b).count() as u64,
    }
}

/// Lemma 1 violations: windows with more human-run identities than `m · τh`.
pub fn lemma1_violations(records: &[WindowRecord]) -> u64 {
    records.iter().filter(|r| r.violates_lemma1()).count() as u64
}

/// Share of honest participations that ended in a missed window.
pub fn false_reject_rate(records: &[WindowRecord]) -> f64 {
    let part: u64 = records.iter().map(|r| r.honest_participating).sum();
    let rej: u64 = records.iter().map(WindowRecord::honest_rejected).sum();
    if part == 0 {
        0.0
    } else {
        rej as f64 / part as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_line_has_r2_one() {
        let pts: Vec<(f64, f64)> = (0..10).map(|i| (i as f64, 3.0 * i as f64 + 2.0)).collect();
        let f = least_squares(&pts);
        assert!((f.slope - 3.0).abs() < 1e-12 && (f.intercept - 2.0).abs() < 1e-12);
        assert!((f.r2 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn noise_lowers_r2() {
        let pts = [(0.0, 0.0), (1.0, 5.0), (2.0, 0.0), (3.0, 5.0)];
        assert!(least_squares(&pts).r2 < 0.5);
    }
}
