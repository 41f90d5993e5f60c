//! `hco bench flood --idle-connections N`: N idle TCP connections held against one member on
//! loopback — opened, then silent — while honest clients keep asking for the current window on
//! fresh connections. The member runs the production connection limits (a cap per address, a
//! budget under its descriptor limit, the header-read and keep-alive timeouts) with the request
//! rate limits off; the report compares the honest latency quiet and under the flood and counts
//! what the member closed.
//!
//! The idle connections come from `--idle-sources` loopback addresses (127.0.0.2, .3, …; one
//! by default, as a single flooding host), the honest clients from 127.0.0.1. N is capped to
//! this process's descriptor limit (its soft limit raised to the hard one first) less a reserve;
//! `idle_target` says how many were aimed at. With `--idle-reopen-ms` the flood reopens each
//! connection the member closed after that long, as an attacker that keeps trying would.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::FloodArgs;
use crate::bench::http::KillOnDrop;
use crate::bench::load::{quantile_ms, run_at_client_priority, scrape, sum_of, wait_healthy};
use crate::config::{Config, HttpLimits};

/// Descriptors this process keeps for itself (honest clients, the runtime, stdout).
const RESERVED_FDS: u64 = 512;
/// Reasons the member counts closes under (`hco_http_connections_closed_total`).
const REASONS: [&str; 6] = [
    "header_timeout",
    "idle_timeout",
    "shed",
    "shutdown",
    "per_ip_limit",
    "budget_full",
];

#[derive(Debug, Serialize)]
struct Report {
    idle_requested: u64,
    idle_target: u64,
    idle_sources: u8,
    /// Most idle connections open at once (this side's count).
    idle_held: u64,
    idle_held_at_end: u64,
    idle_opened: u64,
    idle_connect_failed: u64,
    idle_closed_by_server: u64,
    node_budget: f64,
    node_per_ip_connections: u32,
    node_connections_peak: f64,
    node_closed: BTreeMap<&'static str, f64>,
    honest_requests_per_phase: u64,
    honest_p50_quiet_ms: f64,
    honest_p99_quiet_ms: f64,
    honest_p50_flood_ms: f64,
    honest_p99_flood_ms: f64,
    p99_ratio: f64,
    honest_errors_quiet: u64,
    honest_errors: u64,
    flood_seconds: f64,
}

/// The flood's counts.
#[derive(Default)]
struct Held {
    open: AtomicU64,
    peak: AtomicU64,
    opened: AtomicU64,
    failed: AtomicU64,
    closed_by_server: AtomicU64,
}

pub fn run(args: &FloodArgs) -> anyhow::Result<()> {
    let nofile = crate::http::fds::raise_nofile().unwrap_or(1024);
    let target = args
        .idle_connections
        .min(nofile.saturating_sub(RESERVED_FDS));
    let dir = tempfile::tempdir()?;
    let mut config = Config::default();
    config.node.key_file = dir.path().join("node.key");
    config.node.data_dir = dir.path().join("ledger");
    let ports = crate::devnet::distinct_ports(2)?;
    config.http.listen = ([127, 0, 0, 1], ports[0]).into();
    config.metrics.listen = Some(([127, 0, 0, 1], ports[1]).into());
    let production = HttpLimits::default();
    config.http.limits = HttpLimits {
        per_ip_connections: production.per_ip_connections,
        max_connections: production.max_connections,
        ..HttpLimits::unlimited()
    };
    config.agent.enabled = false;
    // The default network's agent class runs on proof_of_work alone.
    config.network.development = true;
    let path = dir.path().join("flood.toml");
    config.save(&path)?;
    let _node = KillOnDrop(crate::devnet::spawn(&path, &dir.path().join("node.log"))?);
    run_at_client_priority(&config);
    let url = format!("http://{}", config.http.listen);
    let metrics_url = format!("http://127.0.0.1:{}", ports[1]);
    wait_healthy(&url, Duration::from_secs(30))?;
    let addr = config.http.listen;
    let phase = Duration::from_secs(args.idle_seconds.max(1));
    let (quiet, quiet_errors) = honest(addr, args, phase);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let held = Arc::new(Held::default());
    let stop = CancellationToken::new();
    let flood_start = Instant::now();
    let sources = args.idle_sources.max(1);
    let reopen = Duration::from_millis(args.idle_reopen_ms);
    runtime.spawn(open_all(
        addr,
        target,
        sources,
        reopen,
        held.clone(),
        stop.clone(),
    ));
    // Until every connection was tried (bounded), then honest traffic while the flood holds.
    let opening = Instant::now();
    while held.opened.load(Ordering::Relaxed) + held.failed.load(Ordering::Relaxed) < target
        && opening.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let sampling = AtomicBool::new(true);
    let mut peak = 0.0f64;
    let (flood, flood_errors) = std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut peak = 0.0f64;
            while sampling.load(Ordering::Relaxed) {
                peak = peak.max(sum_of(
                    &scrape(std::slice::from_ref(&metrics_url)),
                    "hco_http_connections ",
                ));
                std::thread::sleep(Duration::from_millis(500));
            }
            peak
        });
        let measured = honest(addr, args, phase);
        sampling.store(false, Ordering::Relaxed);
        peak = sampler.join().unwrap_or(0.0);
        measured
    });
    let metrics = scrape(std::slice::from_ref(&metrics_url));
    let held_at_end = held.open.load(Ordering::Relaxed);
    stop.cancel();
    runtime.shutdown_timeout(Duration::from_secs(5));
    let closed = |reason: &str| {
        sum_of(
            &metrics,
            &format!("hco_http_connections_closed_total{{reason=\"{reason}\"}}"),
        )
    };
    let (quiet_p99, flood_p99) = (quantile_ms(&quiet, 0.99), quantile_ms(&flood, 0.99));
    let report = Report {
        idle_requested: args.idle_connections,
        idle_target: target,
        idle_sources: sources,
        idle_held: held.peak.load(Ordering::Relaxed),
        idle_held_at_end: held_at_end,
        idle_opened: held.opened.load(Ordering::Relaxed),
        idle_connect_failed: held.failed.load(Ordering::Relaxed),
        idle_closed_by_server: held.closed_by_server.load(Ordering::Relaxed),
        node_budget: sum_of(&metrics, "hco_http_connection_budget "),
        node_per_ip_connections: config.http.limits.per_ip_connections,
        node_connections_peak: peak,
        node_closed: REASONS.iter().map(|r| (*r, closed(r))).collect(),
        honest_requests_per_phase: args.honest_requests,
        honest_p50_quiet_ms: quantile_ms(&quiet, 0.5),
        honest_p99_quiet_ms: quiet_p99,
        honest_p50_flood_ms: quantile_ms(&flood, 0.5),
        honest_p99_flood_ms: flood_p99,
        p99_ratio: if quiet_p99 > 0.0 {
            (flood_p99 / quiet_p99 * 100.0).round() / 100.0
        } else {
            0.0
        },
        honest_errors_quiet: quiet_errors,
        honest_errors: flood_errors,
        flood_seconds: (flood_start.elapsed().as_secs_f64() * 100.0).round() / 100.0,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

/// `--honest-requests` requests for the current window from `--honest-clients` threads, each on
/// a fresh connection from 127.0.0.1, spread evenly over `phase`: their latencies (sorted) and
/// the number that failed (no 200 within 5 s).
fn honest(addr: SocketAddr, args: &FloodArgs, phase: Duration) -> (Vec<Duration>, u64) {
    let clients = args.honest_clients.max(1) as u64;
    let per_client = args.honest_requests.div_ceil(clients);
    let every = phase / per_client.max(1) as u32;
    let errors = AtomicU64::new(0);
    let mut latencies: Vec<Duration> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..clients)
            .map(|c| {
                let errors = &errors;
                s.spawn(move || {
                    // Staggered, so the clients do not all connect at the same instant.
                    std::thread::sleep(every * c as u32 / clients as u32);
                    let start = Instant::now();
                    let mut measured = Vec::new();
                    for i in 0..per_client {
                        match window_request(addr) {
                            Some(took) => measured.push(took),
                            None => {
                                errors.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        if let Some(wait) = (every * (i as u32 + 1)).checked_sub(start.elapsed()) {
                            std::thread::sleep(wait);
                        }
                    }
                    measured
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap_or_default())
            .collect()
    });
    latencies.sort();
    (latencies, errors.into_inner())
}

/// One `GET /v1/windows/current` on a new connection: its latency, if answered 200 in time.
fn window_request(addr: SocketAddr) -> Option<Duration> {
    let start = Instant::now();
    let limit = Duration::from_secs(5);
    let mut stream = TcpStream::connect_timeout(&addr, limit).ok()?;
    stream.set_read_timeout(Some(limit)).ok()?;
    stream.set_nodelay(true).ok()?;
    stream
        .write_all(b"GET /v1/windows/current HTTP/1.1\r\nHost: hco\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).ok()?;
    reply.starts_with(b"HTTP/1.1 200 ").then(|| start.elapsed())
}

/// Opens `n` idle connections to `addr` from `sources` loopback addresses, in batches, each
/// held until `stop` (or reopened after `reopen` when the member closed it, if not zero).
async fn open_all(
    addr: SocketAddr,
    n: u64,
    sources: u8,
    reopen: Duration,
    held: Arc<Held>,
    stop: CancellationToken,
) {
    for i in 0..n {
        let source = Ipv4Addr::new(127, 0, 0, 2 + (i % u64::from(sources)) as u8);
        tokio::spawn(hold(addr, source, reopen, held.clone(), stop.clone()));
        // About 12,800 a second: faster, the member's accept queue overflows and the kernel
        // drops connections the flood then believes open.
        if i % 128 == 127 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

async fn hold(
    addr: SocketAddr,
    source: Ipv4Addr,
    reopen: Duration,
    held: Arc<Held>,
    stop: CancellationToken,
) {
    let mut buf = [0u8; 512];
    while !stop.is_cancelled() {
        let connect = async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind(SocketAddr::from((source, 0)))?;
            socket.connect(addr).await
        };
        let Ok(Ok(mut stream)) = tokio::time::timeout(Duration::from_secs(5), connect).await else {
            held.failed.fetch_add(1, Ordering::Relaxed);
            return;
        };
        held.opened.fetch_add(1, Ordering::Relaxed);
        let open = held.open.fetch_add(1, Ordering::Relaxed) + 1;
        held.peak.fetch_max(open, Ordering::Relaxed);
        let closed_by_server = loop {
            tokio::select! {
                () = stop.cancelled() => break false,
                read = stream.read(&mut buf) => match read {
                    Ok(0) | Err(_) => break true,
                    Ok(_) => {} // an answer to a refused connection; its close follows
                },
            }
        };
        held.open.fetch_sub(1, Ordering::Relaxed);
        if !closed_by_server {
            return;
        }
        held.closed_by_server.fetch_add(1, Ordering::Relaxed);
        if reopen.is_zero() {
            return;
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(reopen) => {}
        }
    }
}
