//! Network parameters: windows, ceremony slots, families, lifecycle thresholds and committee.
//! Every node of a network runs the same parameters; their digest is checked when peers meet.

use hco_challenges::presence::{self, PresencePolicy};
use hco_challenges::{FamilyParams, Registry};
use serde::{Deserialize, Serialize};

pub use self::narrative::NarrativeParams;
use crate::policy::ClassPolicies;
use crate::{Digest, NodeId, Profile, Timestamp, codec};

mod narrative;
mod steps;

/// How the challenge requests of a window are confined in time (DESIGN §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SlotMode {
    /// Requests anywhere in the window. One person can then serve many identities per window:
    /// use only with short windows.
    Open,
    /// One slot for everyone, placed in the window by the previous window's certificate root.
    Global,
    /// One slot per identity, placed by the previous root and the identity.
    Staggered,
}

/// One enabled family and its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FamilyConfig {
    /// The family's registry name.
    pub name: String,
    /// Response deadline Δresp after issue, in milliseconds.
    pub deadline_ms: u64,
    /// Family-defined hardness (see the family's docs).
    pub difficulty: u32,
    /// The least time from issue to receipt in which a person answers: faster answers are
    /// `too_fast`. Nodes fill it from the family's default when the config leaves it out.
    pub min_solve_ms: u64,
}

impl FamilyConfig {
    /// The parameters passed to the family.
    pub fn family_params(&self) -> FamilyParams {
        FamilyParams {
            difficulty: self.difficulty,
        }
    }
}

/// Thresholds of the identity lifecycle, in consecutive missed windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct LifecycleParams {
    /// Missed windows after which an identity is `lapsed`.
    pub lapsed_after: u32,
    /// Missed windows after which it is `suspended`.
    pub suspended_after: u32,
    /// Missed windows after which it is `retired`.
    pub retired_after: u32,
}

impl Default for LifecycleParams {
    fn default() -> Self {
        Self {
            lapsed_after: 1,
            suspended_after: 3,
            retired_after: 12,
        }
    }
}

/// The parameters every node of a network must share.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NetworkParams {
    /// Start of window 0, milliseconds since the Unix epoch.
    pub genesis_ms: Timestamp,
    /// Window length.
    pub window_ms: u64,
    /// After a window ends, how long responses to its challenges are still accepted; summaries
    /// are signed and secrets revealed only after it. Must cover the longest deadline.
    pub grace_ms: u64,
    /// The sequence of steps each class runs per window.
    pub policies: ClassPolicies,
    /// Ceremony slot mode.
    pub slot_mode: SlotMode,
    /// Slot length for `global` and `staggered` (ignored for `open`).
    pub slot_ms: u64,
    /// In a `global` or `staggered` slot, how far each identity's touch prompt (a challenge of
    /// a passkey family, `presence`) may fall after its beat's start, drawn by the seed: the
    /// beat of try `j` starts `(tries − j) · (deadline + jitter)` before the slot's end (see
    /// [`NetworkParams::beat`]). 0 puts every identity's prompt on the beat itself.
    #[serde(default = "default_prompt_jitter")]
    pub prompt_jitter_ms: u64,
    /// Enabled families.
    pub families: Vec<FamilyConfig>,
    /// Lifecycle thresholds.
    pub lifecycle: LifecycleParams,
    /// Committee members' keys.
    pub committee: Vec<NodeId>,
    /// Summaries on the same root needed for a certificate.
    pub quorum: u32,
    /// How many issuers after the assigned one may serve a request when it is down (0: none).
    /// Each fallback gives a requester one more family draw, so keep it small.
    pub issuer_fallback: u32,
    /// Whether each try of an identity-window has its own issuer: try `j` goes to the member
    /// `j` places after the assigned one in the rendezvous order (see
    /// [`crate::secret::issuers_of`]). With `tries ≤ committee size`, no member issues two
    /// tries of one identity-window, so a member answering for its own sybils passes at most
    /// one step of each (DESIGN §5.3). Off: one issuer serves the whole window.
    #[serde(default)]
    pub rotate_issuers: bool,
    /// Allowed clock difference for registration timestamps.
    pub max_clock_skew_ms: u64,
    /// The relay round `Δ` of the reveal rule ([`crate::relay`]): a relayed message reaches
    /// every honest member within it, clock differences included. Windows are summarized
    /// `2 + f` rounds after they close (`f` = committee size − quorum).
    #[serde(default = "default_relay_round")]
    pub relay_round_ms: u64,
    /// Leading zero bits of the proof of work a registration carries (see
    /// [`crate::register_pow`]); 0: no proof required. At most [`crate::register_pow::MAX_BITS`].
    #[serde(default)]
    pub registration_pow_bits: u32,
    /// The WebAuthn relying party and rules of the `presence` family.
    #[serde(default)]
    pub presence: PresencePolicy,
    /// The agent class's narrative corpus and set schedule.
    #[serde(default)]
    pub narrative: NarrativeParams,
}

fn default_prompt_jitter() -> u64 {
    1000
}

fn default_relay_round() -> u64 {
    5_000
}

/// A parameter that is missing or out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("network parameter `{field}`: {message}")]
pub struct ParamsError {
    /// The offending field.
    pub field: String,
    /// What is wrong and the allowed range.
    pub message: String,
}

pub(crate) fn bad(field: impl Into<String>, message: impl Into<String>) -> ParamsError {
    ParamsError {
        field: field.into(),
        message: message.into(),
    }
}

impl NetworkParams {
    /// The digest peers compare: any difference in parameters gives another digest.
    pub fn digest(&self) -> Digest {
        Digest(blake3::derive_key(
            "hco network params v1",
            &codec::encode(self),
        ))
    }

    /// The digest a node's ledger is bound to: [`NetworkParams::digest`] without the narrative
    /// corpus and schedule, which operators extend over a network's life (the ledger's record
    /// of used sets keeps a changed schedule from showing a set twice).
    pub fn ledger_digest(&self) -> Digest {
        let mut bound = self.clone();
        bound.narrative = NarrativeParams::default();
        bound.digest()
    }

    /// The enabled family of that name.
    pub fn family(&self, name: &str) -> Option<&FamilyConfig> {
        self.families.iter().find(|f| f.name == name)
    }

    /// The enabled families an identity draws from, in configuration order: those of its
    /// class, without the visual ones if it opted out of them.
    pub fn families_for(
        &self,
        profile: impl Into<Profile>,
        registry: &Registry,
    ) -> Vec<&FamilyConfig> {
        let profile = profile.into();
        self.families
            .iter()
            .filter(|f| {
                registry.get(&f.name).is_some_and(|fam| {
                    fam.class() == profile.class && !(profile.visual_opt_out && fam.is_visual())
                })
            })
            .collect()
    }

    /// Longest response deadline of any enabled family.
    pub fn max_deadline_ms(&self) -> u64 {
        self.families
            .iter()
            .map(|f| f.deadline_ms)
            .max()
            .unwrap_or(0)
    }

    /// Checks every field; the error names the field and the allowed range.
    pub fn validate(&self, registry: &Registry) -> Result<(), ParamsError> {
        if self.window_ms == 0 {
            return Err(bad("window_ms", "must be > 0"));
        }
        if self.slot_mode != SlotMode::Open {
            if self.slot_ms == 0 {
                return Err(bad("slot_ms", "must be > 0 for global and staggered slots"));
            }
            if self.slot_ms.saturating_add(self.grace_ms) > self.window_ms {
                return Err(bad(
                    "slot_ms",
                    format!(
                        "slot_ms + grace_ms must be <= window_ms ({}): the slot is placed after the previous window's certificate exists",
                        self.window_ms
                    ),
                ));
            }
        }
        if self.families.is_empty() {
            return Err(bad("families", "enable at least one family"));
        }
        for (i, f) in self.families.iter().enumerate() {
            let field = format!("families[{i}]");
            let Some(family) = registry.get(&f.name) else {
                let known: Vec<_> = registry.names().collect();
                return Err(bad(
                    format!("{field}.name"),
                    format!("unknown family `{}`; known: {known:?}", f.name),
                ));
            };
            if self.families[..i].iter().any(|g| g.name == f.name) {
                return Err(bad(
                    format!("{field}.name"),
                    format!("`{}` is listed twice", f.name),
                ));
            }
            if f.deadline_ms == 0 {
                return Err(bad(format!("{field}.deadline_ms"), "must be > 0"));
            }
            family
                .check_params(&f.family_params())
                .map_err(|m| bad(format!("{field}.difficulty"), m))?;
            if f.min_solve_ms >= f.deadline_ms {
                return Err(bad(
                    format!("{field}.min_solve_ms"),
                    format!("must be below the deadline ({} ms)", f.deadline_ms),
                ));
            }
        }
        for class in [hco_challenges::Class::Human, hco_challenges::Class::Agent] {
            self.validate_policy(class, registry)?;
        }
        if self.family(presence::NAME).is_some() {
            presence::Presence::new(self.presence.clone()).map_err(|m| bad("presence", m))?;
        }
        if self.grace_ms < self.max_deadline_ms() {
            return Err(bad(
                "grace_ms",
                format!(
                    "must be >= the longest family deadline ({} ms), or challenges issued at the end of a window could never be answered",
                    self.max_deadline_ms()
                ),
            ));
        }
        let decided_after = self.reveals_decided_at(0).saturating_sub(self.closes_at(0));
        if self.relay_round_ms < 100 || decided_after > self.window_ms {
            return Err(bad(
                "relay_round_ms",
                format!(
                    "must be >= 100 and small enough that reveals are decided ({decided_after} ms after a window closes) within one window ({} ms)",
                    self.window_ms
                ),
            ));
        }
        if self.registration_pow_bits > crate::register_pow::MAX_BITS {
            return Err(bad(
                "registration_pow_bits",
                format!("must be in 0..={}", crate::register_pow::MAX_BITS),
            ));
        }
        self.narrative
            .schedule
            .check()
            .map_err(|m| bad("narrative.sets_per_window", m))?;
        let l = &self.lifecycle;
        if !(1 <= l.lapsed_after
            && l.lapsed_after <= l.suspended_after
            && l.suspended_after <= l.retired_after)
        {
            return Err(bad(
                "lifecycle",
                "need 1 <= lapsed_after <= suspended_after <= retired_after",
            ));
        }
        if self.committee.is_empty() {
            return Err(bad("committee", "list at least one node key"));
        }
        let mut members = self.committee.clone();
        members.sort();
        members.dedup();
        if members.len() != self.committee.len() {
            return Err(bad("committee", "a node key is listed twice"));
        }
        let n = self.committee.len() as u32;
        if !(n / 2 < self.quorum && self.quorum <= n) {
            return Err(bad(
                "quorum",
                format!(
                    "must be a majority of the committee: in {}..={n}",
                    n / 2 + 1
                ),
            ));
        }
        if self.issuer_fallback >= n {
            return Err(bad(
                "issuer_fallback",
                format!("must be < committee size ({n})"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::params_for;

    #[test]
    fn test_params_are_valid_and_digest_changes_with_any_field() {
        let p = params_for(&[NodeId([1; 32])]);
        p.validate(&Registry::builtin()).unwrap();
        let mut q = p.clone();
        q.grace_ms += 1;
        assert_ne!(p.digest(), q.digest());
        let mut r = p.clone();
        r.registration_pow_bits += 1;
        assert_ne!(
            p.digest(),
            r.digest(),
            "members agree on the registration cost"
        );
        let mut n = p.clone();
        n.narrative.corpus_root = Digest([1; 32]);
        assert_ne!(p.digest(), n.digest(), "members agree on the corpus");
        let mut m = p.clone();
        m.narrative.schedule.start_window += 1;
        assert_ne!(p.digest(), m.digest(), "and on its schedule");
        assert_eq!(p.digest(), p.clone().digest());
        assert_eq!(
            p.ledger_digest(),
            n.ledger_digest(),
            "a ledger outlives a corpus change"
        );
        assert_ne!(p.ledger_digest(), q.ledger_digest());
    }

    #[test]
    fn errors_name_the_field() {
        let registry = Registry::builtin();
        let base = params_for(&[NodeId([1; 32]), NodeId([2; 32]), NodeId([3; 32])]);
        type Mutation = Box<dyn Fn(&mut NetworkParams)>;
        let cases: Vec<(&str, Mutation)> = vec![
            ("window_ms", Box::new(|p| p.window_ms = 0)),
            (
                "policy.human.steps[0]",
                Box::new(|p| p.policies.human.steps[0] = crate::Step::Family("nope".into())),
            ),
            (
                "families[0].min_solve_ms",
                Box::new(|p| p.families[0].min_solve_ms = p.families[0].deadline_ms),
            ),
            (
                "slot_ms",
                Box::new(|p| {
                    p.slot_mode = SlotMode::Global;
                    p.slot_ms = p.window_ms;
                }),
            ),
            (
                "families[0].name",
                Box::new(|p| p.families[0].name = "nope".into()),
            ),
            (
                "families[0].difficulty",
                Box::new(|p| p.families[0].difficulty = 99),
            ),
            ("grace_ms", Box::new(|p| p.grace_ms = 0)),
            ("quorum", Box::new(|p| p.quorum = 1)),
            ("committee", Box::new(|p| p.committee.push(p.committee[0]))),
            ("lifecycle", Box::new(|p| p.lifecycle.lapsed_after = 0)),
            (
                "registration_pow_bits",
                Box::new(|p| p.registration_pow_bits = 33),
            ),
            (
                "narrative.sets_per_window",
                Box::new(|p| p.narrative.schedule.sets_per_window = 0),
            ),
        ];
        for (field, mutate) in cases {
            let mut p = base.clone();
            mutate(&mut p);
            let err = p.validate(&registry).unwrap_err();
            assert_eq!(err.field, field, "{err}");
        }
    }
}
