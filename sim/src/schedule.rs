//! One person keeping identities through a window's step sequence.
//!
//! The protocol gives each identity a fixed sequence of steps and `spares` extra tries.
//! Challenge `j` serves the first step not yet passed; it may be fetched only after challenge
//! `j − 1` was answered (or expired), only from its opening on (inside a ceremony slot, a
//! secret moment of phase `j`), and only before the slot ends; its deadline runs from its
//! fetch, and an answer sooner than the family's `min_solve` after the fetch is refused. The
//! first answer is final.
//!
//! A person serving several identities interleaves them in *earliest-deadline-first* order:
//! each identity's next step has a latest start, the slot end minus the person's expected
//! work on the steps after it (the last step only has to be fetched before the slot ends).
//! A person does not know a challenge's secret opening: they ask for it when they want to
//! start, and a refusal tells them when it opens (asking costs nothing and stores nothing).
//! Fetching costs no time either, so just before an identity's slot ends the person fetches
//! the last step of every identity that is ready for it and answers those after the slot,
//! each within its deadline. A challenge that cannot be finished in time is not started.
//!
//! [`work`] runs that schedule against a [`World`]: [`Simulated`] draws openings and families
//! as the protocol does (the aggregate engine, the honest users, the one-person bound's
//! Monte Carlo); the exact engine's world is the real oracle core.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::rng::Rng;

/// How long before an identity's slot closes the person fetches the last steps they will
/// answer after it, seconds.
pub const FETCH_BEFORE_CLOSE_S: f64 = 0.002;

/// How long after a deadline an unanswered challenge counts as expired (the issuer's clock
/// ticks in milliseconds; at the deadline itself an answer is still on time), seconds.
pub const EXPIRED_AFTER_S: f64 = 0.001;

/// The issuer's reply to a request for a challenge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fetch {
    /// Issued at the time of the request.
    Issued {
        /// Family of the challenge (index into the caller's family table).
        family: usize,
        /// Deadline of the answer, seconds.
        deadline: f64,
        /// Least time from the fetch to an answer, seconds.
        min_solve: f64,
    },
    /// Not open yet.
    NotOpen {
        /// When it opens, seconds.
        opens_at: f64,
    },
    /// Refused for good (outside the slot, no tries left).
    Refused,
}

/// The issuer and the person's own skill, as the schedule sees them. Times are seconds on
/// one clock; calls for one identity come in time order.
pub trait World {
    /// Ask for challenge `j` of `identity` at `now`.
    fn fetch(&mut self, identity: usize, j: u32, now: f64) -> Fetch;
    /// The person works on a challenge of `family`: seconds needed, and whether their answer
    /// is right.
    fn solve(&mut self, family: usize) -> (f64, bool);
    /// Submit the answer to challenge `j` of `identity` at `at`; whether it was accepted.
    fn answer(&mut self, identity: usize, j: u32, at: f64, correct: bool) -> bool;
}

/// What the person expects when planning: mean seconds per step (over its pool) and per
/// family, and the policy's spares.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Expected work per step, in order.
    pub step_s: Vec<f64>,
    /// Expected work per family.
    pub family_s: Vec<f64>,
    /// Spare tries.
    pub spares: u32,
}

impl Plan {
    /// Tries per window: steps plus spares.
    pub fn tries(&self) -> u32 {
        self.step_s.len() as u32 + self.spares
    }
}

/// One identity's slot `[start, end)`: when its challenges may be fetched.
pub type Slot = (f64, f64);

/// What one person's window came to.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    /// Identities that passed every step.
    pub active: u32,
    /// Challenges used (answered, or expired).
    pub attempts: u32,
    /// Seconds the person worked.
    pub busy_s: f64,
}

/// A fetched challenge the person has not answered yet.
#[derive(Debug, Clone, Copy)]
struct Held {
    j: u32,
    family: usize,
    issued: f64,
    deadline: f64,
    min_solve: f64,
}

#[derive(Debug, Clone)]
struct Identity {
    end: f64,
    passed: usize,
    used: u32,
    failures: u32,
    /// Earliest moment its next challenge may be asked for.
    release: f64,
    held: Option<Held>,
}

/// A total order on times, for the heaps.
#[derive(Debug, Clone, Copy, PartialEq)]
struct At(f64);

impl Eq for At {}

impl PartialOrd for At {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for At {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

type Queue = BinaryHeap<Reverse<(At, usize)>>;

/// One person, from `start` on, serving identities with `slots`; the person starts no work
/// at or after `stop`. Identity `i` of the world is `slots[i]`.
pub fn work(plan: &Plan, start: f64, stop: f64, slots: &[Slot], world: &mut impl World) -> Tally {
    let steps = plan.step_s.len();
    let tries = plan.tries();
    // rest[k]: expected work of steps k..steps-1 that must be done before the slot ends (all
    // but the last, which need only be fetched before it).
    let mut rest = vec![0.0; steps + 1];
    for k in (0..steps.saturating_sub(1)).rev() {
        rest[k] = rest[k + 1] + plan.step_s[k];
    }
    let key = |id: &Identity| match &id.held {
        Some(h) => h.deadline - plan.family_s[h.family],
        None => id.end - rest[id.passed],
    };
    let mut ids: Vec<Identity> = slots
        .iter()
        .map(|&(s, end)| Identity {
            end,
            passed: 0,
            used: 0,
            failures: 0,
            release: s.max(start),
            held: None,
        })
        .collect();
    let mut waiting: Queue = ids
        .iter()
        .enumerate()
        .map(|(i, id)| Reverse((At(id.release), i)))
        .collect();
    let mut ready: Queue = BinaryHeap::with_capacity(ids.len());
    let mut tally = Tally::default();
    let mut now = start;
    if steps == 0 {
        return tally;
    }
    while now < stop {
        while let Some(&Reverse((At(r), i))) = waiting.peek() {
            if r > now {
                break;
            }
            waiting.pop();
            ready.push(Reverse((At(key(&ids[i])), i)));
        }
        let Some(Reverse((_, i))) = ready.pop() else {
            match waiting.peek() {
                Some(&Reverse((At(r), _))) => {
                    now = r;
                    continue;
                }
                None => break,
            }
        };
        let id = &mut ids[i];
        let held = match id.held.take() {
            Some(h) => h,
            None if now < id.end => match world.fetch(i, id.used, now) {
                Fetch::Issued {
                    family,
                    deadline,
                    min_solve,
                } => Held {
                    j: id.used,
                    family,
                    issued: now,
                    deadline,
                    min_solve,
                },
                Fetch::NotOpen { opens_at } => {
                    if opens_at < id.end {
                        id.release = opens_at.max(now);
                        waiting.push(Reverse((At(id.release), i)));
                    }
                    continue;
                }
                Fetch::Refused => continue,
            },
            None => {
                // The slot closed while the person was busy elsewhere: the last step was
                // fetched just before the close if it could be.
                let at = (id.end - FETCH_BEFORE_CLOSE_S).max(id.release);
                if steps - id.passed != 1 || at >= id.end {
                    continue;
                }
                if let Fetch::Issued {
                    family,
                    deadline,
                    min_solve,
                } = world.fetch(i, id.used, at)
                {
                    id.held = Some(Held {
                        j: id.used,
                        family,
                        issued: at,
                        deadline,
                        min_solve,
                    });
                    ready.push(Reverse((At(key(id)), i)));
                }
                continue;
            }
        };
        let left = held.deadline - now;
        id.used += 1;
        tally.attempts += 1;
        let accepted = if left <= 0.0 || (held.issued < now && plan.family_s[held.family] > left) {
            // Expired while the person was busy, or cannot be finished in time: the try is
            // lost without working on it.
            id.release = held.deadline + EXPIRED_AFTER_S;
            false
        } else {
            let (need, correct) = world.solve(held.family);
            if need > left {
                // Still working at the deadline: give up.
                now += left;
                tally.busy_s += left;
                id.release = held.deadline + EXPIRED_AFTER_S;
                false
            } else {
                now += need;
                tally.busy_s += need;
                let at = now.max(held.issued + held.min_solve);
                id.release = at;
                world.answer(i, held.j, at, correct)
            }
        };
        if accepted {
            id.passed += 1;
            if id.passed == steps {
                tally.active += 1;
                continue;
            }
        } else {
            id.failures += 1;
        }
        if id.failures <= plan.spares && id.used < tries {
            waiting.push(Reverse((At(id.release), i)));
        }
    }
    tally
}

/// Touch prompts: the families whose challenges open on the beats that end a phased slot (the
/// protocol's `presence` in a `global` or `staggered` slot). Beat `j` starts
/// `(tries − j) · (r + jitter)` before the slot's end, the prompt opens a uniform moment of at
/// most `jitter` later, counts as issued there however late it is fetched, and is due `r`
/// (the family's deadline, its reaction window) after its opening.
#[derive(Debug, Clone, Copy)]
pub struct Prompts<'a> {
    /// Per family: whether it is a touch prompt.
    pub is_prompt: &'a [bool],
    /// The jitter, seconds.
    pub jitter_s: f64,
}

/// A simulated issuer: openings at a uniform moment of the first half of phase `j` of the slot (or at the slot
/// start when `phased` is false, an `open` window), touch prompts on their beats, each step's
/// family drawn uniformly from its pool, deadlines and floors per family. The person's solve
/// times and correctness come from `solve`.
pub struct Simulated<'a, F> {
    /// Deadline per family, seconds.
    pub deadline_s: &'a [f64],
    /// Least answer time per family, seconds.
    pub min_solve_s: &'a [f64],
    /// Multiplier on every deadline.
    pub deadline_scale: f64,
    /// Families each step may take.
    pub pools: &'a [Vec<usize>],
    /// Whether the slot is cut into one phase per try.
    pub phased: bool,
    /// Tries per window.
    pub tries: u32,
    /// Each identity's slot.
    pub slots: &'a [Slot],
    /// The random stream.
    pub rng: &'a mut Rng,
    /// The person: seconds needed and correctness for a family.
    pub solve: F,
    /// Touch prompts, when the slot is phased and a step's family is one.
    pub prompts: Option<Prompts<'a>>,
    /// Per identity: steps passed, and the challenge whose opening was drawn with it.
    state: Vec<(usize, Option<(u32, f64)>)>,
}

impl<'a, F: FnMut(usize, &mut Rng) -> (f64, bool)> Simulated<'a, F> {
    /// A world over `slots`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        deadline_s: &'a [f64],
        min_solve_s: &'a [f64],
        pools: &'a [Vec<usize>],
        phased: bool,
        tries: u32,
        slots: &'a [Slot],
        rng: &'a mut Rng,
        solve: F,
    ) -> Self {
        Self {
            deadline_s,
            min_solve_s,
            deadline_scale: 1.0,
            pools,
            phased,
            tries,
            slots,
            rng,
            solve,
            prompts: None,
            state: vec![(0, None); slots.len()],
        }
    }

    /// The reaction window of the step an identity that passed `passed` steps is on, if that
    /// step is a touch prompt.
    fn prompt_reaction_s(&self, passed: usize) -> Option<f64> {
        let prompts = self.prompts.filter(|_| self.phased)?;
        let family = *self.pools.get(passed)?.first()?;
        prompts.is_prompt[family].then(|| self.deadline_s[family] * self.deadline_scale)
    }
}

impl<F: FnMut(usize, &mut Rng) -> (f64, bool)> World for Simulated<'_, F> {
    fn fetch(&mut self, identity: usize, j: u32, now: f64) -> Fetch {
        let (start, end) = self.slots[identity];
        let prompt = self.prompt_reaction_s(self.state[identity].0);
        let jitter = self.prompts.map_or(0.0, |p| p.jitter_s);
        let (passed, opening) = &mut self.state[identity];
        let opens_at = match *opening {
            Some((oj, at)) if oj == j => at,
            _ => {
                let at = if let Some(reaction) = prompt {
                    let before_end = f64::from(self.tries.saturating_sub(j)) * (reaction + jitter);
                    (end - before_end).max(start) + self.rng.uniform() * jitter
                } else if self.phased {
                    let phase = (end - start) / f64::from(self.tries.max(1));
                    // The first half of the phase, as the issuer draws it.
                    start + (f64::from(j.min(self.tries - 1)) + 0.5 * self.rng.uniform()) * phase
                } else {
                    start
                };
                *opening = Some((j, at));
                at
            }
        };
        if now >= end || j >= self.tries || *passed >= self.pools.len() {
            return Fetch::Refused;
        }
        if now < opens_at {
            return Fetch::NotOpen { opens_at };
        }
        let pool = &self.pools[*passed];
        let family = pool[self.rng.index(pool.len())];
        if let Some(reaction) = prompt {
            // Issued at its opening, whenever fetched: late, it comes with less time (or none).
            return Fetch::Issued {
                family,
                deadline: opens_at + reaction,
                min_solve: (opens_at + self.min_solve_s[family] - now).max(0.0),
            };
        }
        Fetch::Issued {
            family,
            deadline: now + self.deadline_s[family] * self.deadline_scale,
            min_solve: self.min_solve_s[family],
        }
    }

    fn solve(&mut self, family: usize) -> (f64, bool) {
        (self.solve)(family, self.rng)
    }

    fn answer(&mut self, identity: usize, _j: u32, _at: f64, correct: bool) -> bool {
        if correct {
            self.state[identity].0 += 1;
        }
        correct
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Families: 0 = a 3 s step, 1 = a 6 s one, 2 = a 15 s one; deadlines 30 s.
    const DEADLINES: [f64; 3] = [30.0, 30.0, 30.0];
    const FLOORS: [f64; 3] = [0.5, 1.5, 4.0];
    const TIMES: [f64; 3] = [3.0, 6.0, 15.0];

    fn plan(pools: &[Vec<usize>], spares: u32) -> Plan {
        Plan {
            step_s: pools
                .iter()
                .map(|p| p.iter().map(|&f| TIMES[f]).sum::<f64>() / p.len() as f64)
                .collect(),
            family_s: TIMES.to_vec(),
            spares,
        }
    }

    fn run(pools: &[Vec<usize>], spares: u32, slots: &[Slot], phased: bool, seed: u64) -> Tally {
        let p = plan(pools, spares);
        let mut rng = Rng::new(seed);
        let mut world = Simulated::new(
            &DEADLINES,
            &FLOORS,
            pools,
            phased,
            p.tries(),
            slots,
            &mut rng,
            |f, _: &mut Rng| (TIMES[f], true),
        );
        work(&p, 0.0, f64::INFINITY, slots, &mut world)
    }

    #[test]
    fn one_identity_passes_every_step_in_order() {
        let pools = vec![vec![0], vec![1, 2], vec![1, 2]];
        let t = run(&pools, 1, &[(0.0, 120.0)], true, 1);
        assert_eq!((t.active, t.attempts), (1, 3));
        assert!(t.busy_s >= 3.0 + 12.0 && t.busy_s <= 3.0 + 30.0);
    }

    #[test]
    fn a_person_cannot_outwork_the_slot() {
        // One 6 s step in a 60 s slot with 30 s deadlines: at most (60 + 30) / 6 = 15.
        let pools = vec![vec![1]];
        let slots = vec![(0.0, 60.0); 40];
        let t = run(&pools, 0, &slots, true, 2);
        assert!(t.active <= 15, "{t:?}");
        assert!(t.active >= 12, "{t:?}");
        assert!(t.busy_s <= 90.0 + 1e-9);
    }

    #[test]
    fn last_steps_fetched_before_the_close_are_answered_after_it() {
        // Ten identities, one 6 s step, a 12.5 s slot: 3 are fetched in the slot, 4 more are
        // fetched at its close and answered in the 30 s after it.
        let pools = vec![vec![1]];
        let slots = vec![(0.0, 12.5); 10];
        let t = run(&pools, 0, &slots, false, 3);
        assert_eq!(t.active, 7, "{t:?}");
    }

    #[test]
    fn wrong_answers_use_spares_and_then_the_identity_is_lost() {
        let pools = vec![vec![0], vec![1]];
        let p = plan(&pools, 1);
        let slots = [(0.0, 300.0)];
        let mut rng = Rng::new(4);
        let mut answers = 0;
        let mut world = Simulated::new(
            &DEADLINES,
            &FLOORS,
            &pools,
            true,
            p.tries(),
            &slots,
            &mut rng,
            |f, _: &mut Rng| {
                answers += 1;
                (TIMES[f], answers == 1)
            },
        );
        let t = work(&p, 0.0, f64::INFINITY, &slots, &mut world);
        // Step 0 passes, step 1 fails twice: one spare, then no tries left.
        assert_eq!((t.active, t.attempts), (0, 3));
    }

    #[test]
    fn openings_fall_in_the_first_half_of_their_phases() {
        let pools = vec![vec![0]; 3];
        let slots = [(100.0, 220.0)];
        let mut rng = Rng::new(5);
        let mut world = Simulated::new(
            &DEADLINES,
            &FLOORS,
            &pools,
            true,
            4,
            &slots,
            &mut rng,
            |f, _: &mut Rng| (TIMES[f], true),
        );
        for j in 0..4u32 {
            let Fetch::NotOpen { opens_at } = world.fetch(0, j, 99.0) else {
                panic!("open before the slot")
            };
            let phase = 100.0 + 30.0 * f64::from(j);
            assert!((phase..phase + 15.0).contains(&opens_at), "{j}: {opens_at}");
            assert!(matches!(
                world.fetch(0, j, opens_at),
                Fetch::Issued { family: 0, .. }
            ));
        }
        assert_eq!(world.fetch(0, 1, 220.0), Fetch::Refused);
    }
}
