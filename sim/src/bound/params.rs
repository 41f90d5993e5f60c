//! The ceremony of a network's parameters, as the bound reads it. The node binary parses its
//! config into [`NetworkParams`] (one parser, one set of defaults); the pools come from
//! [`NetworkParams::step_families`], the rule the issuer draws by, so the bound cannot drift
//! from the protocol.

use hco_challenges::{Class, Registry};
use hco_oracle::{NetworkParams, Step};

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
/// floors, which steps are touch prompts (with their reaction windows, from
/// [`NetworkParams::prompt_reaction_ms`], the rule the issuer opens them by; only a fixed step
/// can be one), the prompt jitter and the spares.
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
            let prompt_reaction_ms = match step {
                Step::Family(name) => params.prompt_reaction_ms(name, registry),
                Step::Drawn => None,
            };
            Ok(StepPool {
                step: String::from(step.clone()),
                families,
                prompt_reaction_ms,
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
        prompt_jitter_ms: params.prompt_jitter_ms,
        relay_round_ms: params.relay_round_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bound::{HumanModel, one_person_bound};
    use hco_oracle::{FamilyConfig, WindowPolicy, testing};

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

    /// The `[network]` of configs/prod.toml with the touch-prompt policy: a 100 s global slot,
    /// `["presence", "presence", "presence", "cognitive", "cognitive"]` + 1 spare, presence
    /// due 5 s after its beat's opening, 1 s of prompt jitter.
    pub(crate) fn prod_like() -> NetworkParams {
        let mut p = testing::params_for(&[hco_oracle::NodeId([1; 32])]);
        p.window_ms = 3_600_000;
        p.grace_ms = 120_000;
        p.slot_mode = hco_oracle::SlotMode::Global;
        p.slot_ms = 100_000;
        p.prompt_jitter_ms = 1000;
        p.families = vec![
            family("visual_match", 30_000, 1500),
            family("attention", 40_000, 4000),
            family("interactive_reasoning", 45_000, 2500),
            family("presence", 5_000, 500),
            family("narrative_chain", 45_000, 0),
        ];
        p.policies.human = WindowPolicy {
            steps: ["presence", "presence", "presence", "cognitive", "cognitive"]
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

    /// The earlier policy: `["presence", "cognitive", "cognitive"]` + 1 spare in a 2-minute
    /// slot, presence due in 20 s (four beats of 21 s fit at the slot's end; 30 s would not).
    fn three_steps() -> NetworkParams {
        let mut p = prod_like();
        p.slot_ms = 120_000;
        p.families[3].deadline_ms = 20_000;
        p.policies.human.steps = ["presence", "cognitive", "cognitive"]
            .map(|s| Step::from(s.to_owned()))
            .to_vec();
        p
    }

    #[test]
    fn reads_the_policy_slot_and_families_of_the_params() {
        let registry = Registry::builtin();
        let params = three_steps();
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
        // Presence is a touch prompt due 20 s after its beat's opening; drawn steps never are.
        let prompts: Vec<_> = inputs.steps.iter().map(|s| s.prompt_reaction_ms).collect();
        assert_eq!(prompts, [Some(20_000), None, None]);
        assert_eq!(inputs.prompt_jitter_ms, 1000);

        // Two beats of 21 s for one 3 s touch (14) do not bind: the work does, as before.
        let b = one_person_bound(&inputs, &HumanModel::paper()).unwrap();
        assert_eq!(b.identities_per_person, 6);
        assert_eq!(b.identities_per_person_cheapest_draws, 11);
        assert_eq!(b.bound_by, "work");
        // A model answering the cognitive steps: 2·(1 + 20) / (1·1 s) = 42.
        assert_eq!(b.identities_per_person_model_solves, Some(42));
    }

    #[test]
    fn the_touch_prompt_policy_is_bound_by_its_beats() {
        let registry = Registry::builtin();
        let params = prod_like();
        params.validate(&registry).unwrap();
        let inputs = ceremony_of(&params, &registry).unwrap();
        let prompts: Vec<_> = inputs.steps.iter().map(|s| s.prompt_reaction_ms).collect();
        assert_eq!(prompts, [Some(5000), Some(5000), Some(5000), None, None]);
        let b = one_person_bound(&inputs, &HumanModel::paper()).unwrap();
        // The work alone would allow 4 (cheapest draws 6); three 3 s touches in four beats of
        // 1 + 5 s allow 24/9 = 2.7.
        assert_eq!(b.identities_per_person, 2);
        assert_eq!(b.identities_per_person_cheapest_draws, 2);
        assert_eq!(b.bound_by, "touches");
        assert!((b.capacity_touches.unwrap() - 24.0 / 9.0).abs() < 1e-9);
        let mc = b.monte_carlo.clone().unwrap();
        assert!((1..=2).contains(&mc.identities_per_person), "{mc:?}");
        // A model answering the cognitive steps, one touch 1 s: B = 4, m = 3, 4·6/3 = 8.
        let m = &b.model_solves;
        assert_eq!(b.identities_per_person_model_solves, Some(8));
        assert_eq!((m.beats, m.touches_per_identity_window), (4, 3));
        assert_eq!(m.prompt_tries, [0, 1, 2, 3]);
        assert_eq!(m.person_seconds_per_identity_window, 3.0);
        assert_eq!(m.rig.identities_per_key, Some(32));
        let mc = m.monte_carlo.clone().unwrap();
        assert!((1..=8).contains(&mc.identities_per_person), "{mc:?}");
    }

    #[test]
    fn the_beats_are_where_the_issuer_opens_prompts() {
        let registry = Registry::builtin();
        for params in [prod_like(), three_steps()] {
            let inputs = ceremony_of(&params, &registry).unwrap();
            let tries = inputs.tries();
            let r = inputs.steps[0].prompt_reaction_ms.unwrap();
            let slot = 1_000_000..1_000_000 + params.slot_ms;
            for j in 0..tries {
                let beat = params.beat(&slot, Class::Human, j, r);
                let start = crate::bound::beats::beat_start(
                    (slot.start as f64 / 1000.0, slot.end as f64 / 1000.0),
                    tries,
                    j,
                    r as f64 / 1000.0,
                    inputs.prompt_jitter_ms as f64 / 1000.0,
                );
                assert!((start - beat.start as f64 / 1000.0).abs() < 1e-6, "{j}");
                assert_eq!(beat.end - beat.start, params.prompt_jitter_ms + 1);
            }
        }
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
