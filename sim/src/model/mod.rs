//! Quantities derived from a scenario: the human budget per window, τh, per-challenge odds, and
//! honest users' chance of getting through a window.
//!
//! ## The τh model
//!
//! A hired human works through challenges one after another. Each attempt of family `f` takes
//! `A = min(T_f, Δ_f)` (a human gives up at the deadline); families rotate by weight, so attempt
//! durations are i.i.d. with the mixture's mean `μ` and coefficient of variation `cv`.
//! The human may only *request* challenges while their budget `B` lasts:
//!
//! * `global` — `B` = slot length: every identity's slot is the same, and a human cannot be in two
//!   global slots at once, so one slot is all the time there is;
//! * `staggered` — each identity has its own slot. A human can serve identities whose slots are
//!   open while they work, one after another; with many identities spread over the window some
//!   slot is always open, so `B` = min(window, shift), as for `open`. Staggering spreads load and
//!   makes slots unpredictable, but only a global slot caps a human's time;
//! * `open` — `B` = min(window, shift): the window bounded by a working shift.
//!
//! By renewal theory the attempts a human starts within `B` have mean `B/μ + (1 + cv²)/2` and
//! variance `B·cv²/μ`. τh is that mean plus `tau_z` standard deviations: the throughput a
//! human exceeds with probability about `Φ(−z)`, and a group of humans far less often. Lemma 1's
//! line is `m · τh`.

mod family;
mod math;

pub use family::{AttemptMoments, FamilyModel};
pub use math::{IdentityOdds, norm_cdf};

use crate::rng::Rng;
use crate::scenario::{Scenario, ScenarioError, SlotMode};

/// One honest cohort with its odds under the scenario's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct CohortModel {
    /// Cohort name.
    pub name: String,
    /// Share of the population.
    pub share: f64,
    /// Solve-time multiplier.
    pub speed: f64,
    /// P(active | takes part), estimated by Monte Carlo.
    pub active: f64,
}

/// Everything derived from a scenario that the engines use.
#[derive(Debug, Clone)]
pub struct Model {
    /// Families with normalised weights, in name order.
    pub families: Vec<FamilyModel>,
    cumulative: Vec<f64>,
    /// Challenges per window `k`.
    pub k: u32,
    /// Solves required `r`.
    pub r: u32,
    /// A hired human's time budget per window, seconds.
    pub human_budget_s: f64,
    /// An honest user's time to request challenges (slot or window), seconds.
    pub honest_budget_s: f64,
    /// Mean honest arrival delay, seconds.
    pub arrival_mean_s: f64,
    /// Mean attempt duration μ (typical human), seconds.
    pub attempt_mean_s: f64,
    /// Coefficient of variation of the attempt duration.
    pub attempt_cv: f64,
    /// Per-human throughput bound per window.
    pub tau_h: f64,
    /// Per-challenge success of a typical human.
    pub pi_human: f64,
    /// Per-challenge automated success (weighted ε_auto).
    pub eps_auto: f64,
    /// Odds of a human-run identity.
    pub human_odds: IdentityOdds,
    /// Odds of a bot-run identity.
    pub bot_odds: IdentityOdds,
    /// Cost of one hired human for one window.
    pub cost_per_human_window: f64,
    /// Honest cohorts.
    pub cohorts: Vec<CohortModel>,
}

impl Model {
    /// Derive the model (runs the honest Monte Carlo with `seed`).
    pub fn new(s: &Scenario, seed: u64) -> Result<Self, ScenarioError> {
        let resolved = s.resolved_families()?;
        let total: f64 = resolved.iter().map(|f| f.weight).sum();
        let families: Vec<FamilyModel> = resolved
            .iter()
            .map(|f| FamilyModel::new(f, total))
            .collect();
        let mut acc = 0.0;
        let mut cumulative: Vec<f64> = families
            .iter()
            .map(|f| {
                acc += f.weight;
                acc
            })
            .collect();
        if let Some(last) = cumulative.last_mut() {
            *last = 1.0;
        }
        let window = s.window_len.as_secs_f64();
        let slot = s.slots.len.as_secs_f64();
        let shift = s.adversary.shift.as_secs_f64();
        let (human_budget_s, honest_budget_s) = match s.slots.mode {
            SlotMode::Global => (slot, slot),
            SlotMode::Staggered => (window.min(shift), slot),
            SlotMode::Open => (window.min(shift), window),
        };
        let mix = mixture(&families, 1.0, 1.0);
        let cv2 = (mix.second / (mix.mean * mix.mean) - 1.0).max(0.0);
        let mean_attempts = human_budget_s / mix.mean + (1.0 + cv2) / 2.0;
        let tau_h = mean_attempts + s.analysis.tau_z * (human_budget_s * cv2 / mix.mean).sqrt();
        let eps_auto: f64 = families.iter().map(|f| f.weight * f.eps_auto).sum();
        let (k, r) = (s.challenges_per_window, s.solves_required);
        let mut model = Self {
            cumulative,
            k,
            r,
            human_budget_s,
            honest_budget_s,
            arrival_mean_s: s.honest.arrival_delay.as_secs_f64(),
            attempt_mean_s: mix.mean,
            attempt_cv: cv2.sqrt(),
            tau_h,
            pi_human: mix.success,
            eps_auto,
            human_odds: IdentityOdds::new(k, r, mix.success),
            bot_odds: IdentityOdds::new(k, r, eps_auto),
            cost_per_human_window: s.adversary.wage_per_hour * human_budget_s / 3600.0,
            cohorts: Vec::new(),
            families,
        };
        let mut rng = Rng::stream(seed, crate::rng::tag::COHORT_MC, 0);
        model.cohorts = s
            .honest
            .cohorts
            .iter()
            .map(|c| CohortModel {
                name: c.name.clone(),
                share: c.share,
                speed: c.speed,
                active: model.honest_active(
                    &mut rng,
                    c.speed,
                    1.0,
                    honest_budget_s,
                    s.analysis.honest_samples,
                ),
            })
            .collect();
        Ok(model)
    }

    /// Draw a family index by rotation weight.
    pub fn pick_family(&self, rng: &mut Rng) -> usize {
        rng.pick(&self.cumulative)
    }

    /// One honest user's window: arrive after an exponential delay, request challenges while the
    /// slot is open, stop at `r` accepted or when `r` can no longer be reached. Returns active.
    pub fn honest_window(&self, rng: &mut Rng, speed: f64, scale: f64, budget: f64) -> bool {
        let mut elapsed = rng.exponential(self.arrival_mean_s);
        let (mut ok, mut failed) = (0, 0);
        while elapsed < budget && ok < self.r && failed <= self.k - self.r {
            let fam = &self.families[self.pick_family(rng)];
            let (spent, accepted) = fam.sample_attempt(rng, speed, scale);
            elapsed += spent;
            if accepted {
                ok += 1;
            } else {
                failed += 1;
            }
        }
        ok == self.r
    }

    /// Monte-Carlo P(active) of an honest user of `speed` with deadlines scaled by `scale`.
    pub fn honest_active(
        &self,
        rng: &mut Rng,
        speed: f64,
        scale: f64,
        budget: f64,
        samples: u32,
    ) -> f64 {
        let active = (0..samples)
            .filter(|_| self.honest_window(rng, speed, scale, budget))
            .count();
        active as f64 / f64::from(samples)
    }

    /// Expected automated attempts per active bot identity times the attempt price.
    pub fn bot_cost_per_active(&self, cost_per_attempt: f64) -> f64 {
        if self.bot_odds.active > 0.0 {
            cost_per_attempt * self.bot_odds.attempts / self.bot_odds.active
        } else {
            f64::INFINITY
        }
    }
}

/// Mixture moments of an attempt over the rotation.
pub fn mixture(families: &[FamilyModel], speed: f64, scale: f64) -> AttemptMoments {
    families.iter().fold(
        AttemptMoments {
            mean: 0.0,
            second: 0.0,
            success: 0.0,
        },
        |acc, f| {
            let m = f.moments(speed, scale);
            AttemptMoments {
                mean: acc.mean + f.weight * m.mean,
                second: acc.second + f.weight * m.second,
                success: acc.success + f.weight * m.success,
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_slot_caps_tau_at_slot_over_solve_time() {
        let s = Scenario::default();
        let m = Model::new(&s, 1).unwrap();
        let ratio = m.human_budget_s / m.attempt_mean_s;
        assert!(
            m.tau_h > ratio && m.tau_h < 1.5 * ratio + 2.0,
            "{} vs {ratio}",
            m.tau_h
        );
        assert_eq!(m.human_budget_s, 300.0);
    }

    #[test]
    fn open_slots_use_the_shift_bound() {
        let mut s = Scenario::default();
        s.slots.mode = SlotMode::Open;
        s.adversary.shift = std::time::Duration::from_secs(1800);
        let m = Model::new(&s, 1).unwrap();
        assert_eq!(m.human_budget_s, 1800.0);
        assert_eq!(m.honest_budget_s, 3600.0);
    }

    #[test]
    fn slower_cohorts_fail_more() {
        let m = Model::new(&Scenario::default(), 1).unwrap();
        let q: Vec<f64> = m.cohorts.iter().map(|c| c.active).collect();
        assert!(q[0] > q[1] && q[1] > q[2], "{q:?}");
        assert!(q[0] > 0.95, "{q:?}");
    }
}
