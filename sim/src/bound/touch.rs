//! Touch prompts: what bounds one person when a model answers every cognitive step.
//!
//! In a `global` or `staggered` slot a challenge of a family bound to a credential (`presence`)
//! is a **touch prompt**: challenge `j` opens on beat `j`, one of the slot's last moments, at
//! `slot end − (tries − j)·(r + J) + U[0, J]` (`r` the family's deadline, the reaction window;
//! `J` the prompt jitter; [`beat_start`] mirrors [`hco_oracle::NetworkParams::beat`]), is
//! issued at that moment whenever it is fetched, and is due by opening + `r`. A policy's steps
//! are served in order and a failed or expired try takes a spare, so prompt step `i` is served
//! by one of the tries `i ..= i + spares`: the tries that may serve a prompt are the union of
//! those ranges, `B` of them (for prompt steps next to each other, the first prompt step to
//! the last plus the spares).
//!
//! A model answers the cognitive steps at no cost to the person; what is left is `m` touches
//! (one per prompt step) per identity-window, each inside its prompt's reaction window. In a
//! global slot the prompts of all the person's identities open within the same `J` seconds of
//! each beat, so all the touches fall in the `B` beats' spans of `J + r` seconds:
//!
//! `n ≤ B·(J + r) / (m·touch)`.
//!
//! Staggered slots do not hold one person's identities to the same beats, so there the bound is
//! window-based, `n ≤ (window + r) / (m·touch)`. Without a touch prompt (an `open` window, or
//! no `presence` step) nothing here bounds a model: the figure is `None`.
//!
//! [`touch_monte_carlo`] runs one person against the beats of `n` identities. It stays under
//! the formula by about the jitter: the person's first touch of a beat starts at its earliest
//! opening and the last must end by the latest deadline, at most `J + r` later but only that
//! when the openings spread over all of `J`, so a beat holds about `r / touch` touches, not
//! `(J + r) / touch`. The human-speed Monte Carlo puts its prompts on their beats through the
//! simulated issuer's [`crate::schedule::Prompts`].

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use serde::Serialize;

use super::{CeremonyInputs, MC_COMPLETION, MC_MAX_IDENTITIES, floor};
use crate::rng::{Rng, tag};
use crate::scenario::SlotMode;
use crate::schedule::{EXPIRED_AFTER_S, Slot};

/// What one touch takes a person by default, milliseconds (`hco sim bound --touch-ms`).
pub const DEFAULT_TOUCH_MS: u64 = 1000;
/// The touch pace of a rig pressing keys by machine that the output prices, milliseconds.
pub const RIG_TOUCH_MS: u64 = 250;
/// Most held identities the Monte Carlo's `active_by_held` goes to.
const HELD_CAP: u64 = 200;
/// Seed of the touch Monte Carlo's streams (one stream per trial).
const TOUCH_SEED: u64 = 0x70c4;
/// Where beat `j` of `slot` starts, seconds: `(tries − j)·(reaction + jitter)` before the
/// slot's end, not before its start, as [`hco_oracle::NetworkParams::beat`] places it. The
/// prompt opens up to `jitter` later.
pub fn beat_start(slot: Slot, tries: u32, j: u32, reaction_s: f64, jitter_s: f64) -> f64 {
    (slot.1 - f64::from(tries.saturating_sub(j)) * (reaction_s + jitter_s)).max(slot.0)
}

/// One step of the policy that is a touch prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptStep {
    /// Step index.
    pub step: usize,
    /// The family.
    pub family: String,
    /// Reaction window (the family's deadline), seconds.
    pub reaction_s: f64,
    /// Least time from the issue to an answer, seconds.
    pub min_solve_s: f64,
}

/// The touch prompts of a ceremony.
#[derive(Debug, Clone, PartialEq)]
pub struct Beats {
    /// The prompt steps.
    pub prompts: Vec<PromptStep>,
    /// The tries that may serve a prompt, ascending, each with its beat's span: the jitter plus
    /// the longest reaction window of the prompt steps it may serve, seconds.
    pub tries: Vec<(u32, f64)>,
    /// Prompt jitter, seconds.
    pub jitter_s: f64,
    /// Whether one slot holds every identity (`global`) rather than each its own (`staggered`).
    pub global: bool,
}

impl Beats {
    /// The touch prompts of `inputs`; `None` when there is none (an `open` window never has
    /// one).
    pub fn of(inputs: &CeremonyInputs) -> Option<Self> {
        if inputs.slot_mode == SlotMode::Open {
            return None;
        }
        let prompts: Vec<PromptStep> = inputs
            .steps
            .iter()
            .enumerate()
            .filter_map(|(step, s)| {
                let r = s.prompt_reaction_ms?;
                let f = s.families.first()?;
                Some(PromptStep {
                    step,
                    family: f.name.clone(),
                    reaction_s: r as f64 / 1000.0,
                    min_solve_s: f.min_solve_ms as f64 / 1000.0,
                })
            })
            .collect();
        if prompts.is_empty() {
            return None;
        }
        let jitter_s = inputs.prompt_jitter_ms as f64 / 1000.0;
        let mut tries = BTreeMap::<u32, f64>::new();
        for p in &prompts {
            let first = p.step as u32;
            for j in first..=first + inputs.spares {
                let span = tries.entry(j).or_insert(0.0);
                *span = span.max(jitter_s + p.reaction_s);
            }
        }
        Some(Self {
            prompts,
            tries: tries.into_iter().collect(),
            jitter_s,
            global: inputs.slot_mode == SlotMode::Global,
        })
    }

    /// Touches per identity-window: one per prompt step.
    pub fn touches(&self) -> u32 {
        self.prompts.len() as u32
    }

    /// The longest reaction window, seconds.
    pub fn reaction_s(&self) -> f64 {
        self.prompts
            .iter()
            .map(|p| p.reaction_s)
            .fold(0.0, f64::max)
    }

    /// Seconds in which one person's touches can fall: the beats' spans summed (global), or
    /// the window plus the longest reaction window (staggered).
    pub fn span_s(&self, inputs: &CeremonyInputs) -> f64 {
        if self.global {
            self.tries.iter().map(|(_, s)| s).sum()
        } else {
            inputs.window_ms as f64 / 1000.0 + self.reaction_s()
        }
    }

    /// Identities one person keeps (not rounded) when the prompt of `family` takes
    /// `touch_s(family)` seconds of the person and every other step none.
    pub fn capacity(&self, inputs: &CeremonyInputs, touch_s: impl Fn(&str) -> f64) -> f64 {
        let per_identity: f64 = self.prompts.iter().map(|p| touch_s(&p.family)).sum();
        if per_identity > 0.0 {
            self.span_s(inputs) / per_identity
        } else {
            f64::INFINITY
        }
    }
}

/// One row of [`TouchMonteCarlo::active_by_held`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldActive {
    /// Identities the person holds.
    pub held: u64,
    /// How many of them the person serves (the rest are left to lapse): the number, at most
    /// `held`, with the most active identities.
    pub served: u64,
    /// Mean active identities per window.
    pub active: f64,
    /// `active / held`.
    pub share: f64,
    /// Mean active identities when the person serves every identity held.
    pub active_serving_all: f64,
}

/// The Monte Carlo of one person touching for `n` identities.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TouchMonteCarlo {
    /// Largest `n`, at most the analytic bound, for which at least 95 % of the
    /// identity-windows complete.
    pub identities_per_person: u64,
    /// The share that completed at that `n`.
    pub completion: f64,
    /// Person-windows simulated at that `n`.
    pub trials: u32,
    /// For each number of identities held, 1 ..= twice the analytic bound (at most 200), the
    /// mean number active.
    pub active_by_held: Vec<HeldActive>,
    /// What was simulated.
    pub method: &'static str,
}

/// A rig's pace, priced with the same formula.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RigPace {
    /// Seconds per touch.
    pub touch_s: f64,
    /// Identities one key with its actuator keeps per window at that pace (`None`:
    /// unbounded).
    pub identities_per_key: Option<u64>,
    /// Not rounded.
    pub capacity: Option<f64>,
}

/// The one-person bound when a model answers every cognitive step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSolves {
    /// Identities one person keeps active per window at most (`None`: unbounded, no touch
    /// prompt).
    pub identities_per_person: Option<u64>,
    /// Not rounded.
    pub capacity: Option<f64>,
    /// `beats` (global slot), `window` (staggered slots) or `none` (no touch prompt).
    pub basis: &'static str,
    /// Seconds a touch takes the person.
    pub touch_s: f64,
    /// Touches per identity-window (`m`, one per prompt step).
    pub touches_per_identity_window: u32,
    /// Seconds of the person per identity-window (`m·touch`).
    pub person_seconds_per_identity_window: f64,
    /// The tries that may serve a touch prompt (global: their beats).
    pub prompt_tries: Vec<u32>,
    /// How many (`B`).
    pub beats: u32,
    /// The longest reaction window of a prompt, seconds.
    pub reaction_s: Option<f64>,
    /// Prompt jitter, seconds.
    pub prompt_jitter_s: f64,
    /// Seconds in which the touches can fall (global: `B·(J + r)`; staggered: window + `r`).
    pub touch_span_s: Option<f64>,
    /// The Monte Carlo (`None` when unbounded or beyond 5000 identities).
    pub monte_carlo: Option<TouchMonteCarlo>,
    /// The same formula at a rig's pace.
    pub rig: RigPace,
    /// Against a committee member answering for its own sybils (`None` unless the slot is
    /// global or without a prompt).
    pub one_malicious_member: Option<super::member::MemberBound>,
    /// What the figure is.
    pub note: String,
    /// What it does not price: the hardware.
    pub hardware: Vec<String>,
}

/// The bound of `inputs` when a model answers every cognitive step and a touch takes the person
/// `touch_ms`.
pub fn model_solves(inputs: &CeremonyInputs, touch_ms: u64) -> ModelSolves {
    let touch_s = touch_ms as f64 / 1000.0;
    let rig_s = RIG_TOUCH_MS as f64 / 1000.0;
    let Some(beats) = Beats::of(inputs) else {
        return ModelSolves {
            identities_per_person: None,
            capacity: None,
            basis: "none",
            touch_s,
            touches_per_identity_window: 0,
            person_seconds_per_identity_window: 0.0,
            prompt_tries: Vec::new(),
            beats: 0,
            reaction_s: None,
            prompt_jitter_s: inputs.prompt_jitter_ms as f64 / 1000.0,
            touch_span_s: None,
            monte_carlo: None,
            rig: RigPace {
                touch_s: rig_s,
                identities_per_key: None,
                capacity: None,
            },
            one_malicious_member: None,
            note: format!(
                "unbounded: no step is a touch prompt ({}), so a model that answers every step \
                 keeps any number of identities without a person; only the human-speed figure \
                 (identities_per_person, a person answering every step) and the cost of \
                 registering bound it",
                if inputs.slot_mode == SlotMode::Open {
                    "an open window has none: prompts need a global or staggered slot"
                } else {
                    "the policy has no step of a family bound to a credential, such as presence"
                }
            ),
            hardware: Vec::new(),
        };
    };
    let m = beats.touches();
    let capacity = beats.capacity(inputs, |_| touch_s);
    let rig = beats.capacity(inputs, |_| rig_s);
    let r = beats.reaction_s();
    let monte_carlo = touch_monte_carlo(inputs, &beats, touch_s, capacity);
    let figure = floor(capacity);
    let note = if beats.global {
        format!(
            "upper bound with a model answering every cognitive step at once: each identity \
             needs {m} touch(es) of its hardware key per window, each inside its prompt's \
             reaction window ({r} s); the prompts of all of one person's identities open within \
             the same {j} s of each beat, and the {b} tries that may serve a prompt have {b} \
             beats of {j} + {r} s, so B·(J + r)/(m·touch) = {b}·{span_each} / ({m}·{touch_s}) = \
             {figure}",
            j = beats.jitter_s,
            b = beats.tries.len(),
            span_each = beats.jitter_s + r,
        )
    } else {
        format!(
            "upper bound with a model answering every cognitive step at once, window-based: \
             staggered slots do not hold one person's identities to the same beats, so their \
             {m} touch(es) per identity fall anywhere in the window plus the reaction window: \
             (window + r)/(m·touch) = {span} / ({m}·{touch_s}) = {figure}",
            span = beats.span_s(inputs),
        )
    };
    let rig_figure = floor(rig);
    let hardware = vec![
        format!(
            "no hardware per identity is enforced: strict attestation checks a key's model and \
             vendor chain, and batch attestation (one certificate for a batch of keys of one \
             model) cannot tell two keys of that model apart, nor one key from two, so one key \
             may hold a credential for every identity; what a prompt costs is the touch, \
             {m} touch(es) = {} s of a person per identity-window",
            f64::from(m) * touch_s
        ),
        format!(
            "a rig that presses keys by machine removes the person from this bound: the cost is \
             then the rig's hardware and its touch pace per key, e.g. at {rig_s} s per touch \
             this formula (touch_ms = {RIG_TOUCH_MS}) gives {rig_figure} identities per key and \
             actuator, and keys with actuators run in parallel"
        ),
        "user verification raises a rig's cost only if it is biometric (a fingerprint key such \
         as the YubiKey Bio needs a finger on its sensor for every assertion); PIN verification \
         does not, since the rig's software enters the PIN"
            .to_owned(),
    ];
    ModelSolves {
        identities_per_person: Some(figure),
        capacity: Some(capacity),
        basis: if beats.global { "beats" } else { "window" },
        touch_s,
        touches_per_identity_window: m,
        person_seconds_per_identity_window: f64::from(m) * touch_s,
        prompt_tries: beats.tries.iter().map(|(j, _)| *j).collect(),
        beats: beats.tries.len() as u32,
        reaction_s: Some(r),
        prompt_jitter_s: beats.jitter_s,
        touch_span_s: Some(beats.span_s(inputs)),
        monte_carlo,
        rig: RigPace {
            touch_s: rig_s,
            identities_per_key: Some(rig_figure),
            capacity: Some(rig),
        },
        one_malicious_member: super::member::one_member(inputs, &beats, touch_s),
        note,
        hardware,
    }
}

/// A prompt waiting for the person's touch.
#[derive(Debug, Clone, Copy)]
struct Job {
    opens: f64,
    deadline: f64,
    min_solve: f64,
}

#[derive(Debug, Clone)]
struct Identity {
    start: f64,
    passed: usize,
    failures: u32,
    job: Option<Job>,
    /// The try a malicious member issues (and answers for the person at its beat's start).
    member_try: Option<u32>,
}

/// A heap key for a non-negative time (the bits of a non-negative `f64` order as it does).
fn at(t: f64) -> u64 {
    t.max(0.0).to_bits()
}

/// One person touching for `n` identities, every other step answered at once by a model.
struct TouchSim {
    global: bool,
    slot_s: f64,
    window_s: f64,
    tries: u32,
    spares: u32,
    /// Per step: a prompt's reaction window and floor (s); `None` for a step a model answers.
    steps: Vec<Option<(f64, f64)>>,
    jitter_s: f64,
    touch_s: f64,
    /// With a malicious member: see [`Member`].
    member: Option<Member>,
}

/// A malicious member answering for the person's identities: it issues one try of each
/// identity-window at its beat's start, and the touch for it may fall until the beat's start
/// plus the jitter, the reaction window and the relay round.
#[derive(Debug, Clone, Copy)]
pub(super) struct Member {
    /// The relay round, seconds.
    pub round_s: f64,
    /// The try it issues: the same for every identity (keys ground until the rotation gives
    /// the member that try), or `None` for a uniform one per identity-window.
    pub try_index: Option<u32>,
}

/// The state of one person-window.
struct Trial<'a> {
    sim: &'a TouchSim,
    rng: Rng,
    ids: Vec<Identity>,
    /// Prompts by the moment the person can first touch them.
    arrivals: BinaryHeap<Reverse<(u64, usize)>>,
    /// Prompts the person means to touch, by deadline; all have arrived.
    admitted: Vec<(f64, usize)>,
    active: u32,
}

impl TouchSim {
    fn new(inputs: &CeremonyInputs, touch_s: f64, member: Option<Member>) -> Self {
        Self {
            global: inputs.slot_mode == SlotMode::Global,
            slot_s: inputs.slot_ms as f64 / 1000.0,
            window_s: inputs.window_ms as f64 / 1000.0,
            tries: inputs.tries(),
            spares: inputs.spares,
            steps: inputs
                .steps
                .iter()
                .map(|s| {
                    let floor = s.families.first().map_or(0.0, |f| f.min_solve_ms as f64);
                    s.prompt_reaction_ms
                        .map(|r| (r as f64 / 1000.0, floor / 1000.0))
                })
                .collect(),
            jitter_s: inputs.prompt_jitter_ms as f64 / 1000.0,
            touch_s,
            member,
        }
    }

    /// Identities active at the end of one person-window over `n` identities.
    fn trial(&self, n: usize, mut rng: Rng) -> u32 {
        let spread = (self.window_s - self.slot_s).max(0.0);
        let ids = (0..n)
            .map(|_| Identity {
                start: if self.global {
                    0.0
                } else {
                    rng.uniform() * spread
                },
                passed: 0,
                failures: 0,
                job: None,
                member_try: self.member.map(|m| {
                    m.try_index
                        .unwrap_or_else(|| rng.index(self.tries.max(1) as usize) as u32)
                }),
            })
            .collect();
        let mut t = Trial {
            sim: self,
            rng,
            ids,
            arrivals: BinaryHeap::with_capacity(n),
            admitted: Vec::new(),
            active: 0,
        };
        for i in 0..n {
            let start = t.ids[i].start;
            t.advance(i, start);
        }
        t.run();
        t.active
    }
}

impl Trial<'_> {
    /// Moves identity `i`, ready for its next try at `ready`, to its next prompt: the steps a
    /// model answers pass at their openings, a prompt that cannot be touched in time expires.
    fn advance(&mut self, i: usize, mut ready: f64) {
        let sim = self.sim;
        loop {
            let id = &mut self.ids[i];
            if id.passed == sim.steps.len() {
                self.active += 1;
                return;
            }
            let j = id.passed as u32 + id.failures;
            if id.failures > sim.spares || j >= sim.tries {
                return;
            }
            match sim.steps[id.passed] {
                None => {
                    // Opens at a uniform moment of the first half of phase j of the
                    // identity's slot, as the issuer draws it.
                    let phase = sim.slot_s / f64::from(sim.tries.max(1));
                    let opens = id.start + (f64::from(j) + 0.5 * self.rng.uniform()) * phase;
                    ready = ready.max(opens);
                    id.passed += 1;
                }
                Some((reaction, min_solve)) => {
                    let slot = (id.start, id.start + sim.slot_s);
                    let beat = beat_start(slot, sim.tries, j, reaction, sim.jitter_s);
                    let job = match sim.member {
                        Some(m) if id.member_try == Some(j) => Job {
                            opens: beat,
                            deadline: beat + sim.jitter_s + reaction + m.round_s,
                            min_solve,
                        },
                        _ => {
                            let opens = beat + self.rng.uniform() * sim.jitter_s;
                            Job {
                                opens,
                                deadline: opens + reaction,
                                min_solve,
                            }
                        }
                    };
                    let from = ready.max(job.opens);
                    if (from + sim.touch_s).max(job.opens + min_solve) > job.deadline + 1e-9 {
                        id.failures += 1;
                        ready = job.deadline + EXPIRED_AFTER_S;
                        continue;
                    }
                    id.job = Some(job);
                    self.arrivals.push(Reverse((at(from), i)));
                    return;
                }
            }
        }
    }

    /// Whose prompt the person lets go first when not all can be touched: the identity with
    /// the most misses left, then the least progress, then the last one.
    fn expendable(&self, i: usize) -> (u32, Reverse<usize>, usize) {
        let id = &self.ids[i];
        (
            self.sim.spares.saturating_sub(id.failures),
            Reverse(id.passed),
            i,
        )
    }

    fn miss(&mut self, i: usize) {
        let job = self.ids[i].job.take().expect("a pending prompt");
        self.ids[i].failures += 1;
        self.advance(i, job.deadline + EXPIRED_AFTER_S);
    }

    /// The person's window: touches in earliest-deadline-first order among the admitted
    /// prompts; a prompt arriving is admitted if every admitted one can still be touched in
    /// time, else the most expendable of those whose removal makes it so is let go.
    fn run(&mut self) {
        let touch = self.sim.touch_s;
        let (mut free, mut clock) = (0.0f64, 0.0f64);
        loop {
            let next = self
                .arrivals
                .peek()
                .map(|Reverse((t, _))| f64::from_bits(*t));
            let start = (!self.admitted.is_empty()).then(|| free.max(clock));
            let arrival_first = next.is_some_and(|a| start.is_none_or(|s| a <= s));
            match (next, start) {
                (Some(a), _) if arrival_first => {
                    let Some(Reverse((_, i))) = self.arrivals.pop() else {
                        break;
                    };
                    clock = a;
                    self.admit(i, free.max(clock));
                }
                (_, Some(s)) => {
                    let (_, i) = self.admitted.remove(0);
                    clock = s;
                    let job = self.ids[i].job.expect("an admitted prompt");
                    let end = s + touch;
                    if end > job.deadline + 1e-9 {
                        self.miss(i);
                        continue;
                    }
                    free = end;
                    let id = &mut self.ids[i];
                    id.job = None;
                    id.passed += 1;
                    self.advance(i, end.max(job.opens + job.min_solve));
                }
                _ => break,
            }
        }
    }

    /// Admits identity `i`'s prompt at `from` (when the person is next free).
    fn admit(&mut self, i: usize, from: f64) {
        let touch = self.sim.touch_s;
        let deadline = self.ids[i].job.expect("a pending prompt").deadline;
        let q = self
            .admitted
            .partition_point(|&(d, k)| (d, k) < (deadline, i));
        self.admitted.insert(q, (deadline, i));
        // Margins of the earliest-deadline-first order from `from`; feasible when all ≥ 0.
        let margins: Vec<f64> = self
            .admitted
            .iter()
            .enumerate()
            .map(|(k, &(d, _))| d - from - (k + 1) as f64 * touch)
            .collect();
        if margins.iter().all(|&m| m >= -1e-9) {
            return;
        }
        // Removing position e leaves the margins before it and raises those after it by one
        // touch: feasible when the prefix and the raised suffix are non-negative.
        let len = margins.len();
        let mut suffix = vec![f64::INFINITY; len + 1];
        for k in (0..len).rev() {
            suffix[k] = suffix[k + 1].min(margins[k]);
        }
        let mut prefix = f64::INFINITY;
        let mut drop: Option<usize> = None;
        for e in 0..len {
            if prefix >= -1e-9 && suffix[e + 1] + touch >= -1e-9 {
                let who = self.admitted[e].1;
                if drop.is_none_or(|d| self.expendable(who) > self.expendable(self.admitted[d].1)) {
                    drop = Some(e);
                }
            }
            prefix = prefix.min(margins[e]);
        }
        // Removing the newcomer always restores the admitted set.
        let e = drop.unwrap_or(q);
        let (_, who) = self.admitted.remove(e);
        self.miss(who);
    }
}

/// One person, `n` identities, the prompts on their beats; the largest `n` with ≥ 95 % of
/// identity-windows complete and the active identities for each number held. `None` when the
/// bound is unbounded or beyond 5000 identities.
pub fn touch_monte_carlo(
    inputs: &CeremonyInputs,
    beats: &Beats,
    touch_s: f64,
    capacity: f64,
) -> Option<TouchMonteCarlo> {
    touch_monte_carlo_with(inputs, beats, touch_s, capacity, None)
}

/// [`touch_monte_carlo`], with a malicious member issuing one try of each identity-window.
pub(super) fn touch_monte_carlo_with(
    inputs: &CeremonyInputs,
    beats: &Beats,
    touch_s: f64,
    capacity: f64,
    member: Option<Member>,
) -> Option<TouchMonteCarlo> {
    if !capacity.is_finite() || capacity > MC_MAX_IDENTITIES {
        return None;
    }
    let sim = TouchSim::new(inputs, touch_s, member);
    let b = beats.tries.len().max(1) as u64;
    // (mean active, completion, trials)
    let run = |n: u64| -> (f64, f64, u32) {
        let trials = (4000 / (n * b).max(1)).clamp(8, 400) as u32;
        let active: u64 = (0..trials)
            .map(|k| {
                u64::from(sim.trial(
                    n as usize,
                    Rng::stream(TOUCH_SEED, tag::BOUND, u64::from(k)),
                ))
            })
            .sum();
        let mean = active as f64 / f64::from(trials);
        (mean, mean / n as f64, trials)
    };
    let top = floor(capacity);
    let held_max = (2 * top).clamp(1, HELD_CAP);
    let curve: Vec<(f64, f64, u32)> = (1..=held_max).map(run).collect();
    let mut active_by_held = Vec::with_capacity(curve.len());
    let mut best = (0u64, 0.0f64);
    for (k, &(mean, _, _)) in curve.iter().enumerate() {
        let held = k as u64 + 1;
        if mean > best.1 {
            best = (held, mean);
        }
        active_by_held.push(HeldActive {
            held,
            served: best.0,
            active: best.1,
            share: best.1 / held as f64,
            active_serving_all: mean,
        });
    }
    // Largest n with ≥ 95 % complete, at most the analytic bound (as the human-speed Monte
    // Carlo): along the curve, then by bisection past its end.
    let mut lo = (0u64, 1.0f64, 0u32);
    for (k, &(_, completion, trials)) in curve.iter().enumerate().take(top as usize) {
        if completion < MC_COMPLETION {
            break;
        }
        lo = (k as u64 + 1, completion, trials);
    }
    if lo.0 == held_max.min(top) {
        let mut hi = top + 1;
        while hi - lo.0 > 1 {
            let mid = lo.0 + (hi - lo.0) / 2;
            let (_, completion, trials) = run(mid);
            if completion >= MC_COMPLETION {
                lo = (mid, completion, trials);
            } else {
                hi = mid;
            }
        }
    }
    Some(TouchMonteCarlo {
        identities_per_person: lo.0,
        completion: lo.1,
        trials: lo.2,
        active_by_held,
        method: "one person, n identities, a model answering every cognitive step at its \
                 opening; each prompt opens on its beat (uniform jitter) or, staggered, on the \
                 beats of the identity's own slot placed uniformly in the window; the person \
                 touches serially (touch_s each) in earliest-deadline-first order, letting go of \
                 the prompt of the identity with the most misses left when not all can be \
                 touched in time, dropping an identity once it missed more tries than the spares \
                 allow; active: every step passed. identities_per_person: largest n with ≥ 95 % \
                 of identity-windows complete; active_by_held: the mean active identities when \
                 the person serves the best number of the identities held",
    })
}
