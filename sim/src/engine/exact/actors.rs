//! One window of the exact engine: every actor's schedule run against the core.

use std::collections::HashMap;

use ed25519_dalek::SigningKey;
use hco_oracle::{IssuedChallenge, Oracle, Reason, Response, SignedRequest, Timestamp};

use super::standin::wrong_answer;
use super::{Population, fail};
use crate::error::SimError;
use crate::model::Model;
use crate::rng::Rng;
use crate::scenario::{Scenario, SlotMode};
use crate::schedule::{Fetch, Slot, World, work};

/// Counts the core does not keep.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    pub human_attempts: u64,
    pub bot_attempts: u64,
    pub honest_participating: u64,
}

/// Who is answering.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Solver {
    /// A person `speed` times slower than typical.
    Person(f64),
    /// A script: answers at once, right with the family's ε_auto.
    Script,
}

/// The core as the schedule sees it: seconds since the window start, identities as indices
/// into `keys`.
struct Core<'a> {
    oracle: &'a Oracle,
    model: &'a Model,
    families: &'a HashMap<String, usize>,
    t: u64,
    base: Timestamp,
    keys: Vec<&'a SigningKey>,
    solver: Solver,
    rng: &'a mut Rng,
    /// The challenge each identity holds.
    held: Vec<Option<IssuedChallenge>>,
    /// The first storage failure, if any.
    error: Option<SimError>,
}

impl Core<'_> {
    fn ms(&self, s: f64) -> Timestamp {
        self.base + (s * 1000.0).round().max(0.0) as u64
    }

    fn secs(&self, ms: Timestamp) -> f64 {
        (ms as f64 - self.base as f64) / 1000.0
    }
}

impl World for Core<'_> {
    fn fetch(&mut self, identity: usize, j: u32, now: f64) -> Fetch {
        let at = self.ms(now);
        let req = SignedRequest::new(self.keys[identity], self.t, j);
        match self.oracle.issue(&req, at) {
            Err(e) => {
                self.error.get_or_insert(fail("ledger", e));
                Fetch::Refused
            }
            Ok(Err(Reason::StepNotOpen { opens_at })) => Fetch::NotOpen {
                opens_at: self.secs(opens_at),
            },
            Ok(Err(_)) => Fetch::Refused,
            Ok(Ok(issued)) => {
                let c = &issued.challenge.challenge;
                let Some(&family) = self.families.get(&c.family) else {
                    self.error
                        .get_or_insert(fail("unknown family issued", &c.family));
                    return Fetch::Refused;
                };
                let fetched = Fetch::Issued {
                    family,
                    deadline: self.secs(c.deadline),
                    min_solve: self.oracle.params().min_solve_ms(&c.family) as f64 / 1000.0,
                };
                self.held[identity] = Some(issued);
                fetched
            }
        }
    }

    fn solve(&mut self, family: usize) -> (f64, bool) {
        let fam = &self.model.families[family];
        match self.solver {
            Solver::Script => (0.0, self.rng.bernoulli(fam.eps_auto)),
            Solver::Person(speed) => (
                fam.sample_time(self.rng, speed),
                self.rng.bernoulli(fam.p_correct),
            ),
        }
    }

    fn answer(&mut self, identity: usize, _j: u32, at: f64, correct: bool) -> bool {
        let Some(issued) = self.held[identity].take() else {
            return false;
        };
        let c = &issued.challenge.challenge;
        // Whole milliseconds inside [issue + floor, deadline], as the schedule meant.
        let floor = c.issued_at + self.oracle.params().min_solve_ms(&c.family);
        let at = self.ms(at).clamp(floor, c.deadline);
        let Some(solved) = self
            .oracle
            .registry()
            .get(&c.family)
            .and_then(|f| f.solve(&issued.prompt))
        else {
            self.error
                .get_or_insert(fail("no solver for family", &c.family));
            return false;
        };
        let answer = if correct {
            solved
        } else {
            wrong_answer(&solved)
        };
        let response = Response::new(self.keys[identity], issued.challenge, answer);
        match self.oracle.verify_response(&response, at) {
            Ok(verdict) => verdict.is_ok(),
            Err(e) => {
                self.error.get_or_insert(fail("ledger", e));
                false
            }
        }
    }
}

/// One window's actors.
pub struct Window<'a> {
    s: &'a Scenario,
    model: &'a Model,
    oracle: &'a Oracle,
    pop: &'a Population,
    families: &'a HashMap<String, usize>,
    t: u64,
}

impl<'a> Window<'a> {
    pub fn new(
        s: &'a Scenario,
        model: &'a Model,
        oracle: &'a Oracle,
        pop: &'a Population,
        families: &'a HashMap<String, usize>,
        t: u64,
    ) -> Self {
        Self {
            s,
            model,
            oracle,
            pop,
            families,
            t,
        }
    }

    /// The slot of identity `key`, seconds since the window start.
    fn slot(&self, key: usize) -> Result<Slot, SimError> {
        let id = hco_oracle::testing::identity_id(&self.pop.keys[key]);
        let slot = self
            .oracle
            .slot(self.t, &id)
            .map_err(|e| fail("ledger", e))?;
        let base = self.oracle.params().window_start(self.t);
        let secs = |ms: Timestamp| (ms as f64 - base as f64) / 1000.0;
        Ok((secs(slot.start), secs(slot.end)))
    }

    /// One actor's schedule over `keys`: `(active, attempts)`.
    fn act(
        &self,
        keys: &[usize],
        solver: Solver,
        start: f64,
        stop: f64,
        rng: &mut Rng,
    ) -> Result<(u32, u32), SimError> {
        let slots = keys
            .iter()
            .map(|&k| self.slot(k))
            .collect::<Result<Vec<_>, _>>()?;
        let mut core = Core {
            oracle: self.oracle,
            model: self.model,
            families: self.families,
            t: self.t,
            base: self.oracle.params().window_start(self.t),
            keys: keys.iter().map(|&k| &self.pop.keys[k]).collect(),
            solver,
            rng,
            held: vec![None; keys.len()],
            error: None,
        };
        let tally = work(&self.model.plan, start, stop, &slots, &mut core);
        match core.error {
            Some(e) => Err(e),
            None => Ok((tally.active, tally.attempts)),
        }
    }

    /// Drive every actor of the window to completion.
    pub fn run(&self, rng: &mut Rng) -> Result<Counts, SimError> {
        let mut counts = Counts::default();
        for (i, &cohort) in self.pop.honest_cohort.iter().enumerate() {
            if !rng.bernoulli(self.s.honest.participation) {
                continue;
            }
            counts.honest_participating += 1;
            let arrive = self.slot(i)?.0 + rng.exponential(self.model.arrival_mean_s);
            let speed = self.model.cohorts[cohort].speed;
            self.act(&[i], Solver::Person(speed), arrive, f64::INFINITY, rng)?;
        }
        // Hired humans: the pool in slot order, dealt round-robin, `per_human` each.
        let m = self.s.humans_at(self.t as u32) as usize;
        let mut pool = self
            .pop
            .pool
            .clone()
            .map(|k| Ok((self.slot(k)?.0, k)))
            .collect::<Result<Vec<_>, SimError>>()?;
        pool.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let per_human = self.model.per_human as usize;
        let (start, stop) = match self.s.slots.mode {
            SlotMode::Global => (pool.first().map_or(0.0, |p| p.0), f64::INFINITY),
            SlotMode::Open | SlotMode::Staggered => (0.0, self.model.human_budget_s),
        };
        for h in 0..m {
            let keys: Vec<usize> = pool
                .iter()
                .skip(h)
                .step_by(m)
                .take(per_human)
                .map(|p| p.1)
                .collect();
            if keys.is_empty() {
                break;
            }
            let (_, attempts) = self.act(&keys, Solver::Person(1.0), start, stop, rng)?;
            counts.human_attempts += u64::from(attempts);
        }
        for key in self.pop.bots.clone() {
            let start = self.slot(key)?.0;
            let (_, attempts) = self.act(&[key], Solver::Script, start, f64::INFINITY, rng)?;
            counts.bot_attempts += u64::from(attempts);
        }
        Ok(counts)
    }
}
