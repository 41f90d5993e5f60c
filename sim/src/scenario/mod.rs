//! The scenario file: what is simulated.
//!
//! A scenario is TOML; every field has a default (the paper's, where the paper gives one), so an
//! empty file is the paper scenario. Durations are humantime strings (`"90s"`, `"5min"`, `"1h"`).
//! [`Scenario::from_toml`] parses *and* validates: an impossible value fails with an error naming
//! the field and its allowed range.

mod defaults;
mod eps;
mod family;
mod validate;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use eps::{EpsOverride, EpsPick, apply_eps_json};
pub use family::{FamilySpec, ResolvedFamily, SolveTime, paper_family};
pub use validate::ScenarioError;

/// The step keyword for a family drawn by the issuer from the pool.
pub const DRAWN: &str = "cognitive";

/// The family only a fixed step asks for: it needs an enrolled hardware authenticator, so it
/// is never drawn (a script without one has ε = 0 there).
pub const PRESENCE: &str = "presence";

/// Fields of older scenario files and what replaced them.
const RETIRED: [(&str, &str); 3] = [
    (
        "challenges_per_window",
        "the window policy: `steps` (e.g. [\"presence\", \"cognitive\", \"cognitive\"]) and `spares`",
    ),
    (
        "solves_required",
        "the window policy: `steps` (every step must pass) and `spares`",
    ),
    (
        "weight",
        "nothing: a drawn step takes a family uniformly from its pool",
    ),
];

/// One step of the policy with the families it may take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepPool {
    /// `cognitive` or a family name.
    pub step: String,
    /// Family names, in name order.
    pub families: Vec<String>,
}

/// When in a window challenge requests are accepted (shared/DESIGN.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SlotMode {
    /// The whole window.
    Open,
    /// One short slot per window, the same for every identity.
    #[default]
    Global,
    /// One short slot per identity, at an offset derived from the identity and the previous root.
    Staggered,
}

/// A whole simulation scenario.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    /// A short name, written into outputs.
    pub name: String,
    /// Default seed of the run (the command line may override it).
    pub seed: u64,
    /// Number of windows simulated, ≥ 1.
    pub windows: u32,
    /// Window length, > 0.
    #[serde(with = "humantime_serde")]
    pub window_len: Duration,
    /// The human window policy: the steps every identity must pass each window, in order.
    /// A family name is that family; `"cognitive"` is a family the issuer draws uniformly from
    /// the pool (every scenario family except `presence` and the ones a step names). 1 to 16.
    pub steps: Vec<String>,
    /// Extra tries for slips: a wrong or expired answer uses one (the first answer to a
    /// challenge is final), 0 to 16.
    pub spares: u32,
    /// Ceremony slots.
    pub slots: Slots,
    /// Challenge families by name: the enabled ones. Known names (`visual_match`,
    /// `interactive_reasoning`, `presence`, `attention`) default every field from the paper's
    /// Table 3.
    pub families: BTreeMap<String, FamilySpec>,
    /// The honest population.
    pub honest: Honest,
    /// The adversary (a puppeteer with hired humans and automation).
    pub adversary: Adversary,
    /// PoW and PoS baselines priced on the same attack.
    pub baselines: Baselines,
    /// Experiment sizes for the derived analyses.
    pub analysis: Analysis,
}

/// Slot mode and length.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Slots {
    /// `open`, `global` or `staggered`.
    pub mode: SlotMode,
    /// Slot length for `global` and `staggered`, > 0 and ≤ window_len. Ignored for `open`.
    #[serde(with = "humantime_serde")]
    pub len: Duration,
    /// In a `global` or `staggered` slot, `presence` steps are touch prompts on the beats that
    /// end the slot (the protocol's `prompt_jitter`): how far past its beat a prompt may open.
    #[serde(with = "humantime_serde")]
    pub prompt_jitter: Duration,
}

/// One cohort of honest users, by speed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Cohort {
    /// Name shown in outputs.
    pub name: String,
    /// Share of the honest population in this cohort, in [0, 1]; shares must sum to 1.
    pub share: f64,
    /// Solve-time multiplier against the family's distribution, > 0 (2.0 = twice as slow).
    pub speed: f64,
}

/// The honest population.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Honest {
    /// Number of honest identities, ≥ 0.
    pub population: u64,
    /// Probability that an honest user takes part in a given window, in [0, 1].
    pub participation: f64,
    /// Mean delay between a slot opening and an honest user arriving (exponential), ≥ 0.
    #[serde(with = "humantime_serde")]
    pub arrival_delay: Duration,
    /// Speed cohorts (accessibility). Defaults: typical 80 %, slow 15 % (×1.6), assisted 5 % (×2.5).
    pub cohorts: Vec<Cohort>,
}

/// A piece of the adversary's availability schedule `m(t)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Availability {
    /// First window this piece applies to (it lasts until the next piece).
    pub from_window: u32,
    /// Humans available, ≥ 0.
    pub humans: u64,
    /// Relative amplitude of a periodic swing, in [0, 1]: `m = humans · (1 + swing · sin(2πt/period))`.
    pub swing: f64,
    /// Period of the swing in windows, ≥ 1 (24 with hour-long windows is a daily cycle).
    pub period: u32,
}

/// The adversary.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Adversary {
    /// Availability schedule `m(t)`, sorted by `from_window`, the first piece from window 0.
    pub availability: Vec<Availability>,
    /// Wage per human per hour worked, ≥ 0 (money units).
    pub wage_per_hour: f64,
    /// Longest a hired human works per window, > 0; bounds τh for `open` and `staggered` slots.
    #[serde(with = "humantime_serde")]
    pub shift: Duration,
    /// Human-run identities the puppeteer keeps registered; 0 = as many as the humans can serve.
    pub identities: u64,
    /// Automation-run identities (bots answer every challenge), ≥ 0.
    pub bot_identities: u64,
    /// Cost of one automated attempt, ≥ 0.
    pub automation_cost_per_attempt: f64,
    /// What one active identity earns per window, ≥ 0.
    pub reward_per_identity_window: f64,
}

/// PoW and PoS baselines.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Baselines {
    /// Hashes one identity's puzzle needs per window, > 0.
    pub pow_hashes_per_identity: f64,
    /// Hash rate of one device (hashes per second), > 0.
    pub pow_device_hash_rate: f64,
    /// Price of one device, ≥ 0; the device is reusable.
    pub pow_device_cost: f64,
    /// Windows a device lasts (amortisation), ≥ 1.
    pub pow_device_lifetime_windows: f64,
    /// Energy cost per hash, ≥ 0.
    pub pow_energy_cost_per_hash: f64,
    /// Total stake the attacker locks, ≥ 0; the stake is returned, only its opportunity cost counts.
    pub pos_attack_stake: f64,
    /// Minimum stake per identity, ≥ 0 (0 = stake-weighted: splitting a stake costs nothing).
    pub pos_min_stake_per_identity: f64,
    /// Opportunity cost of locked stake per window, as a fraction, in [0, 1].
    pub pos_interest_per_window: f64,
}

/// Sizes of the derived experiments.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Analysis {
    /// Points on the attacker cost curve, ≥ 3.
    pub cost_points: u32,
    /// Windows simulated per cost-curve point, ≥ 1.
    pub cost_windows: u32,
    /// Largest number of humans on the cost curve; 0 = the schedule's maximum.
    pub cost_max_humans: u64,
    /// Safety factor z of τh: a person's capacity plus z standard deviations, ≥ 0.
    pub tau_z: f64,
    /// Monte-Carlo person-windows per candidate load when choosing how many identities one
    /// hired human takes on, ≥ 50 (fewer for large loads).
    pub load_samples: u32,
    /// Deadline multipliers for the honest false-reject sweep, each > 0.
    pub deadline_scales: Vec<f64>,
    /// Slot lengths for the honest false-reject sweep, each > 0.
    pub slot_lens: Vec<humantime_serde::Serde<Duration>>,
    /// Monte-Carlo samples per cohort when estimating honest success, ≥ 1000.
    pub honest_samples: u32,
}

impl Scenario {
    /// Parse and validate a scenario from TOML text.
    pub fn from_toml(text: &str) -> Result<Self, ScenarioError> {
        let s: Scenario = toml::from_str(text).map_err(|e| {
            let message = e.to_string();
            match RETIRED
                .iter()
                .find(|(field, _)| message.contains(&format!("unknown field `{field}`")))
            {
                Some((field, now)) => ScenarioError::Retired {
                    field: (*field).to_owned(),
                    replacement: (*now).to_owned(),
                },
                None => ScenarioError::Parse(message),
            }
        })?;
        s.validate()?;
        Ok(s)
    }

    /// Read, parse and validate a scenario file.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::from_toml(&text)
    }

    /// Families with every field resolved, in name order.
    pub fn resolved_families(&self) -> Result<Vec<ResolvedFamily>, ScenarioError> {
        self.families
            .iter()
            .map(|(name, spec)| spec.resolve(name))
            .collect()
    }

    /// The policy's steps with the families each may take: a named family alone, or for a
    /// drawn step every scenario family except `presence` and those a step names.
    pub fn step_pools(&self) -> Result<Vec<StepPool>, ScenarioError> {
        let named = |f: &str| self.steps.iter().any(|s| s == f);
        self.steps
            .iter()
            .enumerate()
            .map(|(i, step)| {
                let families: Vec<String> = if step == DRAWN {
                    self.families
                        .keys()
                        .filter(|f| f.as_str() != PRESENCE && !named(f))
                        .cloned()
                        .collect()
                } else if self.families.contains_key(step) {
                    vec![step.clone()]
                } else {
                    return Err(ScenarioError::Range {
                        field: format!("steps[{i}]"),
                        value: format!("{step:?}"),
                        allowed: format!(
                            "\"{DRAWN}\" or a family of the scenario ({})",
                            self.families.keys().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    });
                };
                if families.is_empty() {
                    return Err(ScenarioError::Missing {
                        field: format!("steps[{i}]"),
                        hint: format!(
                            "no family is left for a \"{DRAWN}\" step: add one that is not \
                             `{PRESENCE}` nor named by another step"
                        ),
                    });
                }
                Ok(StepPool {
                    step: step.clone(),
                    families,
                })
            })
            .collect()
    }

    /// Humans available in window `t`.
    pub fn humans_at(&self, t: u32) -> u64 {
        let piece = self
            .adversary
            .availability
            .iter()
            .rev()
            .find(|a| a.from_window <= t);
        piece.map_or(0, |a| {
            let phase = std::f64::consts::TAU * f64::from(t) / f64::from(a.period.max(1));
            (a.humans as f64 * (1.0 + a.swing * phase.sin()))
                .round()
                .max(0.0) as u64
        })
    }

    /// Largest `m(t)` over the run.
    pub fn max_humans(&self) -> u64 {
        (0..self.windows)
            .map(|t| self.humans_at(t))
            .max()
            .unwrap_or(0)
    }
}
