//! The one-person bound of a node's window policy: how many identities one person can keep
//! active per window, from the slot, the steps' phases and deadlines, and a human solve-time
//! model (the paper's Table 3 times).
//!
//! A person's work for one identity is the sum over the policy's steps of the time a person
//! needs for that step (for a drawn step, the mean over its pool: the seed draws uniformly; and
//! the cheapest family, for an attacker lucky with every draw). All of it must fit between the
//! slot's start and the last moment an answer can arrive: the slot end plus the longest
//! deadline (an `open` slot: the whole window plus grace). The bound is that time divided by
//! the work: an *upper* bound, since it assumes the person never waits for a step's opening
//! and never has two steps due at once. The human-speed floor (`min_solve`) does not enter it:
//! a person can run the floors of many identities in parallel.

use std::collections::BTreeMap;

use hco_challenges::{Class, Registry};
use hco_oracle::{NetworkParams, SlotMode, Step};
use serde::Serialize;

/// Mean time a person needs for a family, in seconds: HCO paper Table 3 for the cognitive
/// families; presence is one touch after reading the prompt.
pub fn paper_solve_time_s(family: &str) -> Option<f64> {
    Some(match family {
        "visual_match" => 6.0,
        "interactive_reasoning" => 12.0,
        "attention" => 15.0,
        "presence" => 3.0,
        "arithmetic_reasoning" => 8.0,
        _ => return None,
    })
}

/// One step as the bound sees it.
#[derive(Debug, Clone, Serialize)]
pub struct StepCost {
    /// `cognitive` or the family's name.
    pub step: String,
    /// The families it may take, with their human solve time (s).
    pub pool: BTreeMap<String, f64>,
    /// Mean over the pool (s).
    pub mean_s: f64,
    /// Fastest in the pool (s).
    pub cheapest_s: f64,
}

/// The bound and the inputs it used.
#[derive(Debug, Clone, Serialize)]
pub struct Bound {
    /// Identities one person keeps active per window, with the draws as they come (mean).
    pub identities_per_person: u64,
    /// The same if every drawn step took the fastest family.
    pub identities_per_person_cheapest_draws: u64,
    /// Seconds of a person's work per identity per window (mean draws).
    pub work_per_identity_s: f64,
    /// Seconds in which that work must be done.
    pub available_s: f64,
    /// `open`, `global` or `staggered`.
    pub slot_mode: SlotMode,
    /// Slot length (s); the window for `open`.
    pub slot_s: f64,
    /// Tries per window (steps plus spares): the slot's phases.
    pub phases: u32,
    /// The longest deadline of a family a step may take (s).
    pub longest_deadline_s: f64,
    /// The steps.
    pub steps: Vec<StepCost>,
    /// What the figure assumes.
    pub model: &'static str,
}

/// Why the bound cannot be computed.
#[derive(Debug, thiserror::Error)]
pub enum BoundError {
    /// A family the policy may draw has no human solve time in the model.
    #[error("no human solve time is known for family `{0}`")]
    UnknownFamily(String),
    /// The human policy has no step.
    #[error("the human policy has no step")]
    NoSteps,
}

/// The one-person bound of the human policy of `params`.
pub fn one_person_bound(params: &NetworkParams, registry: &Registry) -> Result<Bound, BoundError> {
    let policy = params.policy(Class::Human);
    if policy.steps.is_empty() {
        return Err(BoundError::NoSteps);
    }
    let mut steps = Vec::new();
    let mut longest_deadline_ms = 0;
    for step in &policy.steps {
        let mut pool = BTreeMap::new();
        for f in params.step_families(step, Class::Human, registry) {
            let t = paper_solve_time_s(&f.name)
                .ok_or_else(|| BoundError::UnknownFamily(f.name.clone()))?;
            pool.insert(f.name.clone(), t);
            longest_deadline_ms = longest_deadline_ms.max(f.deadline_ms);
        }
        let n = pool.len().max(1) as f64;
        steps.push(StepCost {
            step: String::from(step.clone()),
            mean_s: pool.values().sum::<f64>() / n,
            cheapest_s: pool.values().copied().fold(f64::INFINITY, f64::min),
            pool,
        });
    }
    let (slot_ms, tail_ms) = match params.slot_mode {
        SlotMode::Open => (params.window_ms, params.grace_ms),
        SlotMode::Global | SlotMode::Staggered => (params.slot_ms, longest_deadline_ms),
    };
    let available_s = (slot_ms + tail_ms) as f64 / 1000.0;
    let work: f64 = steps.iter().map(|s| s.mean_s).sum();
    let cheapest: f64 = steps.iter().map(|s| s.cheapest_s).sum();
    Ok(Bound {
        identities_per_person: (available_s / work).floor() as u64,
        identities_per_person_cheapest_draws: (available_s / cheapest).floor() as u64,
        work_per_identity_s: work,
        available_s,
        slot_mode: params.slot_mode,
        slot_s: slot_ms as f64 / 1000.0,
        phases: policy.tries(),
        longest_deadline_s: longest_deadline_ms as f64 / 1000.0,
        steps,
        model: "upper bound: a person works without pause from the slot start to the last possible answer (slot end + longest deadline), never waiting for an opening; solve times from the HCO paper (Table 3), presence 3 s",
    })
}

/// Whether `step` is a drawn one (for callers that print the policy).
pub fn is_drawn(step: &Step) -> bool {
    *step == Step::Drawn
}

#[cfg(test)]
mod tests {
    use super::*;
    use hco_oracle::{FamilyConfig, WindowPolicy, testing};

    fn family(name: &str, deadline_s: u64) -> FamilyConfig {
        FamilyConfig {
            name: name.into(),
            deadline_ms: deadline_s * 1000,
            difficulty: Registry::builtin()
                .get(name)
                .unwrap()
                .default_params()
                .difficulty,
            min_solve_ms: 0,
        }
    }

    fn params(slot_s: u64, steps: &[&str], families: Vec<FamilyConfig>) -> NetworkParams {
        let mut p = testing::params_for(&[hco_oracle::NodeId([1; 32])]);
        p.window_ms = 3_600_000;
        p.grace_ms = 120_000;
        p.slot_mode = SlotMode::Global;
        p.slot_ms = slot_s * 1000;
        p.families = families;
        p.policies.human = WindowPolicy {
            steps: steps.iter().map(|s| Step::from(s.to_string())).collect(),
            spares: 1,
        };
        p
    }

    #[test]
    fn a_five_minute_slot_with_one_step_gives_the_issues_twenty_to_fifty() {
        let p = params(
            300,
            &["cognitive"],
            vec![family("visual_match", 1), family("attention", 1)],
        );
        let b = one_person_bound(&p, &Registry::builtin()).unwrap();
        assert_eq!(b.identities_per_person_cheapest_draws, 50);
        assert_eq!(b.identities_per_person, 28);
    }

    #[test]
    fn presence_and_two_cognitive_steps_in_two_minutes_stay_under_ten() {
        let p = params(
            120,
            &["presence", "cognitive", "cognitive"],
            vec![
                family("visual_match", 30),
                family("attention", 40),
                family("interactive_reasoning", 45),
                family("presence", 30),
            ],
        );
        let b = one_person_bound(&p, &Registry::builtin()).unwrap();
        assert!(b.identities_per_person <= 10, "{b:?}");
        assert_eq!(b.phases, 4);
        assert_eq!(b.steps[0].pool.len(), 1, "presence is never drawn");
        assert_eq!(b.steps[1].pool.len(), 3);
    }
}
