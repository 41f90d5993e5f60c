//! The bodies of `GET /v1/windows/current` (the window, the slot where the caller's
//! challenges are issued, each class's steps, the caller's progress and what the page needs to
//! know about presence and the agent corpus) and `GET /v1/windows/{t}` (a window as this
//! member saw it close: summaries, certificate, members left out, evidence).

use hco_challenges::Class;
use hco_oracle::{Digest, NodeId, SlotMode, Step, Timestamp};
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
    /// Steps passed so far in this window (for an agent identity whose verdicts are withheld,
    /// `[agent] withhold_verdicts`, 0: they are told after the close).
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

/// `GET /v1/windows/{t}`.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Window")]
pub struct WindowView {
    /// The window.
    pub t: u64,
    /// When it starts.
    pub start: Timestamp,
    /// When it ends.
    pub end: Timestamp,
    /// When answers to its challenges stop being accepted (end + grace).
    pub closes_at: Timestamp,
    /// Whether it closed by this node's clock.
    pub closed: bool,
    /// Identities active in it by this node's ledger (not certified); while it is open on a
    /// node that withholds agent verdicts, human identities only.
    pub active_count_local: usize,
    /// The members' summaries this node holds.
    pub summaries: Vec<SummaryView>,
    /// Whether this node holds its certificate.
    pub certified: bool,
    /// The certified active set's root.
    pub certificate_root: Option<Digest>,
    /// Members whose acceptances were left out when this node summarized it (none before).
    pub excluded_members: Option<Vec<NodeId>>,
    /// Evidence this node holds against members for this window.
    pub evidence: Vec<EvidenceView>,
}

/// One member's summary of a window.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SummaryView {
    /// The member.
    pub signer: NodeId,
    /// The root of the active set it signed.
    pub root: Digest,
    /// How many identities it counted.
    pub count: u64,
}

/// A piece of evidence against a member: its own signed messages.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EvidenceView {
    /// The window (only in `GET /v1/evidence`, which lists every window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<u64>,
    /// The accused member.
    pub accused: NodeId,
    /// What it did (`failed_audit`, `broken_commitment`, `double_reveal`, …).
    pub kind: String,
    /// The signed messages, as docs/protocol.md lays them out.
    pub evidence: serde_json::Value,
}

/// `GET /v1/evidence`: every piece of evidence the node holds, each with its window.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "EvidenceList")]
pub struct EvidenceListView {
    /// The evidence, by window.
    pub evidence: Vec<EvidenceView>,
}
