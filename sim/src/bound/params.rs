//! The ceremony of a network's parameters, as the bound reads it. The node binary parses its
//! config into [`NetworkParams`] (one parser, one set of defaults); the pools come from
//! [`NetworkParams::step_families`], the rule the issuer draws by, so the bound cannot drift
//! from the protocol.

use hco_challenges::{Class, Registry};
use hco_oracle::NetworkParams;

use super::{CeremonyInputs, PoolFamily, StepPool};
use crate::scenario::SlotMode;

/// A human step no enabled family can take (parameters that passed validation never have one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("network.policy.human.steps[{index}]: `{step}` has no enabled human family to take")]
pub struct EmptyStep {
    /// Step index.
    pub index: usize,
    /// The step as configured.
    pub step: String,
}

/// The human ceremony of `params`: slot, window, each step's pool with its deadlines and
/// floors, and the spares.
pub fn ceremony_of(
    params: &NetworkParams,
    registry: &Registry,
) -> Result<CeremonyInputs, EmptyStep> {
    let policy = params.policy(Class::Human);
    let steps = policy
        .steps
        .iter()
        .enumerate()
        .map(|(index, step)| {
            let families: Vec<PoolFamily> = params
                .step_families(step, Class::Human, registry)
                .into_iter()
                .map(|f| PoolFamily {
                    name: f.name.clone(),
                    deadline_ms: f.deadline_ms,
                    min_solve_ms: f.min_solve_ms,
                })
                .collect();
            if families.is_empty() {
                return Err(EmptyStep {
                    index,
                    step: String::from(step.clone()),
                });
            }
            Ok(StepPool {
                step: String::from(step.clone()),
                families,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CeremonyInputs {
        slot_mode: match params.slot_mode {
            hco_oracle::SlotMode::Open => SlotMode::Open,
            hco_oracle::SlotMode::Global => SlotMode::Global,
            hco_oracle::SlotMode::Staggered => SlotMode::Staggered,
        },
        slot_ms: params.slot_ms,
        window_ms: params.window_ms,
        steps,
        spares: policy.spares,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bound::{HumanModel, one_person_bound};
    use hco_oracle::{FamilyConfig, Step, WindowPolicy, testing};

    fn family(name: &str, deadline_ms: u64, min_solve_ms: u64) -> FamilyConfig {
        FamilyConfig {
            name: name.into(),
            deadline_ms,
            difficulty: Registry::builtin()
                .get(name)
                .unwrap()
                .default_params()
                .difficulty,
            min_solve_ms,
        }
    }

    /// The `[network]` of configs/prod.toml with a 2-minute slot.
    fn prod_like() -> NetworkParams {
        let mut p = testing::params_for(&[hco_oracle::NodeId([1; 32])]);
        p.window_ms = 3_600_000;
        p.grace_ms = 120_000;
        p.slot_mode = hco_oracle::SlotMode::Global;
        p.slot_ms = 120_000;
        p.families = vec![
            family("visual_match", 30_000, 1500),
            family("attention", 40_000, 4000),
            family("interactive_reasoning", 45_000, 2500),
            family("presence", 30_000, 500),
            family("narrative_chain", 45_000, 0),
        ];
        p.policies.human = WindowPolicy {
            steps: ["presence", "cognitive", "cognitive"]
                .map(|s| Step::from(s.to_owned()))
                .to_vec(),
            spares: 1,
        };
        p.policies.agent = WindowPolicy {
            steps: vec![Step::Family("narrative_chain".into())],
            spares: 0,
        };
        p
    }

    #[test]
    fn reads_the_policy_slot_and_families_of_the_params() {
        let registry = Registry::builtin();
        let params = prod_like();
        params.validate(&registry).unwrap();
        let inputs = ceremony_of(&params, &registry).unwrap();
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
        assert_eq!(inputs.steps[0].families[0].min_solve_ms, 500);

        let b = one_person_bound(&inputs, &HumanModel::paper()).unwrap();
        assert_eq!(b.identities_per_person, 6);
        assert_eq!(b.identities_per_person_cheapest_draws, 11);
    }

    #[test]
    fn a_step_without_a_family_is_an_error() {
        let registry = Registry::builtin();
        let mut params = testing::params_for(&[hco_oracle::NodeId([1; 32])]);
        params.policies.human.steps = vec![Step::Family("presence".into())];
        let e = ceremony_of(&params, &registry).unwrap_err();
        assert!(
            e.to_string()
                .contains("steps[0]: `presence` has no enabled"),
            "{e}"
        );
    }
}
