//! The exact engine: the real oracle core, every challenge issued, answered and verified.
//!
//! One committee node (quorum 1) runs [`hco_oracle::Oracle`] over a temporary sled ledger with the
//! scenario's windows, slots, `k`, `r` and per-family deadlines. Every honest user, pool identity
//! and bot is a registered ed25519 identity. Within a window, actors are driven in time order
//! from a queue of events on a [`ManualClock`]:
//!
//! * an honest user arrives in their slot and requests challenges one at a time;
//! * a hired human serves pool identities one after another until their budget ends;
//! * a bot answers each challenge a millisecond after it is issued.
//!
//! What a person does is sampled from the scenario (the family the *core* chose, a solve time,
//! correct or not); the answer is then written by the family's solver (or made wrong) and
//! submitted at the sampled time. A human still busy at the deadline submits just after it. The
//! core alone decides acceptance: slots, deadlines, replay and answers are its checks. After the
//! window closes the node signs its summary (which certifies the root that places the next
//! window's slots) and the active set is read back from the ledger.

mod actors;
mod standin;

use std::collections::{BTreeSet, HashMap};

use ed25519_dalek::SigningKey;
use hco_challenges::{Class, Registry};
use hco_oracle::{
    Clock, FamilyConfig, IdentityId, Ledger, LifecycleParams, ManualClock, NetworkParams, Oracle,
    SignedRegister, testing,
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

/// The core's parameters for a scenario.
pub fn network_params(s: &Scenario, model: &Model, node: &SigningKey) -> NetworkParams {
    let ms = |secs: f64| (secs * 1000.0).round() as u64;
    let families: Vec<FamilyConfig> = model
        .families
        .iter()
        .map(|f| FamilyConfig {
            name: f.name.clone(),
            deadline_ms: ms(f.deadline_s),
            difficulty: 3,
            min_solve_ms: 0,
        })
        .collect();
    NetworkParams {
        genesis_ms: testing::TEST_GENESIS_MS,
        window_ms: s.window_len.as_millis() as u64,
        grace_ms: families.iter().map(|f| f.deadline_ms).max().unwrap_or(0),
        policies: {
            let policy = hco_oracle::WindowPolicy {
                steps: vec![hco_oracle::Step::Drawn; s.solves_required as usize],
                spares: s.challenges_per_window.saturating_sub(s.solves_required),
            };
            hco_oracle::ClassPolicies {
                human: policy.clone(),
                agent: policy,
            }
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
        max_clock_skew_ms: 30_000,
        presence: Default::default(),
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
        (s.max_humans() as f64 * model.tau_h).ceil() as u64
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
    let weights: BTreeSet<u64> = model.families.iter().map(|f| f.weight.to_bits()).collect();
    if weights.len() > 1 {
        return Err(SimError::Exact(
            "the core rotates families uniformly: give every family the same weight to use the exact engine"
                .to_owned(),
        ));
    }
    let node = testing::key(1);
    let params = network_params(s, model, &node);
    let mut registry = Registry::builtin();
    for f in &model.families {
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
        let mut window = actors::Window::new(s, model, &oracle, &pop, &families, u64::from(t));
        let counts = window.run(&clock, &mut rng)?;
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
