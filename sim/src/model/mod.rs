//! Quantities derived from a scenario: the steps' pools and odds, what one hired human can do
//! in a window (capacity, τh and the load they take on), and honest users' chance of getting
//! through a window.
//!
//! ## The policy
//!
//! Each window an identity must pass every step of the policy, in order, with at most
//! `spares` failed tries. A drawn step takes its family uniformly from its pool at each try;
//! the first answer to a challenge is final. Per try, step `i` succeeds with the pool's mean
//! success: for a script its ε_auto, for a person `human_success · P(T ≤ Δ)`. The window's
//! odds follow exactly from a small dynamic programme ([`IdentityOdds`]). A script without a
//! hardware authenticator has ε = 0 on `presence`: under a policy with a presence step it
//! never keeps an identity active.
//!
//! ## What one human can do: capacity and τh
//!
//! A person's work for one identity is one attempt per step, `A = min(T, Δ)` of the drawn
//! family. Inside a `global` slot of length `L` cut into `k = steps + spares` phases, step `j`
//! cannot start before phase `j` opens and every answer comes by the slot end plus the longest
//! deadline, so one person serves at most the **capacity**
//! `N̄ = min_j (L + Δ_{≥j} − j·L/k) / Σ_{i≥j} E[A_i]` identities (the same formula as
//! `hco sim bound`, [`crate::bound::capacity`], with the scenario's solve times). `open` and
//! `staggered` slots do not confine one person's identities together: there the budget is the
//! window plus the longest deadline, bounded by the shift. τh — the Lemma 1 line per human —
//! is `N̄` plus renewal slack and `tau_z` standard deviations of the per-identity work.
//!
//! ## What one human does
//!
//! A hired human takes on `n` identities and works them in earliest-deadline-first order
//! ([`crate::schedule`]): openings, deadlines, floors and spares as the protocol has them.
//! The simulator measures the expected active identities for each `n` (Monte Carlo, the
//! load table) and gives each human the `n` that maximises it.

mod family;
mod math;

pub use family::{AttemptMoments, FamilyModel};
pub use math::{IdentityOdds, norm_cdf};

use serde::Serialize;

use crate::bound::{Capacity, StepLoad, capacity};
use crate::rng::{Rng, tag};
use crate::scenario::{Scenario, ScenarioError, SlotMode};
use crate::schedule::{Plan, Prompts, Simulated, Slot, Tally, work};

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

/// One step of the policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepModel {
    /// `cognitive` or the family's name.
    pub step: String,
    /// Families it may take (names).
    pub families: Vec<String>,
    /// A typical human's mean attempt time over the pool, seconds.
    pub work_s: f64,
    /// Longest deadline in the pool, seconds.
    pub longest_deadline_s: f64,
    /// Per-try success of a typical human (pool mean of `human_success · P(T ≤ Δ)`).
    pub human_success: f64,
    /// Per-try success of a script (pool mean of ε_auto).
    pub eps_auto: f64,
}

/// What one human with `identities` identities does in a window (Monte Carlo).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LoadPoint {
    /// Identities the human takes on.
    pub identities: u32,
    /// Mean of the identities kept active.
    pub active_mean: f64,
    /// Their variance.
    pub active_var: f64,
    /// Mean challenges used.
    pub attempts_mean: f64,
    /// Their variance.
    pub attempts_var: f64,
    /// Person-windows simulated.
    pub trials: u32,
}

/// Everything derived from a scenario that the engines use.
#[derive(Debug, Clone)]
pub struct Model {
    /// Families in name order.
    pub families: Vec<FamilyModel>,
    /// The policy's steps.
    pub steps: Vec<StepModel>,
    /// Spare tries.
    pub spares: u32,
    /// Each step's families, as indices into `families`.
    pub pools: Vec<Vec<usize>>,
    deadlines: Vec<f64>,
    floors: Vec<f64>,
    /// Per family: a touch prompt (`presence` in a `global` or `staggered` slot).
    is_prompt: Vec<bool>,
    /// How far past its beat a touch prompt may open, seconds.
    prompt_jitter_s: f64,
    /// What a typical person expects of each step and family (schedule planning).
    pub plan: Plan,
    /// Slot mode.
    pub slot_mode: SlotMode,
    /// Slot length (the window for `open`), seconds.
    pub slot_s: f64,
    /// Span of the window a hired human's identities' slots are placed in, seconds.
    pub human_span_s: f64,
    /// Time a hired human works (and is paid) per window, seconds: from the slot start to the
    /// last possible answer (`open`/`staggered`: the window plus the longest deadline, at most
    /// the shift).
    pub human_budget_s: f64,
    /// An honest user's time to request challenges (slot or window), seconds.
    pub honest_budget_s: f64,
    /// Mean honest arrival delay, seconds.
    pub arrival_mean_s: f64,
    /// Mean work of one identity's steps (typical human, no failures), seconds.
    pub identity_work_s: f64,
    /// Its coefficient of variation.
    pub identity_work_cv: f64,
    /// One person's capacity `N̄` (identities per window, see the module docs).
    pub capacity: f64,
    /// The step whose phase binds the capacity.
    pub binding_step: usize,
    /// Per-human bound of Lemma 1: capacity plus slack.
    pub tau_h: f64,
    /// Identities each hired human takes on: the fewest within 1 % (or two standard errors)
    /// of the most expected active ones.
    pub per_human: u32,
    /// Measured loads, by identities (starting at 0).
    pub load: Vec<LoadPoint>,
    /// Odds of a human-run identity with time enough.
    pub human_odds: IdentityOdds,
    /// Odds of a bot-run identity.
    pub bot_odds: IdentityOdds,
    /// Cost of one hired human for one window.
    pub cost_per_human_window: f64,
    /// Honest cohorts.
    pub cohorts: Vec<CohortModel>,
    load_samples: u32,
}

impl Model {
    /// Derive the model (runs the honest and load Monte Carlo with `seed`).
    pub fn new(s: &Scenario, seed: u64) -> Result<Self, ScenarioError> {
        let resolved = s.resolved_families()?;
        let families: Vec<FamilyModel> = resolved.iter().map(FamilyModel::new).collect();
        let index = |name: &str| families.iter().position(|f| f.name == name);
        let mut pools = Vec::new();
        let mut steps = Vec::new();
        let (mut work_s, mut work_var) = (0.0, 0.0);
        for sp in s.step_pools()? {
            let pool: Vec<usize> = sp.families.iter().filter_map(|f| index(f)).collect();
            let n = pool.len() as f64;
            let mix = pool.iter().fold(AttemptMoments::default(), |acc, &f| {
                let m = families[f].moments(1.0, 1.0);
                AttemptMoments {
                    mean: acc.mean + m.mean / n,
                    second: acc.second + m.second / n,
                    success: acc.success + m.success / n,
                }
            });
            work_s += mix.mean;
            work_var += (mix.second - mix.mean * mix.mean).max(0.0);
            steps.push(StepModel {
                step: sp.step,
                families: sp.families,
                work_s: mix.mean,
                longest_deadline_s: pool
                    .iter()
                    .map(|&f| families[f].deadline_s)
                    .fold(0.0, f64::max),
                human_success: mix.success,
                eps_auto: pool.iter().map(|&f| families[f].eps_auto).sum::<f64>() / n,
            });
            pools.push(pool);
        }
        let window = s.window_len.as_secs_f64();
        let slot = s.slots.len.as_secs_f64();
        let shift = s.adversary.shift.as_secs_f64();
        let longest = steps
            .iter()
            .map(|st| st.longest_deadline_s)
            .fold(0.0, f64::max);
        let tries = steps.len() as u32 + s.spares;
        let loads: Vec<StepLoad> = steps
            .iter()
            .map(|st| StepLoad {
                work_s: st.work_s,
                longest_deadline_s: st.longest_deadline_s,
            })
            .collect();
        let (slot_s, human_span_s, human_budget_s, honest_budget_s, cap) = match s.slots.mode {
            SlotMode::Global => (
                slot,
                slot,
                slot + longest,
                slot,
                capacity(&loads, slot, Some(tries), f64::INFINITY),
            ),
            SlotMode::Staggered => {
                let span = window.min(shift);
                (
                    slot,
                    span,
                    (window + longest).min(shift),
                    slot,
                    capacity(&loads, span, None, shift),
                )
            }
            SlotMode::Open => (
                window,
                window.min(shift),
                (window + longest).min(shift),
                window,
                capacity(&loads, window, None, shift),
            ),
        };
        let is_prompt: Vec<bool> = families
            .iter()
            .map(|f| f.name == "presence" && s.slots.mode != SlotMode::Open)
            .collect();
        let prompt_jitter_s = s.slots.prompt_jitter.as_secs_f64();
        let mut cap = cap;
        let beats = (s.slots.mode == SlotMode::Global)
            .then(|| beats_capacity(&steps, &pools, &is_prompt, tries, prompt_jitter_s))
            .flatten();
        if let Some(beats) = beats.filter(|b| b.identities < cap.identities) {
            cap = beats;
        }
        let cv2 = if work_s > 0.0 {
            work_var / (work_s * work_s)
        } else {
            0.0
        };
        let tau_h =
            cap.identities + (1.0 + cv2) / 2.0 + s.analysis.tau_z * (cap.identities * cv2).sqrt();
        let human_p: Vec<f64> = steps.iter().map(|st| st.human_success).collect();
        let bot_p: Vec<f64> = steps.iter().map(|st| st.eps_auto).collect();
        let mut model = Self {
            deadlines: families.iter().map(|f| f.deadline_s).collect(),
            floors: families.iter().map(|f| f.min_solve_s).collect(),
            is_prompt,
            prompt_jitter_s,
            plan: Plan {
                step_s: steps.iter().map(|st| st.work_s).collect(),
                family_s: families.iter().map(|f| f.moments(1.0, 1.0).mean).collect(),
                spares: s.spares,
            },
            spares: s.spares,
            slot_mode: s.slots.mode,
            slot_s,
            human_span_s,
            human_budget_s,
            honest_budget_s,
            arrival_mean_s: s.honest.arrival_delay.as_secs_f64(),
            identity_work_s: work_s,
            identity_work_cv: cv2.sqrt(),
            capacity: cap.identities,
            binding_step: cap.binding_step,
            tau_h,
            per_human: 0,
            load: Vec::new(),
            human_odds: IdentityOdds::new(&human_p, s.spares),
            bot_odds: IdentityOdds::new(&bot_p, s.spares),
            cost_per_human_window: s.adversary.wage_per_hour * human_budget_s / 3600.0,
            cohorts: Vec::new(),
            load_samples: s.analysis.load_samples,
            families,
            steps,
            pools,
        };
        model.measure_load(seed);
        let mut rng = Rng::stream(seed, tag::COHORT_MC, 0);
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

    /// Tries per window: steps plus spares.
    pub fn tries(&self) -> u32 {
        self.steps.len() as u32 + self.spares
    }

    fn phased(&self) -> bool {
        self.slot_mode != SlotMode::Open
    }

    /// The touch prompts of the scenario's slot.
    fn prompts(&self) -> Prompts<'_> {
        Prompts {
            is_prompt: &self.is_prompt,
            jitter_s: self.prompt_jitter_s,
        }
    }

    /// Runs `work` for one person of `speed` over `slots`, deadlines scaled by `scale`.
    fn person(
        &self,
        rng: &mut Rng,
        speed: f64,
        scale: f64,
        start: f64,
        stop: f64,
        slots: &[Slot],
    ) -> Tally {
        let families = &self.families;
        let mut world = Simulated::new(
            &self.deadlines,
            &self.floors,
            &self.pools,
            self.phased(),
            self.tries(),
            slots,
            rng,
            |f, rng: &mut Rng| {
                let fam = &families[f];
                (fam.sample_time(rng, speed), rng.bernoulli(fam.p_correct))
            },
        );
        world.deadline_scale = scale;
        world.prompts = Some(self.prompts());
        work(&self.plan, start, stop, slots, &mut world)
    }

    /// One hired human's window with `n` identities: their slots (all the same in a global
    /// slot; placed at random in the human's span when staggered), worked
    /// earliest-deadline-first until the budget ends.
    pub fn human_window(&self, rng: &mut Rng, n: usize) -> Tally {
        let slots: Vec<Slot> = match self.slot_mode {
            SlotMode::Global => vec![(0.0, self.slot_s); n],
            SlotMode::Open => vec![(0.0, self.slot_s); n],
            SlotMode::Staggered => (0..n)
                .map(|_| {
                    let start = rng.uniform() * (self.human_span_s - self.slot_s).max(0.0);
                    (start, start + self.slot_s)
                })
                .collect(),
        };
        let stop = match self.slot_mode {
            SlotMode::Global => f64::INFINITY,
            SlotMode::Open | SlotMode::Staggered => self.human_budget_s,
        };
        self.person(rng, 1.0, 1.0, 0.0, stop, &slots)
    }

    /// Measures the load table and picks the identities per human.
    fn measure_load(&mut self, seed: u64) {
        let top = (self.tau_h.ceil() as u32).max(1);
        let step = top.div_ceil(40).max(1);
        let mut points = vec![LoadPoint {
            identities: 0,
            active_mean: 0.0,
            active_var: 0.0,
            attempts_mean: 0.0,
            attempts_var: 0.0,
            trials: 0,
        }];
        let mut n = step;
        while n <= top {
            points.push(self.measure(seed, n));
            n += step;
        }
        if step > 1 {
            let best = best_load(&points);
            for n in best.saturating_sub(step - 1)..=(best + step - 1).min(top) {
                if n > 0 && !points.iter().any(|p| p.identities == n) {
                    points.push(self.measure(seed, n));
                }
            }
            points.sort_by_key(|p| p.identities);
        }
        self.per_human = best_load(&points);
        self.load = points;
    }

    /// Mean and variance of one human's window with `n` identities.
    fn measure(&self, seed: u64, n: u32) -> LoadPoint {
        let trials = (self.load_samples * 8 / n.max(1)).clamp(30, self.load_samples.max(30));
        let (mut a1, mut a2, mut t1, mut t2) = (0.0, 0.0, 0.0, 0.0);
        for k in 0..trials {
            let mut rng = Rng::stream(seed, tag::LOAD, u64::from(k));
            let t = self.human_window(&mut rng, n as usize);
            let (a, at) = (f64::from(t.active), f64::from(t.attempts));
            a1 += a;
            a2 += a * a;
            t1 += at;
            t2 += at * at;
        }
        let k = f64::from(trials);
        LoadPoint {
            identities: n,
            active_mean: a1 / k,
            active_var: (a2 / k - (a1 / k).powi(2)).max(0.0),
            attempts_mean: t1 / k,
            attempts_var: (t2 / k - (t1 / k).powi(2)).max(0.0),
            trials,
        }
    }

    /// The load of a human with `n` identities, interpolated in the table.
    pub fn load_at(&self, n: f64) -> LoadPoint {
        let last = self.load.len().saturating_sub(1);
        let i = self
            .load
            .iter()
            .position(|p| f64::from(p.identities) >= n)
            .unwrap_or(last);
        let hi = self.load[i];
        if i == 0 || f64::from(hi.identities) <= n {
            return hi;
        }
        let lo = self.load[i - 1];
        let w = (n - f64::from(lo.identities)) / f64::from(hi.identities - lo.identities);
        let mix = |a: f64, b: f64| a + w * (b - a);
        LoadPoint {
            identities: n.round() as u32,
            active_mean: mix(lo.active_mean, hi.active_mean),
            active_var: mix(lo.active_var, hi.active_var),
            attempts_mean: mix(lo.attempts_mean, hi.attempts_mean),
            attempts_var: mix(lo.attempts_var, hi.attempts_var),
            trials: lo.trials.min(hi.trials),
        }
    }

    /// One honest user's window: arrive after an exponential delay, then the policy's steps as
    /// they open, while the slot lasts. Returns active.
    pub fn honest_window(&self, rng: &mut Rng, speed: f64, scale: f64, budget: f64) -> bool {
        let arrive = rng.exponential(self.arrival_mean_s);
        self.person(rng, speed, scale, arrive, f64::INFINITY, &[(0.0, budget)])
            .active
            == 1
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

    /// Expected automated attempts per active bot identity times the attempt price
    /// (infinite when no script can pass the policy).
    pub fn bot_cost_per_active(&self, cost_per_attempt: f64) -> f64 {
        if self.bot_odds.active > 0.0 {
            cost_per_attempt * self.bot_odds.attempts / self.bot_odds.active
        } else {
            f64::INFINITY
        }
    }
}

/// The fewest identities within 1 % or two standard errors of the most active ones (past a
/// person's capacity the table is a plateau or falls; on a plateau more identities only add
/// noise).
fn best_load(points: &[LoadPoint]) -> u32 {
    let Some(best) = points
        .iter()
        .max_by(|a, b| a.active_mean.total_cmp(&b.active_mean))
    else {
        return 0;
    };
    let se = (best.active_var / f64::from(best.trials.max(1))).sqrt();
    let floor = best.active_mean - (0.01 * best.active_mean).max(2.0 * se);
    points
        .iter()
        .filter(|p| p.active_mean >= floor)
        .map(|p| p.identities)
        .min()
        .unwrap_or(0)
}

/// One person's capacity under the touch prompts of a global slot: the beats of the tries
/// from the first prompt step on (each its reaction window plus the jitter long) hold every
/// touch of every identity, and a touch takes the prompt step's expected attempt. `None`
/// without a prompt step.
fn beats_capacity(
    steps: &[StepModel],
    pools: &[Vec<usize>],
    is_prompt: &[bool],
    tries: u32,
    jitter_s: f64,
) -> Option<Capacity> {
    let prompt = |i: usize| pools[i].first().is_some_and(|&f| is_prompt[f]);
    let first = (0..steps.len()).find(|&i| prompt(i))?;
    let reaction_s = (0..steps.len())
        .filter(|&i| prompt(i))
        .map(|i| steps[i].longest_deadline_s)
        .fold(0.0, f64::max);
    let span_s = f64::from(tries - first as u32) * (reaction_s + jitter_s);
    let touch_s: f64 = (0..steps.len())
        .filter(|&i| prompt(i))
        .map(|i| steps[i].work_s)
        .sum();
    (touch_s > 0.0).then(|| Capacity {
        identities: span_s / touch_s,
        binding_step: first,
        available_s: span_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_global_slot_caps_a_human_at_the_beat_bound() {
        let s = Scenario::default();
        let m = Model::new(&s, 1).unwrap();
        // Three touch prompts and a spare on the beats that end a 100 s slot: four beats of
        // 6 s + 0.5 s hold three touches per identity of about 2 s each.
        let expected = 4.0 * 6.5 / (3.0 * m.steps[0].work_s);
        assert!(
            (m.capacity - expected).abs() < 1e-9,
            "{} vs {expected}",
            m.capacity
        );
        assert!((3.5..5.5).contains(&m.capacity), "{}", m.capacity);
        assert!(m.tau_h > m.capacity && m.tau_h < 1.5 * m.capacity + 2.0);
        assert_eq!(m.human_budget_s, 100.0 + 6.0);
        // Without prompts (cognitive steps only), the phases bind: 5-minute slot, three
        // phases, two cognitive steps.
        let cognitive =
            Scenario::from_toml("steps = [\"cognitive\", \"cognitive\"]\n[slots]\nlen = \"5min\"")
                .unwrap();
        let c = Model::new(&cognitive, 1).unwrap();
        assert!((10.0..25.0).contains(&c.capacity), "{}", c.capacity);
        let best = m.load_at(f64::from(m.per_human));
        assert!(best.active_mean <= m.capacity, "{best:?}");
        assert!(best.active_mean > 0.6 * m.capacity, "{best:?}");
    }

    #[test]
    fn open_slots_use_the_shift_bound() {
        let mut s = Scenario::default();
        s.slots.mode = SlotMode::Open;
        s.adversary.shift = std::time::Duration::from_secs(1800);
        s.analysis.load_samples = 50;
        let m = Model::new(&s, 1).unwrap();
        assert_eq!(m.human_budget_s, 1800.0);
        assert_eq!(m.honest_budget_s, 3600.0);
    }

    #[test]
    fn slower_cohorts_fail_more() {
        let m = Model::new(&Scenario::default(), 1).unwrap();
        let q: Vec<f64> = m.cohorts.iter().map(|c| c.active).collect();
        assert!(q[0] > q[1] && q[1] > q[2], "{q:?}");
        // Three steps at Table 3's human success with one spare: about 95 %.
        assert!(q[0] > 0.9, "{q:?}");
    }

    #[test]
    fn a_script_never_passes_a_presence_step() {
        let m = Model::new(&Scenario::default(), 1).unwrap();
        assert_eq!(m.bot_odds.active, 0.0);
        assert!(m.bot_cost_per_active(0.002).is_infinite());
        let s = Scenario::from_toml("steps = [\"cognitive\", \"cognitive\"]").unwrap();
        let m = Model::new(&s, 1).unwrap();
        assert!(m.bot_odds.active > 0.0);
        assert!(m.bot_cost_per_active(0.002).is_finite());
    }

    #[test]
    fn bot_odds_match_the_schedule_against_the_simulated_issuer() {
        // Scripts answer at once; each try's family is drawn by the issuer; no retries.
        let s = Scenario::from_toml("steps = [\"cognitive\", \"cognitive\"]\nspares = 1").unwrap();
        let m = Model::new(&s, 1).unwrap();
        let eps: Vec<f64> = m.families.iter().map(|f| f.eps_auto).collect();
        let slots = [(0.0, m.slot_s)];
        let n = 40_000;
        let mut active = 0u32;
        for k in 0..n {
            let mut rng = Rng::stream(9, 0, k);
            let mut world = Simulated::new(
                &m.deadlines,
                &m.floors,
                &m.pools,
                true,
                m.tries(),
                &slots,
                &mut rng,
                |f, rng: &mut Rng| (0.0, rng.bernoulli(eps[f])),
            );
            world.prompts = Some(m.prompts());
            active += work(&m.plan, 0.0, f64::INFINITY, &slots, &mut world).active;
        }
        let p = m.bot_odds.active;
        let mc = f64::from(active) / f64::from(n as u32);
        let se = (p * (1.0 - p) / f64::from(n as u32)).sqrt();
        assert!((mc - p).abs() < 4.0 * se, "{mc} vs {p}");
    }
}
