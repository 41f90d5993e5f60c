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
//! A session is bound to a registered agent identity: the identity signs its start
//! ([`SessionStart`], for this node and the current window; the caller checks the registration)
//! and may start `max_sessions_per_identity` sessions a window. It draws its set from the game's
//! half of the current window's slice of the set schedule ([`WindowSets`]; the per-window
//! `narrative_chain` challenges draw the other half), so the game never shows a set that another
//! window used, nor one of its own window's challenges; past the schedule's end, or with one set
//! per window, it refuses with `corpus_exhausted`. A question shown to a session that is not
//! admitted (wrong, late, timed out or abandoned) is retired for the rest of the window, and a
//! question is shown to one open session at a time ([`window`]), so no number of sessions or
//! identities, in sequence or in parallel, looks twice at one question — at one member or
//! across the committee: each member shows only its own share of the questions
//! ([`share`]). The price: the game
//! serves at once as many sessions as its window's sets have questions per part
//! (`game_busy` beyond), and sessions that fail on purpose spend a window's questions
//! (`game_sets_spent`) — a denial of the game, not of admission, paid in registered agent
//! identities and bounded to one window.
//!
//! `now` and the RTT are parameters: nothing here reads a clock or a socket.

#[cfg(test)]
mod committee_tests;
mod error;
pub mod share;
pub mod window;

use std::collections::HashMap;
use std::sync::Mutex;

use ed25519_dalek::SigningKey;
use hco_challenges::Seed;
use hco_challenges::narrative::{Corpus, SessionPlan};
use serde::{Deserialize, Serialize};

pub use self::error::GameError;
pub use self::share::Share;
pub use self::window::WindowSets;
use self::window::{NoQuestion, WindowLedger};
use crate::{Admission, AdmissionCredential, Digest, NodeId, SessionStart, Timestamp, sign};

/// Parameters of the game (Table 3 of the paper).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameParams {
    /// Per-round budget τ, in milliseconds of effective time.
    pub round_budget_ms: u64,
    /// Whole-session timeout.
    pub session_timeout_ms: u64,
    /// Sessions kept at once; more are refused until old ones expire.
    pub max_sessions: usize,
    /// Sessions kept at once for one client (see [`AdmissionGame::start`]); 0: no limit
    /// beyond `max_sessions`.
    #[serde(default)]
    pub max_sessions_per_client: usize,
    /// Sessions one agent identity may start per window; 0: no limit.
    #[serde(default = "default_per_identity")]
    pub max_sessions_per_identity: u32,
    /// Lifetime of an admission credential.
    pub credential_ttl_ms: u64,
}

fn default_per_identity() -> u32 {
    2
}

impl Default for GameParams {
    fn default() -> Self {
        Self {
            round_budget_ms: 15_000,
            session_timeout_ms: 120_000,
            max_sessions: 10_000,
            max_sessions_per_client: 0,
            max_sessions_per_identity: default_per_identity(),
            credential_ttl_ms: 24 * 3600 * 1000,
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
    start: SessionStart,
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

/// How long past its budget a round stays open (no answer sent then can be on time, unless
/// the connection's round-trip time exceeds this): after it, a start sweeps the session away.
const RTT_ALLOWANCE_MS: u64 = 10_000;

/// Who started a session, as the gateway tells clients apart (an address or its prefix).
pub type ClientKey = [u8; 16];

/// The game's state: open sessions, the corpus and the node's key.
pub struct AdmissionGame {
    params: GameParams,
    key: SigningKey,
    secret: [u8; 32],
    corpus: Corpus,
    sets: WindowSets,
    state: Mutex<State>,
}

/// Open sessions and the current window's ledger.
#[derive(Default)]
struct State {
    counter: u64,
    sessions: HashMap<Digest, Session>,
    window: WindowLedger,
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
            state: Mutex::new(State::default()),
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

    /// The node id sessions are started at (what [`SessionStart`]s are signed for).
    pub fn node(&self) -> NodeId {
        NodeId(self.key.verifying_key().to_bytes())
    }

    /// The window holding `now`.
    pub fn window_at(&self, now: Timestamp) -> u64 {
        self.sets.window_at(now)
    }

    /// Whether this member's share of the game questions of the window holding `now` makes a
    /// session at all (before any is retired): `false` means every start in that window is
    /// refused `game_not_here` ([`Share`]); an error when the window has no game sets.
    pub fn share_serves(&self, now: Timestamp) -> Result<bool, GameError> {
        let slice = self.sets.slice_at(now)?;
        Ok(window::serves(&self.corpus, slice, &self.sets.share))
    }

    /// Questions retired in the current window (shown to sessions that were not admitted).
    pub fn retired_questions(&self) -> usize {
        self.state.lock().map(|s| s.window.retired()).unwrap_or(0)
    }

    /// Starts a session for the identity that signed `start`, from `client`, at `now`. The
    /// caller has checked that the identity is registered as an agent. Refused with
    /// `too_many_sessions` while `client` has `max_sessions_per_client` sessions open, and with
    /// `identity_session_limit` once the identity has started `max_sessions_per_identity` this
    /// window.
    pub fn start(
        &self,
        client: Option<ClientKey>,
        start: &SessionStart,
        now: Timestamp,
    ) -> Result<RoundView, GameError> {
        let current = self.sets.window_at(now);
        if start.window != current {
            return Err(GameError::WrongWindow {
                named: start.window,
                current,
            });
        }
        if !start.verify(&self.node()) {
            return Err(GameError::BadStartSignature);
        }
        let mut guard = self.state.lock().map_err(|_| GameError::Overloaded)?;
        let state = &mut *guard;
        state.window.enter(current);
        let timeout = self.params.session_timeout_ms;
        let round_open = self.params.round_budget_ms + RTT_ALLOWANCE_MS;
        let window = &mut state.window;
        state.sessions.retain(|_, s| {
            let open =
                now <= s.started + timeout && now <= s.round_started + round_open && !s.closed;
            if !open && !s.closed {
                // Abandoned: it saw its questions and was never admitted.
                window.end(&s.plan, false);
            }
            open
        });
        let limit = self.params.max_sessions_per_client;
        if let Some(client) = client
            && limit > 0
            && state
                .sessions
                .values()
                .filter(|s| s.client == Some(client))
                .count()
                >= limit
        {
            return Err(GameError::TooManySessions { limit });
        }
        if state.sessions.len() >= self.params.max_sessions {
            return Err(GameError::Overloaded);
        }
        let slice = self.sets.slice_at(now)?;
        state
            .window
            .count_start(start.identity, self.params.max_sessions_per_identity)?;
        state.counter += 1;
        let id = self.keyed(&[
            b"session",
            &now.to_be_bytes(),
            &state.counter.to_be_bytes(),
            &start.identity.0,
            &start.nonce.0,
        ]);
        let seed = Seed(self.keyed(&[b"plan", &id.0]).0);
        let plan = match state
            .window
            .draw(&self.corpus, &seed, slice, &self.sets.share)
        {
            Ok(plan) => plan,
            Err(none) => {
                state.window.uncount_start(&start.identity);
                return Err(match none {
                    NoQuestion::Spent => GameError::SetsSpent { t: current },
                    NoQuestion::Busy => GameError::Busy,
                    NoQuestion::NotHere => GameError::NotHere {
                        members: self.sets.share.members,
                    },
                });
            }
        };
        let session = Session {
            plan,
            start: start.clone(),
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
        state.sessions.insert(id, session);
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
        let mut guard = self.state.lock().map_err(|_| GameError::Overloaded)?;
        let state = &mut *guard;
        let s = state
            .sessions
            .get_mut(id)
            .ok_or(GameError::UnknownSession)?;
        if s.closed {
            return Err(GameError::SessionClosed);
        }
        let step = self.step(id, s, token, answer, rtt_ms, now);
        if s.closed {
            // Admitted, its questions are free again; else never shown again this window.
            state.window.end(&s.plan, step.is_ok());
        }
        step
    }

    /// One answer of open session `s`.
    fn step(
        &self,
        id: &Digest,
        s: &mut Session,
        token: &Digest,
        answer: &[u8],
        rtt_ms: u64,
        now: Timestamp,
    ) -> Result<Step, GameError> {
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
            return Ok(Step::Admitted(self.credential(id, s, now)));
        }
        s.round += 1;
        s.round_started = now;
        s.token = self.keyed(&[b"token", &id.0, &[s.round as u8]]);
        self.view(id, s).map(Step::Next).ok_or(GameError::NoCorpus)
    }

    /// The credential of admitted session `s`.
    fn credential(&self, id: &Digest, s: &Session, now: Timestamp) -> AdmissionCredential {
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
            node: self.node(),
            identity: s.start.identity,
            window: s.start.window,
            nonce: s.start.nonce,
            start_sig: s.start.sig,
            session,
            round_ms: s.round_ms,
            issued_at: now,
            expires_at: now + self.params.credential_ttl_ms,
        };
        AdmissionCredential::sign(&self.key, admission)
    }

    /// The accepted answers of the current round (for tests that play with the answer key).
    pub fn answer_key(&self, id: &Digest) -> Option<Vec<String>> {
        let guard = self.state.lock().ok()?;
        let s = guard.sessions.get(id)?;
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
