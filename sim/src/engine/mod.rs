//! The two engines and the per-window record they both produce.
//!
//! * [`aggregate`] samples per-family, per-cohort counts in bulk (binomial and renewal draws) and
//!   scales to millions of identities and thousands of windows;
//! * [`exact`] drives the real protocol core on a manual clock: every challenge is issued,
//!   answered and verified by `hco-oracle`.
//!
//! Both return one [`WindowRecord`] per window, so every check and plot works on either.

pub mod aggregate;
pub mod exact;

use serde::{Deserialize, Serialize};

/// Which engine runs a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// Bulk sampling of counts; fast, for large populations.
    #[default]
    Aggregate,
    /// Every challenge through the real oracle core; for thousands of identities.
    Exact,
}

/// What happened in one window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowRecord {
    /// Window index `t`.
    pub window: u32,
    /// Humans the adversary had, `m(t)`.
    pub humans: u64,
    /// Lemma 1 bound `m(t) · τh`.
    pub bound: f64,
    /// Human-run Sybil identities active.
    pub human_active: u64,
    /// Bot-run Sybil identities active.
    pub bot_active: u64,
    /// Challenges the humans answered.
    pub human_attempts: u64,
    /// Challenges the bots answered.
    pub bot_attempts: u64,
    /// The adversary's spending this window.
    pub attacker_cost: f64,
    /// Honest users who took part.
    pub honest_participating: u64,
    /// Honest users who ended the window active.
    pub honest_active: u64,
}

impl WindowRecord {
    /// All active Sybil identities.
    pub fn sybil_active(&self) -> u64 {
        self.human_active + self.bot_active
    }

    /// Honest users who took part but were not active (false rejects).
    pub fn honest_rejected(&self) -> u64 {
        self.honest_participating - self.honest_active
    }

    /// Lemma 1: human-run identities above `m · τh`.
    pub fn violates_lemma1(&self) -> bool {
        self.human_active as f64 > self.bound
    }
}

/// Honest cohort sizes: `round(population · share)`, the rounding remainder given to the first.
pub fn cohort_sizes(population: u64, shares: &[f64]) -> Vec<u64> {
    let mut sizes: Vec<u64> = shares
        .iter()
        .map(|s| (population as f64 * s).round() as u64)
        .collect();
    let total: u64 = sizes.iter().sum();
    if let Some(first) = sizes.first_mut() {
        *first = (*first + population).saturating_sub(total);
    }
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cohort_sizes_add_up() {
        let sizes = cohort_sizes(1001, &[0.8, 0.15, 0.05]);
        assert_eq!(sizes.iter().sum::<u64>(), 1001);
        assert_eq!(sizes[1], 150);
    }
}
