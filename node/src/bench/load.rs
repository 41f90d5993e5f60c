//! Load generation against running nodes: shared by `hco bench http` and `hco bench gossip`.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use ed25519_dalek::SigningKey;
use hco_challenges::{Class, Prompt, Registry};
use hco_oracle::{Clock, Response, SignedRegister, SignedRequest, SystemClock};
use serde::Deserialize;

use crate::api::{ChallengeView, PromptView};
use crate::bench::wire::{TaskWire, Wire};
use crate::client::Reply;
use crate::config::Config;

/// The outcome of answering one challenge.
pub struct RoundTrip {
    /// Whether the response was accepted.
    pub accepted: bool,
    /// HTTP errors on the way (non-2xx or unreachable).
    pub errors: u32,
    /// Latency of the response request (the verification), when it was made.
    pub respond: Option<Duration>,
    /// The acceptance's window and receipt time at the issuer.
    pub accepted_at: Option<(u64, u64)>,
}

/// Registers `key` as an agent (no proof of work); the error code when it fails.
pub fn register(gw: &Wire, key: &SigningKey, now_ms: u64) -> Result<(), String> {
    register_proven(gw, key, now_ms, 0)
}

/// Registers `keys` as agents with `concurrency` clients; the refusals, counted by code.
pub fn register_all(url: &str, keys: &[SigningKey], concurrency: usize) -> BTreeMap<String, u64> {
    let next = AtomicUsize::new(0);
    let codes = Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..concurrency {
            s.spawn(|| {
                let gw = Wire::new(url);
                while let Some(key) = keys.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(code) = register(&gw, key, SystemClock.now()) {
                        tracing::debug!(%code, "registration failed");
                        if let Ok(mut codes) = codes.lock() {
                            *codes.entry(code).or_insert(0u64) += 1;
                        }
                    }
                }
            });
        }
    });
    codes.into_inner().unwrap_or_default()
}

/// Registers `key` as an agent with a proof of work of `pow_bits` (0: none); the error code
/// when it fails.
pub fn register_proven(
    gw: &Wire,
    key: &SigningKey,
    now_ms: u64,
    pow_bits: u32,
) -> Result<(), String> {
    match gw.post(
        "/v1/identities",
        &SignedRegister::proven(key, Class::Agent.into(), now_ms, pow_bits),
    ) {
        Ok(r) if r.status == 201 => Ok(()),
        Ok(r) => Err(r.body["code"].as_str().unwrap_or("http_error").to_owned()),
        Err(_) => Err("unreachable".into()),
    }
}

/// Requests the challenge of a signed request for a registered `key`, solves it and responds.
pub fn challenge_and_respond_signed(
    gw: &Wire,
    registry: &Registry,
    key: &SigningKey,
    request: &SignedRequest,
) -> RoundTrip {
    match request_challenge(gw, request) {
        Ok(issued) => respond(gw, registry, key, issued),
        Err(_) => RoundTrip::failed(),
    }
}

/// [`challenge_and_respond_signed`] from a task.
pub async fn challenge_and_respond_in_task(
    gw: &mut TaskWire,
    registry: &Registry,
    key: &SigningKey,
    request: &SignedRequest,
) -> RoundTrip {
    match request_challenge_in_task(gw, request).await {
        Ok(issued) => respond_in_task(gw, registry, key, issued).await,
        Err(_) => RoundTrip::failed(),
    }
}

/// A challenge request the node refused: its error code and, for `step_not_open`, when the
/// challenge opens (ms since the Unix epoch).
#[derive(Debug)]
pub struct Refusal {
    /// The stable error code (`unreachable` when the node did not answer).
    pub code: String,
    /// When to ask again, for `step_not_open`.
    pub opens_at: Option<u64>,
}

/// Requests the challenge of a signed request: the node's reply (envelope and prompt).
fn request_challenge(gw: &Wire, request: &SignedRequest) -> Result<ChallengeView, Refusal> {
    issued(gw.post_for("/v1/challenges", request))
}

/// [`request_challenge`] from a task.
pub async fn request_challenge_in_task(
    gw: &mut TaskWire,
    request: &SignedRequest,
) -> Result<ChallengeView, Refusal> {
    issued(gw.post_for("/v1/challenges", request).await)
}

/// The challenge in the node's reply to a challenge request, or why there is none.
fn issued(reply: anyhow::Result<Result<ChallengeView, Reply>>) -> Result<ChallengeView, Refusal> {
    match reply {
        Ok(Ok(issued)) => Ok(issued),
        Ok(Err(r)) => Err(Refusal {
            code: r.body["code"].as_str().unwrap_or("http_error").to_owned(),
            opens_at: r.body["opens_at"].as_u64(),
        }),
        Err(_) => Err(Refusal {
            code: "unreachable".into(),
            opens_at: None,
        }),
    }
}

/// Solves an issued challenge (as [`request_challenge`] returned it) and responds with `key`.
fn respond(gw: &Wire, registry: &Registry, key: &SigningKey, issued: ChallengeView) -> RoundTrip {
    let Some(response) = answer(registry, key, issued) else {
        return RoundTrip::failed();
    };
    let start = Instant::now();
    let reply = gw.post_for::<_, Accepted>("/v1/responses", &response);
    RoundTrip::of(reply, start.elapsed())
}

/// [`respond`] from a task.
pub async fn respond_in_task(
    gw: &mut TaskWire,
    registry: &Registry,
    key: &SigningKey,
    issued: ChallengeView,
) -> RoundTrip {
    let Some(response) = answer(registry, key, issued) else {
        return RoundTrip::failed();
    };
    let start = Instant::now();
    let reply = gw.post_for::<_, Accepted>("/v1/responses", &response).await;
    RoundTrip::of(reply, start.elapsed())
}

/// The answer to an issued challenge, signed with `key` (`None`: the solver failed).
fn answer(registry: &Registry, key: &SigningKey, issued: ChallengeView) -> Option<Response> {
    let answer = solve(registry, issued.prompt)?;
    Some(Response::new(key, issued.challenge, answer))
}

impl RoundTrip {
    /// A round trip that failed before its response was sent.
    fn failed() -> Self {
        Self {
            accepted: false,
            errors: 1,
            respond: None,
            accepted_at: None,
        }
    }

    /// The round trip of a response whose request took `latency` and got `reply`.
    fn of(reply: anyhow::Result<Result<Accepted, Reply>>, latency: Duration) -> Self {
        let accepted_at = match reply {
            Ok(Ok(verdict)) => Some((verdict.window, verdict.accepted_at)),
            _ => None,
        };
        Self {
            accepted: accepted_at.is_some(),
            errors: u32::from(accepted_at.is_none()),
            respond: Some(latency),
            accepted_at,
        }
    }
}

/// What the load generator reads of an accepted response's verdict (the rest, the sealed
/// acceptance included, is skipped unread).
#[derive(Deserialize)]
struct Accepted {
    window: u64,
    accepted_at: u64,
}

/// Runs `clients` virtual clients as tasks on `threads` threads (the measured load runs one per
/// core), each thread with its own single-threaded tokio runtime (threads keep the calling
/// thread's priority); `client(k)` makes client `k`'s future. Their outputs, in no particular
/// order.
pub fn run_in_tasks<T: Send, F: Future<Output = T>>(
    clients: usize,
    threads: usize,
    client: impl Fn(usize) -> F + Sync,
) -> anyhow::Result<Vec<T>> {
    let threads = threads.clamp(1, clients.max(1));
    std::thread::scope(|s| {
        let running: Vec<_> = (0..threads)
            .map(|first| {
                let client = &client;
                s.spawn(move || -> anyhow::Result<Vec<T>> {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()?;
                    let mine = (first..clients).step_by(threads).map(client);
                    Ok(runtime.block_on(futures::future::join_all(mine)))
                })
            })
            .collect();
        let mut outputs = Vec::with_capacity(clients);
        for thread in running {
            outputs.extend(
                thread
                    .join()
                    .map_err(|_| anyhow::anyhow!("a load thread panicked"))??,
            );
        }
        Ok(outputs)
    })
}

fn solve(registry: &Registry, prompt: PromptView) -> Option<Vec<u8>> {
    let prompt = Prompt {
        data: serde_json::to_vec(&prompt.data).ok()?,
        family: prompt.family,
        text: prompt.text,
    };
    registry.get(&prompt.family)?.solve(&prompt)
}

/// The current window and time as the node reports them.
pub fn current(gw: &Wire) -> anyhow::Result<(u64, u64)> {
    let w = gw.get("/v1/windows/current")?.body;
    Ok((
        w["t"].as_u64().context("window")?,
        w["now"].as_u64().context("now")?,
    ))
}

/// Peak resident memory of a process in MiB (Linux).
pub fn peak_rss_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// CPU time (user + system) a process has used so far, in seconds (Linux).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0) // USER_HZ is 100 on Linux
}

/// Runs the calling thread, and the threads it spawns afterwards, at the niceness the node under
/// test gives its client-serving threads (`node.client_nice` of `config`): on these shared cores
/// the load generator and those threads contend as equals, and the node's committee threads
/// come first, as on a member's own machine. Call once the node is started (it keeps its own).
pub fn run_at_client_priority(config: &Config) {
    crate::priority::lower_priority(i32::from(config.node.client_nice));
}

/// CPU time of the benchmarked server processes and of this process (the load generator) from
/// the start of a measured phase.
pub struct CpuMeter {
    pids: Vec<u32>,
    server: f64,
    client: f64,
}

/// What a [`CpuMeter`] read over a phase of `elapsed` seconds.
pub struct PhaseCpu {
    /// Server CPU, in seconds.
    pub server_s: f64,
    /// Load generator CPU, in seconds.
    pub client_s: f64,
    /// The phase's wall time, in seconds.
    pub elapsed: f64,
    /// The machine's cores.
    pub cores: usize,
}

impl CpuMeter {
    /// Starts measuring the server `pid` and this process.
    pub fn start(pid: u32) -> Self {
        Self::start_all(&[pid])
    }

    /// Starts measuring the server processes `pids` (their CPU summed) and this process.
    pub fn start_all(pids: &[u32]) -> Self {
        Self {
            pids: pids.to_vec(),
            server: servers_cpu(pids),
            client: cpu_seconds(std::process::id()).unwrap_or(0.0),
        }
    }

    /// The CPU used since [`CpuMeter::start`], over a phase of `elapsed` seconds.
    pub fn read(&self, elapsed: f64) -> PhaseCpu {
        PhaseCpu {
            server_s: servers_cpu(&self.pids) - self.server,
            client_s: cpu_seconds(std::process::id()).unwrap_or(0.0) - self.client,
            elapsed,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

fn servers_cpu(pids: &[u32]) -> f64 {
    pids.iter().filter_map(|p| cpu_seconds(*p)).sum()
}

impl PhaseCpu {
    /// The server's share of the machine's cores over the phase (two decimals).
    pub fn server_share(&self) -> f64 {
        self.share(self.server_s)
    }

    /// The load generator's share of the machine's cores over the phase (two decimals).
    pub fn client_share(&self) -> f64 {
        self.share(self.client_s)
    }

    fn share(&self, cpu: f64) -> f64 {
        (cpu / (self.elapsed * self.cores as f64) * 100.0).round() / 100.0
    }
}

/// The `q` quantile of sorted durations, in milliseconds.
pub fn quantile_ms(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    (sorted[i].as_secs_f64() * 1e6).round() / 1e3
}

/// Waits until the node at `url` answers `/healthz`.
pub fn wait_healthy(url: &str, limit: Duration) -> anyhow::Result<()> {
    let gw = Wire::new(url);
    let start = Instant::now();
    while start.elapsed() < limit {
        if gw.get("/healthz").is_ok_and(|r| r.status == 200) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    anyhow::bail!("the node at {url} did not start; see its log")
}

/// Every node's metrics, in Prometheus text, from the metrics listeners at `urls` (empty for a
/// node that does not answer).
pub fn scrape(urls: &[String]) -> Vec<String> {
    urls.iter()
        .map(|u| {
            Wire::new(u)
                .get("/metrics")
                .ok()
                .and_then(|r| r.body.as_str().map(str::to_owned))
                .unwrap_or_default()
        })
        .collect()
}

/// The sum over every node's metrics of the samples whose line starts with `name`.
pub fn sum_of(metrics: &[String], name: &str) -> f64 {
    // `+ 0.0`: an empty sum of floats is -0.0.
    metrics.iter().map(|m| metric_sum(m, name)).sum::<f64>() + 0.0
}

/// The sum of the samples of the Prometheus text whose line starts with `name`.
fn metric_sum(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(name))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_runs_once_and_clients_share_the_threads() {
        let mut outputs = run_in_tasks(5, 2, |k| async move {
            // A client that waits lets the others on its thread run meanwhile.
            tokio::time::sleep(Duration::from_millis(20)).await;
            (k, std::thread::current().id())
        })
        .unwrap();
        outputs.sort_by_key(|(k, _)| *k);
        let clients: Vec<usize> = outputs.iter().map(|(k, _)| *k).collect();
        assert_eq!(clients, vec![0, 1, 2, 3, 4]);
        let threads: std::collections::HashSet<_> = outputs.iter().map(|(_, t)| *t).collect();
        assert_eq!(threads.len(), 2);
        // More threads than clients: one thread per client.
        assert_eq!(run_in_tasks(1, 4, |k| async move { k }).unwrap(), vec![0]);
    }
}
