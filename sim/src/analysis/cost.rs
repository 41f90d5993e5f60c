//! The attacker's cost curve C_A(s) (Theorem 1), the PoW/PoS baselines, and profit.
//!
//! The HCO curve is measured, not assumed: for a grid of hired humans `m` the aggregate engine
//! runs `cost_windows` windows with an unlimited identity pool; each point is the mean number of
//! identities the humans kept active and what they were paid.

use serde::Serialize;

use crate::engine::aggregate::Aggregate;
use crate::model::Model;
use crate::rng::{Rng, tag};
use crate::scenario::{Baselines, Scenario};

/// One measured point of the HCO cost curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CostPoint {
    /// Humans hired.
    pub humans: u64,
    /// Mean identities they kept active per window (`s`).
    pub identities: f64,
    /// Cost per window.
    pub cost: f64,
}

/// Measure the HCO cost curve.
pub fn cost_curve(s: &Scenario, model: &Model, seed: u64) -> Vec<CostPoint> {
    let max_h = if s.analysis.cost_max_humans > 0 {
        s.analysis.cost_max_humans
    } else {
        s.max_humans().max(1)
    };
    let n = u64::from(s.analysis.cost_points);
    let mut grid: Vec<u64> = (1..=n).map(|i| (max_h * i).div_ceil(n)).collect();
    grid.dedup();
    let engine = Aggregate::new(s, model, seed);
    grid.iter()
        .map(|&m| {
            let total: u64 = (0..s.analysis.cost_windows)
                .map(|w| {
                    let mut rng = Rng::stream(seed, tag::COST, (m << 32) | u64::from(w));
                    engine.humans(&mut rng, m, None).active
                })
                .sum();
            CostPoint {
                humans: m,
                identities: total as f64 / f64::from(s.analysis.cost_windows),
                cost: m as f64 * model.cost_per_human_window,
            }
        })
        .collect()
}

/// A non-HCO way to price the same `s` identities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    /// Proof of work: reusable devices of a given hash rate, plus energy per hash.
    Pow,
    /// Proof of stake: the opportunity cost of locked stake.
    Pos,
}

/// Cost per window of keeping `s` identities under a baseline, with windows of `window_s` seconds.
pub fn baseline_cost(b: &Baselines, which: Baseline, window_s: f64, s: f64) -> f64 {
    match which {
        Baseline::Pow => {
            if s <= 0.0 {
                return 0.0;
            }
            let hashes = s * b.pow_hashes_per_identity;
            let devices = (hashes / (b.pow_device_hash_rate * window_s)).ceil();
            devices * b.pow_device_cost / b.pow_device_lifetime_windows
                + hashes * b.pow_energy_cost_per_hash
        }
        Baseline::Pos => {
            b.pos_interest_per_window * b.pos_attack_stake.max(s * b.pos_min_stake_per_identity)
        }
    }
}

/// Attacker profit at one point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProfitPoint {
    /// Identities kept active.
    pub identities: f64,
    /// Reward minus cost, per window.
    pub profit: f64,
}

/// Profit along the cost curve (starting from doing nothing) at `reward` per identity-window.
pub fn profit_curve(points: &[CostPoint], reward: f64) -> Vec<ProfitPoint> {
    std::iter::once(ProfitPoint {
        identities: 0.0,
        profit: 0.0,
    })
    .chain(points.iter().map(|p| ProfitPoint {
        identities: p.identities,
        profit: reward * p.identities - p.cost,
    }))
    .collect()
}

/// The profit-maximising identity count: where adding humans stops paying
/// (reward minus marginal cost turns negative). Ties go to fewer identities.
pub fn profit_max(points: &[CostPoint], reward: f64) -> f64 {
    profit_curve(points, reward)
        .into_iter()
        .fold(None::<ProfitPoint>, |best, p| match best {
            Some(b) if b.profit >= p.profit => Some(b),
            _ => Some(p),
        })
        .map_or(0.0, |p| p.identities)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pos_is_constant_and_pow_is_flat() {
        let b = Baselines::default();
        let pos: Vec<f64> = [1.0, 10.0, 1e4]
            .iter()
            .map(|&s| baseline_cost(&b, Baseline::Pos, 3600.0, s))
            .collect();
        assert!(pos.iter().all(|&c| c == pos[0]));
        let pow1 = baseline_cost(&b, Baseline::Pow, 3600.0, 1.0);
        let pow1k = baseline_cost(&b, Baseline::Pow, 3600.0, 1000.0);
        assert!(pow1k < 2.0 * pow1, "{pow1} {pow1k}");
    }

    #[test]
    fn profit_max_follows_the_reward() {
        let pts: Vec<CostPoint> = (1..=5)
            .map(|m| CostPoint {
                humans: m,
                identities: 10.0 * m as f64,
                cost: m as f64,
            })
            .collect();
        assert_eq!(profit_max(&pts, 0.05), 0.0);
        assert_eq!(profit_max(&pts, 0.2), 50.0);
    }
}
