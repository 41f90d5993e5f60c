//! The agent-admission game (aCAPTCHA, §4–§6 of the paper) as a deterministic state machine:
//! a single-use session of three rounds over a narrative set; each round's answer must arrive
//! within the budget τ of effective time (elapsed minus the connection's round-trip time, which
//! the caller measures from the kernel), the whole session within its timeout, and each round's
//! answer goes to an endpoint token revealed only in the previous reply. A late answer or a wrong
//! endpoint ends the session at once; whether the answers were right is said once, after the
//! third round (admitted with a signed [`AdmissionCredential`], or `not_admitted`, never which
//! round was wrong), so a session is one guess at all three answers, not an oracle that checks
//! one answer at a time.
//!
//! A session draws its set from the game's half of the current window's slice of the set
//! schedule ([`WindowSets`]; the per-window `narrative_chain` challenges draw the other half), so
//! the game never shows a set that another window used, nor one of its own window's
//! challenges; past the schedule's end, or with one set per window, it refuses with
//! `corpus_exhausted`.
//!
//! `now` and the RTT are parameters: nothing here reads a clock or a socket.

use std::collections::HashMap;
use std::sync::Mutex;

use ed25519_dalek::SigningKey;
use hco_challenges::narrative::{Corpus, SessionPlan, SetSchedule};
use hco_challenges::{Reject, Seed};
use serde::{Deserialize, Serialize};

use crate::{Admission, AdmissionCredential, Digest, IdentityId, NodeId, Timestamp, sign};

/// Parameters of the game (Table 3 of the paper).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameParams {
    /// Per-round budget τ, in milliseconds of effective time.
    pub round_budget_ms: u64,
    /// Whole-session timeout.
    pub session_timeout_ms: u64,
    /// Sessions kept at once; more are refused until old ones expire.
    pub max_sessions: usize,
    /// Sessions kept at once for one client (see [`AdmissionGame::start_from`]); 0: no limit
    /// beyond `max_sessions`.
    #[serde(default)]
    pub max_sessions_per_client: usize,
    /// Lifetime of an admission credential.
    pub credential_ttl_ms: u64,
}

impl Default for GameParams {
    fn default() -> Self {
        Self {
            round_budget_ms: 15_000,
            session_timeout_ms: 120_000,
            max_sessions: 10_000,
            max_sessions_per_client: 0,
            credential_ttl_ms: 24 * 3600 * 1000,
        }
    }
}

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
        }
    }
}

/// One round as shown to the entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundView {
    /// The session id (hex).
    pub session: Digest,
    /// 1, 2 or 3.
    pub round: usize,
    /// The domain.
    pub domain: String,
    /// The narrative to read.
    pub narrative: String,
    /// The question.
    pub question: String,
    /// The token of the endpoint that takes this round's answer.
    pub token: Digest,
    /// Budget for this round.
    pub budget_ms: u64,
    /// When the session times out.
    pub session_deadline: Timestamp,
}

/// The result of a correct answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The next round.
    Next(RoundView),
    /// The session is complete.
    Admitted(AdmissionCredential),
}

struct Session {
    plan: SessionPlan,
    identity: Option<IdentityId>,
    client: Option<ClientKey>,
    started: Timestamp,
    round: usize,
    round_started: Timestamp,
    token: Digest,
    round_ms: [u64; 3],
    /// Whether some answer so far was wrong (said only at the end).
    wrong: bool,
    closed: bool,
}

/// Which sets the game may draw at a time: the network's set schedule and its windows.
#[derive(Debug, Clone)]
pub struct WindowSets {
    /// The set schedule (the same the `narrative_chain` family follows).
    pub schedule: SetSchedule,
    /// Start of window 0.
    pub genesis_ms: Timestamp,
    /// Window length.
    pub window_ms: u64,
}

impl WindowSets {
    /// The slice of the window holding `now`.
    fn slice_at(&self, now: Timestamp) -> Result<&[String], GameError> {
        let t = now.saturating_sub(self.genesis_ms) / self.window_ms.max(1);
        if now < self.genesis_ms {
            return Err(GameError::CorpusExhausted { t });
        }
        self.schedule
            .game_sets(t)
            .ok_or(GameError::CorpusExhausted { t })
    }
}

/// Who started a session, as the gateway tells clients apart (an address or its prefix).
pub type ClientKey = [u8; 16];

/// The game's state: open sessions, the corpus and the node's key.
pub struct AdmissionGame {
    params: GameParams,
    key: SigningKey,
    secret: [u8; 32],
    corpus: Corpus,
    sets: WindowSets,
    sessions: Mutex<(u64, HashMap<Digest, Session>)>,
}

impl AdmissionGame {
    /// A game run by the node with `key` over `corpus`, drawing sets by `sets`.
    pub fn new(params: GameParams, key: SigningKey, corpus: Corpus, sets: WindowSets) -> Self {
        let secret = blake3::derive_key("hco admission game secret v1", key.as_bytes());
        Self {
            params,
            key,
            secret,
            corpus,
            sets,
            sessions: Mutex::new((0, HashMap::new())),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &GameParams {
        &self.params
    }

    fn keyed(&self, parts: &[&[u8]]) -> Digest {
        let mut h = blake3::Hasher::new_keyed(&self.secret);
        for p in parts {
            h.update(&(p.len() as u64).to_le_bytes()).update(p);
        }
        Digest(*h.finalize().as_bytes())
    }

    fn view(&self, id: &Digest, s: &Session) -> Option<RoundView> {
        let round = self.corpus.round(&s.plan, s.round)?;
        Some(RoundView {
            session: *id,
            round: s.round + 1,
            domain: round.domain.to_owned(),
            narrative: round.narrative.to_owned(),
            question: round.question.question.clone(),
            token: s.token,
            budget_ms: self.params.round_budget_ms,
            session_deadline: s.started + self.params.session_timeout_ms,
        })
    }

    /// Starts a session at `now`; `nonce` is any client-chosen bytes (bounded by the caller).
    pub fn start(
        &self,
        identity: Option<IdentityId>,
        nonce: &[u8],
        now: Timestamp,
    ) -> Result<RoundView, GameError> {
        self.start_from(None, identity, nonce, now)
    }

    /// Starts a session for `client` at `now`: refused with `too_many_sessions` while that
    /// client has `max_sessions_per_client` sessions open, so one client cannot fill the table.
    pub fn start_from(
        &self,
        client: Option<ClientKey>,
        identity: Option<IdentityId>,
        nonce: &[u8],
        now: Timestamp,
    ) -> Result<RoundView, GameError> {
        let mut guard = self.sessions.lock().map_err(|_| GameError::Overloaded)?;
        let (counter, sessions) = &mut *guard;
        let timeout = self.params.session_timeout_ms;
        sessions.retain(|_, s| now <= s.started + timeout && !s.closed);
        let limit = self.params.max_sessions_per_client;
        if let Some(client) = client
            && limit > 0
            && sessions
                .values()
                .filter(|s| s.client == Some(client))
                .count()
                >= limit
        {
            return Err(GameError::TooManySessions { limit });
        }
        if sessions.len() >= self.params.max_sessions {
            return Err(GameError::Overloaded);
        }
        *counter += 1;
        let id = self.keyed(&[
            b"session",
            &now.to_be_bytes(),
            &counter.to_be_bytes(),
            nonce,
        ]);
        let slice = self.sets.slice_at(now)?;
        let plan = self
            .corpus
            .sample_from(&Seed(self.keyed(&[b"plan", &id.0]).0), slice)
            .ok_or(GameError::NoCorpus)?;
        let session = Session {
            plan,
            identity,
            client,
            started: now,
            round: 0,
            round_started: now,
            token: self.keyed(&[b"token", &id.0, &[0]]),
            round_ms: [0; 3],
            wrong: false,
            closed: false,
        };
        let view = self.view(&id, &session).ok_or(GameError::NoCorpus)?;
        sessions.insert(id, session);
        Ok(view)
    }

    /// Takes the answer of the current round at `now`, sent to endpoint `token` over a
    /// connection whose round-trip time is `rtt_ms`.
    pub fn answer(
        &self,
        id: &Digest,
        token: &Digest,
        answer: &[u8],
        rtt_ms: u64,
        now: Timestamp,
    ) -> Result<Step, GameError> {
        let mut guard = self.sessions.lock().map_err(|_| GameError::Overloaded)?;
        let s = guard.1.get_mut(id).ok_or(GameError::UnknownSession)?;
        if s.closed {
            return Err(GameError::SessionClosed);
        }
        if now > s.started + self.params.session_timeout_ms {
            s.closed = true;
            return Err(GameError::SessionExpired);
        }
        if *token != s.token {
            return Err(GameError::WrongEndpoint);
        }
        let effective_ms = now.saturating_sub(s.round_started).saturating_sub(rtt_ms);
        if effective_ms > self.params.round_budget_ms {
            s.closed = true;
            return Err(GameError::RoundExpired {
                round: s.round + 1,
                effective_ms,
                budget_ms: self.params.round_budget_ms,
            });
        }
        let round = self
            .corpus
            .round(&s.plan, s.round)
            .ok_or(GameError::NoCorpus)?;
        // Right or wrong, the session goes on: the verdict is the whole session's.
        s.wrong |= round.check(answer).is_err();
        s.round_ms[s.round] = effective_ms;
        if s.round == 2 {
            s.closed = true;
            if s.wrong {
                return Err(GameError::NotAdmitted);
            }
            let questions = s.plan.questions.map(|q| q as u64);
            let session = sign::digest(
                "hco admission session v1",
                &[
                    &id.0,
                    s.plan.set_id.as_bytes(),
                    &questions[0].to_be_bytes(),
                    &questions[1].to_be_bytes(),
                    &questions[2].to_be_bytes(),
                ],
            );
            let admission = Admission {
                version: crate::VERSION,
                node: NodeId(self.key.verifying_key().to_bytes()),
                identity: s.identity,
                session,
                round_ms: s.round_ms,
                issued_at: now,
                expires_at: now + self.params.credential_ttl_ms,
            };
            return Ok(Step::Admitted(AdmissionCredential::sign(
                &self.key, admission,
            )));
        }
        s.round += 1;
        s.round_started = now;
        s.token = self.keyed(&[b"token", &id.0, &[s.round as u8]]);
        let s = &guard.1[id];
        self.view(id, s).map(Step::Next).ok_or(GameError::NoCorpus)
    }

    /// The accepted answers of the current round (for tests that play with the answer key).
    pub fn answer_key(&self, id: &Digest) -> Option<Vec<String>> {
        let guard = self.sessions.lock().ok()?;
        let s = guard.1.get(id)?;
        let round = self.corpus.round(&s.plan, s.round)?;
        Some(
            round
                .question
                .variants()
                .into_iter()
                .map(str::to_owned)
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests;
