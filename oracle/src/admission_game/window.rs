//! What the game keeps per window: which sets it may draw (the game's half of the window's
//! slice of the set schedule), how many sessions each identity started, which questions open
//! sessions are showing, and which questions a failed session saw. A question is shown to one
//! open session at a time, and a question shown to a session that was not admitted is never
//! shown again in that window: the all-or-nothing verdict is never a second look at the same
//! question, in sequence or in parallel; each question is met once, unseen, as in a one-shot
//! reading. What an admitted session saw is shown again. A member draws only from its own
//! share of the questions ([`Share`]), so across the committee too a question meets one failed
//! session a window.

use std::collections::{HashMap, HashSet};

use hco_challenges::Seed;
use hco_challenges::narrative::{Corpus, SessionPlan, SetSchedule};

use super::GameError;
use super::share::Share;
use crate::{IdentityId, Timestamp};

/// Which sets the game may draw at a time: the network's set schedule and its windows.
#[derive(Debug, Clone)]
pub struct WindowSets {
    /// The set schedule (the same the `narrative_chain` family follows).
    pub schedule: SetSchedule,
    /// Start of window 0.
    pub genesis_ms: Timestamp,
    /// Window length.
    pub window_ms: u64,
    /// This member's share of the game sets' questions.
    pub share: Share,
}

impl WindowSets {
    /// The window holding `now` (0 before genesis).
    pub fn window_at(&self, now: Timestamp) -> u64 {
        now.saturating_sub(self.genesis_ms) / self.window_ms.max(1)
    }

    /// The game's sets of the window holding `now`.
    pub(super) fn slice_at(&self, now: Timestamp) -> Result<&[String], GameError> {
        let t = self.window_at(now);
        if now < self.genesis_ms {
            return Err(GameError::CorpusExhausted { t });
        }
        self.schedule
            .game_sets(t)
            .ok_or(GameError::CorpusExhausted { t })
    }
}

/// A question of a set: (set id, part, question index).
type Question = (String, usize, usize);

/// The current window's counts and retired questions; reset when the window changes.
#[derive(Debug, Default)]
pub(super) struct WindowLedger {
    t: u64,
    started: HashMap<IdentityId, u32>,
    retired: HashSet<Question>,
    busy: HashSet<Question>,
}

/// Why no session could be drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NoQuestion {
    /// Every question of some part is retired in every set: none until the next window.
    Spent,
    /// Some are only shown to open sessions now: retry when they end.
    Busy,
    /// This member's share misses some part of every set: it serves no session this window.
    NotHere,
}

fn questions(plan: &SessionPlan) -> impl Iterator<Item = Question> + '_ {
    plan.questions
        .iter()
        .enumerate()
        .map(|(part, &q)| (plan.set_id.clone(), part, q))
}

impl WindowLedger {
    /// Moves to window `t`, forgetting an earlier window's counts and retirements (its sets are
    /// never drawn again).
    pub(super) fn enter(&mut self, t: u64) {
        if t != self.t {
            *self = WindowLedger {
                t,
                ..WindowLedger::default()
            };
        }
    }

    /// Counts a start of `identity`; refused past `limit` starts this window (0: no limit).
    pub(super) fn count_start(
        &mut self,
        identity: IdentityId,
        limit: u32,
    ) -> Result<(), GameError> {
        let n = self.started.entry(identity).or_default();
        if limit > 0 && *n >= limit {
            return Err(GameError::IdentityLimit { limit });
        }
        *n += 1;
        Ok(())
    }

    /// Takes back a start that did not open a session.
    pub(super) fn uncount_start(&mut self, identity: &IdentityId) {
        if let Some(n) = self.started.get_mut(identity) {
            *n = n.saturating_sub(1);
        }
    }

    /// Ends a session that showed `plan`: its questions are free again when it was admitted,
    /// else retired for the rest of the window.
    pub(super) fn end(&mut self, plan: &SessionPlan, admitted: bool) {
        for q in questions(plan) {
            self.busy.remove(&q);
            if !admitted {
                self.retired.insert(q);
            }
        }
    }

    /// How many questions are retired in this window.
    pub(super) fn retired(&self) -> usize {
        self.retired.len()
    }

    /// Draws a plan from `ids` by `seed` among this member's questions neither retired nor
    /// shown now: a set with such a question in every part, then one per part. The plan's
    /// questions are busy until [`WindowLedger::end`].
    pub(super) fn draw(
        &mut self,
        corpus: &Corpus,
        seed: &Seed,
        ids: &[String],
        share: &Share,
    ) -> Result<SessionPlan, NoQuestion> {
        let open_now = |q: &Question| !self.retired.contains(q) && !self.busy.contains(q);
        if let Some(plan) = sample(corpus, seed, ids, share, open_now) {
            self.busy.extend(questions(&plan));
            return Ok(plan);
        }
        // Why not: would one come once the open sessions end, or in another window?
        if sample(corpus, seed, ids, share, |q| !self.retired.contains(q)).is_some() {
            Err(NoQuestion::Busy)
        } else if sample(corpus, seed, ids, share, |_| true).is_some() {
            Err(NoQuestion::Spent)
        } else {
            Err(NoQuestion::NotHere)
        }
    }
}

/// Whether `share` holds a question of every part of some set of `ids`.
pub(super) fn serves(corpus: &Corpus, ids: &[String], share: &Share) -> bool {
    sample(corpus, &Seed([0; 32]), ids, share, |_| true).is_some()
}

/// A plan from `ids` by `seed` among the questions of `share` that are `open`.
fn sample(
    corpus: &Corpus,
    seed: &Seed,
    ids: &[String],
    share: &Share,
    open: impl Fn(&Question) -> bool,
) -> Option<SessionPlan> {
    let open = |q: &Question| share.holds(&q.0, q.1, q.2) && open(q);
    let candidates: Vec<(&String, [Vec<usize>; 3])> = ids
        .iter()
        .filter_map(|id| {
            let set = corpus.get(id)?;
            let mut open_per_part: [Vec<usize>; 3] = Default::default();
            for (part, open_qs) in open_per_part.iter_mut().enumerate() {
                let n = set.parts.get(part)?.questions.len();
                *open_qs = (0..n).filter(|&q| open(&(id.clone(), part, q))).collect();
                if open_qs.is_empty() {
                    return None;
                }
            }
            Some((id, open_per_part))
        })
        .collect();
    let mut s = seed.derive("narrative session").stream();
    let (id, open_per_part) = candidates.get(s.below(candidates.len().max(1) as u64) as usize)?;
    let mut questions = [0usize; 3];
    for (q, open_qs) in questions.iter_mut().zip(open_per_part) {
        *q = open_qs[s.below(open_qs.len() as u64) as usize];
    }
    Some(SessionPlan {
        set_id: (*id).clone(),
        questions,
    })
}
