//! `hco bench flood`: a junk-registration flood against one member on loopback, bounded in
//! count (`--junk`) and rate (`--junk-rate`). Honest identities, registered first, answer a
//! challenge in every window, first on a quiet node, then while the flood runs; the report compares their
//! verification p99 and gives the member's disk use at the flood's peak and after the idle
//! identities were pruned (`ledger.idle_identity_windows = 1`).
//!
//! The per-client HTTP limits are off: the flood comes from one address, and what is measured
//! is what a flood spread over many addresses costs the member. The junk is posted by raw
//! keep-alive HTTP/1.1 connections ([`junk::RawPoster`]); junk without a proof is prepared
//! before the flood (the report's `junk_prepare_s`), junk with one is computed as it is sent.
//!
//! `--registration-pow-bits` sets the network's registration proof of work (default 0: off).
//! Honest identities always compute their proof. The junk computes it too (`--junk-proof
//! compute`, the default: what an attacker pays) or deliberately leaves it out (`omit`: the
//! cost of refusing it); the report says which (`junk_proof`) and how many were refused.
//!
//! `--idle-connections N` runs the idle-connection flood instead (see [`idle`]): N silent
//! connections held against the member while honest clients ask for the current window.

mod honest;
mod idle;
mod junk;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use hco_oracle::ledger::LedgerError;
use hco_oracle::{Clock, SystemClock};
use serde::Serialize;

use super::http::KillOnDrop;
use super::load::{quantile_ms, run_at_client_priority, wait_healthy};
use crate::bench::wire::Wire;
use crate::config::{Config, FamilySection, HttpLimits};

/// Options of `hco bench flood`.
#[derive(Debug, Args)]
pub struct FloodArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Junk registrations sent.
    #[arg(long, default_value_t = 1_000_000)]
    pub junk: u64,
    /// Junk registrations per second aimed at (the flood's threads pace themselves).
    #[arg(long, default_value_t = 10_000)]
    pub junk_rate: u64,
    /// Threads sending junk.
    #[arg(long, default_value_t = 8)]
    pub junk_threads: usize,
    /// Seconds of honest traffic measured on the quiet node.
    #[arg(long, default_value_t = 15)]
    pub quiet_seconds: u64,
    /// Concurrent honest clients.
    #[arg(long, default_value_t = 4)]
    pub honest_clients: usize,
    /// Honest identities, registered before anything is measured; each answers one challenge
    /// per window in both phases.
    #[arg(long, default_value_t = 400)]
    pub honest_identities: u64,
    /// Window length in seconds (identities idle for one window are pruned).
    #[arg(long, default_value_t = 5)]
    pub window_seconds: u64,
    /// The network's registration proof of work, in leading zero bits (0: off).
    #[arg(long, default_value_t = 0)]
    pub registration_pow_bits: u32,
    /// Whether the junk computes the registration proof of work or leaves it out.
    #[arg(long, value_enum, default_value_t = JunkProof::Compute)]
    pub junk_proof: JunkProof,
    /// Idle connections to hold instead of the junk flood (0: the junk flood); capped to what
    /// this process's descriptor limit allows.
    #[arg(long, default_value_t = 0)]
    pub idle_connections: u64,
    /// Loopback addresses the idle connections come from (127.0.0.2 on; 1 to 254).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=254))]
    pub idle_sources: u8,
    /// Seconds of each honest phase (quiet, and with the idle connections held).
    #[arg(long, default_value_t = 15)]
    pub idle_seconds: u64,
    /// Reopen an idle connection this long after the member closed it (0: never).
    #[arg(long, default_value_t = 0)]
    pub idle_reopen_ms: u64,
    /// Honest requests per phase of the idle flood.
    #[arg(long, default_value_t = 300)]
    pub honest_requests: u64,
}

/// What the junk registrations carry as their proof of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JunkProof {
    /// Each junk registration computes the network's proof (none when the network needs none).
    Compute,
    /// The junk carries no proof (refused when the network requires one).
    Omit,
}

#[derive(Debug, Serialize)]
struct Report {
    registration_pow_bits: u32,
    junk_proof: JunkProof,
    junk_sent: u64,
    junk_registered: u64,
    junk_refused: u64,
    /// Every refusal of the junk, by code.
    junk_codes: BTreeMap<String, u64>,
    junk_per_s: f64,
    /// Seconds spent preparing the junk before the flood (0 when computed as sent).
    junk_prepare_s: f64,
    quiet_p99_ms: f64,
    flood_p99_ms: f64,
    p99_ratio: f64,
    quiet_honest_accepted: u64,
    flood_honest_accepted: u64,
    disk_mb_per_member_peak: f64,
    disk_mb_per_member_after_prune: f64,
    /// After the member was stopped and `hco node compact` ran on its ledger (null when the
    /// compaction failed; the log says why).
    disk_mb_per_member_after_compaction: f64,
    /// Seconds from stopping the member to the end of the compaction.
    compaction_s: f64,
    identities_pruned: u64,
    flood_seconds: f64,
}

/// The first honest identity's seed.
const HONEST_SEED: u64 = 20_000_000;
/// The first junk identity's seed.
const JUNK_SEED: u64 = 30_000_000;

/// Disk blocks used under `dir`, in MiB.
fn disk_mb(dir: &Path) -> f64 {
    use std::os::unix::fs::MetadataExt;
    fn walk(dir: &Path) -> u64 {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        entries
            .flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => walk(&e.path()),
                Ok(m) => m.blocks() * 512,
                Err(_) => 0,
            })
            .sum()
    }
    (walk(dir) as f64 / (1024.0 * 1024.0) * 10.0).round() / 10.0
}

/// Identities the node has pruned, from its metrics listener `metrics`.
fn pruned(metrics: &Wire) -> u64 {
    let Ok(reply) = metrics.get("/metrics") else {
        return 0;
    };
    reply
        .body
        .as_str()
        .unwrap_or("")
        .lines()
        .find_map(|l| l.strip_prefix("hco_identities_pruned_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0) as u64
}

pub fn run(args: FloodArgs) -> anyhow::Result<()> {
    if args.idle_connections > 0 {
        return idle::run(&args);
    }
    let dir = tempfile::tempdir()?;
    let mut config = Config::default();
    config.node.key_file = dir.path().join("node.key");
    config.node.data_dir = dir.path().join("ledger");
    let ports = crate::devnet::distinct_ports(2)?;
    config.http.listen = ([127, 0, 0, 1], ports[0]).into();
    config.metrics.listen = Some(([127, 0, 0, 1], ports[1]).into());
    config.http.limits = HttpLimits::unlimited();
    config.ledger.idle_identity_windows = 1;
    config.agent.enabled = false;
    // Agents on proof_of_work alone: a development network.
    config.network.development = true;
    config.network.window = Duration::from_secs(args.window_seconds.max(2));
    config.network.registration_pow_bits = args.registration_pow_bits;
    let pow_bits = args.registration_pow_bits;
    let junk_bits = match args.junk_proof {
        JunkProof::Compute => pow_bits,
        JunkProof::Omit => 0,
    };
    config.network.grace = Duration::from_secs(2);
    config.network.families = vec![FamilySection {
        name: "proof_of_work".into(),
        // Within the grace, as the parameters require.
        deadline: Duration::from_secs(2),
        difficulty: 2,
        min_solve: None,
    }];
    let path = dir.path().join("flood.toml");
    config.save(&path)?;
    let pid = crate::devnet::spawn(&path, &dir.path().join("node.log"))?;
    let node = KillOnDrop(pid);
    run_at_client_priority(&config);
    let url = format!("http://{}", config.http.listen);
    wait_healthy(&url, Duration::from_secs(30))?;
    let honest_keys = honest::register(
        &url,
        args.honest_identities,
        HONEST_SEED,
        args.honest_clients * 2,
        pow_bits,
    );
    anyhow::ensure!(
        !honest_keys.is_empty(),
        "no honest identity could register; see {}",
        dir.path().join("node.log").display()
    );

    // Quiet: honest traffic alone.
    let stop = AtomicBool::new(false);
    let (quiet, quiet_accepted) = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_secs(args.quiet_seconds.max(1)));
            stop.store(true, Ordering::Relaxed);
        });
        honest::play(&url, &honest_keys, args.honest_clients, &stop)
    });

    // The flood, with honest traffic alongside.
    let prepare_start = Instant::now();
    let prepared = if junk_bits == 0 {
        junk::prepare(args.junk, JUNK_SEED, SystemClock.now())
    } else {
        Vec::new()
    };
    let junk_prepare_s = prepare_start.elapsed().as_secs_f64();
    let stop = AtomicBool::new(false);
    let sent = AtomicU64::new(0);
    let registered = AtomicU64::new(0);
    let codes = Mutex::new(BTreeMap::<String, u64>::new());
    let peak_disk = Mutex::new(0.0f64);
    let threads = args.junk_threads.max(1);
    let per_thread = Duration::from_secs_f64(threads as f64 / args.junk_rate.max(1) as f64);
    let flood_start = Instant::now();
    let (flood, flood_accepted) = std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut poster = junk::RawPoster::new(config.http.listen);
                let mut refusals = BTreeMap::<String, u64>::new();
                let start = Instant::now();
                let mut mine = 0u64;
                loop {
                    let i = sent.fetch_add(1, Ordering::Relaxed);
                    if i >= args.junk {
                        break;
                    }
                    let fresh;
                    let body = match prepared.get(i as usize) {
                        Some(body) => body,
                        None => {
                            fresh = junk::body(JUNK_SEED + i, SystemClock.now(), junk_bits);
                            &fresh
                        }
                    };
                    match poster.post(body) {
                        Ok(junk::Outcome::Registered) => {
                            registered.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(junk::Outcome::Refused(code)) => *refusals.entry(code).or_default() += 1,
                        Err(_) => *refusals.entry("unreachable".into()).or_default() += 1,
                    }
                    mine += 1;
                    if let Some(wait) = (per_thread * mine as u32).checked_sub(start.elapsed()) {
                        std::thread::sleep(wait);
                    }
                }
                if let Ok(mut all) = codes.lock() {
                    for (code, n) in refusals {
                        *all.entry(code).or_default() += n;
                    }
                }
            });
        }
        s.spawn(|| {
            while sent.load(Ordering::Relaxed) < args.junk {
                std::thread::sleep(Duration::from_millis(500));
                if let Ok(mut peak) = peak_disk.lock() {
                    *peak = peak.max(disk_mb(&config.node.data_dir));
                }
            }
            stop.store(true, Ordering::Relaxed);
        });
        honest::play(&url, &honest_keys, args.honest_clients, &stop)
    });
    let flood_seconds = flood_start.elapsed().as_secs_f64();
    let junk_sent = sent.into_inner().min(args.junk);
    let junk_registered = registered.into_inner();
    let junk_codes = codes.into_inner().unwrap_or_default();
    let junk_refused = junk_codes
        .iter()
        .filter(|(code, _)| code.starts_with("registration_proof"))
        .map(|(_, n)| n)
        .sum();

    // Pruning: the junk is idle; wait (bounded) until the member has removed it (its metrics
    // listener says so).
    let metrics = Wire::new(&format!("http://127.0.0.1:{}", ports[1]));
    let wait_limit = Duration::from_secs(args.window_seconds.max(2) * 4 + 60);
    let start = Instant::now();
    while pruned(&metrics) < junk_registered && start.elapsed() < wait_limit {
        std::thread::sleep(Duration::from_millis(500));
    }
    // Give sled a moment to write its compacted segments before measuring.
    std::thread::sleep(Duration::from_secs(2));
    let peak = peak_disk
        .into_inner()
        .unwrap_or(0.0)
        .max(disk_mb(&config.node.data_dir));
    let after_prune = disk_mb(&config.node.data_dir);
    let identities_pruned = pruned(&metrics);
    // sled keeps the freed space; stopped, the member gives it back (`hco node compact`).
    drop(node);
    let compact_start = Instant::now();
    let compaction = loop {
        match hco_oracle::ledger::compact(&config.node.data_dir) {
            Ok(done) => break Some(done),
            // The node is still stopping (sled's lock is held).
            Err(LedgerError::InUse(_)) if compact_start.elapsed() < Duration::from_secs(30) => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => {
                tracing::warn!(error = %e, "compaction failed");
                break None;
            }
        }
    };
    let compaction_s = compact_start.elapsed().as_secs_f64();
    let quiet_p99 = quantile_ms(&quiet, 0.99);
    let flood_p99 = quantile_ms(&flood, 0.99);
    let report = Report {
        registration_pow_bits: pow_bits,
        junk_proof: args.junk_proof,
        junk_sent,
        junk_registered,
        junk_refused,
        junk_codes,
        junk_per_s: (junk_sent as f64 / flood_seconds).round(),
        junk_prepare_s: (junk_prepare_s * 100.0).round() / 100.0,
        quiet_p99_ms: quiet_p99,
        flood_p99_ms: flood_p99,
        p99_ratio: if quiet_p99 > 0.0 {
            (flood_p99 / quiet_p99 * 100.0).round() / 100.0
        } else {
            0.0
        },
        quiet_honest_accepted: quiet_accepted,
        flood_honest_accepted: flood_accepted,
        disk_mb_per_member_peak: peak,
        disk_mb_per_member_after_prune: after_prune,
        disk_mb_per_member_after_compaction: compaction
            .map(|_| disk_mb(&config.node.data_dir))
            .unwrap_or(f64::NAN),
        compaction_s: (compaction_s * 100.0).round() / 100.0,
        identities_pruned,
        flood_seconds: (flood_seconds * 100.0).round() / 100.0,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}
