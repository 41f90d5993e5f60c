//! Script-held identities under a whole network configuration: each identity runs its window's
//! step sequence as `hco client solve` does, every drawn challenge played by the strongest
//! in-tree attacker of its family, and the window's verdict is whether the node counts it
//! active (every step covered). Presence is played by the software passkey.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use hco_oracle::{Clock, IdentityId, SignedRequest, SystemClock};
use serde::Serialize;

use super::family::timing;
use super::local::LocalNode;
use crate::api::ChallengeView;
use crate::attack::stats::wilson;
use crate::attack::{Attack, Session};
use crate::config::Config;

/// The end-to-end figures of one configuration.
#[derive(Debug, Clone, Serialize)]
pub struct EndToEnd {
    /// Identity-windows the script held.
    pub identity_windows: u64,
    /// Of those, active at the end of the sequence.
    pub active: u64,
    /// Lower end of the 95 % Wilson interval of `active / identity_windows`.
    pub wilson_low: f64,
    /// Upper end.
    pub wilson_high: f64,
    /// Windows played.
    pub windows: u64,
    /// Identity-windows whose outcome could not be read (the window moved on, a transport
    /// error); not counted in `identity_windows`.
    pub unknown: u64,
    /// Challenges answered and accepted, by family.
    pub answered: BTreeMap<String, Answered>,
    /// How the identities' sequences ended: the node's last refusal code (`steps_complete`,
    /// `no_tries_left`…), by count.
    pub ended: BTreeMap<String, u64>,
}

/// Challenges of one family the script answered end to end.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Answered {
    /// Answers sent.
    pub answered: u64,
    /// Of those, accepted.
    pub accepted: u64,
}

/// Plays `identity_windows` identity-windows, `per_window` identities at a time, against a
/// node running `config` (committee of one; genesis moved so that windows start now).
pub fn run(
    config: &Config,
    attackers: &BTreeMap<String, Box<dyn Attack>>,
    identity_windows: u64,
    per_window: u64,
    probe_slot: bool,
) -> anyhow::Result<EndToEnd> {
    let keys: Vec<SigningKey> = (0..per_window.min(identity_windows).max(1))
        .map(|i| hco_oracle::testing::key(70_000_000 + i))
        .collect();
    let probe = IdentityId(keys[0].verifying_key().to_bytes());
    let node = LocalNode::start(config.clone(), |config, me| {
        if probe_slot {
            let lead = Duration::from_secs(8)..Duration::from_secs(40);
            super::local::genesis_with_slot_soon(config, me, &probe, lead)
        } else {
            config.network.genesis = super::local::genesis_now();
            Ok(())
        }
    })?;
    for key in &keys {
        node.register_human(key)
            .map_err(|code| anyhow::anyhow!("registration refused: {code}"))?;
    }
    let families: BTreeMap<String, _> = node
        .config
        .network
        .families
        .iter()
        .filter_map(|f| Some((f.name.clone(), timing(&node.config, &f.name).ok()?)))
        .collect();
    let mut out = EndToEnd {
        identity_windows: 0,
        active: 0,
        wilson_low: 0.0,
        wilson_high: 1.0,
        windows: 0,
        unknown: 0,
        answered: BTreeMap::new(),
        ended: BTreeMap::new(),
    };
    let ended = std::sync::Mutex::new(BTreeMap::<String, u64>::new());
    let answered = std::sync::Mutex::new(BTreeMap::<String, Answered>::new());
    let mut remaining = identity_windows;
    while remaining > 0 {
        // A placed slot was placed in the current window; an open one needs a whole window.
        let (t, start) = if probe_slot && out.windows == 0 {
            node.current()?
        } else {
            next_window_start(&node)?
        };
        let n = remaining.min(keys.len() as u64) as usize;
        let active = AtomicU64::new(0);
        let unknown = AtomicU64::new(0);
        std::thread::scope(|s| {
            for key in &keys[..n] {
                let (node, families, answered, ended) = (&node, &families, &answered, &ended);
                let (active, unknown) = (&active, &unknown);
                s.spawn(move || {
                    match identity_window(node, key, t, attackers, families, answered) {
                        Ok((is_active, code)) => {
                            if is_active {
                                active.fetch_add(1, Ordering::Relaxed);
                            }
                            if let Ok(mut e) = ended.lock() {
                                *e.entry(code).or_insert(0) += 1;
                            }
                        }
                        Err(e) => {
                            tracing::debug!(error = %e, "identity-window unknown");
                            unknown.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        let unknown = unknown.into_inner();
        out.unknown += unknown;
        out.identity_windows += n as u64 - unknown;
        out.active += active.into_inner();
        out.windows += 1;
        remaining -= n as u64;
        tracing::info!(t, start, "end-to-end window played");
    }
    out.answered = answered.into_inner().unwrap_or_default();
    out.ended = ended.into_inner().unwrap_or_default();
    (out.wilson_low, out.wilson_high) =
        wilson(out.active, out.identity_windows, crate::attack::stats::Z95);
    Ok(out)
}

/// Waits for the start of the next window unless the current one began less than
/// [`FRESH_MS`] ago; its index and start.
fn next_window_start(node: &LocalNode) -> anyhow::Result<(u64, u64)> {
    let w = node.gateway.get("/v1/windows/current")?.body;
    let (t, now, start, end) = (
        w["t"].as_u64().unwrap_or(0),
        w["now"].as_u64().unwrap_or(0),
        w["start"].as_u64().unwrap_or(0),
        w["end"].as_u64().unwrap_or(0),
    );
    if now.saturating_sub(start) < FRESH_MS {
        return Ok((t, start));
    }
    std::thread::sleep(Duration::from_millis(end.saturating_sub(now) + 50));
    Ok((t + 1, end))
}

/// A window this young still leaves its identities the whole sequence.
const FRESH_MS: u64 = 5_000;

/// One identity's window: every step until the node says the sequence is over; whether the
/// identity ended active, and the code that ended the sequence.
fn identity_window(
    node: &LocalNode,
    key: &SigningKey,
    t: u64,
    attackers: &BTreeMap<String, Box<dyn Attack>>,
    families: &BTreeMap<String, crate::attack::session::Timing>,
    answered: &std::sync::Mutex<BTreeMap<String, Answered>>,
) -> anyhow::Result<(bool, String)> {
    let id = IdentityId(key.verifying_key().to_bytes());
    let w = node
        .gateway
        .get(&format!("/v1/windows/current?id={id}"))?
        .body;
    let window_end = w["end"].as_u64().unwrap_or(0);
    // The identity's slot (the window itself when open): wait for it as a client does.
    if let Some(slot_start) = w["slot"]["start"].as_u64() {
        let wait = slot_start.saturating_sub(SystemClock.now());
        std::thread::sleep(Duration::from_millis(
            wait.min(window_end.saturating_sub(slot_start)),
        ));
    }
    let mut j = 0u32;
    let mut last = "too_many_steps".to_owned();
    for _ in 0..64 {
        let reply = node
            .gateway
            .post("/v1/challenges", &SignedRequest::new(key, t, j))?;
        let opens_at = reply.body["opens_at"].as_u64().unwrap_or(0);
        let view: ChallengeView = match reply.into_result() {
            Ok(view) => view,
            Err((code, _)) if code == "step_not_open" && opens_at > 0 && opens_at < window_end => {
                let wait = opens_at.saturating_sub(SystemClock.now()) + 50;
                std::thread::sleep(Duration::from_millis(wait.min(3_600_000)));
                continue;
            }
            Err((code, _)) => {
                last = code; // steps_complete, no_tries_left, the window closed…
                break;
            }
        };
        let family = view.prompt.family.clone();
        let timing = *families
            .get(&family)
            .ok_or_else(|| anyhow::anyhow!("family `{family}` has no timing"))?;
        let mut session = Session {
            gateway: &node.gateway,
            key,
            view,
            timing,
            issued: Instant::now(),
        };
        let verdict = match attackers.get(&family) {
            Some(attack) => attack.play(&mut session)?,
            None => session.respond(b"?")?,
        };
        if let Ok(mut a) = answered.lock() {
            let e = a.entry(family).or_default();
            e.answered += 1;
            e.accepted += u64::from(verdict.accepted());
        }
        j += 1;
    }
    let w = node
        .gateway
        .get(&format!("/v1/windows/current?id={id}"))?
        .body;
    if w["t"].as_u64() != Some(t) {
        anyhow::bail!("window {t} ended before its outcome was read");
    }
    let identity = &w["identity"];
    let passed = identity["steps_passed"].as_u64().unwrap_or(0);
    let steps = identity["steps"].as_u64().unwrap_or(u64::MAX);
    Ok((passed >= steps, last))
}
