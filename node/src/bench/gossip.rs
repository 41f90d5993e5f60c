//! `hco bench gossip`: a local devnet (4 nodes by default) under the load of `hco bench http`
//! (concurrent clients, each identity registering, then requesting and answering one
//! `proof_of_work` challenge at its assigned issuer), measuring how long an acceptance takes from
//! its issuer to every other node, and whether any acceptance batch was refused on the way.
//!
//! Every `--sample-every`th accepted identity is followed: pollers ask the other nodes for the
//! identity until each shows it active in the window. Nodes share the machine's clock, so the
//! issuer's receipt time and the pollers' times are comparable; polling bounds the resolution.
//! Rejections and bans are read from the nodes' metrics after the run.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use clap::Args;
use hco_challenges::Registry;
use hco_oracle::secret::issuer_order;
use hco_oracle::{Clock, IdentityId, NodeId, SignedRequest, SystemClock, testing};
use serde::Serialize;

use super::load::{challenge_and_respond_signed, current, quantile_ms, register};
use crate::client::Gateway;

/// Options of `hco bench gossip`.
#[derive(Debug, Args)]
pub struct GossipArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Virtual identities (as `hco bench http`).
    #[arg(long, default_value_t = 20_000)]
    pub identities: u64,
    /// Concurrent clients (as `hco bench http`).
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// Time limit of the measured phase, and separately of registration.
    #[arg(long, default_value_t = 20)]
    pub seconds: u64,
    /// Follow one accepted identity in this many.
    #[arg(long, default_value_t = 20)]
    pub sample_every: u64,
    /// Committee size.
    #[arg(long, default_value_t = 4)]
    pub nodes: usize,
}

#[derive(Debug, Serialize)]
struct Report {
    nodes: usize,
    concurrency: usize,
    identities_registered: u64,
    accepted: usize,
    accepted_per_s: f64,
    samples: usize,
    unseen_samples: usize,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    poll_interval_ms: u64,
    rejected_batches: f64,
    strikes: f64,
    peers_banned: f64,
    gossip_dropped: f64,
    /// Messages gossipsub gave up sending to a peer whose send queue stayed full.
    gossip_send_failed: f64,
    recorded_per_node: Vec<u64>,
    seconds: f64,
}

/// How often a poller asks a node again.
const POLL: Duration = Duration::from_millis(2);
/// How long a sample is followed before it counts as unseen.
const FOLLOW: Duration = Duration::from_secs(10);
/// Pollers following samples.
const POLLERS: usize = 4;

pub fn run(args: GossipArgs) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    // One window covers registration and the ceremony.
    let window = Duration::from_secs((4 * args.seconds + 120).max(300));
    let nodes = crate::devnet::up(dir.path(), args.nodes, window, false)?;
    let guard = DownOnDrop(dir.path().to_owned());
    let urls: Vec<String> = nodes.iter().map(|n| n.http.clone()).collect();
    let committee: Vec<NodeId> = nodes
        .iter()
        .map(|n| n.node.parse())
        .collect::<Result<_, _>>()
        .map_err(anyhow::Error::msg)?;
    // Let the mesh form before loading it.
    std::thread::sleep(Duration::from_secs(3));
    let (t, _) = current(&Gateway::new(&urls[0]))?;
    let keys: Vec<_> = (0..args.identities)
        .map(|i| testing::key(30_000_000 + i))
        .collect();
    let issuer_of = |i: usize| {
        let id = IdentityId(keys[i].verifying_key().to_bytes());
        let issuer = issuer_order(&committee, &id, t)[0];
        committee.iter().position(|n| *n == issuer).unwrap_or(0)
    };
    let issuers: Vec<usize> = (0..keys.len()).map(issuer_of).collect();
    let concurrency = args.concurrency.max(1);
    let limit = Duration::from_secs(args.seconds);

    // Registration at each identity's issuer (not measured; gossip spreads it).
    let next = AtomicU64::new(0);
    let registered = AtomicU64::new(0);
    let reg_start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..concurrency {
            s.spawn(|| {
                let gateways: Vec<Gateway> = urls.iter().map(|u| Gateway::new(u)).collect();
                while reg_start.elapsed() < limit {
                    let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                    if i >= keys.len() {
                        break;
                    }
                    if register(&gateways[issuers[i]], &keys[i], SystemClock.now()).is_ok() {
                        registered.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let registered_count = next.load(Ordering::Relaxed).min(args.identities) as usize;

    // The ceremony, with samples followed by the pollers.
    let (sample_tx, sample_rx) = mpsc::channel::<(usize, IdentityId, u64, u64)>();
    let sample_rx = Mutex::new(sample_rx);
    let delays = Mutex::new(Vec::new());
    let unseen = AtomicUsize::new(0);
    let next = AtomicU64::new(0);
    let accepted = AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..POLLERS {
            s.spawn(|| follow_samples(&urls, &sample_rx, &delays, &unseen));
        }
        let clients: Vec<_> = (0..concurrency)
            .map(|_| {
                let sample_tx = sample_tx.clone();
                let (keys, issuers, urls) = (&keys, &issuers, &urls);
                let (next, accepted) = (&next, &accepted);
                s.spawn(move || {
                    let gateways: Vec<Gateway> = urls.iter().map(|u| Gateway::new(u)).collect();
                    let registry = Registry::builtin();
                    while start.elapsed() < limit {
                        let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                        if i >= registered_count {
                            break;
                        }
                        let request = SignedRequest::new(&keys[i], t, 0);
                        let gw = &gateways[issuers[i]];
                        let trip = challenge_and_respond_signed(gw, &registry, &keys[i], &request);
                        let Some((t, at)) = trip.accepted_at else {
                            continue;
                        };
                        let n = accepted.fetch_add(1, Ordering::Relaxed) as u64;
                        if n.is_multiple_of(args.sample_every.max(1)) {
                            let id = IdentityId(keys[i].verifying_key().to_bytes());
                            let _ = sample_tx.send((issuers[i], id, t, at));
                        }
                    }
                })
            })
            .collect();
        drop(sample_tx);
        for c in clients {
            let _ = c.join();
        }
    });
    let elapsed = start.elapsed().as_secs_f64();
    // Let the last batches land before counting what every node recorded.
    std::thread::sleep(Duration::from_secs(2));
    let metrics: Vec<String> = urls
        .iter()
        .map(|u| {
            Gateway::new(u)
                .get("/metrics")
                .ok()
                .and_then(|r| r.body.as_str().map(str::to_owned))
                .unwrap_or_default()
        })
        .collect();
    // `+ 0.0`: an empty sum of floats is -0.0.
    let sum = |name: &str| metrics.iter().map(|m| metric_sum(m, name)).sum::<f64>() + 0.0;
    let recorded_per_node = urls
        .iter()
        .map(|u| {
            Gateway::new(u)
                .get(&format!("/v1/windows/{t}"))
                .ok()
                .and_then(|r| r.body["active_count_local"].as_u64())
                .unwrap_or(0)
        })
        .collect();
    drop(guard);
    let mut delays = delays.into_inner().unwrap_or_default();
    delays.sort();
    let accepted = accepted.into_inner();
    let report = Report {
        nodes: args.nodes,
        concurrency,
        identities_registered: registered.into_inner(),
        accepted,
        accepted_per_s: (accepted as f64 / elapsed).round(),
        samples: delays.len(),
        unseen_samples: unseen.into_inner(),
        p50_ms: quantile_ms(&delays, 0.5),
        p99_ms: quantile_ms(&delays, 0.99),
        max_ms: quantile_ms(&delays, 1.0),
        poll_interval_ms: POLL.as_millis() as u64,
        rejected_batches: sum(
            "hco_gossip_validations_total{topic=\"acceptance\",result=\"reject\"}",
        ) + sum(
            "hco_gossip_validations_total{topic=\"acceptance\",result=\"not_a_member\"}",
        ),
        strikes: sum("hco_gossip_validations_total{topic=\"acceptance\",result=\"reject\"}")
            + sum("hco_gossip_validations_total{topic=\"registry\",result=\"reject\"}")
            + sum("hco_gossip_validations_total{topic=\"summary\",result=\"reject\"}")
            + sum("hco_gossip_validations_total{topic=\"reveal\",result=\"reject\"}")
            + sum("hco_gossip_validations_total{topic=\"passkey\",result=\"reject\"}"),
        peers_banned: sum("hco_peers_banned_total"),
        gossip_dropped: sum("hco_dropped_messages_total{queue=\"gossip\"}")
            + sum("hco_dropped_messages_total{queue=\"publish\"}")
            + sum("hco_dropped_messages_total{queue=\"publish_failed\"}"),
        gossip_send_failed: sum("hco_dropped_messages_total{queue=\"gossip_send\"}"),
        recorded_per_node,
        seconds: (elapsed * 100.0).round() / 100.0,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

/// Follows samples `(issuer, id, t, accepted_at)` until every other node shows the identity
/// active in `t`, recording the delay from the issuer's acceptance.
fn follow_samples(
    urls: &[String],
    samples: &Mutex<mpsc::Receiver<(usize, IdentityId, u64, u64)>>,
    delays: &Mutex<Vec<Duration>>,
    unseen: &AtomicUsize,
) {
    let gateways: Vec<Gateway> = urls.iter().map(|u| Gateway::new(u)).collect();
    loop {
        let next = samples.lock().ok().and_then(|rx| rx.recv().ok());
        let Some((issuer, id, t, accepted_at)) = next else {
            return;
        };
        let started = Instant::now();
        let mut pending: Vec<usize> = (0..gateways.len()).filter(|j| *j != issuer).collect();
        while !pending.is_empty() && started.elapsed() < FOLLOW {
            pending.retain(|j| {
                !gateways[*j]
                    .get(&format!("/v1/identities/{id}"))
                    .is_ok_and(|r| r.body["last_active"].as_u64() == Some(t))
            });
            if !pending.is_empty() {
                std::thread::sleep(POLL);
            }
        }
        if pending.is_empty() {
            let delay = Duration::from_millis(SystemClock.now().saturating_sub(accepted_at));
            if let Ok(mut all) = delays.lock() {
                all.push(delay);
            }
        } else {
            unseen.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The sum of the samples of the Prometheus text whose line starts with `name`.
fn metric_sum(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(name))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

struct DownOnDrop(std::path::PathBuf);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        let _ = crate::devnet::down(&self.0);
    }
}
