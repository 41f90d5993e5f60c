//! The narrative corpus in the network parameters: its Merkle root, the digest of the
//! retirement list and the set schedule, so members holding different corpora or schedules get
//! different parameter digests and never form one committee.

use hco_challenges::narrative::{Corpus, RetiredSets, ScheduleParams};
use serde::{Deserialize, Serialize};

use crate::Digest;

/// What the members agree on about the agent class's narrative corpus: audits regenerate
/// `narrative_chain` prompts from the window secret, so every member must hold the same
/// corpus, retirement list and set schedule (see `hco_challenges::narrative::SetSchedule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct NarrativeParams {
    /// The corpus's Merkle root.
    pub corpus_root: Digest,
    /// The digest of the retired set ids.
    pub retired_digest: Digest,
    /// Which sets each window uses.
    pub schedule: ScheduleParams,
}

impl Default for NarrativeParams {
    fn default() -> Self {
        Self {
            corpus_root: Digest::ZERO,
            retired_digest: Digest::ZERO,
            schedule: ScheduleParams::default(),
        }
    }
}

impl NarrativeParams {
    /// The parameters of the family `Registry::builtin` holds: the starter corpus, nothing
    /// retired, its schedule (one set per window, round again).
    pub fn embedded() -> Self {
        let family = hco_challenges::NarrativeChain::embedded();
        Self::of(
            family.corpus(),
            &RetiredSets::default(),
            *family.schedule().params(),
        )
    }

    /// The parameters of `corpus` without the `retired` sets, scheduled by `schedule`.
    pub fn of(corpus: &Corpus, retired: &RetiredSets, schedule: ScheduleParams) -> Self {
        Self {
            corpus_root: Digest(corpus.merkle_root()),
            retired_digest: Digest(retired.digest()),
            schedule,
        }
    }
}
