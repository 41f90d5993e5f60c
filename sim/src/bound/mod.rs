//! The one-person bound of a window policy: how many identities one person can keep active
//! per window, from the ceremony (slot mode and length, window, the steps' pools with their
//! deadlines and floors, spares) and a model of human solve times.
//!
//! A person's work for one identity is, summed over the policy's steps, the expected time a
//! person needs for the step: the mean over its pool for a drawn step (the issuer draws
//! uniformly; the client does not choose), or the fastest family of the pool for an attacker
//! lucky with every draw. In a `global` slot of length `L` cut into `k = steps + spares`
//! phases, step `j` of any identity cannot start before phase `j` starts (at `j·L/k`), and
//! every answer comes by the slot end plus the longest deadline of the steps concerned. So
//! for every `j`, `n` identities' work on steps `j..` must fit in
//! `[j·L/k, L + Δ_{≥j}]`:
//!
//! `n ≤ min_j (L + Δ_{≥j} − j·L/k) / Σ_{i≥j} w_i`.
//!
//! That is an *upper* bound: it assumes a person never waits for an opening, never has two
//! steps due at once and never slips. The human-speed floor (`min_solve`) does not enter it: it
//! is time from fetch to answer, during which the person can work on another identity.
//!
//! `open` and `staggered` slots do not hold one person's identities to the same moments: the
//! bound is then **window-length based**, `n ≤ (window + Δ_max) / Σ w_i`, with no phase term.
//!
//! Beside the analytical bound, a Monte Carlo runs one person over `n` identities in
//! earliest-deadline-first order ([`crate::schedule`]) with random openings in the phases,
//! random draws and the deadlines, and reports the largest `n` for which at least 95 % of the
//! identity-windows complete.

pub mod params;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use params::{EmptyStep, ceremony_of};

use crate::rng::{Rng, tag};
use crate::scenario::SlotMode;
use crate::schedule::{Plan, Simulated, Slot, work};

/// One family a step may take, as the network configures it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolFamily {
    /// Registry name.
    pub name: String,
    /// Deadline from the fetch, milliseconds.
    pub deadline_ms: u64,
    /// Least time from the fetch to an answer (`too_fast` below), milliseconds.
    pub min_solve_ms: u64,
}

/// One step of the policy and the families it may take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepPool {
    /// `cognitive` (drawn) or the family's name, as in the config.
    pub step: String,
    /// The families (a fixed step: one).
    pub families: Vec<PoolFamily>,
}

/// What the bound needs to know of a network's ceremony for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CeremonyInputs {
    /// `open`, `global` or `staggered`.
    pub slot_mode: SlotMode,
    /// Slot length, milliseconds (ignored for `open`).
    pub slot_ms: u64,
    /// Window length, milliseconds.
    pub window_ms: u64,
    /// The human policy's steps, in order.
    pub steps: Vec<StepPool>,
    /// Spare tries.
    pub spares: u32,
}

impl CeremonyInputs {
    /// Tries per window: steps plus spares (the phases of a slot).
    pub fn tries(&self) -> u32 {
        self.steps.len() as u32 + self.spares
    }
}

/// Mean time a person needs per family, seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HumanModel {
    /// Family name → mean solve time in seconds.
    pub solve_s: BTreeMap<String, f64>,
}

impl HumanModel {
    /// The HCO paper's Table 3 means (visual_match 6 s, interactive_reasoning 12 s,
    /// attention 15 s); presence one touch after reading the prompt (3 s); and
    /// arithmetic_reasoning 8 s, an estimate (not in the paper).
    pub fn paper() -> Self {
        Self {
            solve_s: [
                ("visual_match", 6.0),
                ("interactive_reasoning", 12.0),
                ("attention", 15.0),
                ("presence", 3.0),
                ("arithmetic_reasoning", 8.0),
            ]
            .into_iter()
            .map(|(f, s)| (f.to_owned(), s))
            .collect(),
        }
    }

    /// The same with `family` taking `seconds`.
    pub fn with(mut self, family: &str, seconds: f64) -> Self {
        self.solve_s.insert(family.to_owned(), seconds);
        self
    }

    /// The mean solve time of `family`, if known.
    pub fn solve_s(&self, family: &str) -> Option<f64> {
        self.solve_s.get(family).copied()
    }
}

impl Default for HumanModel {
    fn default() -> Self {
        Self::paper()
    }
}

/// One step as the bound costs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepCost {
    /// `cognitive` or the family's name.
    pub step: String,
    /// The families it may take, with their human solve time (s).
    pub pool: BTreeMap<String, f64>,
    /// Mean over the pool (s): the expected work of the step.
    pub mean_s: f64,
    /// Fastest in the pool (s).
    pub cheapest_s: f64,
    /// Longest deadline in the pool (s).
    pub longest_deadline_s: f64,
}

/// The Monte-Carlo check of the bound.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MonteCarlo {
    /// Largest `n` for which at least 95 % of one person's `n` identity-windows complete.
    pub identities_per_person: u64,
    /// The share that completed at that `n`.
    pub completion: f64,
    /// Person-windows simulated at that `n`.
    pub trials: u32,
    /// What was simulated.
    pub method: &'static str,
}

/// The one-person bound and the inputs it used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bound {
    /// Identities one person keeps active per window at most, with the draws as they come
    /// (expected work per step).
    pub identities_per_person: u64,
    /// The same if every drawn step took the fastest family of its pool.
    pub identities_per_person_cheapest_draws: u64,
    /// `identities_per_person` before rounding down.
    pub capacity: f64,
    /// `identities_per_person_cheapest_draws` before rounding down.
    pub capacity_cheapest_draws: f64,
    /// The Monte-Carlo check (earliest-deadline-first scheduling); `None` beyond 5000
    /// identities.
    pub monte_carlo: Option<MonteCarlo>,
    /// `slot` (a global slot bounds one person's work) or `window` (open and staggered slots:
    /// window-length based).
    pub basis: &'static str,
    /// The step whose phase binds the bound (0 when not phased).
    pub binding_step: usize,
    /// Seconds from that step's phase start to the last possible answer.
    pub available_s: f64,
    /// Seconds of a person's work per identity per window (expected draws).
    pub work_per_identity_s: f64,
    /// The same with the cheapest draws.
    pub work_per_identity_cheapest_s: f64,
    /// `open`, `global` or `staggered`.
    pub slot_mode: SlotMode,
    /// Slot length (the window for `open`), seconds.
    pub slot_s: f64,
    /// Tries per window (steps plus spares): a slot's phases.
    pub phases: u32,
    /// The longest deadline of a family a step may take (s).
    pub longest_deadline_s: f64,
    /// The steps.
    pub steps: Vec<StepCost>,
    /// The ceremony the bound is of.
    pub inputs: CeremonyInputs,
    /// The human solve times used.
    pub human: HumanModel,
    /// What the figure assumes.
    pub model: &'static str,
}

/// Why the bound cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BoundError {
    /// A family the policy may draw has no human solve time in the model.
    #[error("no human solve time is known for family `{0}`: give one (--solve-time {0}=SECONDS)")]
    UnknownFamily(String),
    /// The policy has no step.
    #[error("the human policy has no step")]
    NoSteps,
    /// A step has no family to take.
    #[error("step {index} (`{step}`) has no family to take")]
    EmptyPool {
        /// Step index.
        index: usize,
        /// The step.
        step: String,
    },
    /// A length is zero.
    #[error("the {0} length must be > 0")]
    ZeroLength(&'static str),
}

/// One step's share of a person's work.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepLoad {
    /// Expected seconds of work.
    pub work_s: f64,
    /// Longest deadline of a family it may take, seconds.
    pub longest_deadline_s: f64,
}

/// A person's capacity, identities per window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capacity {
    /// Identities (not rounded).
    pub identities: f64,
    /// The step whose constraint binds.
    pub binding_step: usize,
    /// Seconds available to the steps from the binding one on.
    pub available_s: f64,
}

/// The most identities one person serves. Requests may be made during `[0, span_s)`, answers
/// come within each family's deadline; with `phases = Some(k)` the span is cut into `k`
/// phases and step `j` starts no earlier than phase `j`. Nothing is worked after `limit_s`.
pub fn capacity(steps: &[StepLoad], span_s: f64, phases: Option<u32>, limit_s: f64) -> Capacity {
    let mut best = Capacity {
        identities: f64::INFINITY,
        binding_step: 0,
        available_s: 0.0,
    };
    let last = if phases.is_some() {
        steps.len()
    } else {
        steps.len().min(1)
    };
    for j in 0..last {
        let start = phases.map_or(0.0, |k| j as f64 * span_s / f64::from(k.max(1)));
        let tail = steps[j..]
            .iter()
            .map(|s| s.longest_deadline_s)
            .fold(0.0, f64::max);
        let available = ((span_s + tail).min(limit_s) - start).max(0.0);
        let work: f64 = steps[j..].iter().map(|s| s.work_s).sum();
        let n = if work > 0.0 {
            available / work
        } else {
            f64::INFINITY
        };
        if n < best.identities {
            best = Capacity {
                identities: n,
                binding_step: j,
                available_s: available,
            };
        }
    }
    best
}

/// Identities above which the Monte Carlo is skipped.
const MC_MAX_IDENTITIES: f64 = 5000.0;
/// Share of identity-windows that must complete in the Monte Carlo.
const MC_COMPLETION: f64 = 0.95;

/// The one-person bound of a ceremony under a human solve-time model.
pub fn one_person_bound(inputs: &CeremonyInputs, human: &HumanModel) -> Result<Bound, BoundError> {
    if inputs.steps.is_empty() {
        return Err(BoundError::NoSteps);
    }
    if inputs.window_ms == 0 {
        return Err(BoundError::ZeroLength("window"));
    }
    if inputs.slot_mode != SlotMode::Open && inputs.slot_ms == 0 {
        return Err(BoundError::ZeroLength("slot"));
    }
    let mut steps = Vec::new();
    for (index, step) in inputs.steps.iter().enumerate() {
        if step.families.is_empty() {
            return Err(BoundError::EmptyPool {
                index,
                step: step.step.clone(),
            });
        }
        let mut pool = BTreeMap::new();
        for f in &step.families {
            let t = human
                .solve_s(&f.name)
                .ok_or_else(|| BoundError::UnknownFamily(f.name.clone()))?;
            pool.insert(f.name.clone(), t);
        }
        // A family listed twice in a pool is drawn twice as often.
        let times: Vec<f64> = step.families.iter().map(|f| pool[&f.name]).collect();
        steps.push(StepCost {
            step: step.step.clone(),
            mean_s: times.iter().sum::<f64>() / times.len() as f64,
            cheapest_s: times.iter().copied().fold(f64::INFINITY, f64::min),
            longest_deadline_s: step
                .families
                .iter()
                .map(|f| f.deadline_ms as f64 / 1000.0)
                .fold(0.0, f64::max),
            pool,
        });
    }
    let window_s = inputs.window_ms as f64 / 1000.0;
    let (span_s, phases, basis) = match inputs.slot_mode {
        SlotMode::Global => (inputs.slot_ms as f64 / 1000.0, Some(inputs.tries()), "slot"),
        SlotMode::Open | SlotMode::Staggered => (window_s, None, "window"),
    };
    let loads = |cheapest: bool| -> Vec<StepLoad> {
        steps
            .iter()
            .map(|s| StepLoad {
                work_s: if cheapest { s.cheapest_s } else { s.mean_s },
                longest_deadline_s: s.longest_deadline_s,
            })
            .collect()
    };
    let expected = capacity(&loads(false), span_s, phases, f64::INFINITY);
    let cheapest = capacity(&loads(true), span_s, phases, f64::INFINITY);
    let monte_carlo = (cheapest.identities <= MC_MAX_IDENTITIES)
        .then(|| monte_carlo(inputs, &steps, human, cheapest.identities));
    Ok(Bound {
        identities_per_person: floor(expected.identities),
        identities_per_person_cheapest_draws: floor(cheapest.identities),
        capacity: expected.identities,
        capacity_cheapest_draws: cheapest.identities,
        monte_carlo,
        basis,
        binding_step: expected.binding_step,
        available_s: expected.available_s,
        work_per_identity_s: steps.iter().map(|s| s.mean_s).sum(),
        work_per_identity_cheapest_s: steps.iter().map(|s| s.cheapest_s).sum(),
        slot_mode: inputs.slot_mode,
        slot_s: if inputs.slot_mode == SlotMode::Open {
            window_s
        } else {
            inputs.slot_ms as f64 / 1000.0
        },
        phases: inputs.tries(),
        longest_deadline_s: steps
            .iter()
            .map(|s| s.longest_deadline_s)
            .fold(0.0, f64::max),
        steps,
        inputs: inputs.clone(),
        human: human.clone(),
        model: match basis {
            "slot" => {
                "upper bound: for every step j, the work on steps j.. of all identities fits between the start of phase j of the global slot and the last possible answer (slot end + longest deadline of those steps); a person never waits, never slips; expected draws = mean solve time over each drawn step's pool"
            }
            _ => {
                "upper bound, window-length based: open and staggered slots do not hold one person's identities to the same moments, so all their work fits in the window plus the longest deadline; a person never waits, never slips"
            }
        },
    })
}

/// Rounds a capacity down (a tiny epsilon absorbs float error on exact ratios).
fn floor(x: f64) -> u64 {
    if x.is_finite() {
        (x + 1e-9).floor().max(0.0) as u64
    } else {
        u64::MAX
    }
}

/// Largest `n` for which ≥ 95 % of identity-windows complete, by bisection over `n`.
fn monte_carlo(
    inputs: &CeremonyInputs,
    steps: &[StepCost],
    human: &HumanModel,
    upper: f64,
) -> MonteCarlo {
    // Families in one table: pools as indices, solve times exact (the model's means).
    let mut names: Vec<&str> = Vec::new();
    let mut deadline_s = Vec::new();
    let mut floor_s = Vec::new();
    let mut pools = Vec::new();
    for step in &inputs.steps {
        let mut pool = Vec::new();
        for f in &step.families {
            let i = names.iter().position(|n| *n == f.name).unwrap_or_else(|| {
                names.push(&f.name);
                deadline_s.push(f.deadline_ms as f64 / 1000.0);
                floor_s.push(f.min_solve_ms as f64 / 1000.0);
                names.len() - 1
            });
            pool.push(i);
        }
        pools.push(pool);
    }
    let times: Vec<f64> = names
        .iter()
        .map(|n| human.solve_s(n).unwrap_or(0.0))
        .collect();
    let plan = Plan {
        step_s: steps.iter().map(|s| s.mean_s).collect(),
        family_s: times.clone(),
        spares: inputs.spares,
    };
    let window_s = inputs.window_ms as f64 / 1000.0;
    let slot_s = inputs.slot_ms as f64 / 1000.0;
    let run = |n: u64| -> (f64, u32) {
        let n_us = n as usize;
        let trials = (200_000 / (n_us * steps.len()).max(1)).clamp(20, 200) as u32;
        let mut done = 0u64;
        for k in 0..trials {
            let mut rng = Rng::stream(0x0b0d, tag::BOUND, u64::from(k));
            let slots: Vec<Slot> = match inputs.slot_mode {
                SlotMode::Global => vec![(0.0, slot_s); n_us],
                SlotMode::Open => vec![(0.0, window_s); n_us],
                SlotMode::Staggered => (0..n_us)
                    .map(|_| {
                        let start = rng.uniform() * (window_s - slot_s).max(0.0);
                        (start, start + slot_s)
                    })
                    .collect(),
            };
            let mut world = Simulated::new(
                &deadline_s,
                &floor_s,
                &pools,
                inputs.slot_mode != SlotMode::Open,
                inputs.tries(),
                &slots,
                &mut rng,
                |f, _: &mut Rng| (times[f], true),
            );
            done += u64::from(work(&plan, 0.0, f64::INFINITY, &slots, &mut world).active);
        }
        (done as f64 / (n as f64 * f64::from(trials)), trials)
    };
    // f(0) = 1 by definition; completion falls as n grows past what fits.
    let (mut lo, mut hi) = (0u64, floor(upper) + 1);
    let mut at_lo = (1.0, 0u32);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let r = run(mid);
        if r.0 >= MC_COMPLETION {
            lo = mid;
            at_lo = r;
        } else {
            hi = mid;
        }
    }
    MonteCarlo {
        identities_per_person: lo,
        completion: at_lo.0,
        trials: at_lo.1,
        method: "one person, n identities, earliest-deadline-first over the steps; openings at uniform moments of their phases, drawn families uniform over the pools, solve times the model's means, the deadlines and floors of the families; largest n with ≥ 95 % of identity-windows complete",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fam(name: &str, deadline_s: u64) -> PoolFamily {
        PoolFamily {
            name: name.into(),
            deadline_ms: deadline_s * 1000,
            min_solve_ms: 500,
        }
    }

    fn drawn(families: &[PoolFamily]) -> StepPool {
        StepPool {
            step: "cognitive".into(),
            families: families.to_vec(),
        }
    }

    fn fixed(f: PoolFamily) -> StepPool {
        StepPool {
            step: f.name.clone(),
            families: vec![f],
        }
    }

    fn cognitive() -> Vec<PoolFamily> {
        vec![
            fam("visual_match", 30),
            fam("interactive_reasoning", 45),
            fam("attention", 40),
        ]
    }

    fn global(slot_s: u64, steps: Vec<StepPool>, spares: u32) -> CeremonyInputs {
        CeremonyInputs {
            slot_mode: SlotMode::Global,
            slot_ms: slot_s * 1000,
            window_ms: 3_600_000,
            steps,
            spares,
        }
    }

    #[test]
    fn a_five_minute_slot_with_one_cognitive_step_gives_twenty_to_fifty_five() {
        // One step of 6–15 s in a 5-minute global slot (30 s deadlines): from 300/15 = 20
        // (every draw attention) to (300 + 30)/6 = 55 (every draw visual matching).
        let all = [fam("visual_match", 30), fam("attention", 30)];
        let b = one_person_bound(&global(300, vec![drawn(&all)], 1), &HumanModel::paper()).unwrap();
        assert_eq!(b.identities_per_person_cheapest_draws, 55);
        assert_eq!(b.identities_per_person, 31); // 330 / 10.5
        for only in all {
            let b = one_person_bound(&global(300, vec![drawn(&[only])], 1), &HumanModel::paper())
                .unwrap();
            assert!((20..=55).contains(&b.identities_per_person), "{b:?}");
        }
        let b = one_person_bound(
            &global(300, vec![drawn(&cognitive())], 1),
            &HumanModel::paper(),
        )
        .unwrap();
        assert!((20..=55).contains(&b.identities_per_person), "{b:?}");
        assert_eq!(b.basis, "slot");
    }

    #[test]
    fn presence_and_two_cognitive_steps_in_two_minutes_stay_under_ten() {
        let steps = vec![
            fixed(fam("presence", 30)),
            drawn(&cognitive()),
            drawn(&cognitive()),
        ];
        let b = one_person_bound(&global(120, steps, 1), &HumanModel::paper()).unwrap();
        assert!(b.identities_per_person <= 10, "{b:?}");
        assert_eq!(b.phases, 4);
        // Work 3 + 11 + 11 = 25 s. Step 0: (120 + 45) / 25 = 6.6; step 1 from phase 1 (30 s):
        // (165 − 30) / 22 = 6.14 binds.
        assert_eq!(b.identities_per_person, 6);
        assert_eq!(b.binding_step, 1);
        assert!((b.work_per_identity_s - 25.0).abs() < 1e-9);
        // Cheapest draws (3 + 6 + 6 s): min(165/15, 135/12, 105/6) = 11.
        assert_eq!(b.identities_per_person_cheapest_draws, 11);
        let mc = b.monte_carlo.clone().unwrap();
        assert!(mc.identities_per_person <= b.identities_per_person_cheapest_draws);
        assert!(mc.identities_per_person >= 3, "{mc:?}");
        assert!(mc.completion >= 0.95);
    }

    #[test]
    fn the_monte_carlo_stays_under_the_cheapest_bound_and_is_fast() {
        let start = std::time::Instant::now();
        for slot in [60, 120, 300] {
            let steps = vec![
                fixed(fam("presence", 30)),
                drawn(&cognitive()),
                drawn(&cognitive()),
            ];
            let b = one_person_bound(&global(slot, steps, 1), &HumanModel::paper()).unwrap();
            let mc = b.monte_carlo.clone().unwrap();
            assert!(
                mc.identities_per_person <= b.identities_per_person_cheapest_draws,
                "{slot}: {mc:?} vs {b:?}"
            );
        }
        // Debug builds are slower; the release binary takes a fraction of this.
        assert!(start.elapsed().as_secs_f64() < 10.0);
    }

    #[test]
    fn open_windows_are_bounded_by_the_window() {
        let mut inputs = global(0, vec![drawn(&[fam("visual_match", 30)])], 1);
        inputs.slot_mode = SlotMode::Open;
        inputs.window_ms = 600_000;
        let b = one_person_bound(&inputs, &HumanModel::paper()).unwrap();
        assert_eq!(b.basis, "window");
        assert_eq!(b.identities_per_person, 105); // (600 + 30) / 6
        let mc = b.monte_carlo.clone().unwrap();
        assert!(mc.identities_per_person <= 105 && mc.identities_per_person >= 90);
    }

    #[test]
    fn overrides_and_unknown_families() {
        let inputs = global(120, vec![drawn(&[fam("captcha", 30)])], 0);
        assert_eq!(
            one_person_bound(&inputs, &HumanModel::paper()).unwrap_err(),
            BoundError::UnknownFamily("captcha".into())
        );
        let b = one_person_bound(&inputs, &HumanModel::paper().with("captcha", 10.0)).unwrap();
        assert_eq!(b.identities_per_person, 15); // (120 + 30) / 10
        let json = serde_json::to_value(&b).unwrap();
        assert_eq!(json["inputs"]["steps"][0]["families"][0]["name"], "captcha");
        assert_eq!(json["human"]["solve_s"]["captcha"], 10.0);
    }
}
