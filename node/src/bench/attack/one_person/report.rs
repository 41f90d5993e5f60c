//! What the one-person bench is asked to do and what it reports.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

/// How the person chooses among the open prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// Earliest deadline first, among the prompts the person has taken on; a prompt arriving is
    /// taken on if every one taken on can still be touched in time, else the most expendable
    /// of those whose letting go makes it so is let go: the identity with the most spare tries
    /// left, then the least progress, then the highest index (so the person's effort stays on
    /// the same identities). The simulator's person (`hco sim bound`) chooses the same way.
    Triage,
    /// Earliest deadline first over every open prompt; a prompt is let go only once no touch
    /// started now could answer it in time.
    Edf,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Identities held.
    pub identities: u64,
    /// Windows played.
    pub windows: u64,
    /// One touch, milliseconds.
    pub touch_ms: u64,
    /// The bench network's window length.
    pub window: Duration,
    /// Its grace.
    pub grace: Duration,
    /// Its slot, if not the configuration's.
    pub slot: Option<Duration>,
    /// How the person chooses among the open prompts.
    pub schedule: Schedule,
    /// The person touches the prompts of the first this many identities only and lets the
    /// rest lapse; `None`: every identity held.
    pub serve: Option<u64>,
    /// Members of the committee (1: the node alone).
    pub committee: usize,
    /// The last member colludes with the person (`--unsafe-byzantine stretch-prompts`).
    pub malicious_member: bool,
}

/// The figures of a run (`one_person` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct OnePerson {
    /// Identities held.
    pub held: u64,
    /// Windows played.
    pub windows: u64,
    /// Identity-windows active, summed over the windows (the node's count of each window's
    /// active set).
    pub active: u64,
    /// `active / windows`.
    pub active_per_window: f64,
    /// The node's count, window by window.
    pub active_by_window: Vec<u64>,
    /// The 95 % Wilson interval of `active / (held · windows)`, times `held`: identities kept
    /// per window.
    pub wilson_low: f64,
    /// Upper end.
    pub wilson_high: f64,
    /// For the identity-windows not active, what ended them: the refusal of the try that left
    /// too few tries for the steps left (`challenge_expired` for a prompt the person could not
    /// touch in time), else the node's last code (`outside_slot`…), or `harness_error`.
    pub losses_by_code: BTreeMap<String, u64>,
    /// One touch, milliseconds.
    pub touch_ms: u64,
    /// The simulator's mean active identities per window for `held` at this touch time and
    /// ceremony (`hco sim bound`'s model-solves Monte Carlo, `active_by_held`).
    pub sim_expected_active: Option<f64>,
    /// Where that figure comes from.
    pub sim: Option<SimFigure>,
    /// The touch bound `B · (J + r) / (m · touch)`: `B` beats that may carry a prompt (prompt
    /// steps plus spares), each `J + r` long, `m` touches per identity.
    pub touch_bound: f64,
    /// The same with one malicious member: `(B · (J + r) + Δ) / (m · touch)`, `Δ` the relay
    /// round (`hco sim bound`'s `identities_per_person_one_malicious_member`).
    pub member_touch_bound: f64,
    /// Members of the bench's committee (the person's gateway is the first).
    pub committee: u64,
    /// Whether the last member colluded with the person (`stretch-prompts`).
    pub malicious_member: bool,
    /// Each window at the person's gateway: the count, certified or not, members left out
    /// and evidence (a malicious member that went unnoticed leaves 0 and 0).
    pub by_window: Vec<super::WindowOutcome>,
    /// How the person chooses among the open prompts.
    pub schedule: Schedule,
    /// Identities whose prompts the person touches (the rest are left to lapse).
    pub served: u64,
    /// Touch prompts: issued, touched, let go (expired), accepted, not served.
    pub prompts: Prompts,
    /// Cognitive challenges the model answered, and of those accepted, by family.
    pub cognitive: BTreeMap<String, Answered>,
    /// The ceremony the node ran.
    pub ceremony: Ceremony,
    /// How the cognitive steps were answered.
    pub model: &'static str,
    /// Per window, how late the identities were ready after the slot opened (0: before it).
    pub late_ms: Vec<u64>,
    /// Wall time of the run, seconds.
    pub seconds: f64,
}

/// The simulator's figure for the run's ceremony and touch time.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SimFigure {
    /// The `active_by_held` row used: `held`, or the last row when `held` is past the
    /// simulated range (holding more then serves no more).
    pub held: u64,
    /// How many of those the simulated person serves (the rest are left to lapse).
    pub served: u64,
    /// Mean active per window (with a malicious member: issuing a uniformly drawn try of each
    /// identity-window, as a rotating committee gives).
    pub active: f64,
    /// The simulator's bound `B·(J + r)/(m·touch)` (with a malicious member,
    /// `(B·(J + r) + Δ)/(m·touch)`), rounded down.
    pub identities_per_person: Option<u64>,
}

/// Touch prompts of a run.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Prompts {
    /// Issued to the identities.
    pub issued: u64,
    /// Touched by the person (answered).
    pub touched: u64,
    /// Let go: no touch could answer them in time any more, or (triage) not all could be.
    pub dropped: u64,
    /// Of identities the person does not serve (`--serve`), never touched.
    pub unserved: u64,
    /// Answers accepted.
    pub accepted: u64,
    /// Of those, the malicious member's accepted after their deadline.
    pub stretched: u64,
}

/// Answers of one family.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Answered {
    /// Sent.
    pub answered: u64,
    /// Accepted.
    pub accepted: u64,
}

/// The ceremony, as the node ran it.
#[derive(Debug, Clone, Serialize)]
pub struct Ceremony {
    /// Window length, seconds.
    pub window_s: f64,
    /// Grace, seconds.
    pub grace_s: f64,
    /// Slot length, seconds.
    pub slot_s: f64,
    /// The human policy's steps.
    pub steps: Vec<String>,
    /// Its spare tries.
    pub spares: u32,
    /// The prompt family's deadline (the reaction window `r`), milliseconds.
    pub reaction_ms: u64,
    /// `J`, milliseconds.
    pub prompt_jitter_ms: u64,
    /// The prompt family's floor, milliseconds.
    pub prompt_min_solve_ms: u64,
    /// Prompt steps (`m`).
    pub prompt_steps: u32,
    /// Beats that may carry a prompt (`B`).
    pub beats: u32,
    /// The presence attestation rules.
    pub attestation: &'static str,
}

/// What the identities' windows came to.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub(super) losses: BTreeMap<String, u64>,
    pub(super) prompts: Prompts,
    pub(super) cognitive: BTreeMap<String, Answered>,
}
