//! The aggregate engine: counts, not identities.
//!
//! Per window it draws
//! * the adversary's human work: while `m · τh` is small, every hired human's window step by
//!   step — the human takes on the model's `per_human` pool identities (fewer when the pool
//!   runs out) and works them earliest-deadline-first through the policy's steps, openings,
//!   deadlines and spares ([`crate::schedule`]); beyond that, the sum over humans from the
//!   central limit theorem with the per-human mean and variance of the model's load table;
//! * bot-run identities: `Binomial(bots, P(active))` with the policy's exact odds (no retries,
//!   no choice of family), attempts from the normal approximation;
//! * honest users per cohort: `Binomial(n, participation)` then `Binomial(·, P(active))`.
//!
//! Windows are independent and each has its own random stream, so windows are split over
//! threads and the output does not depend on the split.

use indicatif::ProgressBar;

use super::{WindowRecord, cohort_sizes};
use crate::model::Model;
use crate::rng::{Rng, tag};
use crate::scenario::Scenario;

/// Above this many expected human attempts per window the CLT path is used.
pub const EXACT_ATTEMPT_LIMIT: f64 = 20_000.0;

/// The aggregate engine for one scenario.
#[derive(Debug, Clone)]
pub struct Aggregate<'a> {
    scenario: &'a Scenario,
    model: &'a Model,
    seed: u64,
    /// Expected-attempt threshold for the per-human path (tests lower it to compare paths).
    pub exact_limit: f64,
}

/// The humans' work in one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HumanWork {
    /// Challenges answered.
    pub attempts: u64,
    /// Identities made active.
    pub active: u64,
}

impl<'a> Aggregate<'a> {
    /// An engine for `scenario` with its derived `model`.
    pub fn new(scenario: &'a Scenario, model: &'a Model, seed: u64) -> Self {
        Self {
            scenario,
            model,
            seed,
            exact_limit: EXACT_ATTEMPT_LIMIT,
        }
    }

    /// Run every window, on up to `threads` threads.
    pub fn run(&self, threads: usize, progress: &ProgressBar) -> Vec<WindowRecord> {
        let windows: Vec<u32> = (0..self.scenario.windows).collect();
        let threads = threads.clamp(1, windows.len().max(1));
        let chunk = windows.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = windows
                .chunks(chunk)
                .map(|ts| {
                    scope.spawn(move || {
                        ts.iter()
                            .map(|&t| {
                                let rec = self.window(t);
                                progress.inc(1);
                                rec
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    }

    /// One window.
    pub fn window(&self, t: u32) -> WindowRecord {
        let (s, model) = (self.scenario, self.model);
        let m = s.humans_at(t);
        let mut rng = Rng::stream(self.seed, tag::ADVERSARY, u64::from(t));
        let pool = (s.adversary.identities > 0).then_some(s.adversary.identities);
        let work = self.humans(&mut rng, m, pool);
        let bots = s.adversary.bot_identities;
        let bot_active = rng.binomial(bots, model.bot_odds.active);
        let bot_attempts = if bots == 0 {
            0
        } else {
            let mean = bots as f64 * model.bot_odds.attempts;
            let sd = (bots as f64 * model.bot_odds.attempts_var).sqrt();
            (mean + sd * rng.normal()).round().max(0.0) as u64
        };
        let mut hrng = Rng::stream(self.seed, tag::HONEST, u64::from(t));
        let shares: Vec<f64> = model.cohorts.iter().map(|c| c.share).collect();
        let (mut participating, mut active) = (0, 0);
        for (c, n) in model
            .cohorts
            .iter()
            .zip(cohort_sizes(s.honest.population, &shares))
        {
            let part = hrng.binomial(n, s.honest.participation);
            participating += part;
            active += hrng.binomial(part, c.active);
        }
        WindowRecord {
            window: t,
            humans: m,
            bound: m as f64 * model.tau_h,
            human_active: work.active,
            bot_active,
            human_attempts: work.attempts,
            bot_attempts,
            attacker_cost: m as f64 * model.cost_per_human_window
                + bot_attempts as f64 * s.adversary.automation_cost_per_attempt,
            honest_participating: participating,
            honest_active: active,
        }
    }

    /// The work of `m` humans in one window, serving at most `pool` identities (None: unlimited).
    pub fn humans(&self, rng: &mut Rng, m: u64, pool: Option<u64>) -> HumanWork {
        let model = self.model;
        let remaining = pool.unwrap_or(u64::MAX);
        if m as f64 * model.tau_h <= self.exact_limit {
            return per_human(model, rng, m, remaining);
        }
        // Humans take `per_human` identities each until the pool runs out; one may take the
        // rest; the others have none.
        let n = u64::from(model.per_human.max(1));
        let full = m.min(remaining / n);
        let rest = if full < m { remaining - full * n } else { 0 };
        let mut parts = vec![(full, model.load_at(n as f64))];
        if rest > 0 {
            parts.push((1, model.load_at(rest as f64)));
        }
        let (mut mean_a, mut var_a, mut mean_t, mut var_t) = (0.0, 0.0, 0.0, 0.0);
        for (count, load) in parts {
            let c = count as f64;
            mean_a += c * load.active_mean;
            var_a += c * load.active_var;
            mean_t += c * load.attempts_mean;
            var_t += c * load.attempts_var;
        }
        let draw = |rng: &mut Rng, mean: f64, var: f64| {
            (mean + var.sqrt() * rng.normal()).round().max(0.0) as u64
        };
        let served = full * n + rest;
        HumanWork {
            attempts: draw(rng, mean_t, var_t),
            active: draw(rng, mean_a, var_a).min(served),
        }
    }
}

/// Every human's window, step by step.
fn per_human(model: &Model, rng: &mut Rng, m: u64, mut remaining: u64) -> HumanWork {
    let mut work = HumanWork::default();
    for _ in 0..m {
        let n = u64::from(model.per_human).min(remaining);
        if n == 0 {
            break;
        }
        remaining -= n;
        let t = model.human_window(rng, n as usize);
        work.active += u64::from(t.active);
        work.attempts += u64::from(t.attempts);
    }
    work
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_work(engine: &Aggregate<'_>, m: u64, pool: Option<u64>, n: u64) -> (f64, f64) {
        let (mut a, mut act) = (0.0, 0.0);
        for i in 0..n {
            let w = engine.humans(&mut Rng::stream(5, 99, i), m, pool);
            a += w.attempts as f64;
            act += w.active as f64;
        }
        (a / n as f64, act / n as f64)
    }

    #[test]
    fn clt_path_agrees_with_per_human_path() {
        for steps in [
            vec!["presence", "presence", "presence"],
            vec!["cognitive", "cognitive", "presence"],
            vec!["cognitive"],
        ] {
            let s = Scenario {
                steps: steps.iter().map(|s| (*s).to_owned()).collect(),
                ..Scenario::default()
            };
            let model = Model::new(&s, 1).unwrap();
            let mut exact = Aggregate::new(&s, &model, 1);
            exact.exact_limit = f64::INFINITY;
            let mut clt = exact.clone();
            clt.exact_limit = 0.0;
            let half = 30 * u64::from(model.per_human) + 3;
            for pool in [None, Some(half)] {
                let (ea, eact) = mean_work(&exact, 60, pool, 200);
                let (ca, cact) = mean_work(&clt, 60, pool, 200);
                // The CLT path uses the load table (its own Monte Carlo, interpolated for a
                // partial load), hence a few percent of slack.
                assert!(
                    (ea / ca - 1.0).abs() < 0.03,
                    "{steps:?} pool={pool:?} attempts {ea} vs {ca}"
                );
                assert!(
                    (eact / cact - 1.0).abs() < 0.03,
                    "{steps:?} pool={pool:?} active {eact} vs {cact}"
                );
            }
        }
    }

    #[test]
    fn thread_split_does_not_change_output() {
        let s = Scenario {
            windows: 30,
            ..Scenario::default()
        };
        let model = Model::new(&s, 1).unwrap();
        let engine = Aggregate::new(&s, &model, 11);
        let bar = ProgressBar::hidden();
        assert_eq!(engine.run(1, &bar), engine.run(3, &bar));
    }
}
