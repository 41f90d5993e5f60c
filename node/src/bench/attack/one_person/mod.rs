//! `hco bench attack --one-person`: one person with one hardware key holding a credential per
//! identity, and a model that answers every cognitive step for free, holding `N` human
//! identities against a real node process over HTTP, in production's ceremony.
//!
//! The node runs `configs/prod.toml`'s `[network]` (policy, slot, families with their deadlines
//! and floors, `prompt_jitter`, strict attestation) with only what a loopback run needs
//! changed: a committee of one, a window and grace short enough to wait out (and optionally a
//! shorter slot), the genesis moved so that the slot opens soon, and the attestation roots and
//! model list replaced by the bench key's own ([`super::device`]). Each identity plays its
//! window as `hco client solve` does: it asks for challenge `j`, waits for `opens_at` when the
//! step is not open yet, answers, and goes on to `j + 1` until the node says the sequence is
//! over.
//!
//! - A **touch prompt** (`presence`) needs the person: one touch, `touch_ms` long, and touches
//!   are serial. The person touches the open prompts earliest deadline first; by default
//!   ([`Schedule::Triage`], as the simulator's person) a prompt that cannot fit is let go at
//!   once, the most expendable one, else ([`Schedule::Edf`]) only when no touch started now
//!   could answer it in time. A prompt let go expires, a try used. Fetching and signing are
//!   free and concurrent.
//! - A **cognitive** step is the model's: the bench holds the node's key, regenerates the
//!   challenge (`derive_challenge`) and sends the family's reference answer once the family's
//!   floor (`min_solve`) has passed since issue.
//!
//! With `--committee N` the node is a committee of `N` node processes, and with
//! `--malicious-member` the last of them colludes with the person ([`committee`]): it serves
//! its prompts from their beat's start and accepts them up to a relay round late, and the
//! person treats them as due that much later.
//!
//! The result is the node's own count of each window's active set (a committee's: the
//! certified count at the person's gateway); `sim_expected_active` is
//! the simulator's mean for the same ceremony, touch time and number held
//! (`hco_sim::bound::model_solves`, `active_by_held`).

mod committee;
mod game;
mod person;
mod report;

pub use committee::WindowOutcome;
pub use report::{Ceremony, OnePerson, Options, Prompts, Schedule, SimFigure};

use committee::Members;

use game::{Game, sleep_until};
use person::Person;
use report::Tally;

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use hco_challenges::presence::{AttestationMode, Presence};
use hco_challenges::{Class, Registry};
use hco_oracle::{Clock, IdentityId, NetworkParams, SlotMode, Step, SystemClock};

use crate::attack::stats::{Z95, wilson};
use crate::bench::attack::device::Device;
use crate::bench::attack::local::LocalNode;
use crate::config::Config;

const MODEL: &str = "every cognitive step answered right from the answer key: the bench holds the node's key, regenerates the challenge (derive_challenge) and sends the family's reference answer (attention: the key's sealed log, no stream played; interactive_reasoning: both stages in one final answer) as soon as the family's min_solve has passed since issue";

/// Plays `opts` against a node running `prod`'s network section.
pub fn run(prod: &Config, opts: &Options) -> anyhow::Result<OnePerson> {
    let started = Instant::now();
    anyhow::ensure!(
        (1..=1000).contains(&opts.identities),
        "--identities must be 1 to 1000"
    );
    anyhow::ensure!(
        (1..=100).contains(&opts.windows),
        "--windows must be 1 to 100"
    );
    anyhow::ensure!(opts.touch_ms > 0, "--touch-ms must be > 0");
    let origin = prod
        .network
        .presence
        .origins
        .first()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("the configuration's presence policy names no origin"))?;
    let device = Device::new(&origin)?;
    let mut config = prod.clone();
    config.network.window = opts.window;
    config.network.grace = opts.grace;
    if let Some(slot) = opts.slot {
        config.network.slot = slot;
    }
    let presence = &mut config.network.presence;
    presence.attestation = AttestationMode::Strict;
    presence.attestation_ca_pem = vec![device.ca_pem().to_owned()];
    presence.aaguids = vec![Device::aaguid()];
    anyhow::ensure!(
        config.network.slot_mode == SlotMode::Global,
        "the one-person bench plays a `global` slot (the configuration's is `{:?}`)",
        config.network.slot_mode
    );

    let keys: Vec<SigningKey> = (0..opts.identities)
        .map(|i| hco_oracle::testing::key(80_000_000 + i))
        .collect();
    let probe = IdentityId(keys[0].verifying_key().to_bytes());
    // Registration (its proof of work) and enrolment come before the slot: leave them time.
    // The slot opens as soon after that as a genesis near now allows.
    let setup = Duration::from_secs(12) + Duration::from_millis(150 * opts.identities);
    let members = Members::start(
        config,
        opts.committee,
        opts.malicious_member,
        |config, me| {
            let mut found = Err(anyhow::anyhow!("no lead tried"));
            for more in [10, 20, 40, 90] {
                let lead = setup..setup + Duration::from_secs(more);
                found = super::local::genesis_with_slot_soon(config, me, &probe, lead);
                if found.is_ok() {
                    break;
                }
            }
            found
        },
    )?;
    let node = members.gateway();
    let params: NetworkParams =
        serde_json::from_value(node.gateway.get("/v1/params")?.body["params"].take())
            .map_err(|e| anyhow::anyhow!("the node's parameters: {e}"))?;
    let registry = Registry::builtin();
    let presence = Presence::new(params.presence.clone()).map_err(anyhow::Error::msg)?;
    let ceremony = ceremony(&node.config, &params, &registry)?;
    let sim = sim_figure(
        &params,
        &registry,
        opts.touch_ms,
        opts.identities,
        opts.malicious_member,
    );

    eprintln!(
        "one person: registering {} identities and enrolling a credential for each",
        keys.len()
    );
    let passkeys = members.enrol_all(&keys, &presence, &device)?;
    let ids: Vec<IdentityId> = keys
        .iter()
        .map(|k| IdentityId(k.verifying_key().to_bytes()))
        .collect();
    members.wait_known(&ids, Duration::from_secs(60))?;

    let person = Person::new(opts);
    let tally = Mutex::new(Tally::default());
    let mut outcomes = Vec::new();
    let mut played = Vec::new();
    let mut late_ms = Vec::new();
    let mut previous: Option<u64> = None;
    for _ in 0..opts.windows {
        let (t, slot, closes_at) = next_slot(node, &params, &probe, previous)?;
        played.push(t);
        let late = SystemClock.now().saturating_sub(slot.start);
        late_ms.push(late);
        eprintln!(
            "one person: window {t}, slot opens in {} s",
            slot.start.saturating_sub(SystemClock.now()) / 1000
        );
        let game = Game {
            node,
            params: &params,
            registry: &registry,
            presence: &presence,
            device: &device,
            person: &person,
            tally: &tally,
            w_t: members.secrets(t),
            stretching: members.stretching,
            stretch_ms: committee::stretch_ms(&params),
            t,
            slot: slot.clone(),
            closes_at,
            serve: opts.serve.map_or(keys.len(), |k| k as usize),
        };
        game.play(&keys, &passkeys);
        previous = Some(t);
    }
    // Each window's count once it is certified (the next was played meanwhile).
    for t in played {
        let outcome = members.outcome(&params, t, Duration::from_secs(60))?;
        eprintln!(
            "one person: window {t}: {} of {} active{}",
            outcome.active,
            keys.len(),
            if outcome.certified {
                " (certified)"
            } else {
                ""
            }
        );
        outcomes.push(outcome);
    }

    let tally = tally.into_inner().unwrap_or_else(|e| e.into_inner());
    let held = opts.identities;
    let active_by_window: Vec<u64> = outcomes.iter().map(|o| o.active).collect();
    let active: u64 = active_by_window.iter().sum();
    let (low, high) = wilson(active, held * opts.windows, Z95);
    Ok(OnePerson {
        held,
        windows: opts.windows,
        active,
        active_per_window: active as f64 / opts.windows as f64,
        active_by_window,
        wilson_low: low * held as f64,
        wilson_high: high * held as f64,
        losses_by_code: tally.losses,
        touch_ms: opts.touch_ms,
        sim_expected_active: sim.map(|f| f.active),
        sim,
        touch_bound: f64::from(ceremony.beats)
            * (ceremony.prompt_jitter_ms + ceremony.reaction_ms) as f64
            / (f64::from(ceremony.prompt_steps.max(1)) * opts.touch_ms as f64),
        member_touch_bound: (f64::from(ceremony.beats)
            * (ceremony.prompt_jitter_ms + ceremony.reaction_ms) as f64
            + params.relay_round_ms as f64)
            / (f64::from(ceremony.prompt_steps.max(1)) * opts.touch_ms as f64),
        committee: members.nodes.len() as u64,
        malicious_member: members.stretching.is_some(),
        by_window: outcomes,
        schedule: opts.schedule,
        served: opts.serve.map_or(held, |k| k.min(held)),
        prompts: Prompts {
            touched: person.touched.load(Ordering::Relaxed),
            dropped: person.dropped.load(Ordering::Relaxed),
            ..tally.prompts
        },
        cognitive: tally.cognitive,
        ceremony,
        model: MODEL,
        late_ms,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The ceremony of the node's parameters, with the figures of the touch bound.
fn ceremony(
    config: &Config,
    params: &NetworkParams,
    registry: &Registry,
) -> anyhow::Result<Ceremony> {
    let policy = params.policy(Class::Human);
    let prompts: Vec<(usize, u64)> = policy
        .steps
        .iter()
        .enumerate()
        .filter_map(|(i, step)| match step {
            Step::Family(name) => params.prompt_reaction_ms(name, registry).map(|r| (i, r)),
            Step::Drawn => None,
        })
        .collect();
    let (Some(&(first, reaction_ms)), Some(&(last, _))) = (prompts.first(), prompts.last()) else {
        anyhow::bail!("the human policy has no touch prompt (a `presence` step in a global slot)");
    };
    let name = match &policy.steps[first] {
        Step::Family(name) => name.clone(),
        Step::Drawn => String::new(),
    };
    Ok(Ceremony {
        window_s: config.network.window.as_secs_f64(),
        grace_s: config.network.grace.as_secs_f64(),
        slot_s: config.network.slot.as_secs_f64(),
        steps: policy.steps.iter().cloned().map(String::from).collect(),
        spares: policy.spares,
        reaction_ms,
        prompt_jitter_ms: params.prompt_jitter_ms,
        prompt_min_solve_ms: params.min_solve_ms(&name),
        prompt_steps: prompts.len() as u32,
        beats: (last - first) as u32 + 1 + policy.spares,
        attestation: "strict: the bench key's CA and model (AAGUID) only, user verification and counters as configured",
    })
}

/// The simulator's mean active identities when one person holds `held` identities in the
/// ceremony of `params` at `touch_ms` per touch, a model answering the rest; with a malicious
/// member issuing a uniformly drawn try of each identity-window when `malicious`.
fn sim_figure(
    params: &NetworkParams,
    registry: &Registry,
    touch_ms: u64,
    held: u64,
    malicious: bool,
) -> Option<SimFigure> {
    let inputs = hco_sim::bound::ceremony_of(params, registry).ok()?;
    let solves = hco_sim::bound::model_solves(&inputs, touch_ms);
    let (mc, bound) = if malicious {
        let member = solves.one_malicious_member?;
        (
            member.monte_carlo_uniform_try?,
            Some(member.identities_per_person),
        )
    } else {
        (solves.monte_carlo?, solves.identities_per_person)
    };
    let row = mc
        .active_by_held
        .iter()
        .find(|r| r.held == held)
        .or_else(|| mc.active_by_held.last())?;
    Some(SimFigure {
        held: row.held,
        served: row.served,
        active: row.active,
        identities_per_person: bound,
    })
}

/// The next window to play, its slot and when its answers close: the current window the first
/// time (the genesis placed its slot ahead), else the one after `previous`, as it starts (its
/// slot's beacon reads certificates of windows before `previous` only,
/// [`hco_oracle::window::BEACON_LAG`], so `previous` need not be certified yet).
fn next_slot(
    node: &LocalNode,
    params: &NetworkParams,
    probe: &IdentityId,
    previous: Option<u64>,
) -> anyhow::Result<(u64, Range<u64>, u64)> {
    if let Some(prev) = previous {
        sleep_until(params.window_start(prev + 1) + 100);
    }
    let w = node
        .gateway
        .get(&format!("/v1/windows/current?id={probe}"))?
        .body;
    let t = w["t"]
        .as_u64()
        .ok_or_else(|| anyhow::anyhow!("no window: {w}"))?;
    if let Some(prev) = previous {
        anyhow::ensure!(t == prev + 1, "window {t} is not the one after {prev}");
    }
    let (Some(start), Some(end)) = (w["slot"]["start"].as_u64(), w["slot"]["end"].as_u64()) else {
        anyhow::bail!("window {t} has no slot: {w}");
    };
    Ok((t, start..end, params.closes_at(t)))
}
