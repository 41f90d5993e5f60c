//! `hco bench http`: a node process and a load generator on loopback (its virtual clients are
//! tasks on one thread per core, see [`super::wire`]). Every virtual identity
//! registers, requests a challenge and answers it (`proof_of_work` at a low difficulty, so the
//! server rather than the client is measured), with durable writes on.
//!
//! Registration comes first, as before a ceremony; the first measured phase is the ceremony
//! itself: each identity requests its challenge and answers it. `accepted_per_s` counts accepted
//! responses per second of that phase; the latencies are those of the response requests.
//!
//! A second measured phase (`--policy-steps`, 3 by default: the length of the production human
//! policy `presence, cognitive, cognitive`) runs whole identity-windows: other identities,
//! registered after the first phase, each request step 0, answer, request step 1, answer, … as
//! `hco client solve` does, under an agent policy of that many drawn steps with one spare. It
//! reports `identity_windows_per_s` (windows in which every step was accepted, the node's rule
//! for an active identity) and the server's CPU per identity-window; see [`super::http_steps`].
//! Every step is `proof_of_work`: the phase measures the protocol's cost per step on the
//! server, not a family's. The real human policy's presence step also verifies a WebAuthn
//! (P-256/ES256) assertion per identity-window, which this phase does not include.
//!
//! The slot is `open` (every step may be asked for as soon as the one before it was answered) and
//! the window starts when the node does, so a run never crosses a window boundary.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant, UNIX_EPOCH};

use clap::Args;
use hco_challenges::Registry;
use hco_oracle::{Clock, Step, SystemClock, WindowPolicy};
use serde::Serialize;

use super::http_steps::{self, StepsReport};
use super::load::{
    CpuMeter, challenge_and_respond_in_task, current, peak_rss_mb, quantile_ms, register_all,
    run_at_client_priority, run_in_tasks, scrape, sum_of, wait_healthy,
};
use crate::bench::wire::{TaskWire, Wire};
use crate::config::{Config, FamilySection};

/// Options of `hco bench http`.
#[derive(Debug, Args)]
pub struct HttpArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Virtual identities of each measured phase (in the first, each requests and answers one
    /// challenge; in the second, each runs a whole window's steps).
    #[arg(long, default_value_t = 20_000)]
    pub identities: u64,
    /// Concurrent clients.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// Time limit of each measured phase.
    #[arg(long, default_value_t = 20)]
    pub seconds: u64,
    /// Steps of the identity-window phase (3: as many as the production human policy); 0 skips
    /// that phase.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=16))]
    pub policy_steps: u32,
}

#[derive(Debug, Serialize)]
struct Report {
    accepted_per_s: f64,
    p50_ms: f64,
    p99_ms: f64,
    errors: u64,
    server_rss_mb: f64,
    accepted: usize,
    identities_attempted: usize,
    concurrency: usize,
    seconds: f64,
    registrations_per_s: f64,
    server_cpu_s: f64,
    accepted_per_server_core_s: f64,
    /// Server CPU per accepted response, in milliseconds.
    server_cpu_ms_per_accepted: f64,
    /// CPU the load generator (this process) used in the measured phase.
    client_cpu_s: f64,
    /// Shares of the machine's cores over the measured phase: a server share well below 1
    /// with a large client share means the load generator, not the node, was the limit.
    server_share_of_machine: f64,
    client_share_of_machine: f64,
    cores: usize,
    durable_writes: bool,
    /// Responses per verification batch in the one-step phase (each batch is one batched
    /// signature check and one durable flush).
    responses_per_flush: f64,
    /// The identity-window phase (absent with `--policy-steps 0`).
    #[serde(flatten)]
    steps: Option<StepsReport>,
}

/// The first identity key of the one-step phase; the identity-window phase's follow its last.
const FIRST_KEY: u64 = 10_000_000;

/// What one virtual client of the one-step phase counted.
#[derive(Default)]
struct ClientTally {
    accepted: usize,
    errors: u64,
    latencies: Vec<Duration>,
}

pub fn run(args: HttpArgs) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut config = Config::default();
    config.node.key_file = dir.path().join("node.key");
    config.node.data_dir = dir.path().join("ledger");
    let ports = crate::devnet::distinct_ports(2)?;
    config.http.listen = ([127, 0, 0, 1], ports[0]).into();
    config.metrics.listen = Some(([127, 0, 0, 1], ports[1]).into());
    // The load comes from one loopback address: measure the node, not its per-client limits.
    config.http.limits = crate::config::HttpLimits::unlimited();
    // A window that begins now: both phases run inside it.
    config.network.genesis = UNIX_EPOCH + Duration::from_secs(SystemClock.now() / 1000 - 1);
    config.network.window = Duration::from_secs(3600);
    config.network.grace = Duration::from_secs(30);
    // Agents on proof_of_work alone: a development network.
    config.network.development = true;
    config.network.families = vec![FamilySection {
        name: "proof_of_work".into(),
        deadline: Duration::from_secs(30),
        difficulty: 2,
        min_solve: None,
    }];
    if args.policy_steps > 0 {
        // Drawn steps, like the human policy's cognitive ones; proof of work is the only family.
        config.network.policy.agent = WindowPolicy {
            steps: vec![Step::Drawn; args.policy_steps as usize],
            spares: http_steps::SPARES,
        };
    }
    let path = dir.path().join("bench.toml");
    config.save(&path)?;
    let pid = crate::devnet::spawn(&path, &dir.path().join("node.log"))?;
    let url = format!("http://{}", config.http.listen);
    let metrics_url = format!("http://127.0.0.1:{}", ports[1]);
    let _stop = KillOnDrop(pid);
    run_at_client_priority(&config);
    wait_healthy(&url, Duration::from_secs(20))?;

    // Registration phase (not measured).
    let n = args.identities;
    let concurrency = args.concurrency.max(1);
    let keys: Vec<_> = (0..n)
        .map(|i| hco_oracle::testing::key(FIRST_KEY + i))
        .collect();
    let reg_start = Instant::now();
    let codes = register_all(&url, &keys, concurrency);
    let registrations_per_s = n as f64 / reg_start.elapsed().as_secs_f64();
    tracing::info!(?codes, "registration errors");
    let errors: u64 = codes.values().sum();

    // The ceremony: request and answer. Requests are signed before the clock starts, as a
    // client would while waiting for its slot; responses can only be signed once issued.
    let t = current(&Wire::new(&url))?.0;
    let requests: Vec<_> = keys
        .iter()
        .map(|k| hco_oracle::SignedRequest::new(k, t, 0))
        .collect();
    let next = AtomicU64::new(0);
    let attempted = AtomicUsize::new(0);
    let limit = Duration::from_secs(args.seconds);
    let batches_before = verify_batches(&metrics_url);
    let meter = CpuMeter::start(pid);
    let start = Instant::now();
    let clients = run_in_tasks(concurrency, super::threads(None), |_| async {
        let mut gw = TaskWire::new(&url);
        let registry = Registry::builtin();
        let mut mine = ClientTally::default();
        while start.elapsed() < limit {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            attempted.fetch_add(1, Ordering::Relaxed);
            let (key, request) = (&keys[i as usize], &requests[i as usize]);
            let trip = challenge_and_respond_in_task(&mut gw, &registry, key, request).await;
            mine.errors += u64::from(trip.errors);
            mine.accepted += usize::from(trip.accepted);
            mine.latencies.extend(trip.respond);
        }
        mine
    })?;
    let elapsed = start.elapsed().as_secs_f64();
    let cpu = meter.read(elapsed);
    let server_cpu = cpu.server_s;
    let batches = verify_batches(&metrics_url) - batches_before;
    let accepted: usize = clients.iter().map(|c| c.accepted).sum();
    let errors = errors + clients.iter().map(|c| c.errors).sum::<u64>();
    let mut latencies: Vec<Duration> = clients.into_iter().flat_map(|c| c.latencies).collect();
    latencies.sort();
    // Peak memory through registration and the one-step phase, before the second phase.
    let server_rss_mb = peak_rss_mb(pid).unwrap_or(0.0).round();
    let steps = if args.policy_steps > 0 {
        let keys: Vec<_> = (0..n)
            .map(|i| hco_oracle::testing::key(FIRST_KEY + n + i))
            .collect();
        let phase = http_steps::Phase {
            url: &url,
            pid,
            keys: &keys,
            concurrency,
            limit,
            steps: args.policy_steps,
        };
        Some(http_steps::run(&phase)?)
    } else {
        None
    };
    let report = Report {
        accepted_per_s: (accepted as f64 / elapsed).round(),
        p50_ms: quantile_ms(&latencies, 0.5),
        p99_ms: quantile_ms(&latencies, 0.99),
        errors,
        server_rss_mb,
        accepted,
        identities_attempted: attempted.into_inner(),
        concurrency: args.concurrency,
        seconds: (elapsed * 100.0).round() / 100.0,
        registrations_per_s: registrations_per_s.round(),
        server_cpu_s: (server_cpu * 100.0).round() / 100.0,
        accepted_per_server_core_s: if server_cpu > 0.0 {
            (accepted as f64 / server_cpu).round()
        } else {
            0.0
        },
        server_cpu_ms_per_accepted: if accepted > 0 {
            (server_cpu * 1000.0 / accepted as f64 * 1000.0).round() / 1000.0
        } else {
            0.0
        },
        client_cpu_s: (cpu.client_s * 100.0).round() / 100.0,
        server_share_of_machine: cpu.server_share(),
        client_share_of_machine: cpu.client_share(),
        cores: cpu.cores,
        durable_writes: true,
        responses_per_flush: if batches > 0.0 {
            (accepted as f64 / batches * 10.0).round() / 10.0
        } else {
            0.0
        },
        steps,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

/// The verification batches the node whose metrics listener is at `url` has run so far.
fn verify_batches(url: &str) -> f64 {
    sum_of(&scrape(&[url.to_owned()]), "hco_verify_batch_size_count")
}

/// Stops the benchmarked node when the benchmark ends, however it ends.
pub struct KillOnDrop(pub u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .arg(self.0.to_string())
            .status();
    }
}
