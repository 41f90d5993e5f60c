//! The exact engine: the real oracle core, every challenge issued, answered and verified.
//!
//! One committee node (quorum 1) runs [`hco_oracle::Oracle`] over a temporary sled ledger with
//! the scenario's windows, slot, window policy (steps, spares), per-family deadlines and
//! floors. Every honest user, pool identity and bot is a registered ed25519 identity. In each
//! window every actor runs the same earliest-deadline-first schedule as the aggregate engine
//! ([`crate::schedule`]), but against the core:
//!
//! * an honest user arrives in their slot and takes the steps as the core opens them;
//! * a hired human takes on the model's `per_human` pool identities and interleaves them;
//! * a bot answers each challenge as soon as the core's floor (`min_solve`) allows.
//!
//! Asking for a challenge before its opening gets `step_not_open` with the opening, as a
//! client does. What a person does is sampled from the scenario (the family the *core* drew,
//! a solve time, correct or not); the answer is then written by the family's solver (or made
//! wrong) and submitted at the sampled time. The core alone decides: slots, openings, the
//! step sequence, deadlines, floors, one answer per challenge. After the window closes the
//! node signs its summary and the active set is read back from the ledger. Each actor's calls
//! come in time order; different actors' calls are not interleaved in time (the core keeps no
//! state across identities that depends on it).

mod actors;
mod standin;

use std::collections::{BTreeSet, HashMap};

use ed25519_dalek::SigningKey;
use hco_challenges::{Class, Registry};
use hco_oracle::{
    ClassPolicies, Clock, FamilyConfig, IdentityId, Ledger, LifecycleParams, ManualClock,
    NetworkParams, Oracle, SignedRegister, Step, WindowPolicy, testing,
};
use indicatif::ProgressBar;

use super::WindowRecord;
use crate::error::SimError;
use crate::model::Model;
use crate::rng::{Rng, tag};
use crate::scenario::{Scenario, SlotMode};

pub use standin::StandIn;

/// Most identities the exact engine will register (it is for thousands, not millions).
pub const MAX_IDENTITIES: u64 = 200_000;

fn fail(context: &str, e: impl std::fmt::Display) -> SimError {
    SimError::Exact(format!("{context}: {e}"))
}

/// The core's parameters for a scenario: the families of the policy's pools as stand-ins,
/// the scenario's steps and spares as the human policy.
pub fn network_params(s: &Scenario, model: &Model, node: &SigningKey) -> NetworkParams {
    let ms = |secs: f64| (secs * 1000.0).round() as u64;
    let used: BTreeSet<usize> = model.pools.iter().flatten().copied().collect();
    let families: Vec<FamilyConfig> = used
        .iter()
        .map(|&i| {
            let f = &model.families[i];
            FamilyConfig {
                name: f.name.clone(),
                deadline_ms: ms(f.deadline_s),
                difficulty: 3,
                min_solve_ms: ms(f.min_solve_s),
            }
        })
        .collect();
    NetworkParams {
        genesis_ms: testing::TEST_GENESIS_MS,
        window_ms: s.window_len.as_millis() as u64,
        grace_ms: families.iter().map(|f| f.deadline_ms).max().unwrap_or(0),
        policies: ClassPolicies {
            human: WindowPolicy {
                steps: s.steps.iter().map(|st| Step::from(st.clone())).collect(),
                spares: s.spares,
            },
            agent: WindowPolicy::default(),
        },
        slot_mode: match s.slots.mode {
            SlotMode::Open => hco_oracle::SlotMode::Open,
            SlotMode::Global => hco_oracle::SlotMode::Global,
            SlotMode::Staggered => hco_oracle::SlotMode::Staggered,
        },
        slot_ms: if s.slots.mode == SlotMode::Open {
            0
        } else {
            s.slots.len.as_millis() as u64
        },
        families,
        lifecycle: LifecycleParams::default(),
        committee: vec![testing::node_id(node)],
        quorum: 1,
        issuer_fallback: 0,
        rotate_issuers: false,
        max_clock_skew_ms: 30_000,
        relay_round_ms: 1_000,
        prompt_jitter_ms: s.slots.prompt_jitter.as_millis() as u64,
        registration_pow_bits: 0,
        presence: Default::default(),
        narrative: hco_oracle::NarrativeParams::embedded(),
    }
}

/// Who the registered identities are.
pub(crate) struct Population {
    /// Every key: honest users first, then the human-run pool, then bots.
    pub keys: Vec<SigningKey>,
    /// Cohort of each honest user.
    pub honest_cohort: Vec<usize>,
    /// Pool identities' indices into `keys`.
    pub pool: std::ops::Range<usize>,
    /// Bots' indices into `keys`.
    pub bots: std::ops::Range<usize>,
}

fn population(s: &Scenario, model: &Model) -> Result<Population, SimError> {
    let pool = if s.adversary.identities > 0 {
        s.adversary.identities
    } else {
        s.max_humans() * u64::from(model.per_human)
    };
    let honest = s.honest.population;
    let total = honest + pool + s.adversary.bot_identities;
    if total > MAX_IDENTITIES {
        return Err(SimError::Exact(format!(
            "{total} identities is too many for the exact engine (at most {MAX_IDENTITIES}); \
             use --engine aggregate, or lower honest.population / adversary.identities"
        )));
    }
    let shares: Vec<f64> = model.cohorts.iter().map(|c| c.share).collect();
    let honest_cohort: Vec<usize> = super::cohort_sizes(honest, &shares)
        .iter()
        .enumerate()
        .flat_map(|(c, &n)| std::iter::repeat_n(c, n as usize))
        .collect();
    let keys = (0..total).map(|i| testing::key(1000 + i)).collect();
    let (h, p) = (honest as usize, pool as usize);
    Ok(Population {
        keys,
        honest_cohort,
        pool: h..h + p,
        bots: h + p..total as usize,
    })
}

/// Run the scenario through the core, one record per window.
pub fn run(
    s: &Scenario,
    model: &Model,
    seed: u64,
    bar: &ProgressBar,
) -> Result<Vec<WindowRecord>, SimError> {
    let node = testing::key(1);
    let params = network_params(s, model, &node);
    let mut registry = Registry::builtin();
    for f in &params.families {
        registry.insert(StandIn::new(&f.name));
    }
    let ledger = Ledger::temporary(params.digest()).map_err(|e| fail("opening the ledger", e))?;
    let oracle = Oracle::new(params.clone(), registry, node, ledger)
        .map_err(|e| fail("the scenario does not fit the core's parameters", e))?;
    let clock = ManualClock::new(params.genesis_ms);
    let pop = population(s, model)?;
    for key in &pop.keys {
        let now = clock.now();
        oracle
            .register(&SignedRegister::new(key, Class::Human, now), now)
            .map_err(|e| fail("ledger", e))?
            .map_err(|r| fail("registration rejected", r))?;
    }
    let families: HashMap<String, usize> = model
        .families
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.clone(), i))
        .collect();
    let ids: HashMap<IdentityId, usize> = pop
        .keys
        .iter()
        .enumerate()
        .map(|(i, k)| (testing::identity_id(k), i))
        .collect();
    let mut out = Vec::with_capacity(s.windows as usize);
    for t in 0..s.windows {
        let mut rng = Rng::stream(seed, tag::EXACT, u64::from(t));
        let window = actors::Window::new(s, model, &oracle, &pop, &families, u64::from(t));
        let counts = window.run(&mut rng)?;
        let close = params.closes_at(u64::from(t));
        clock.set(close);
        oracle
            .summarize(u64::from(t), clock.now())
            .map_err(|e| fail("ledger", e))?
            .map_err(|r| fail("summary rejected", r))?;
        let active = oracle
            .active_set(u64::from(t))
            .map_err(|e| fail("ledger", e))?;
        let (mut honest, mut human, mut bot) = (0, 0, 0);
        for (id, _) in &active {
            match ids.get(id) {
                Some(i) if pop.pool.contains(i) => human += 1,
                Some(i) if pop.bots.contains(i) => bot += 1,
                Some(_) => honest += 1,
                None => {}
            }
        }
        let m = s.humans_at(t);
        out.push(WindowRecord {
            window: t,
            humans: m,
            bound: m as f64 * model.tau_h,
            human_active: human,
            bot_active: bot,
            human_attempts: counts.human_attempts,
            bot_attempts: counts.bot_attempts,
            attacker_cost: m as f64 * model.cost_per_human_window
                + counts.bot_attempts as f64 * s.adversary.automation_cost_per_attempt,
            honest_participating: counts.honest_participating,
            honest_active: honest,
        });
        bar.inc(1);
    }
    Ok(out)
}
