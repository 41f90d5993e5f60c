//! The identity-window phase of `hco bench http`: whole windows of a policy of several steps.
//!
//! Its identities (not those of the one-step phase) register first, unmeasured. Then each runs
//! its window as `hco client solve` does: request challenge 0, solve, answer; request
//! challenge 1, …; a refused answer uses the spare try, and a `step_not_open` refusal is waited
//! out until its `opens_at`. The client stops once every step passed (it knows the policy from
//! `GET /v1/windows/current`, which this phase does not call). Requests are signed before the
//! clock starts, responses once issued, as in the one-step phase.
//!
//! An identity-window counts only when every step's answer was accepted: the node's rule for
//! an identity to be active in the window. After the phase the node is asked, unmeasured,
//! how many steps each identity passed (`identity_windows_confirmed`).
//!
//! The node runs an `open` slot, so step `j + 1` may be asked for as soon as step `j` was
//! answered. Under a `global` or `staggered` slot (production: 100 s, one phase per try),
//! challenge `j` opens at a seed-drawn moment inside phase `j` of the slot: a 3-step window then
//! spans phases 0 to 2, tens of seconds whatever the server's speed, and the phase would time
//! the slot, not the server. The issuer's work per step is essentially the same in both modes
//! (the slot's beacon is cached per window; the opening moment is one hash).
//!
//! Every step is `proof_of_work`. The production human policy's first step is `presence`,
//! which adds a WebAuthn (P-256/ES256) assertion verification per identity-window on the
//! issuer; this phase does not include it (`identity_window_presence_verified: false`).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use hco_challenges::Registry;
use hco_oracle::{Clock, IdentityId, SignedRequest, SystemClock};
use serde::Serialize;

use super::load::{
    CpuMeter, Refusal, current, quantile_ms, register_all, request_challenge_in_task,
    respond_in_task, run_in_tasks,
};
use crate::bench::wire::{TaskWire, Wire};

/// Spare tries of the phase's policy (as in the production human policy).
pub const SPARES: u32 = 1;

/// The family of every step.
const STEP_FAMILY: &str = "proof_of_work";

/// What the phase runs against.
pub struct Phase<'a> {
    /// The node's gateway.
    pub url: &'a str,
    /// The node's process, for its CPU time.
    pub pid: u32,
    /// One identity per window; registered by [`run`].
    pub keys: &'a [SigningKey],
    /// Concurrent clients.
    pub concurrency: usize,
    /// Time limit of the measured phase (windows under way finish).
    pub limit: Duration,
    /// Steps of the node's agent policy (with [`SPARES`] spare tries).
    pub steps: u32,
}

/// The phase's figures, flattened into the report of `hco bench http`.
#[derive(Debug, Serialize)]
pub struct StepsReport {
    /// Identity-windows completed per second: every step requested, answered and accepted.
    identity_windows_per_s: f64,
    /// Steps of the policy each identity-window ran (3: as many as the production human
    /// policy).
    steps_per_identity_window: u32,
    /// Server CPU per completed identity-window, in milliseconds (every step `proof_of_work`;
    /// the human policy's WebAuthn verification of its presence step is not included).
    server_cpu_ms_per_identity_window: f64,
    /// Latency of an identity-window, from its first challenge request to its last verdict
    /// (client solving and signing included).
    identity_window_p50_ms: f64,
    identity_window_p99_ms: f64,
    /// Failed registrations of the phase's identities, refused challenge requests and refused
    /// or failed answers.
    identity_window_errors: u64,
    /// Identity-windows in which every step was accepted.
    identity_windows: usize,
    /// Identity-windows begun within the time limit.
    identity_windows_attempted: usize,
    /// Of the identities that began, those the node reports with every step passed in the
    /// window (asked after the phase): equals `identity_windows` when both agree.
    identity_windows_confirmed: usize,
    /// Accepted step answers per second in the phase (compare with `accepted_per_s`).
    steps_accepted_per_s: f64,
    /// Wall time of the phase, in seconds.
    identity_window_seconds: f64,
    identity_window_server_cpu_s: f64,
    identity_window_client_cpu_s: f64,
    /// Shares of the machine's cores over the phase, as in the one-step phase.
    identity_window_server_share_of_machine: f64,
    identity_window_client_share_of_machine: f64,
    /// The family of every step.
    identity_window_step_family: &'static str,
    /// Whether a presence step's WebAuthn assertion was verified per identity-window: false,
    /// the production human policy's presence step would add one P-256/ES256 verification.
    identity_window_presence_verified: bool,
}

/// How one identity-window went.
struct WindowTrip {
    /// Every step accepted.
    complete: bool,
    /// Steps accepted.
    accepted: u32,
    errors: u32,
    latency: Duration,
}

/// Registers the phase's identities, runs their windows, and asks the node what it recorded.
pub fn run(phase: &Phase<'_>) -> anyhow::Result<StepsReport> {
    let codes = register_all(phase.url, phase.keys, phase.concurrency);
    tracing::info!(?codes, "registration errors (identity-window phase)");
    let registration_errors: u64 = codes.values().sum();
    let t = current(&Wire::new(phase.url))?.0;
    let requests = sign_requests(phase.keys, t, phase.steps)?;
    let n = phase.keys.len();
    let next = AtomicUsize::new(0);
    let complete: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    let steps_accepted = AtomicU64::new(0);
    let meter = CpuMeter::start(phase.pid);
    let start = Instant::now();
    let clients = run_in_tasks(phase.concurrency, super::threads(None), |_| async {
        let mut gw = TaskWire::new(phase.url);
        let registry = Registry::builtin();
        let (mut latencies, mut errors) = (Vec::new(), 0u64);
        while start.elapsed() < phase.limit {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(key) = phase.keys.get(i) else {
                break;
            };
            let trip = identity_window(&mut gw, &registry, key, t, &requests[i], phase).await;
            errors += u64::from(trip.errors);
            steps_accepted.fetch_add(u64::from(trip.accepted), Ordering::Relaxed);
            complete[i].store(trip.complete, Ordering::Relaxed);
            if trip.complete {
                latencies.push(trip.latency);
            }
        }
        (latencies, errors)
    })?;
    let elapsed = start.elapsed().as_secs_f64();
    let cpu = meter.read(elapsed);
    let attempted = next.into_inner().min(n);
    let windows = complete
        .iter()
        .filter(|c| c.load(Ordering::Relaxed))
        .count();
    let confirmed = confirm(phase, t, attempted);
    let errors = registration_errors + clients.iter().map(|c| c.1).sum::<u64>();
    let mut latencies: Vec<Duration> = clients.into_iter().flat_map(|c| c.0).collect();
    latencies.sort();
    let round2 = |x: f64| (x * 100.0).round() / 100.0;
    Ok(StepsReport {
        identity_windows_per_s: round2(windows as f64 / elapsed),
        steps_per_identity_window: phase.steps,
        server_cpu_ms_per_identity_window: if windows > 0 {
            (cpu.server_s * 1000.0 / windows as f64 * 1000.0).round() / 1000.0
        } else {
            0.0
        },
        identity_window_p50_ms: quantile_ms(&latencies, 0.5),
        identity_window_p99_ms: quantile_ms(&latencies, 0.99),
        identity_window_errors: errors,
        identity_windows: windows,
        identity_windows_attempted: attempted,
        identity_windows_confirmed: confirmed,
        steps_accepted_per_s: (steps_accepted.into_inner() as f64 / elapsed).round(),
        identity_window_seconds: round2(elapsed),
        identity_window_server_cpu_s: round2(cpu.server_s),
        identity_window_client_cpu_s: round2(cpu.client_s),
        identity_window_server_share_of_machine: cpu.server_share(),
        identity_window_client_share_of_machine: cpu.client_share(),
        identity_window_step_family: STEP_FAMILY,
        identity_window_presence_verified: false,
    })
}

/// Runs the window of `key` in `t`: each step requested, solved and answered in turn, a
/// refused answer taking the spare try, until every step passed or no try is left.
async fn identity_window(
    gw: &mut TaskWire,
    registry: &Registry,
    key: &SigningKey,
    t: u64,
    signed: &[SignedRequest],
    phase: &Phase<'_>,
) -> WindowTrip {
    let start = Instant::now();
    let tries = phase.steps + SPARES;
    let (mut passed, mut errors, mut j) = (0u32, 0u32, 0u32);
    while passed < phase.steps && j < tries {
        let spare;
        let request = match signed.get(j as usize) {
            Some(request) => request,
            None => {
                spare = SignedRequest::new(key, t, j);
                &spare
            }
        };
        let issued = match request_challenge_in_task(gw, request).await {
            Ok(issued) => issued,
            // The step opens later in the slot: wait for it, as a client does.
            Err(Refusal {
                code,
                opens_at: Some(at),
            }) if code == "step_not_open"
                && at.saturating_sub(SystemClock.now()) < phase.limit.as_millis() as u64 =>
            {
                let wait = at.saturating_sub(SystemClock.now()).max(1);
                tokio::time::sleep(Duration::from_millis(wait)).await;
                continue;
            }
            Err(refusal) => {
                tracing::debug!(code = %refusal.code, j, "challenge refused");
                errors += 1;
                break;
            }
        };
        let trip = respond_in_task(gw, registry, key, issued).await;
        errors += trip.errors;
        passed += u32::from(trip.accepted);
        j += 1;
    }
    WindowTrip {
        complete: passed == phase.steps,
        accepted: passed,
        errors,
        latency: start.elapsed(),
    }
}

/// The challenge requests of every step of every identity, signed on all cores.
fn sign_requests(
    keys: &[SigningKey],
    t: u64,
    steps: u32,
) -> anyhow::Result<Vec<Vec<SignedRequest>>> {
    let threads = super::threads(None);
    let chunk = keys.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let parts: Vec<_> = keys
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|k| (0..steps).map(|j| SignedRequest::new(k, t, j)).collect())
                        .collect::<Vec<Vec<SignedRequest>>>()
                })
            })
            .collect();
        let mut all = Vec::with_capacity(keys.len());
        for part in parts {
            all.extend(
                part.join()
                    .map_err(|_| anyhow::anyhow!("a signing thread panicked"))?,
            );
        }
        Ok(all)
    })
}

/// How many of the first `attempted` identities the node reports with every step passed in
/// window `t`.
fn confirm(phase: &Phase<'_>, t: u64, attempted: usize) -> usize {
    let next = AtomicUsize::new(0);
    let confirmed = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..phase.concurrency {
            s.spawn(|| {
                let gw = Wire::new(phase.url);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(key) = phase.keys[..attempted].get(i) else {
                        break;
                    };
                    let id = IdentityId(key.verifying_key().to_bytes());
                    let Ok(reply) = gw.get(&format!("/v1/windows/current?id={id}")) else {
                        continue;
                    };
                    let passed = reply.body["identity"]["steps_passed"].as_u64();
                    if reply.body["t"].as_u64() == Some(t)
                        && passed.is_some_and(|p| p >= u64::from(phase.steps))
                    {
                        confirmed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    confirmed.into_inner()
}
