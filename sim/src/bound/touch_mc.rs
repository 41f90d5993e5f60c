//! The touch Monte Carlo: one person touching for `n` identities, every other step answered
//! at once by a model (see [`super::touch`] for the bound it checks).
//!
//! [`touch_monte_carlo`] runs one person against the beats of `n` identities. It stays under
//! the formula by about the jitter: the person's first touch of a beat starts at its earliest
//! opening and the last must end by the latest deadline, at most `J + r` later but only that
//! when the openings spread over all of `J`, so a beat holds about `r / touch` touches, not
//! `(J + r) / touch`. The human-speed Monte Carlo puts its prompts on their beats through the
//! simulated issuer's [`crate::schedule::Prompts`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Serialize;

use super::beats::{Beats, beat_start};
use super::{CeremonyInputs, MC_COMPLETION, MC_MAX_IDENTITIES, floor};
use crate::rng::{Rng, tag};
use crate::scenario::SlotMode;
use crate::schedule::EXPIRED_AFTER_S;

/// Most held identities the Monte Carlo's `active_by_held` goes to.
const HELD_CAP: u64 = 200;
/// Seed of the touch Monte Carlo's streams (one stream per trial).
const TOUCH_SEED: u64 = 0x70c4;

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
