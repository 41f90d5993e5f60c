//! The beat witnesses this member holds and the rules touch prompts follow with them (see
//! [`crate::witness`]): which witness an issued prompt carries, what a receiver checks of it,
//! and how late a prompt acceptance may reach this member.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::Mutex;

use crate::ledger::LedgerError;
use crate::witness::SlotWitness;
use crate::{Challenge, IdentityId, NodeId, Reason, SlotMode, Timestamp};

use super::{Oracle, Outcome};

/// One window's witnesses by beat and member.
type Window = BTreeMap<(Timestamp, NodeId), SlotWitness>;

/// Witnesses by window; only the latest windows are kept.
#[derive(Debug, Default)]
pub(super) struct Held(Mutex<BTreeMap<u64, Window>>);

/// Windows of witnesses kept: the current one and the one before (whose prompts may still be
/// re-fetched while it is in grace).
const KEEP_WINDOWS: u64 = 2;

impl Held {
    /// Holds `w`; whether it was new.
    fn insert(&self, w: SlotWitness) -> Result<bool, LedgerError> {
        let mut held = self.0.lock().map_err(|_| LedgerError::Poisoned)?;
        let fresh = held
            .entry(w.t)
            .or_default()
            .insert((w.at, w.node), w)
            .is_none();
        while held.len() as u64 > KEEP_WINDOWS {
            held.pop_first();
        }
        Ok(fresh)
    }

    /// The witness of beat `at` of window `t` by `node`, if held.
    fn get(
        &self,
        t: u64,
        at: Timestamp,
        node: &NodeId,
    ) -> Result<Option<SlotWitness>, LedgerError> {
        let held = self.0.lock().map_err(|_| LedgerError::Poisoned)?;
        Ok(held.get(&t).and_then(|w| w.get(&(at, *node))).copied())
    }

    /// The first witness of beat `at` of window `t` in `order` that is held.
    fn first_of(
        &self,
        t: u64,
        at: Timestamp,
        order: &[NodeId],
    ) -> Result<Option<SlotWitness>, LedgerError> {
        let held = self.0.lock().map_err(|_| LedgerError::Poisoned)?;
        let Some(window) = held.get(&t) else {
            return Ok(None);
        };
        Ok(order.iter().find_map(|n| window.get(&(at, *n)).copied()))
    }
}

impl Oracle {
    /// Whether challenges of `family` carry a beat witness: touch prompts of a `global` slot.
    pub fn needs_witness(&self, family: &str) -> bool {
        self.params.slot_mode == SlotMode::Global && self.params.is_prompt(family, &self.registry)
    }

    /// The global slot of window `t` (the same for every identity).
    fn global_slot(&self, t: u64) -> Result<Range<Timestamp>, LedgerError> {
        self.slot(t, &IdentityId([0; 32]))
    }

    /// This member's witnesses of the current window's beats that have begun by this node's
    /// clock, each while a prompt on its beat may still be issued (until the prompt's latest
    /// deadline and a relay round); the node gossips each when it falls due (and again, for
    /// members that start late). Empty in other slot modes and before the first beat.
    pub fn witnesses_due(&self, now: Timestamp) -> Result<Vec<SlotWitness>, LedgerError> {
        let Some((t, beats)) = self.beats_at(now)? else {
            return Ok(Vec::new());
        };
        let longest = self
            .params
            .families
            .iter()
            .filter(|f| self.params.is_prompt(&f.name, &self.registry))
            .map(|f| f.deadline_ms)
            .max()
            .unwrap_or(0);
        let useful = self.params.prompt_jitter_ms + longest + self.params.relay_round_ms;
        let mut due = Vec::new();
        for at in beats
            .into_iter()
            .filter(|at| *at <= now && now <= at.saturating_add(useful))
        {
            let own = match self.witnesses.get(t, at, &self.node)? {
                Some(held) => held,
                None => {
                    let own = SlotWitness::new(&self.key, t, at);
                    self.witnesses.insert(own)?;
                    own
                }
            };
            due.push(own);
        }
        Ok(due)
    }

    /// The start of the current window's next beat after `now` (by this node's clock), when
    /// its witness falls due; `None` in other slot modes or after the window's last beat.
    pub fn next_beat_after(&self, now: Timestamp) -> Result<Option<Timestamp>, LedgerError> {
        let beats = self
            .beats_at(now)?
            .map(|(_, beats)| beats)
            .unwrap_or_default();
        Ok(beats.into_iter().filter(|at| *at > now).min())
    }

    /// The window at `now` and the starts of its global slot's beats; `None` in other slot
    /// modes and before genesis.
    fn beats_at(&self, now: Timestamp) -> Result<Option<(u64, BTreeSet<Timestamp>)>, LedgerError> {
        if self.params.slot_mode != SlotMode::Global {
            return Ok(None);
        }
        let Ok(t) = self.params.window_at(now) else {
            return Ok(None);
        };
        let beats = self
            .params
            .beat_starts(&self.global_slot(t)?, &self.registry);
        Ok(Some((t, beats)))
    }

    /// Records another member's witness (gossip): a committee member's, signed, of a window
    /// within the clock skew of `now` and one of its slot's beats, and not from before that
    /// beat could have begun (an honest member publishes at the beat, by a clock at most the
    /// skew ahead of this one). Returns whether it was new.
    pub fn record_witness(&self, w: &SlotWitness, now: Timestamp) -> Outcome<bool> {
        if self.params.slot_mode != SlotMode::Global {
            return Ok(Err(Reason::BadWitness(
                "this network's slots are not global".into(),
            )));
        }
        if !self.params.committee.contains(&w.node) {
            return Ok(Err(Reason::NotInCommittee(w.node)));
        }
        if let Err(reason) = w.check_signature() {
            return Ok(Err(reason));
        }
        let skew = self.params.max_clock_skew_ms;
        let earliest = self.params.window_at(now.saturating_sub(skew)).unwrap_or(0);
        let latest = self.params.window_at(now.saturating_add(skew));
        if latest.is_err() || w.t < earliest.saturating_sub(1) || w.t > latest.unwrap_or(0) {
            return Ok(Err(Reason::WrongWindow {
                t: w.t,
                current: self.params.window_at(now).unwrap_or(0),
            }));
        }
        let beats = self
            .params
            .beat_starts(&self.global_slot(w.t)?, &self.registry);
        if !beats.contains(&w.at) {
            return Ok(Err(Reason::BadWitness(format!(
                "{} is no beat of window {}'s slot",
                w.at, w.t
            ))));
        }
        if now.saturating_add(skew) < w.at {
            return Ok(Err(Reason::BadWitness(format!(
                "published at {now}, before its beat began ({})",
                w.at
            ))));
        }
        Ok(Ok(self.witnesses.insert(*w)?))
    }

    /// The witness a touch prompt on beat `at` of window `t` carries: the only member's own in
    /// a committee of one, else the first other member's of that beat held here, in committee
    /// order.
    pub(super) fn pick_witness(&self, t: u64, at: Timestamp) -> Outcome<SlotWitness> {
        let others: Vec<NodeId> = if self.params.committee.len() <= 1 {
            vec![self.node]
        } else {
            let mine = self.params.committee.iter().position(|n| *n == self.node);
            // Starting after this member, so the committee's prompts spread over witnesses.
            let start = mine.map_or(0, |i| i + 1);
            let n = self.params.committee.len();
            (0..n)
                .map(|k| self.params.committee[(start + k) % n])
                .filter(|m| *m != self.node)
                .collect()
        };
        if others == [self.node] {
            let own = SlotWitness::new(&self.key, t, at);
            self.witnesses.insert(own)?;
            return Ok(Ok(own));
        }
        Ok(self
            .witnesses
            .first_of(t, at, &others)?
            .ok_or(Reason::NoSlotWitness))
    }

    /// Checks a challenge's witness: present exactly when its family needs one; of the
    /// challenge's window and of the beat it was issued on (`beat_start`); a committee
    /// member's other than the issuer (the issuer's own in a committee of one); signed by it.
    pub(super) fn check_witness(&self, c: &Challenge, beat_start: Timestamp) -> Result<(), Reason> {
        match (&c.witness, self.needs_witness(&c.family)) {
            (None, false) => Ok(()),
            (Some(_), false) => Err(Reason::BadWitness(format!(
                "a `{}` challenge carries none here",
                c.family
            ))),
            (None, true) => Err(Reason::BadWitness("a touch prompt needs one".into())),
            (Some(w), true) => {
                if w.t != c.t {
                    return Err(Reason::BadWitness(format!(
                        "of window {}, not the challenge's {}",
                        w.t, c.t
                    )));
                }
                if w.at != beat_start {
                    return Err(Reason::BadWitness(format!(
                        "of the beat at {}, not the prompt's at {beat_start}",
                        w.at
                    )));
                }
                if !self.params.committee.contains(&w.node) {
                    return Err(Reason::BadWitness("not a committee member's".into()));
                }
                if w.node == c.issuer && self.params.committee.len() > 1 {
                    return Err(Reason::BadWitness(
                        "the issuer's own: it must be another member's".into(),
                    ));
                }
                w.check_signature()
            }
        }
    }

    /// The arrival deadline, for one signer, of another member's acceptance of `c`: for a
    /// touch prompt, its deadline plus one relay round (an honest issuer accepts nothing after
    /// the deadline, and its gossip reaches every honest member within the round, clock
    /// differences included); for any other,
    /// [`crate::NetworkParams::acceptance_base_deadline`].
    pub(super) fn arrival_base(&self, c: &Challenge) -> Timestamp {
        if !self.needs_witness(&c.family) {
            return self.params.acceptance_base_deadline(c.t);
        }
        c.deadline.saturating_add(self.params.relay_round_ms)
    }
}
