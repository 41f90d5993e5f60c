//! One window of the exact engine: actors stepped in time order against the core.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use hco_oracle::{Clock, Digest, ManualClock, Oracle, Response, SignedRequest, Timestamp};

use super::standin::wrong_answer;
use super::{Population, fail};
use crate::error::SimError;
use crate::model::Model;
use crate::rng::Rng;
use crate::scenario::{Scenario, SlotMode};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Honest,
    Human,
    Bot,
}

/// The identity an actor is working for, and how its window is going.
#[derive(Debug, Clone, Copy)]
struct Serving {
    key: usize,
    next_j: u32,
    ok: u32,
    failed: u32,
}

struct Actor {
    kind: Kind,
    speed: f64,
    serving: Option<Serving>,
    /// No request at or after this time.
    end: Timestamp,
    /// An answer waiting to be submitted at the actor's next event.
    pending: Option<Response>,
}

/// Counts the core does not keep.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    pub human_attempts: u64,
    pub bot_attempts: u64,
    pub honest_participating: u64,
}

/// One window's actors.
pub struct Window<'a> {
    s: &'a Scenario,
    model: &'a Model,
    oracle: &'a Oracle,
    pop: &'a Population,
    families: &'a HashMap<String, usize>,
    t: u64,
    /// Pool identities as `(slot start, slot end, key)`, in slot order; humans take from `next`.
    queue: Vec<(Timestamp, Timestamp, usize)>,
    next: usize,
    counts: Counts,
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
            queue: Vec::new(),
            next: 0,
            counts: Counts::default(),
        }
    }

    fn slot(&self, key: usize, prev: &Digest) -> std::ops::Range<Timestamp> {
        let id = hco_oracle::testing::identity_id(&self.pop.keys[key]);
        self.oracle.params().slot(self.t, &id, prev)
    }

    /// Drive every actor of the window to completion.
    pub fn run(&mut self, clock: &ManualClock, rng: &mut Rng) -> Result<Counts, SimError> {
        let oracle = self.oracle;
        let params = oracle.params();
        let prev = match self.t.checked_sub(1) {
            Some(p) => self
                .oracle
                .ledger()
                .certified_root(p)
                .map_err(|e| fail("ledger", e))?,
            None => Digest::ZERO,
        };
        let start = params.window_start(self.t);
        let serve = |key| {
            Some(Serving {
                key,
                next_j: 0,
                ok: 0,
                failed: 0,
            })
        };
        let mut actors = Vec::new();
        let mut events = BinaryHeap::new();
        for (i, &cohort) in self.pop.honest_cohort.iter().enumerate() {
            if !rng.bernoulli(self.s.honest.participation) {
                continue;
            }
            self.counts.honest_participating += 1;
            let slot = self.slot(i, &prev);
            let arrive = (rng.exponential(self.model.arrival_mean_s) * 1000.0).round() as u64;
            events.push(Reverse((slot.start + arrive, actors.len())));
            actors.push(Actor {
                kind: Kind::Honest,
                speed: self.model.cohorts[cohort].speed,
                serving: serve(i),
                end: slot.end,
                pending: None,
            });
        }
        let mut queue: Vec<_> = self
            .pop
            .pool
            .clone()
            .map(|k| {
                let s = self.slot(k, &prev);
                (s.start, s.end, k)
            })
            .collect();
        queue.sort_unstable();
        self.queue = queue;
        let budget_ms = (self.model.human_budget_s * 1000.0).round() as u64;
        let shift_start = match self.s.slots.mode {
            SlotMode::Global => self.queue.first().map_or(start, |q| q.0),
            SlotMode::Open | SlotMode::Staggered => start,
        };
        for _ in 0..self.s.humans_at(self.t as u32) {
            events.push(Reverse((shift_start, actors.len())));
            actors.push(Actor {
                kind: Kind::Human,
                speed: 1.0,
                serving: None,
                end: shift_start + budget_ms,
                pending: None,
            });
        }
        for key in self.pop.bots.clone() {
            let slot = self.slot(key, &prev);
            events.push(Reverse((slot.start, actors.len())));
            actors.push(Actor {
                kind: Kind::Bot,
                speed: 1.0,
                serving: serve(key),
                end: slot.end,
                pending: None,
            });
        }
        while let Some(Reverse((now, a))) = events.pop() {
            clock.set(now);
            if let Some(next) = self.step(&mut actors[a], clock.now(), rng)? {
                events.push(Reverse((next, a)));
            }
        }
        Ok(self.counts)
    }

    /// Advance one actor at `now`; returns when it next acts.
    fn step(
        &mut self,
        actor: &mut Actor,
        now: Timestamp,
        rng: &mut Rng,
    ) -> Result<Option<Timestamp>, SimError> {
        let (k, r) = (self.s.challenges_per_window, self.s.solves_required);
        if let Some(response) = actor.pending.take() {
            let verdict = self
                .oracle
                .verify_response(&response, now)
                .map_err(|e| fail("ledger", e))?;
            match actor.kind {
                Kind::Human => self.counts.human_attempts += 1,
                Kind::Bot => self.counts.bot_attempts += 1,
                Kind::Honest => {}
            }
            let Some(sv) = actor.serving.as_mut() else {
                return Ok(None);
            };
            if verdict.is_ok() {
                sv.ok += 1
            } else {
                sv.failed += 1
            }
            if sv.ok == r || sv.failed > k - r {
                actor.serving = None;
                if actor.kind != Kind::Human {
                    return Ok(None);
                }
            }
            return Ok(Some(now));
        }
        if now >= actor.end {
            return Ok(None);
        }
        if actor.serving.is_none() {
            // A human takes the next pool identity whose slot has not ended.
            while self.queue.get(self.next).is_some_and(|q| q.1 <= now) {
                self.next += 1;
            }
            let Some(&(slot_start, _, key)) = self.queue.get(self.next) else {
                return Ok(None);
            };
            if slot_start > now {
                return Ok((slot_start < actor.end).then_some(slot_start));
            }
            self.next += 1;
            actor.serving = Some(Serving {
                key,
                next_j: 0,
                ok: 0,
                failed: 0,
            });
        }
        let Some(sv) = actor.serving.as_mut() else {
            return Ok(None);
        };
        let key = &self.pop.keys[sv.key];
        let j = sv.next_j;
        sv.next_j += 1;
        let issued = match self
            .oracle
            .issue(&SignedRequest::new(key, self.t, j), now)
            .map_err(|e| fail("ledger", e))?
        {
            Ok(issued) => issued,
            Err(_) => {
                // Outside the slot: this identity is done for the window.
                actor.serving = None;
                return Ok((actor.kind == Kind::Human).then_some(now));
            }
        };
        let c = &issued.challenge.challenge;
        let fam_idx = *self
            .families
            .get(&c.family)
            .ok_or_else(|| fail("unknown family issued", &c.family))?;
        let fam = &self.model.families[fam_idx];
        let (at, correct) = if actor.kind == Kind::Bot {
            (now + 1, rng.bernoulli(fam.eps_auto))
        } else {
            let ms = (fam.sample_time(rng, actor.speed) * 1000.0).ceil() as u64;
            if now + ms > c.deadline {
                (c.deadline + 1, true)
            } else {
                (now + ms, rng.bernoulli(fam.p_correct))
            }
        };
        let solved = self
            .oracle
            .registry()
            .get(&c.family)
            .and_then(|f| f.solve(&issued.prompt))
            .ok_or_else(|| fail("no solver for family", &c.family))?;
        let answer = if correct {
            solved
        } else {
            wrong_answer(&solved)
        };
        actor.pending = Some(Response::new(key, issued.challenge, answer));
        Ok(Some(at))
    }
}
