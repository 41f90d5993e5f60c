//! Why a session step was refused: the game's stable codes.

use hco_challenges::Reject;

/// Why a session step was refused. Codes are stable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GameError {
    /// No such session (never issued, or forgotten after expiry).
    #[error("unknown session; start a new one")]
    UnknownSession,
    /// The session is past its timeout.
    #[error("the session timed out")]
    SessionExpired,
    /// The session already ended (completed or failed): sessions are single-use.
    #[error("the session has ended; start a new one")]
    SessionClosed,
    /// Not the endpoint of the current round: a skipped, replayed or guessed endpoint.
    #[error("this is not the endpoint of the current round")]
    WrongEndpoint,
    /// The answer came after the round's budget (effective time).
    #[error(
        "round {round} answered after {effective_ms} ms of effective time (budget {budget_ms} ms)"
    )]
    RoundExpired {
        /// The round (1–3).
        round: usize,
        /// Effective time taken.
        effective_ms: u64,
        /// The budget.
        budget_ms: u64,
    },
    /// The answer was wrong or malformed.
    #[error("{0}")]
    Answer(Reject),
    /// The session's three rounds are done and not every answer was right (which were is not
    /// said).
    #[error("not admitted: not every answer of the session was right; start a new session")]
    NotAdmitted,
    /// Too many open sessions.
    #[error("too many sessions in progress; retry shortly")]
    Overloaded,
    /// This client already has as many open sessions as it may.
    #[error("this client already has {limit} sessions open; finish one or wait for it to expire")]
    TooManySessions {
        /// Sessions one client may keep open.
        limit: usize,
    },
    /// No narrative set is available (all retired).
    #[error("no narrative set is available")]
    NoCorpus,
    /// The start was signed for another window than the current one.
    #[error("the session start names window {named}; the current window is {current}")]
    WrongWindow {
        /// The window the start names.
        named: u64,
        /// The current window.
        current: u64,
    },
    /// The start's signature does not verify under the identity it names.
    #[error("the identity's signature over the session start does not verify")]
    BadStartSignature,
    /// The identity has started as many sessions this window as it may.
    #[error(
        "this identity has started {limit} sessions in this window; the next window allows more"
    )]
    IdentityLimit {
        /// Sessions one identity may start per window.
        limit: u32,
    },
    /// Every question of the window's game sets was shown to a session that was not admitted:
    /// no unseen question is left until the next window.
    #[error(
        "every question of window {t}'s game sets was shown to a session that failed; retry in the next window"
    )]
    SetsSpent {
        /// The current window.
        t: u64,
    },
    /// This member's share of the window's game questions misses a whole part: it serves no
    /// session this window ([`super::Share`]).
    #[error(
        "this member's share of the window's game questions (one of {members} members) makes no session; start the session at another member"
    )]
    NotHere {
        /// The committee's size.
        members: u32,
    },
    /// Every unretired question of the window's game sets is shown to an open session now.
    #[error("every question this window has left is in a session now; retry shortly")]
    Busy,
    /// The set schedule gives the current window no set (it has run out, or not begun).
    #[error("no fresh narrative set is scheduled for window {t}; retry in a later window")]
    CorpusExhausted {
        /// The current window.
        t: u64,
    },
}

impl GameError {
    /// The game's own codes (an answer's rejection carries the family's code).
    pub const CODES: &'static [&'static str] = &[
        "unknown_session",
        "session_expired",
        "session_closed",
        "wrong_endpoint",
        "round_expired",
        "not_admitted",
        "overloaded",
        "no_corpus",
        "corpus_exhausted",
        "too_many_sessions",
        "wrong_window",
        "bad_identity_signature",
        "identity_session_limit",
        "game_sets_spent",
        "game_busy",
        "game_not_here",
    ];

    /// The stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            GameError::UnknownSession => "unknown_session",
            GameError::SessionExpired => "session_expired",
            GameError::SessionClosed => "session_closed",
            GameError::WrongEndpoint => "wrong_endpoint",
            GameError::RoundExpired { .. } => "round_expired",
            GameError::Answer(r) => r.code(),
            GameError::NotAdmitted => "not_admitted",
            GameError::Overloaded => "overloaded",
            GameError::TooManySessions { .. } => "too_many_sessions",
            GameError::NoCorpus => "no_corpus",
            GameError::CorpusExhausted { .. } => "corpus_exhausted",
            GameError::WrongWindow { .. } => "wrong_window",
            GameError::BadStartSignature => "bad_identity_signature",
            GameError::IdentityLimit { .. } => "identity_session_limit",
            GameError::SetsSpent { .. } => "game_sets_spent",
            GameError::Busy => "game_busy",
            GameError::NotHere { .. } => "game_not_here",
        }
    }
}
