//! Reading a node config's human ceremony for the bound.
//!
//! Reads exactly these fields of a node config (TOML like `configs/prod.toml`); every other
//! key is ignored, and a missing one takes the node's default:
//!
//! ```toml
//! [network]
//! window = "1h"            # humantime; default 1 min
//! slot_mode = "global"     # open | global | staggered; default open
//! slot = "2m"              # default 0
//!
//! [network.policy.human]   # default: steps = ["cognitive"], spares = 1
//! steps = ["presence", "cognitive", "cognitive"]
//! spares = 1               # default 1
//!
//! [[network.families]]     # the enabled families (default: proof_of_work, arithmetic_reasoning)
//! name = "visual_match"
//! deadline = "30s"
//! difficulty = 5           # read, not used
//! min_solve = "1500ms"     # default: the family's own floor
//! ```
//!
//! A step names an enabled human family, or is `"cognitive"`: a family drawn from the enabled
//! human families (`visual_match`, `interactive_reasoning`, `attention`, `presence`,
//! `arithmetic_reasoning`) except `presence` (bound to an enrolled authenticator, asked for
//! only by a fixed step) and those a fixed step names — as the oracle draws them.

use std::path::Path;
use std::time::Duration;

use hco_challenges::{Class, Registry};
use serde::Deserialize;

use super::{CeremonyInputs, PoolFamily, StepPool};
use crate::scenario::{DRAWN, SlotMode};

/// Why a node config cannot give the ceremony.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NodeConfigError {
    /// The file could not be read.
    #[error("cannot read node config {path}: {message}")]
    Io {
        /// File path.
        path: String,
        /// OS error text.
        message: String,
    },
    /// The TOML is malformed, or a read field has the wrong type.
    #[error("invalid node config: {0}")]
    Parse(String),
    /// A family the registry does not know.
    #[error("network.families[{index}]: unknown family `{name}`")]
    UnknownFamily {
        /// Position in `[[network.families]]`.
        index: usize,
        /// Its name.
        name: String,
    },
    /// A step that names no enabled human family.
    #[error("network.policy.human.steps[{index}]: `{step}` {why}")]
    Step {
        /// Step index.
        index: usize,
        /// The step.
        step: String,
        /// What is wrong.
        why: String,
    },
}

#[derive(Debug, Default, Deserialize)]
struct NodeToml {
    #[serde(default)]
    network: NetworkToml,
}

#[derive(Debug, Deserialize)]
#[serde(default)]
struct NetworkToml {
    #[serde(with = "humantime_serde")]
    window: Duration,
    slot_mode: SlotMode,
    #[serde(with = "humantime_serde")]
    slot: Duration,
    policy: PoliciesToml,
    families: Vec<FamilyToml>,
}

/// The node's defaults (node/src/config.rs).
impl Default for NetworkToml {
    fn default() -> Self {
        Self {
            window: Duration::from_secs(60),
            slot_mode: SlotMode::Open,
            slot: Duration::ZERO,
            policy: PoliciesToml::default(),
            families: vec![
                FamilyToml {
                    name: "proof_of_work".into(),
                    deadline: Duration::from_secs(10),
                    min_solve: None,
                },
                FamilyToml {
                    name: "arithmetic_reasoning".into(),
                    deadline: Duration::from_secs(15),
                    min_solve: None,
                },
            ],
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PoliciesToml {
    human: PolicyToml,
}

#[derive(Debug, Deserialize)]
struct PolicyToml {
    steps: Vec<String>,
    #[serde(default = "one")]
    spares: u32,
}

impl Default for PolicyToml {
    fn default() -> Self {
        Self {
            steps: vec![DRAWN.to_owned()],
            spares: 1,
        }
    }
}

fn one() -> u32 {
    1
}

#[derive(Debug, Deserialize)]
struct FamilyToml {
    name: String,
    #[serde(with = "humantime_serde")]
    deadline: Duration,
    #[serde(default, with = "humantime_serde::option")]
    min_solve: Option<Duration>,
}

/// The human ceremony of a node config given as TOML text.
pub fn inputs_from_node_toml(text: &str) -> Result<CeremonyInputs, NodeConfigError> {
    let cfg: NodeToml = toml::from_str(text).map_err(|e| NodeConfigError::Parse(e.to_string()))?;
    let net = cfg.network;
    let registry = Registry::builtin();
    let mut human = Vec::new();
    for (index, f) in net.families.iter().enumerate() {
        let family = registry
            .get(&f.name)
            .ok_or_else(|| NodeConfigError::UnknownFamily {
                index,
                name: f.name.clone(),
            })?;
        if family.class() == Class::Human {
            let ms = |d: Duration| d.as_millis() as u64;
            human.push((
                PoolFamily {
                    name: f.name.clone(),
                    deadline_ms: ms(f.deadline),
                    min_solve_ms: f.min_solve.map_or(family.min_human_solve_ms(), ms),
                },
                family.uses_passkeys(),
            ));
        }
    }
    let policy = net.policy.human;
    let named = |f: &str| policy.steps.iter().any(|s| s == f);
    let steps = policy
        .steps
        .iter()
        .enumerate()
        .map(|(index, step)| {
            let families: Vec<PoolFamily> = if step == DRAWN {
                human
                    .iter()
                    .filter(|(f, passkeys)| !passkeys && !named(&f.name))
                    .map(|(f, _)| f.clone())
                    .collect()
            } else {
                human
                    .iter()
                    .filter(|(f, _)| f.name == *step)
                    .map(|(f, _)| f.clone())
                    .collect()
            };
            if families.is_empty() {
                return Err(NodeConfigError::Step {
                    index,
                    step: step.clone(),
                    why: if step == DRAWN {
                        "has no enabled human family to draw from".to_owned()
                    } else {
                        "is not an enabled human family".to_owned()
                    },
                });
            }
            Ok(StepPool {
                step: step.clone(),
                families,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CeremonyInputs {
        slot_mode: net.slot_mode,
        slot_ms: net.slot.as_millis() as u64,
        window_ms: net.window.as_millis() as u64,
        steps,
        spares: policy.spares,
    })
}

/// The human ceremony of the node config file at `path`.
pub fn load_node_config(path: &Path) -> Result<CeremonyInputs, NodeConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| NodeConfigError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    inputs_from_node_toml(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bound::{HumanModel, one_person_bound};

    /// A node config's `[network]` as the node writes it, with keys the bound does not read.
    const NODE: &str = r#"
[node]
key_file = "/var/lib/hco/node.key"

[network]
genesis = "2026-01-01T00:00:00Z"
window = "1h"
grace = "2m"
slot_mode = "global"
slot = "2m"
committee = []
quorum = 0

[network.policy.human]
steps = ["presence", "cognitive", "cognitive"]
spares = 1

[network.policy.agent]
steps = ["narrative_chain"]
spares = 0

[network.presence]
rp_id = "oracle.example.org"

[[network.families]]
name = "visual_match"
deadline = "30s"
difficulty = 5

[[network.families]]
name = "attention"
deadline = "40s"
difficulty = 2

[[network.families]]
name = "interactive_reasoning"
deadline = "45s"
difficulty = 2
min_solve = "2500ms"

[[network.families]]
name = "presence"
deadline = "30s"
difficulty = 1
min_solve = "500ms"

[[network.families]]
name = "narrative_chain"
deadline = "45s"
difficulty = 3
"#;

    #[test]
    fn reads_the_policy_slot_and_families_of_a_node_config() {
        let inputs = inputs_from_node_toml(NODE).unwrap();
        assert_eq!(inputs.slot_mode, SlotMode::Global);
        assert_eq!((inputs.slot_ms, inputs.window_ms), (120_000, 3_600_000));
        assert_eq!(inputs.spares, 1);
        let names = |i: usize| -> Vec<&str> {
            inputs.steps[i]
                .families
                .iter()
                .map(|f| f.name.as_str())
                .collect()
        };
        assert_eq!(names(0), ["presence"]);
        // Drawn: the human families but presence, in config order; no agent family.
        assert_eq!(
            names(1),
            ["visual_match", "attention", "interactive_reasoning"]
        );
        assert_eq!(names(2), names(1));
        let ir = &inputs.steps[1].families[2];
        assert_eq!((ir.deadline_ms, ir.min_solve_ms), (45_000, 2500));
        // min_solve left out: the family's own floor.
        assert_eq!(inputs.steps[1].families[0].min_solve_ms, 1500);
        assert_eq!(inputs.steps[0].families[0].min_solve_ms, 500);

        let b = one_person_bound(&inputs, &HumanModel::paper()).unwrap();
        assert_eq!(b.identities_per_person, 6);
        assert_eq!(b.identities_per_person_cheapest_draws, 11);
    }

    #[test]
    fn defaults_and_errors() {
        // No [network]: the node's defaults (open 1-minute windows, one drawn step from
        // arithmetic_reasoning, the only default human family).
        let inputs = inputs_from_node_toml("[node]\nkey_file = \"k\"").unwrap();
        assert_eq!(inputs.slot_mode, SlotMode::Open);
        assert_eq!(inputs.steps.len(), 1);
        assert_eq!(inputs.steps[0].families[0].name, "arithmetic_reasoning");
        let e = inputs_from_node_toml(
            "[network.policy.human]\nsteps = [\"presence\"]\n[[network.families]]\nname = \"attention\"\ndeadline = \"40s\"",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("steps[0]: `presence` is not an enabled"),
            "{e}"
        );
        let e =
            inputs_from_node_toml("[[network.families]]\nname = \"captcha\"\ndeadline = \"40s\"")
                .unwrap_err();
        assert!(e.to_string().contains("unknown family `captcha`"), "{e}");
        let e = inputs_from_node_toml("[network]\nslot = 5").unwrap_err();
        assert!(e.to_string().contains("invalid node config"), "{e}");
    }
}
