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
//! **Touch prompts** ([`touch`]): in a `global` or `staggered` slot a step of a family bound to a
//! credential (`presence`) opens on a beat shared by all identities and is due its reaction
//! window later, so a person's touches for all their identities fall in the same few seconds of
//! each beat. The human-speed figure is the smaller of the formula above and the beats' formula
//! with the person's presence time per touch; [`ModelSolves`] is the bound when a model answers
//! every cognitive step and only the touches take the person.
//!
//! Beside the analytical bound, a Monte Carlo runs one person over `n` identities in
//! earliest-deadline-first order ([`crate::schedule`]) with random openings in the phases (the
//! prompts on their beats), random draws and the deadlines, and reports the largest `n` for
//! which at least 95 % of the identity-windows complete.

pub mod beats;
mod mc;
pub mod member;
pub mod params;
#[cfg(test)]
mod tests;
pub mod touch;
pub mod touch_mc;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use params::{EmptyStep, ceremony_of};
pub use touch::{DEFAULT_TOUCH_MS, ModelSolves, model_solves};

use crate::scenario::SlotMode;
use beats::Beats;

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
    /// The reaction window (ms) when the step is a touch prompt: a fixed step of a family
    /// bound to a credential (`presence`) in a `global` or `staggered` slot, which opens on its
    /// beat and is due this long after ([`hco_oracle::NetworkParams::prompt_reaction_ms`]).
    #[serde(default)]
    pub prompt_reaction_ms: Option<u64>,
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
    /// How far past its beat's start a touch prompt may open, milliseconds
    /// ([`hco_oracle::NetworkParams::prompt_jitter_ms`]).
    #[serde(default)]
    pub prompt_jitter_ms: u64,
    /// The relay round, milliseconds ([`hco_oracle::NetworkParams::relay_round_ms`]): a prompt
    /// acceptance reaches the other members by its deadline plus one.
    #[serde(default)]
    pub relay_round_ms: u64,
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
    /// Identities one person keeps active per window at most when a model answers every
    /// cognitive step and only the touches of the prompts take the person
    /// ([`ModelSolves::identities_per_person`]); `None`: unbounded (no touch prompt).
    pub identities_per_person_model_solves: Option<u64>,
    /// The same when one committee member answers for its own sybils
    /// ([`member::MemberBound::identities_per_person`]); `None` unless the slot is global
    /// and has a touch prompt.
    pub identities_per_person_one_malicious_member: Option<u64>,
    /// `identities_per_person` before rounding down.
    pub capacity: f64,
    /// `identities_per_person_cheapest_draws` before rounding down.
    pub capacity_cheapest_draws: f64,
    /// The beats' formula at human speed (each prompt takes the person the family's solve
    /// time): it caps both figures above; `None` without a touch prompt.
    pub capacity_touches: Option<f64>,
    /// What binds `identities_per_person`: `work` (the steps' work in the slot or window) or
    /// `touches` (the prompts' beats).
    pub bound_by: &'static str,
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
    /// The bound when a model answers every cognitive step.
    pub model_solves: ModelSolves,
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

/// The one-person bound of a ceremony under a human solve-time model, a touch taking
/// [`DEFAULT_TOUCH_MS`] in the model-solves figure.
pub fn one_person_bound(inputs: &CeremonyInputs, human: &HumanModel) -> Result<Bound, BoundError> {
    one_person_bound_with_touch(inputs, human, DEFAULT_TOUCH_MS)
}

/// The one-person bound of a ceremony under a human solve-time model; in the model-solves
/// figure a touch takes the person `touch_ms`.
pub fn one_person_bound_with_touch(
    inputs: &CeremonyInputs,
    human: &HumanModel,
    touch_ms: u64,
) -> Result<Bound, BoundError> {
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
    // The prompts' beats at human speed: every family here has a solve time (checked above).
    let touches = Beats::of(inputs)
        .map(|b| b.capacity(inputs, |family| human.solve_s(family).unwrap_or(0.0)));
    let capped = |n: f64| touches.map_or(n, |t| n.min(t));
    let (expected_n, cheapest_n) = (capped(expected.identities), capped(cheapest.identities));
    let monte_carlo = (cheapest_n <= MC_MAX_IDENTITIES)
        .then(|| mc::monte_carlo(inputs, &steps, human, cheapest_n));
    let model_solves = model_solves(inputs, touch_ms);
    Ok(Bound {
        identities_per_person: floor(expected_n),
        identities_per_person_cheapest_draws: floor(cheapest_n),
        identities_per_person_model_solves: model_solves.identities_per_person,
        identities_per_person_one_malicious_member: model_solves
            .one_malicious_member
            .as_ref()
            .map(|m| m.identities_per_person),
        capacity: expected_n,
        capacity_cheapest_draws: cheapest_n,
        capacity_touches: touches,
        bound_by: if expected_n < expected.identities {
            "touches"
        } else {
            "work"
        },
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
                "upper bound: for every step j, the work on steps j.. of all identities fits between the start of phase j of the global slot and the last possible answer (slot end + longest deadline of those steps), and every touch prompt (at the person's presence solve time) fits in its beat (B·(J + r) / Σ touch); a person never waits, never slips; expected draws = mean solve time over each drawn step's pool"
            }
            _ => {
                "upper bound, window-length based: open and staggered slots do not hold one person's identities to the same moments, so all their work fits in the window plus the longest deadline; a person never waits, never slips"
            }
        },
        model_solves,
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
