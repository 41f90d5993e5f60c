//! The human-speed Monte Carlo of the one-person bound: one person over `n` identities,
//! earliest-deadline-first ([`crate::schedule`]), with the openings, draws and deadlines of the
//! issuer and the touch prompts on their beats ([`crate::schedule::Prompts`]).

use super::{CeremonyInputs, HumanModel, MC_COMPLETION, MonteCarlo, StepCost, floor};
use crate::rng::{Rng, tag};
use crate::scenario::SlotMode;
use crate::schedule::{Plan, Prompts, Simulated, Slot, work};

/// Largest `n` for which ≥ 95 % of identity-windows complete, by bisection over `n`.
pub(super) fn monte_carlo(
    inputs: &CeremonyInputs,
    steps: &[StepCost],
    human: &HumanModel,
    upper: f64,
) -> MonteCarlo {
    // Families in one table: pools as indices, solve times exact (the model's means).
    let mut names: Vec<&str> = Vec::new();
    let mut deadline_s = Vec::new();
    let mut floor_s = Vec::new();
    let mut pools = Vec::new();
    for step in &inputs.steps {
        let mut pool = Vec::new();
        for f in &step.families {
            let i = names.iter().position(|n| *n == f.name).unwrap_or_else(|| {
                names.push(&f.name);
                deadline_s.push(f.deadline_ms as f64 / 1000.0);
                floor_s.push(f.min_solve_ms as f64 / 1000.0);
                names.len() - 1
            });
            pool.push(i);
        }
        pools.push(pool);
    }
    let times: Vec<f64> = names
        .iter()
        .map(|n| human.solve_s(n).unwrap_or(0.0))
        .collect();
    let plan = Plan {
        step_s: steps.iter().map(|s| s.mean_s).collect(),
        family_s: times.clone(),
        spares: inputs.spares,
    };
    let window_s = inputs.window_ms as f64 / 1000.0;
    let slot_s = inputs.slot_ms as f64 / 1000.0;
    // Touch prompts (none in an open window): the family of each prompt step. Its deadline is
    // the reaction window.
    let mut is_prompt = vec![false; times.len()];
    for (step, pool) in inputs.steps.iter().zip(&pools) {
        if step.prompt_reaction_ms.is_some() && inputs.slot_mode != SlotMode::Open {
            is_prompt[pool[0]] = true;
        }
    }
    let prompts = Prompts {
        is_prompt: &is_prompt,
        jitter_s: inputs.prompt_jitter_ms as f64 / 1000.0,
    };
    let run = |n: u64| -> (f64, u32) {
        let n_us = n as usize;
        let trials = (200_000 / (n_us * steps.len()).max(1)).clamp(20, 200) as u32;
        let mut done = 0u64;
        for k in 0..trials {
            let mut rng = Rng::stream(0x0b0d, tag::BOUND, u64::from(k));
            let slots: Vec<Slot> = match inputs.slot_mode {
                SlotMode::Global => vec![(0.0, slot_s); n_us],
                SlotMode::Open => vec![(0.0, window_s); n_us],
                SlotMode::Staggered => (0..n_us)
                    .map(|_| {
                        let start = rng.uniform() * (window_s - slot_s).max(0.0);
                        (start, start + slot_s)
                    })
                    .collect(),
            };
            let mut world = Simulated::new(
                &deadline_s,
                &floor_s,
                &pools,
                inputs.slot_mode != SlotMode::Open,
                inputs.tries(),
                &slots,
                &mut rng,
                |f, _: &mut Rng| (times[f], true),
            );
            world.prompts = Some(prompts);
            done += u64::from(work(&plan, 0.0, f64::INFINITY, &slots, &mut world).active);
        }
        (done as f64 / (n as f64 * f64::from(trials)), trials)
    };
    // f(0) = 1 by definition; completion falls as n grows past what fits.
    let (mut lo, mut hi) = (0u64, floor(upper) + 1);
    let mut at_lo = (1.0, 0u32);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let r = run(mid);
        if r.0 >= MC_COMPLETION {
            lo = mid;
            at_lo = r;
        } else {
            hi = mid;
        }
    }
    MonteCarlo {
        identities_per_person: lo,
        completion: at_lo.0,
        trials: at_lo.1,
        method: "one person, n identities, earliest-deadline-first over the steps; openings at uniform moments of their phases (touch prompts on their beats, issued at the opening), drawn families uniform over the pools, solve times the model's means, the deadlines and floors of the families; largest n with ≥ 95 % of identity-windows complete",
    }
}
