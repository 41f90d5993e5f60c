//! `hco bench http`: a node process and a load generator on loopback. Every virtual identity
//! registers, requests a challenge and answers it (`proof_of_work` at a low difficulty, so the
//! server rather than the client is measured), with durable writes on.
//!
//! Registration comes first, as before a ceremony; the measured phase is the ceremony itself:
//! each identity requests its challenge and answers it. `accepted_per_s` counts accepted
//! responses per second of that phase; the latencies are those of the response requests.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use hco_challenges::Registry;
use hco_oracle::{Clock, SystemClock};
use serde::Serialize;

use super::load::{
    challenge_and_respond_signed, cpu_seconds, current, peak_rss_mb, quantile_ms, register,
    wait_healthy,
};
use crate::client::Gateway;
use crate::config::{Config, FamilySection};

/// Options of `hco bench http`.
#[derive(Debug, Args)]
pub struct HttpArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Virtual identities (each registers, then requests and answers one challenge).
    #[arg(long, default_value_t = 20_000)]
    pub identities: u64,
    /// Concurrent clients.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// Time limit of the measurement.
    #[arg(long, default_value_t = 20)]
    pub seconds: u64,
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
}

pub fn run(args: HttpArgs) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut config = Config::default();
    config.node.key_file = dir.path().join("node.key");
    config.node.data_dir = dir.path().join("ledger");
    config.http.listen = ([127, 0, 0, 1], crate::devnet::free_port()?).into();
    // The load comes from one loopback address: measure the node, not its per-client limits.
    config.http.limits = crate::config::HttpLimits::unlimited();
    config.network.window = Duration::from_secs(3600);
    config.network.grace = Duration::from_secs(30);
    config.network.families = vec![FamilySection {
        name: "proof_of_work".into(),
        deadline: Duration::from_secs(30),
        difficulty: 2,
        min_solve: None,
    }];
    let path = dir.path().join("bench.toml");
    config.save(&path)?;
    let pid = crate::devnet::spawn(&path, &dir.path().join("node.log"))?;
    let url = format!("http://{}", config.http.listen);
    let _stop = KillOnDrop(pid);
    wait_healthy(&url, Duration::from_secs(20))?;

    // Registration phase (not measured).
    let n = args.identities;
    let concurrency = args.concurrency.max(1);
    let next = AtomicU64::new(0);
    let errors = AtomicU64::new(0);
    let error_codes = Mutex::new(std::collections::BTreeMap::new());
    let reg_start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..concurrency {
            s.spawn(|| {
                let gw = Gateway::new(&url);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    if let Err(code) = register(
                        &gw,
                        &hco_oracle::testing::key(10_000_000 + i),
                        SystemClock.now(),
                    ) {
                        errors.fetch_add(1, Ordering::Relaxed);
                        tracing::debug!(%code, "registration failed");
                        if let Ok(mut codes) = error_codes.lock() {
                            *codes.entry(code).or_insert(0u64) += 1;
                        }
                    }
                }
            });
        }
    });
    let registrations_per_s = n as f64 / reg_start.elapsed().as_secs_f64();

    // The ceremony: request and answer. Requests are signed before the clock starts, as a
    // client would while waiting for its slot; responses can only be signed once issued.
    let t = current(&Gateway::new(&url))?.0;
    let keys: Vec<_> = (0..n)
        .map(|i| hco_oracle::testing::key(10_000_000 + i))
        .collect();
    let requests: Vec<_> = keys
        .iter()
        .map(|k| hco_oracle::SignedRequest::new(k, t, 0))
        .collect();
    let next = AtomicU64::new(0);
    let accepted = AtomicUsize::new(0);
    let attempted = AtomicUsize::new(0);
    let latencies = Mutex::new(Vec::new());
    let limit = Duration::from_secs(args.seconds);
    let server_cpu_before = cpu_seconds(pid).unwrap_or(0.0);
    let client_cpu_before = cpu_seconds(std::process::id()).unwrap_or(0.0);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..concurrency {
            s.spawn(|| {
                let gw = Gateway::new(&url);
                let registry = Registry::builtin();
                let mut mine = Vec::new();
                while start.elapsed() < limit {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    attempted.fetch_add(1, Ordering::Relaxed);
                    let trip = challenge_and_respond_signed(
                        &gw,
                        &registry,
                        &keys[i as usize],
                        &requests[i as usize],
                    );
                    errors.fetch_add(u64::from(trip.errors), Ordering::Relaxed);
                    if trip.accepted {
                        accepted.fetch_add(1, Ordering::Relaxed);
                    }
                    mine.extend(trip.respond);
                }
                if let Ok(mut all) = latencies.lock() {
                    all.extend(mine);
                }
            });
        }
    });
    let elapsed = start.elapsed().as_secs_f64();
    tracing::info!(codes = ?error_codes.lock().map(|c| c.clone()).unwrap_or_default(), "registration errors");
    let server_cpu = cpu_seconds(pid).unwrap_or(0.0) - server_cpu_before;
    let client_cpu = cpu_seconds(std::process::id()).unwrap_or(0.0) - client_cpu_before;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let share = |cpu: f64| (cpu / (elapsed * cores as f64) * 100.0).round() / 100.0;
    let mut latencies = latencies.into_inner().unwrap_or_default();
    latencies.sort();
    let accepted = accepted.into_inner();
    let report = Report {
        accepted_per_s: (accepted as f64 / elapsed).round(),
        p50_ms: quantile_ms(&latencies, 0.5),
        p99_ms: quantile_ms(&latencies, 0.99),
        errors: errors.into_inner(),
        server_rss_mb: peak_rss_mb(pid).unwrap_or(0.0).round(),
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
        client_cpu_s: (client_cpu * 100.0).round() / 100.0,
        server_share_of_machine: share(server_cpu),
        client_share_of_machine: share(client_cpu),
        cores,
        durable_writes: true,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
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
