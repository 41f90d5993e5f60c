//! The body of `GET /v1/windows/current`: the window, the slot where the caller's challenges
//! are issued, each class's steps, the caller's progress and what the page needs to know about
//! presence and the agent corpus.

use hco_challenges::Class;
use hco_oracle::{Digest, SlotMode, Step, Timestamp};
use serde::{Deserialize, Serialize};

/// `GET /v1/windows/current[?id=…]`.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "CurrentWindow")]
pub struct CurrentWindowView {
    /// The current window.
    pub t: u64,
    /// The node's clock (ms since the Unix epoch).
    pub now: Timestamp,
    /// When the window starts.
    pub start: Timestamp,
    /// When it ends.
    pub end: Timestamp,
    /// When answers to its challenges stop being accepted (end + grace).
    pub closes_at: Timestamp,
    /// How slots are placed.
    pub slot_mode: SlotMode,
    /// The slot of the identity asked about (of everyone, in `global` mode): its challenges are
    /// issued inside it.
    pub slot: SlotView,
    /// Each class's steps.
    pub policy: PoliciesView,
    /// The identity asked about (`?id=`): its progress in this window; absent without `id`.
    pub identity: Option<ProgressView>,
    /// The presence family.
    pub presence: PresenceView,
    /// The corpus the agent class runs on.
    pub agent_corpus: AgentCorpusView,
    /// The digest of the network parameters (`GET /v1/params`).
    pub params_digest: Digest,
}

/// A slot: `[start, end)`, ms since the Unix epoch.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SlotView {
    /// Opens.
    pub start: Timestamp,
    /// Closes.
    pub end: Timestamp,
}

/// [`CurrentWindowView::policy`].
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PoliciesView {
    /// The human class.
    pub human: PolicyView,
    /// The agent class.
    pub agent: PolicyView,
}

/// One class's window: its steps in order and its spare tries.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PolicyView {
    /// The steps (`presence`, `cognitive`, a family's name…).
    pub steps: Vec<Step>,
    /// Tries beyond the steps, for honest slips.
    pub spares: u32,
    /// Steps plus spares.
    pub tries: u32,
}

/// [`CurrentWindowView::identity`].
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProgressView {
    /// Its class, when it is registered here.
    pub class: Option<Class>,
    /// The next try to ask for.
    pub next_j: u32,
    /// Steps passed so far in this window.
    pub steps_passed: u32,
    /// Steps its class needs, when it is registered here.
    pub steps: Option<usize>,
}

/// [`CurrentWindowView::presence`].
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PresenceView {
    /// Whether the network runs the presence family.
    pub enabled: bool,
    /// Whether it takes software authenticators (never in production).
    pub software_authenticators_accepted: bool,
}

/// [`CurrentWindowView::agent_corpus`].
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentCorpusView {
    /// Whether the agent class runs on it (`narrative_chain` enabled or the game on).
    pub in_use: bool,
    /// Sets in the corpus.
    pub sets: usize,
    /// Sets retired for good.
    pub retired: usize,
    /// Sets that are public (the starter corpus's): anyone answers them by lookup.
    pub public_sets: usize,
    /// Whether any set is public.
    pub public_answer_key: bool,
    /// How sets are handed to windows.
    pub schedule: CorpusScheduleView,
}

/// [`AgentCorpusView::schedule`].
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CorpusScheduleView {
    /// The first window that draws sets.
    pub start_window: u64,
    /// Sets each window takes.
    pub sets_per_window: u32,
    /// Whether the schedule starts over when it ends (development only).
    pub reuse: bool,
    /// Windows the corpus lasts.
    pub windows: u64,
    /// The first window with no set (none when it starts over).
    pub end_window: Option<u64>,
    /// Windows left from the current one (none when it starts over).
    pub windows_remaining: Option<u64>,
    /// Sets the current window takes.
    pub sets_this_window: usize,
}
