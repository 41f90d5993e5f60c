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
//! The result is the node's own count of each window's active set; `sim_expected_active` is
//! the simulator's mean for the same ceremony, touch time and number held
//! (`hco_sim::bound::model_solves`, `active_by_held`).

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use hco_challenges::presence::{AttestationMode, Passkey, Presence};
use hco_challenges::{Class, Registry};
use hco_oracle::secret::{node_secret, window_secret};
use hco_oracle::{
    Clock, Digest, IdentityId, NetworkParams, Profile, Response, SignedEnrolment, SignedRequest,
    SlotMode, Step, SystemClock,
};
use serde::Serialize;
use serde_json::Value;

use super::device::Device;
use super::local::LocalNode;
use crate::api::{ChallengeView, VerdictView};
use crate::attack::stats::{Z95, wilson};
use crate::config::Config;
use crate::keyfile::{self, KeyKind};

/// How the person chooses among the open prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// Earliest deadline first, among the prompts the person has taken on; a prompt arriving is
    /// taken on if every one taken on can still be touched in time, else the most expendable
    /// of those whose letting go makes it so is let go: the identity with the most spare tries
    /// left, then the least progress, then the highest index (so the person's effort stays on
    /// the same identities). The simulator's person (`hco sim bound`) chooses the same way.
    Triage,
    /// Earliest deadline first over every open prompt; a prompt is let go only once no touch
    /// started now could answer it in time.
    Edf,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Identities held.
    pub identities: u64,
    /// Windows played.
    pub windows: u64,
    /// One touch, milliseconds.
    pub touch_ms: u64,
    /// The bench network's window length.
    pub window: Duration,
    /// Its grace.
    pub grace: Duration,
    /// Its slot, if not the configuration's.
    pub slot: Option<Duration>,
    /// How the person chooses among the open prompts.
    pub schedule: Schedule,
    /// The person touches the prompts of the first this many identities only and lets the
    /// rest lapse; `None`: every identity held.
    pub serve: Option<u64>,
}

/// The figures of a run (`one_person` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct OnePerson {
    /// Identities held.
    pub held: u64,
    /// Windows played.
    pub windows: u64,
    /// Identity-windows active, summed over the windows (the node's count of each window's
    /// active set).
    pub active: u64,
    /// `active / windows`.
    pub active_per_window: f64,
    /// The node's count, window by window.
    pub active_by_window: Vec<u64>,
    /// The 95 % Wilson interval of `active / (held · windows)`, times `held`: identities kept
    /// per window.
    pub wilson_low: f64,
    /// Upper end.
    pub wilson_high: f64,
    /// For the identity-windows not active, what ended them: the refusal of the try that left
    /// too few tries for the steps left (`challenge_expired` for a prompt the person could not
    /// touch in time), else the node's last code (`outside_slot`…), or `harness_error`.
    pub losses_by_code: BTreeMap<String, u64>,
    /// One touch, milliseconds.
    pub touch_ms: u64,
    /// The simulator's mean active identities per window for `held` at this touch time and
    /// ceremony (`hco sim bound`'s model-solves Monte Carlo, `active_by_held`).
    pub sim_expected_active: Option<f64>,
    /// Where that figure comes from.
    pub sim: Option<SimFigure>,
    /// The touch bound `B · (J + r) / (m · touch)`: `B` beats that may carry a prompt (prompt
    /// steps plus spares), each `J + r` long, `m` touches per identity.
    pub touch_bound: f64,
    /// How the person chooses among the open prompts.
    pub schedule: Schedule,
    /// Identities whose prompts the person touches (the rest are left to lapse).
    pub served: u64,
    /// Touch prompts: issued, touched, let go (expired), accepted, not served.
    pub prompts: Prompts,
    /// Cognitive challenges the model answered, and of those accepted, by family.
    pub cognitive: BTreeMap<String, Answered>,
    /// The ceremony the node ran.
    pub ceremony: Ceremony,
    /// How the cognitive steps were answered.
    pub model: &'static str,
    /// Per window, how late the identities were ready after the slot opened (0: before it).
    pub late_ms: Vec<u64>,
    /// Wall time of the run, seconds.
    pub seconds: f64,
}

/// The simulator's figure for the run's ceremony and touch time.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SimFigure {
    /// The `active_by_held` row used: `held`, or the last row when `held` is past the
    /// simulated range (holding more then serves no more).
    pub held: u64,
    /// How many of those the simulated person serves (the rest are left to lapse).
    pub served: u64,
    /// Mean active per window.
    pub active: f64,
    /// The simulator's bound `B·(J + r)/(m·touch)`, rounded down.
    pub identities_per_person: Option<u64>,
}

/// Touch prompts of a run.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Prompts {
    /// Issued to the identities.
    pub issued: u64,
    /// Touched by the person (answered).
    pub touched: u64,
    /// Let go: no touch could answer them in time any more, or (triage) not all could be.
    pub dropped: u64,
    /// Of identities the person does not serve (`--serve`), never touched.
    pub unserved: u64,
    /// Answers accepted.
    pub accepted: u64,
}

/// Answers of one family.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Answered {
    /// Sent.
    pub answered: u64,
    /// Accepted.
    pub accepted: u64,
}

/// The ceremony, as the node ran it.
#[derive(Debug, Clone, Serialize)]
pub struct Ceremony {
    /// Window length, seconds.
    pub window_s: f64,
    /// Grace, seconds.
    pub grace_s: f64,
    /// Slot length, seconds.
    pub slot_s: f64,
    /// The human policy's steps.
    pub steps: Vec<String>,
    /// Its spare tries.
    pub spares: u32,
    /// The prompt family's deadline (the reaction window `r`), milliseconds.
    pub reaction_ms: u64,
    /// `J`, milliseconds.
    pub prompt_jitter_ms: u64,
    /// The prompt family's floor, milliseconds.
    pub prompt_min_solve_ms: u64,
    /// Prompt steps (`m`).
    pub prompt_steps: u32,
    /// Beats that may carry a prompt (`B`).
    pub beats: u32,
    /// The presence attestation rules.
    pub attestation: &'static str,
}

const MODEL: &str = "every cognitive step answered right from the answer key: the bench holds the node's key, regenerates the challenge (derive_challenge) and sends the family's reference answer (attention: the key's sealed log, no stream played; interactive_reasoning: both stages in one final answer) as soon as the family's min_solve has passed since issue";

/// Requests one identity may make in a window (waits on `step_not_open` included).
const MAX_REQUESTS: u32 = 256;
/// What a touch needs on top of itself to reach the node before the deadline, milliseconds.
const MARGIN_MS: u64 = 100;
/// A later answer than the floor by this much, milliseconds, so as not to be `too_fast`.
const FLOOR_MARGIN_MS: u64 = 30;

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
    let node = LocalNode::start(config, |config, me| {
        let mut found = Err(anyhow::anyhow!("no lead tried"));
        for more in [10, 20, 40, 90] {
            let lead = setup..setup + Duration::from_secs(more);
            found = super::local::genesis_with_slot_soon(config, me, &probe, lead);
            if found.is_ok() {
                break;
            }
        }
        found
    })?;
    let params: NetworkParams =
        serde_json::from_value(node.gateway.get("/v1/params")?.body["params"].take())
            .map_err(|e| anyhow::anyhow!("the node's parameters: {e}"))?;
    let registry = Registry::builtin();
    let node_key = keyfile::read(&node.config.node.key_file, KeyKind::NodeKey)?;
    let presence = Presence::new(params.presence.clone()).map_err(anyhow::Error::msg)?;
    let ceremony = ceremony(&node.config, &params, &registry)?;
    let sim = sim_figure(&params, &registry, opts.touch_ms, opts.identities);

    eprintln!(
        "one person: registering {} identities and enrolling a credential for each",
        keys.len()
    );
    let passkeys = enrol_all(&node, &keys, &presence, &device)?;

    let person = Person::new(opts);
    let tally = Mutex::new(Tally::default());
    let mut active_by_window = Vec::new();
    let mut late_ms = Vec::new();
    let mut previous: Option<u64> = None;
    for _ in 0..opts.windows {
        let (t, slot, closes_at) = next_slot(&node, &params, &probe, previous)?;
        let late = SystemClock.now().saturating_sub(slot.start);
        late_ms.push(late);
        eprintln!(
            "one person: window {t}, slot opens in {} s",
            slot.start.saturating_sub(SystemClock.now()) / 1000
        );
        let game = Game {
            node: &node,
            params: &params,
            registry: &registry,
            presence: &presence,
            device: &device,
            person: &person,
            tally: &tally,
            w_t: window_secret(&node_secret(&node_key), t),
            t,
            slot: slot.clone(),
            closes_at,
            serve: opts.serve.map_or(keys.len(), |k| k as usize),
        };
        game.play(&keys, &passkeys);
        let w = node.gateway.get(&format!("/v1/windows/{t}"))?.body;
        let active = w["active_count_local"]
            .as_u64()
            .ok_or_else(|| anyhow::anyhow!("the node did not report window {t}: {w}"))?;
        eprintln!("one person: window {t}: {active} of {} active", keys.len());
        active_by_window.push(active);
        previous = Some(t);
    }

    let tally = tally.into_inner().unwrap_or_else(|e| e.into_inner());
    let held = opts.identities;
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
/// ceremony of `params` at `touch_ms` per touch, a model answering the rest.
fn sim_figure(
    params: &NetworkParams,
    registry: &Registry,
    touch_ms: u64,
    held: u64,
) -> Option<SimFigure> {
    let inputs = hco_sim::bound::ceremony_of(params, registry).ok()?;
    let solves = hco_sim::bound::model_solves(&inputs, touch_ms);
    let mc = solves.monte_carlo?;
    let row = mc
        .active_by_held
        .iter()
        .find(|r| r.held == held)
        .or_else(|| mc.active_by_held.last())?;
    Some(SimFigure {
        held: row.held,
        served: row.served,
        active: row.active,
        identities_per_person: solves.identities_per_person,
    })
}

/// Registers every identity and enrols a credential of `device` for each; their passkeys.
fn enrol_all(
    node: &LocalNode,
    keys: &[SigningKey],
    presence: &Presence,
    device: &Device,
) -> anyhow::Result<Vec<Passkey>> {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8);
    let chunk = keys.len().div_ceil(threads);
    let results: Vec<anyhow::Result<Vec<Passkey>>> = std::thread::scope(|s| {
        let handles: Vec<_> = keys
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|key| enrol_one(node, key, presence, device))
                        .collect::<anyhow::Result<Vec<Passkey>>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("an enrolment thread panicked")))
            })
            .collect()
    });
    let mut out = Vec::with_capacity(keys.len());
    for part in results {
        out.extend(part?);
    }
    Ok(out)
}

fn enrol_one(
    node: &LocalNode,
    key: &SigningKey,
    presence: &Presence,
    device: &Device,
) -> anyhow::Result<Passkey> {
    let id = node
        .register_human(key)
        .map_err(|code| anyhow::anyhow!("registration refused: {code}"))?;
    let now = SystemClock.now();
    let credential = device.enrol(presence, &id.0, now)?;
    // The node checks it the same way; this copy is the key the assertions are made with.
    let passkey = presence
        .enrol(&id.0, now, &credential)
        .map_err(|e| anyhow::anyhow!("the bench key's enrolment: {e}"))?;
    let enrolment = SignedEnrolment::new(key, now, String::from_utf8(credential)?);
    let reply = node
        .gateway
        .post(&format!("/v1/identities/{id}/passkeys"), &enrolment)?;
    if let Err((code, message)) = reply.into_result::<Value>() {
        anyhow::bail!("enrolment refused: {code}: {message}");
    }
    Ok(passkey)
}

/// The next window to play, its slot and when its answers close: the current window the first
/// time (the genesis placed its slot ahead), else the one after `previous`, once the node has
/// certified `previous`, whose root places the slot.
fn next_slot(
    node: &LocalNode,
    params: &NetworkParams,
    probe: &IdentityId,
    previous: Option<u64>,
) -> anyhow::Result<(u64, Range<u64>, u64)> {
    if let Some(prev) = previous {
        let t = prev + 1;
        let ready = params.window_start(t) + params.grace_ms;
        sleep_until(ready);
        for _ in 0..300 {
            let w = node.gateway.get(&format!("/v1/windows/{prev}"))?.body;
            if w["certified"] == true {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
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

fn sleep_until(at: u64) {
    let now = SystemClock.now();
    if at > now {
        std::thread::sleep(Duration::from_millis(at - now));
    }
}

/// What the identities' windows came to.
#[derive(Debug, Default)]
struct Tally {
    losses: BTreeMap<String, u64>,
    prompts: Prompts,
    cognitive: BTreeMap<String, Answered>,
}

/// The person: one pair of hands, one touch at a time.
struct Person {
    touch: Duration,
    schedule: Schedule,
    desk: Mutex<Desk>,
    bell: Condvar,
    touched: AtomicU64,
    dropped: AtomicU64,
}

/// The prompts waiting for a touch, and how many identities may still bring one.
#[derive(Default)]
struct Desk {
    /// Taken on, in no order.
    waiting: Vec<Waiting>,
    playing: usize,
    arrivals: u64,
    /// When the touch in progress ends (ms since the epoch).
    busy_until: u64,
}

/// A prompt waiting for a touch.
struct Waiting {
    deadline: u64,
    /// The identity: its index, steps passed and spare tries left.
    who: usize,
    passed: usize,
    spares_left: usize,
    arrival: u64,
    done: mpsc::Sender<bool>,
}

impl Waiting {
    /// The earliest-deadline-first order.
    fn order(&self) -> (u64, u64) {
        (self.deadline, self.arrival)
    }

    /// Larger: let go first.
    fn expendable(&self) -> (usize, std::cmp::Reverse<usize>, usize) {
        (self.spares_left, std::cmp::Reverse(self.passed), self.who)
    }
}

impl Person {
    fn new(opts: &Options) -> Self {
        Self {
            touch: Duration::from_millis(opts.touch_ms),
            schedule: opts.schedule,
            desk: Mutex::new(Desk::default()),
            bell: Condvar::new(),
            touched: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    fn desk(&self) -> std::sync::MutexGuard<'_, Desk> {
        self.desk.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Asks for a touch on a prompt due at `deadline` for identity `who` with `passed` steps
    /// passed and `spares_left` spare tries left; true once the touch is done, false if the
    /// person let the prompt go.
    fn ask(&self, deadline: u64, who: usize, passed: usize, spares_left: usize) -> bool {
        let (done, touched) = mpsc::channel();
        {
            let mut desk = self.desk();
            desk.arrivals += 1;
            let arrival = desk.arrivals;
            desk.waiting.push(Waiting {
                deadline,
                who,
                passed,
                spares_left,
                arrival,
                done,
            });
            if self.schedule == Schedule::Triage {
                self.admit(&mut desk, SystemClock.now());
            }
        }
        self.bell.notify_all();
        let wait = deadline.saturating_sub(SystemClock.now()) + 2_000;
        touched
            .recv_timeout(Duration::from_millis(wait))
            .unwrap_or(false)
    }

    fn join(&self, identities: usize) {
        self.desk().playing = identities;
    }

    /// An identity will bring no more prompts this window.
    fn leave(&self) {
        {
            let mut desk = self.desk();
            desk.playing = desk.playing.saturating_sub(1);
        }
        self.bell.notify_all();
    }

    /// Touches prompts until no identity may bring one, or `until` (ms since the epoch).
    fn serve(&self, until: u64) {
        let touch_ms = self.touch.as_millis() as u64;
        loop {
            let next = {
                let mut desk = self.desk();
                loop {
                    let now = SystemClock.now();
                    if (desk.playing == 0 && desk.waiting.is_empty()) || now > until {
                        for w in desk.waiting.drain(..) {
                            let _ = w.done.send(false);
                        }
                        return;
                    }
                    // A prompt a touch started now would answer late is let go.
                    let cutoff = now + touch_ms + MARGIN_MS;
                    let before = desk.waiting.len();
                    desk.waiting.retain(|w| {
                        let keep = w.deadline >= cutoff;
                        if !keep {
                            let _ = w.done.send(false);
                        }
                        keep
                    });
                    let let_go = (before - desk.waiting.len()) as u64;
                    self.dropped.fetch_add(let_go, Ordering::Relaxed);
                    if let Some(i) = pick(&desk.waiting) {
                        desk.busy_until = now + touch_ms;
                        break desk.waiting.swap_remove(i);
                    }
                    desk = self
                        .bell
                        .wait_timeout(desk, Duration::from_millis(100))
                        .map_or_else(|e| e.into_inner().0, |(d, _)| d);
                }
            };
            std::thread::sleep(self.touch);
            self.touched.fetch_add(1, Ordering::Relaxed);
            let _ = next.done.send(true);
        }
    }

    /// Triage on an arrival at `now`: lets prompts go until the earliest-deadline-first order
    /// of those taken on, from when the person is next free, touches each in time.
    fn admit(&self, desk: &mut Desk, now: u64) {
        let touch = self.touch.as_millis() as i128;
        let free = i128::from(now.max(desk.busy_until));
        // Bounded: each round lets one prompt go.
        for _ in 0..=desk.waiting.len() {
            desk.waiting.sort_by_key(Waiting::order);
            // Slack of each prompt when all before it are touched first.
            let margins: Vec<i128> = desk
                .waiting
                .iter()
                .enumerate()
                .map(|(k, w)| {
                    i128::from(w.deadline) - free - (k as i128 + 1) * touch - i128::from(MARGIN_MS)
                })
                .collect();
            if margins.iter().all(|&m| m >= 0) {
                return;
            }
            // Letting prompt e go keeps the slack before it and adds a touch to each after it.
            let n = margins.len();
            let mut suffix = vec![i128::MAX; n + 1];
            for k in (0..n).rev() {
                suffix[k] = suffix[k + 1].min(margins[k]);
            }
            let mut prefix = i128::MAX;
            let mut go: Option<usize> = None;
            for e in 0..n {
                if prefix >= 0 && suffix[e + 1].saturating_add(touch) >= 0 {
                    let w = &desk.waiting[e];
                    if go.is_none_or(|g| w.expendable() > desk.waiting[g].expendable()) {
                        go = Some(e);
                    }
                }
                prefix = prefix.min(margins[e]);
            }
            // None restores the order alone (time ran on): the first one late goes.
            let e = go.unwrap_or_else(|| margins.iter().position(|&m| m < 0).unwrap_or(0));
            let w = desk.waiting.remove(e);
            let _ = w.done.send(false);
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The next prompt to touch: the earliest deadline.
fn pick(waiting: &[Waiting]) -> Option<usize> {
    (0..waiting.len()).min_by_key(|&i| waiting[i].order())
}

/// One window's play.
struct Game<'a> {
    node: &'a LocalNode,
    params: &'a NetworkParams,
    registry: &'a Registry,
    presence: &'a Presence,
    device: &'a Device,
    person: &'a Person,
    tally: &'a Mutex<Tally>,
    w_t: Digest,
    t: u64,
    slot: Range<u64>,
    closes_at: u64,
    /// Identities `0..serve` are served.
    serve: usize,
}

/// How one identity's window ended.
struct Ended {
    active: bool,
    /// The refusal that left too few tries, else the node's last code.
    loss: String,
}

impl Game<'_> {
    fn tally(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every identity plays the window; the person serves them.
    fn play(&self, keys: &[SigningKey], passkeys: &[Passkey]) {
        self.person.join(keys.len());
        // The last answer comes by the slot's end plus the longest deadline.
        let longest = self
            .params
            .families
            .iter()
            .map(|f| f.deadline_ms)
            .max()
            .unwrap_or(0);
        let until = self.slot.end + longest + 5_000;
        std::thread::scope(|s| {
            s.spawn(|| self.person.serve(until));
            for (who, (key, passkey)) in keys.iter().zip(passkeys).enumerate() {
                s.spawn(move || {
                    let ended = self.identity(who, key, passkey).unwrap_or_else(|e| {
                        tracing::warn!(error = %e, "one person: identity-window failed");
                        Ended {
                            active: false,
                            loss: "harness_error".into(),
                        }
                    });
                    self.person.leave();
                    if !ended.active {
                        *self.tally().losses.entry(ended.loss).or_insert(0) += 1;
                    }
                });
            }
        });
    }

    /// One identity's window, as `hco client solve` plays it.
    fn identity(&self, who: usize, key: &SigningKey, passkey: &Passkey) -> anyhow::Result<Ended> {
        let id = IdentityId(key.verifying_key().to_bytes());
        let policy = self.params.policy(Class::Human);
        let (steps, spares) = (policy.steps.len(), policy.spares as usize);
        sleep_until(self.slot.start);
        let (mut j, mut passed) = (0u32, 0usize);
        let mut failures: Vec<String> = Vec::new();
        for _ in 0..MAX_REQUESTS {
            if passed >= steps {
                return Ok(Ended {
                    active: true,
                    loss: String::new(),
                });
            }
            if SystemClock.now() >= self.closes_at {
                break;
            }
            let reply = self
                .node
                .gateway
                .post("/v1/challenges", &SignedRequest::new(key, self.t, j))?;
            let opens_at = reply.body["opens_at"].as_u64().unwrap_or(0);
            let view: ChallengeView = match reply.into_result() {
                Ok(view) => view,
                Err((code, _)) if code == "step_not_open" && opens_at < self.closes_at => {
                    sleep_until(opens_at.max(SystemClock.now() + 1) + 1);
                    continue;
                }
                Err((code, _)) => {
                    return Ok(Ended {
                        active: false,
                        loss: loss(&failures, spares).unwrap_or(code),
                    });
                }
            };
            let family = view.prompt.family.clone();
            let c = &view.challenge.challenge;
            let (issued_at, deadline) = (c.issued_at, c.deadline);
            let floor = issued_at + self.params.min_solve_ms(&family) + FLOOR_MARGIN_MS;
            let verdict = if self.params.is_prompt(&family, self.registry) {
                self.tally().prompts.issued += 1;
                let spares_left = spares.saturating_sub(failures.len());
                let served = who < self.serve;
                if !served {
                    self.tally().prompts.unserved += 1;
                }
                if served && self.person.ask(deadline, who, passed, spares_left) {
                    let assertion =
                        self.device
                            .assert(self.presence, &c.challenge_id().0, passkey)?;
                    sleep_until(floor);
                    let verdict = self.respond(key, view.challenge.clone(), assertion)?;
                    self.tally().prompts.accepted += u64::from(verdict.is_none());
                    verdict
                } else {
                    // Not answered: it expires (a try used) before the next may be asked.
                    sleep_until(deadline + 1);
                    Some("challenge_expired".to_owned())
                }
            } else {
                let answer = self.model_answer(&id, j, &family)?;
                sleep_until(floor);
                let verdict = self.respond(key, view.challenge.clone(), answer)?;
                let mut tally = self.tally();
                let e = tally.cognitive.entry(family).or_default();
                e.answered += 1;
                e.accepted += u64::from(verdict.is_none());
                verdict
            };
            match verdict {
                None => passed += 1,
                Some(code) => failures.push(code),
            }
            j += 1;
        }
        Ok(Ended {
            active: passed >= steps,
            loss: loss(&failures, spares).unwrap_or_else(|| "too_many_requests".into()),
        })
    }

    /// The model's answer to challenge `j` of `id`: the family's reference answer from the
    /// regenerated answer key.
    fn model_answer(&self, id: &IdentityId, j: u32, family: &str) -> anyhow::Result<Vec<u8>> {
        let profile = Profile {
            class: Class::Human,
            visual_opt_out: false,
        };
        let (config, generated) = hco_oracle::derive_challenge(
            self.params,
            self.registry,
            &self.w_t,
            profile,
            id,
            self.t,
            j,
            family,
        )
        .map_err(|e| anyhow::anyhow!("regenerating ({}, {j}): {e}", self.t))?;
        self.registry
            .get(&config.name)
            .and_then(|f| f.reference_answer(&generated.key))
            .ok_or_else(|| anyhow::anyhow!("family `{family}` has no reference answer"))
    }

    /// Signs and sends `answer`; `None` if accepted, else the refusal code.
    fn respond(
        &self,
        key: &SigningKey,
        challenge: hco_oracle::SignedChallenge,
        answer: Vec<u8>,
    ) -> anyhow::Result<Option<String>> {
        let response = Response::new(key, challenge, answer);
        Ok(self
            .node
            .gateway
            .post("/v1/responses", &response)?
            .into_result::<VerdictView>()
            .err()
            .map(|(code, _)| code))
    }
}

/// The failure that left too few tries: the one past the spares.
fn loss(failures: &[String], spares: usize) -> Option<String> {
    failures.get(spares).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(touch_ms: u64, schedule: Schedule) -> Options {
        Options {
            identities: 3,
            windows: 1,
            touch_ms,
            window: Duration::from_secs(180),
            grace: Duration::from_secs(60),
            slot: None,
            schedule,
            serve: None,
        }
    }

    fn waiting(deadline: u64, who: usize, passed: usize, spares_left: usize) -> Waiting {
        Waiting {
            deadline,
            who,
            passed,
            spares_left,
            arrival: who as u64,
            done: mpsc::channel().0,
        }
    }

    #[test]
    fn the_person_touches_the_earliest_deadline_first() {
        let queue = [
            waiting(5_300, 0, 0, 1),
            waiting(5_100, 1, 0, 1),
            waiting(5_900, 2, 2, 1),
        ];
        assert_eq!(pick(&queue), Some(1));
        assert_eq!(pick(&[]), None);
    }

    #[test]
    fn triage_lets_the_most_expendable_prompt_go() {
        // Three prompts due within 2.5 s at a 1 s touch: one must go. Identity 0 has used its
        // spare, identity 2 has passed two steps: identity 1 goes.
        let person = Person::new(&options(1000, Schedule::Triage));
        let mut desk = Desk {
            waiting: vec![
                waiting(12_500, 0, 0, 0),
                waiting(12_400, 1, 0, 1),
                waiting(12_300, 2, 2, 1),
            ],
            ..Desk::default()
        };
        person.admit(&mut desk, 10_000);
        let mut left: Vec<usize> = desk.waiting.iter().map(|w| w.who).collect();
        left.sort_unstable();
        assert_eq!(left, [0, 2]);
        assert_eq!(person.dropped.load(Ordering::Relaxed), 1);
        // When they all fit, none goes.
        person.admit(&mut desk, 10_000);
        assert_eq!(desk.waiting.len(), 2);
    }

    #[test]
    fn the_loss_is_the_failure_past_the_spares() {
        let f = ["challenge_expired".to_owned(), "answer_mismatch".to_owned()];
        assert_eq!(loss(&f[..1], 1), None);
        assert_eq!(loss(&f, 1).as_deref(), Some("answer_mismatch"));
        assert_eq!(loss(&f, 0).as_deref(), Some("challenge_expired"));
    }

    #[test]
    fn an_unheld_prompt_is_let_go_and_a_held_one_touched() {
        for schedule in [Schedule::Edf, Schedule::Triage] {
            let person = Person::new(&options(20, schedule));
            person.join(1);
            std::thread::scope(|s| {
                s.spawn(|| person.serve(SystemClock.now() + 10_000));
                let now = SystemClock.now();
                assert!(!person.ask(now + 50, 0, 0, 1), "no touch answers in time");
                assert!(person.ask(SystemClock.now() + 5_000, 0, 0, 1));
                person.leave();
            });
            assert_eq!(person.touched.load(Ordering::Relaxed), 1);
            assert_eq!(person.dropped.load(Ordering::Relaxed), 1);
        }
    }
}
