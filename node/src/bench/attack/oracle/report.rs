//! The oracle bench's options and the figures it prints: sessions and admissions, first tries,
//! the per-window challenges, per window and overall, each rate with its 95 % Wilson interval.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::attack::stats::{Z95, wilson};

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Most learning sessions.
    pub sessions: u64,
    /// Fresh sessions after learning (and as many one-shot control sessions).
    pub admissions: u64,
    /// Per-window challenges after learning, over all windows.
    pub tries: u64,
    /// Windows played, each with its own sets (a fresh node whose current window is the next
    /// of the schedule).
    pub windows: u64,
    /// The bench network's window length.
    pub window: Duration,
    /// A private corpus, else the starter one.
    pub corpus: Option<PathBuf>,
}

/// Sessions and admissions.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Admissions {
    /// Sessions played to their end.
    pub sessions: u64,
    /// Of those, admitted.
    pub admissions: u64,
    /// Lower end of the 95 % Wilson interval of `admissions / sessions`.
    pub wilson_low: f64,
    /// Upper end.
    pub wilson_high: f64,
}

impl Admissions {
    pub(super) fn of(sessions: u64, admissions: u64) -> Self {
        let (wilson_low, wilson_high) = wilson(admissions, sessions, Z95);
        Self {
            sessions,
            admissions,
            wilson_low,
            wilson_high,
        }
    }
}

/// First tries and successes.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Tries {
    /// First tries.
    pub tries: u64,
    /// Of those, accepted.
    pub successes: u64,
    /// Lower end of the 95 % Wilson interval.
    pub wilson_low: f64,
    /// Upper end.
    pub wilson_high: f64,
}

impl Tries {
    pub(super) fn of(tries: u64, successes: u64) -> Self {
        let (wilson_low, wilson_high) = wilson(successes, tries, Z95);
        Self {
            tries,
            successes,
            wilson_low,
            wilson_high,
        }
    }
}

/// The per-window challenges answered with what was learnt, learning from each verdict.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Challenges {
    /// First tries (fresh identities).
    pub tries: u64,
    /// Of those, accepted.
    pub successes: u64,
    /// Lower end of the 95 % Wilson interval.
    pub wilson_low: f64,
    /// Upper end.
    pub wilson_high: f64,
    /// Parts whose question the game had shown (answered from what the game taught).
    pub learnt_parts: u64,
    /// Parts answered.
    pub parts: u64,
    /// Tries whose answers differ from the reader's first choices (what the learning, from the
    /// game or from earlier challenges' verdicts, changed).
    pub changed_by_learning: u64,
    /// Tries the node accepted whose verdict it withheld from the script (`verdict_withheld`
    /// replies; counted in `successes`, read from the node's metrics).
    pub accepted_unseen: u64,
    /// The node's metrics could not be read: `accepted_unseen` is unknown, not zero.
    pub accepted_unseen_unread: bool,
    /// Answers confirmed by the challenges' own verdicts (an accepted try confirms its three).
    pub confirmed_by_verdicts: u64,
    /// The second half of each window's tries (by the order they were started): what the
    /// verdicts of the first half taught.
    pub last_half: Tries,
    /// Failed tries by reason code.
    pub refusals: BTreeMap<String, u64>,
}

/// The report (`{"narrative_chain": {"oracle": …}}`).
#[derive(Debug, Clone, Serialize)]
pub struct OracleReport {
    /// Learning and after-learning sessions (not the control).
    pub sessions: u64,
    /// Of those, admitted.
    pub admissions: u64,
    /// Lower end of the 95 % Wilson interval of `admissions / sessions`.
    pub wilson_low: f64,
    /// Upper end.
    pub wilson_high: f64,
    /// The learning phase alone.
    pub learning: Admissions,
    /// Fresh sessions answered from what was learnt.
    pub after_learning: Admissions,
    /// The control, interleaved with `after_learning`: the reader's first choice, nothing learnt.
    pub one_shot: Admissions,
    /// Per-window challenges answered with what was learnt.
    pub challenges: Challenges,
    /// Questions whose answer an admission (or a per-round signal) confirmed.
    pub learned_answers: u64,
    /// Distinct questions the game showed.
    pub questions_seen: u64,
    /// Candidate answers ruled out for certain.
    pub ruled_out: u64,
    /// Replies that told whether one round's answer was right (sessions a wrong answer ended
    /// early, explicit per-round verdicts): 0 unless the game leaks per round.
    pub per_round_signals: u64,
    /// How the sessions ended (`admitted`, `not_admitted`, an early `answer_mismatch@r`, a
    /// refused start…), by count.
    pub ended: BTreeMap<String, u64>,
    /// Each window's figures.
    pub by_window: Vec<WindowReport>,
    /// `prod, public starter corpus` or `prod, corpus DIR`.
    pub config: String,
    /// `starter` or the corpus directory.
    pub corpus: String,
    /// The bench network's window, in milliseconds.
    pub window_ms: u64,
    /// Windows whose run spilled into the next window (0 unless `--oracle-window` is too short
    /// for the run; the learning only pays within one).
    pub windows_crossed: u64,
    /// Wall time of the run, in milliseconds.
    pub elapsed_ms: u64,
}

/// One window's figures.
#[derive(Debug, Clone, Serialize)]
pub struct WindowReport {
    /// The window (its slice of the set schedule).
    pub window: u64,
    /// The learning phase.
    pub learning: Admissions,
    /// Fresh sessions answered from what was learnt.
    pub after_learning: Admissions,
    /// The one-shot control.
    pub one_shot: Admissions,
    /// Challenges tried and accepted.
    pub challenges: Tries,
    /// Of those, the second half.
    pub challenges_last_half: Tries,
    /// Distinct questions the game showed in this window.
    pub questions_seen: u64,
    /// Of those, confirmed by the end of the window.
    pub learned_answers: u64,
}
