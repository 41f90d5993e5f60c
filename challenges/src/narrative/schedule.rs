//! The set schedule: which narrative sets each window may use, drawn without replacement.
//!
//! Answers leak once a set has been shown, so a set must serve one window only. The schedule
//! orders the corpus's non-retired sets by a hash keyed with the corpus Merkle root (an order
//! nobody without the corpus can predict, and every member holding the same corpus derives
//! alike), then hands window `t` the slice of `sets_per_window` sets at position
//! `(t - start_window) * sets_per_window`. Slices of different windows are disjoint; a window
//! before `start_window` or past the last full slice has no sets ([`SetSchedule::slice`] is
//! `None`), and issuing from it fails rather than reuse a set.
//!
//! `reuse` wraps the schedule round instead of ending it. It is meant only for the public
//! starter corpus, whose answers anyone can look up anyway; a node refuses it on a private
//! corpus.
//!
//! A window's slice is split in two: the first half (rounded up) for its per-window challenges
//! ([`SetSchedule::challenge_sets`]), the rest for the agent-admission game
//! ([`SetSchedule::game_sets`]), so what a game session shows never answers a challenge.
//!
//! Capacity: a corpus of `n` usable sets lasts `n / sets_per_window` windows from
//! `start_window` ([`SetSchedule::windows`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Corpus, RetiredSets};

/// Most sets one window may take.
pub const MAX_SETS_PER_WINDOW: u32 = 4096;

/// The network parameters of the schedule (every committee member must hold the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct ScheduleParams {
    /// The first window that draws sets (window numbers count from genesis).
    pub start_window: u64,
    /// Sets each window takes: the first half (rounded up) for its challenges, each drawing one
    /// of them, so more sets split the people who could share answers within one window, the
    /// rest for the admission game (at least 2 when the game runs), at the cost of a
    /// faster-spent corpus.
    pub sets_per_window: u32,
    /// Start over from the first slice once the schedule ends, instead of issuing nothing
    /// (development on the public starter corpus only).
    pub reuse: bool,
}

impl Default for ScheduleParams {
    fn default() -> Self {
        Self {
            start_window: 0,
            sets_per_window: 2,
            reuse: false,
        }
    }
}

impl ScheduleParams {
    /// Checks the ranges.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_SETS_PER_WINDOW).contains(&self.sets_per_window) {
            return Err(format!(
                "sets_per_window {} is outside 1..={MAX_SETS_PER_WINDOW}",
                self.sets_per_window
            ));
        }
        Ok(())
    }
}

/// A set that the schedule would show again after it was used in an earlier window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reused {
    /// The set id.
    pub set: String,
    /// The window that first used it.
    pub used_in: u64,
    /// The window the schedule now gives it to.
    pub scheduled_for: u64,
}

/// The non-retired sets of a corpus in schedule order, and the parameters slicing them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetSchedule {
    order: Vec<String>,
    params: ScheduleParams,
}

impl SetSchedule {
    /// The schedule of `corpus` without the `retired` sets.
    pub fn new(corpus: &Corpus, retired: &RetiredSets, params: ScheduleParams) -> Self {
        let root = corpus.merkle_root();
        let mut keyed: Vec<([u8; 32], &str)> = corpus
            .active_sets(retired)
            .map(|s| {
                let mut h = blake3::Hasher::new_keyed(&root);
                h.update(b"hco narrative schedule v1")
                    .update(s.id.as_bytes());
                (*h.finalize().as_bytes(), s.id.as_str())
            })
            .collect();
        keyed.sort_unstable();
        Self {
            order: keyed.into_iter().map(|(_, id)| id.to_owned()).collect(),
            params,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &ScheduleParams {
        &self.params
    }

    fn per_window(&self) -> u64 {
        u64::from(self.params.sets_per_window.max(1))
    }

    /// How many windows the schedule serves with fresh sets (full slices only).
    pub fn windows(&self) -> u64 {
        self.order.len() as u64 / self.per_window()
    }

    /// The first window with no fresh set (`start_window + windows`).
    pub fn end_window(&self) -> u64 {
        self.params.start_window.saturating_add(self.windows())
    }

    /// The sets window `t` may use; `None` before `start_window`, or past the end without
    /// `reuse`, or when the corpus cannot fill one slice.
    pub fn slice(&self, t: u64) -> Option<&[String]> {
        let i = t.checked_sub(self.params.start_window)?;
        let cycle = self.windows();
        if cycle == 0 {
            return None;
        }
        let i = match (i < cycle, self.params.reuse) {
            (true, _) => i,
            (false, true) => i % cycle,
            (false, false) => return None,
        };
        let n = self.per_window();
        let from = usize::try_from(i * n).ok()?;
        self.order.get(from..from + n as usize)
    }

    /// The sets of window `t` that its per-window `narrative_chain` challenges draw: the first
    /// half of its slice (rounded up). See [`SetSchedule::game_sets`].
    pub fn challenge_sets(&self, t: u64) -> Option<&[String]> {
        let slice = self.slice(t)?;
        Some(&slice[..slice.len().div_ceil(2)])
    }

    /// The sets of window `t` that the agent-admission game draws: the rest of its slice, so a
    /// set shown in a game session is never one of that window's challenges (and the reverse),
    /// and answers learnt in one do not open the other. `None` with one set per window: the
    /// game needs `sets_per_window` of at least 2.
    pub fn game_sets(&self, t: u64) -> Option<&[String]> {
        let slice = self.slice(t)?;
        let game = &slice[slice.len().div_ceil(2)..];
        (!game.is_empty()).then_some(game)
    }

    /// Windows from `t` on (counting `t`) that still have fresh sets; `None` when `reuse`
    /// makes the schedule endless.
    pub fn windows_left(&self, t: u64) -> Option<u64> {
        if self.params.reuse && self.windows() > 0 {
            return None;
        }
        let from = t.max(self.params.start_window);
        Some(self.end_window().saturating_sub(from))
    }

    /// The window a set is scheduled for, in the first pass of the schedule.
    pub fn window_of(&self, id: &str) -> Option<u64> {
        let position = self.order.iter().position(|s| s == id)? as u64;
        let i = position / self.per_window();
        (i < self.windows()).then(|| self.params.start_window + i)
    }

    /// The sets of `used` (set id → window that first used it) that this schedule would give
    /// to window `now` or later, other than the window that used them: what a shrunk, edited
    /// or reordered corpus, or a `start_window` moved back, would show twice. Empty with
    /// `reuse`.
    pub fn reused(&self, used: &BTreeMap<String, u64>, now: u64) -> Vec<Reused> {
        if self.params.reuse {
            return Vec::new();
        }
        let position: BTreeMap<&str, u64> = self
            .order
            .iter()
            .enumerate()
            .map(|(p, id)| (id.as_str(), p as u64 / self.per_window()))
            .collect();
        used.iter()
            .filter_map(|(set, &used_in)| {
                let i = *position.get(set.as_str())?;
                let scheduled_for = self.params.start_window.checked_add(i)?;
                (i < self.windows() && scheduled_for >= now && scheduled_for != used_in).then(
                    || Reused {
                        set: set.clone(),
                        used_in,
                        scheduled_for,
                    },
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
