//! `[network]`: what every committee node must share, and the protocol parameters it makes.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use hco_challenges::narrative::ScheduleParams;
use hco_oracle::{ClassPolicies, FamilyConfig, LifecycleParams, NetworkParams, NodeId, SlotMode};
use serde::{Deserialize, Serialize};

/// One enabled family.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilySection {
    /// Registry name.
    pub name: String,
    /// Response deadline after issue.
    #[serde(with = "humantime_serde")]
    pub deadline: Duration,
    /// Family-defined hardness.
    pub difficulty: u32,
    /// Answers sooner than this after issue are `too_fast`; left out, the family's default
    /// (its least human solve time; 0 for agent families).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_solve: Option<Duration>,
}

/// `[network]`: what every committee node must share.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkSection {
    /// Start of window 0 (RFC 3339).
    #[serde(with = "humantime_serde")]
    pub genesis: SystemTime,
    /// Window length.
    #[serde(with = "humantime_serde")]
    pub window: Duration,
    /// Answers to a window's challenges are accepted until its end plus this.
    #[serde(with = "humantime_serde")]
    pub grace: Duration,
    /// The step sequence of each class per window: `[network.policy.human]` and
    /// `[network.policy.agent]`, each with `steps` (family names, or `"cognitive"` for a family
    /// the seed draws from the class's other enabled families) and `spares`.
    pub policy: ClassPolicies,
    /// `open`, `global` or `staggered`.
    pub slot_mode: SlotMode,
    /// Slot length for `global` and `staggered`.
    #[serde(with = "humantime_serde")]
    pub slot: Duration,
    /// How far past its beat a touch prompt (a `presence` challenge in a `global` or
    /// `staggered` slot) may open, drawn per identity; see docs/protocol.md.
    #[serde(with = "humantime_serde")]
    pub prompt_jitter: Duration,
    /// Enabled families.
    pub families: Vec<FamilySection>,
    /// Lifecycle thresholds in missed windows.
    pub lifecycle: LifecycleParams,
    /// Committee node ids (hex). Empty: this node alone (a development setup).
    pub committee: Vec<String>,
    /// Matching summaries needed for a certificate (0: a majority of the committee).
    pub quorum: u32,
    /// Issuers after the assigned one that may serve a request.
    pub issuer_fallback: u32,
    /// Each try of an identity-window at another member (see `NetworkParams::rotate_issuers`).
    pub rotate_issuers: bool,
    /// Allowed clock difference for registration timestamps.
    #[serde(with = "humantime_serde")]
    pub max_clock_skew: Duration,
    /// The relay round of the reveal rule: a relayed message reaches every honest member within
    /// it, clock differences included (see docs/protocol.md, "Whose reveal counts"). A window
    /// is summarized 2 + f rounds after it closes, f = committee size − quorum. 0 (the
    /// default): an eighth of the window, at most 5 s and at least 100 ms.
    #[serde(with = "humantime_serde")]
    pub relay_round: Duration,
    /// Leading zero bits of the proof of work each registration carries (0: none). Every
    /// step doubles a registration's expected cost; see docs/operator.md.
    pub registration_pow_bits: u32,
    /// The WebAuthn relying party of the `presence` family (`rp_id`, `origins`,
    /// `user_verification`, `attestation`, `attestation_ca_pem`, `aaguids`,
    /// `allow_zero_counter`; `attestation_ca_files` names PEM files read into
    /// `attestation_ca_pem` when the file is loaded).
    pub presence: hco_challenges::presence::PresencePolicy,
    /// `[network.narrative]`: which narrative sets each window uses (`start_window`,
    /// `sets_per_window`, `reuse`); see docs/operator.md. `reuse` (the default, for development)
    /// is refused on any corpus but the public starter corpus.
    pub narrative: ScheduleParams,
    /// A development network, said explicitly (false unless set): only then may the agent
    /// class be served by labelled baselines alone (`proof_of_work`, the lock families), which
    /// a script passes, as on a devnet. A start-time check of this node
    /// ([`NetworkSection::refuse_baseline_only`]); not part of the parameters' digest.
    pub development: bool,
}

impl Default for NetworkSection {
    fn default() -> Self {
        Self {
            genesis: UNIX_EPOCH + Duration::from_secs(1_767_225_600), // 2026-01-01T00:00:00Z
            window: Duration::from_secs(60),
            grace: Duration::from_secs(20),
            policy: ClassPolicies::default(),
            slot_mode: SlotMode::Open,
            slot: Duration::ZERO,
            prompt_jitter: Duration::from_secs(1),
            families: vec![
                FamilySection {
                    name: "proof_of_work".into(),
                    deadline: Duration::from_secs(10),
                    difficulty: 12,
                    min_solve: None,
                },
                FamilySection {
                    name: "arithmetic_reasoning".into(),
                    deadline: Duration::from_secs(15),
                    difficulty: 3,
                    min_solve: None,
                },
            ],
            lifecycle: LifecycleParams::default(),
            committee: Vec::new(),
            quorum: 0,
            issuer_fallback: 0,
            rotate_issuers: false,
            max_clock_skew: Duration::from_secs(30),
            relay_round: Duration::ZERO,
            registration_pow_bits: 0,
            presence: Default::default(),
            narrative: ScheduleParams {
                reuse: true,
                ..ScheduleParams::default()
            },
            development: false,
        }
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

impl NetworkSection {
    /// The protocol parameters, with `me` as the committee when none is configured.
    pub fn params(&self, me: NodeId) -> anyhow::Result<NetworkParams> {
        let committee: Vec<NodeId> = if self.committee.is_empty() {
            vec![me]
        } else {
            self.committee
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    s.parse()
                        .map_err(|e| anyhow::anyhow!("network.committee[{i}]: {e}"))
                })
                .collect::<anyhow::Result<_>>()?
        };
        let n = committee.len() as u32;
        let registry = hco_challenges::Registry::builtin();
        let genesis = self
            .genesis
            .duration_since(UNIX_EPOCH)
            .context("network.genesis must be after 1970")?;
        let params = NetworkParams {
            genesis_ms: ms(genesis),
            window_ms: ms(self.window),
            grace_ms: ms(self.grace),
            policies: self.policy.clone(),
            slot_mode: self.slot_mode,
            slot_ms: ms(self.slot),
            prompt_jitter_ms: ms(self.prompt_jitter),
            families: self
                .families
                .iter()
                .map(|f| FamilyConfig {
                    name: f.name.clone(),
                    deadline_ms: ms(f.deadline),
                    difficulty: f.difficulty,
                    min_solve_ms: f.min_solve.map(ms).unwrap_or_else(|| {
                        registry
                            .get(&f.name)
                            .map_or(0, |family| family.min_human_solve_ms())
                    }),
                })
                .collect(),
            lifecycle: self.lifecycle,
            quorum: if self.quorum == 0 {
                n / 2 + 1
            } else {
                self.quorum
            },
            committee,
            issuer_fallback: self.issuer_fallback,
            rotate_issuers: self.rotate_issuers,
            max_clock_skew_ms: ms(self.max_clock_skew),
            relay_round_ms: if self.relay_round.is_zero() {
                (ms(self.window) / 8).clamp(100, 5_000)
            } else {
                ms(self.relay_round)
            },
            registration_pow_bits: self.registration_pow_bits,
            presence: self.presence.clone(),
            // The corpus root and retirement digest are filled in by the node once it has
            // loaded its corpus (`AgentCorpus::narrative_params`).
            narrative: hco_oracle::NarrativeParams {
                schedule: self.narrative,
                ..Default::default()
            },
        };
        if !params.committee.contains(&me) {
            bail!(
                "this node ({me}) is not in network.committee; add its id (hco keys show) or use another key"
            );
        }
        Ok(params)
    }

    /// Refuses, outside a network that says it is a development one (`development = true`),
    /// an agent policy whose steps can only take labelled baselines
    /// ([`NetworkParams::baseline_only`]): a script with the source would keep every agent
    /// identity active. The error names the class, its steps and the families.
    pub fn refuse_baseline_only(&self) -> anyhow::Result<()> {
        if self.development {
            return Ok(());
        }
        // The committee does not enter the policy; a stand-in member lets any config load.
        let mut network = self.clone();
        network.committee.clear();
        let params = network.params(NodeId([0; 32]))?;
        let registry = hco_challenges::Registry::builtin();
        let class = hco_oracle::Class::Agent;
        if !params.baseline_only(class, &registry) {
            return Ok(());
        }
        let families: Vec<&str> = params
            .policy_families(class, &registry)
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        let steps: Vec<String> = params
            .policy(class)
            .steps
            .iter()
            .cloned()
            .map(String::from)
            .collect();
        bail!(
            "network.policy.agent: the agent class's steps {steps:?} can only take labelled \
             baselines ({}), which a script with the source passes, so agent identities would \
             prove nothing. Enable `narrative_chain` and let a step take it (as \
             configs/prod.toml does), or, on a development network only, set `[network] \
             development = true`",
            families.join(", ")
        );
    }
}
