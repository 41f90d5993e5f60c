//! `hco bench gossip`: a local devnet (4 nodes by default) under the load of `hco bench http`
//! (concurrent clients, each identity registering, then requesting and answering one
//! `proof_of_work` challenge at its assigned issuer), measuring how long an acceptance takes from
//! its issuer to every other node, and whether any acceptance batch was refused on the way.
//!
//! The delays come from the members themselves: each observes, for every acceptance it records
//! from gossip, the time since the issuer received the response
//! (`hco_gossip_acceptance_delay_seconds`; nodes here share the machine's clock). The bench
//! reads those histograms before and after the ceremony, and the issuers' verification latency
//! (`hco_verify_latency_seconds`) and the receivers' handling time
//! (`hco_gossip_acceptance_handling_seconds`) beside them: the two ends' shares. The clients
//! share the members' cores; they run at `--client-nice` (default: the members' own
//! `node.client_nice`, so they contend as equals with the threads that serve them, below the
//! members' committee threads), and the CPU shares of both are reported. The same path is also
//! timed from outside: every `--sample-every`th accepted identity is followed by pollers asking
//! the other nodes until each shows it active — but pollers compete for the loaded nodes and
//! fall behind (`poll_lag_p99_ms`), so those figures are an upper bound that can be far above
//! the truth.
//! Registration comes first and is not measured; the ceremony starts once every member holds
//! every registration (bounded wait, `registry_settle_s`). Rejections, bans and lost sends are
//! read from the nodes' metrics.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use clap::Args;
use hco_challenges::Registry;
use hco_oracle::secret::issuer_order;
use hco_oracle::{Clock, IdentityId, NodeId, SignedRequest, SystemClock, testing};
use serde::Serialize;

use super::load::{
    CpuMeter, challenge_and_respond_signed, current, quantile_ms, register, scrape, sum_of,
};
use crate::bench::wire::Wire;

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
    /// Scheduling niceness of the load generator's threads (0–19). The clients share the
    /// members' cores here. The default is the members' `node.client_nice`: the clients contend
    /// as equals with the members' threads that serve them, and the members' committee threads
    /// (network, gossip validation) come first, as on a member's own machine.
    #[arg(long, default_value_t = i32::from(crate::config::CLIENT_NICE), value_parser = clap::value_parser!(i32).range(0..=19))]
    pub client_nice: i32,
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
    /// From the members' own `hco_gossip_acceptance_delay_seconds` histograms during the
    /// ceremony (each figure the upper bound of its bucket; deliveries missing from the
    /// histograms count as slowest): the median delivery to a member.
    p50_ms: Option<f64>,
    /// An upper bound on the p99 from acceptance at the issuer to recording at every other
    /// member (see the union bound where it is computed).
    p99_ms: Option<f64>,
    /// The p99 of a single delivery to a member.
    peer_p99_ms: Option<f64>,
    /// The issuer's share of those delays: receipt of a response to its durable verdict
    /// (`hco_verify_latency_seconds`, every member's verifications in the ceremony).
    issuer_p50_ms: Option<f64>,
    issuer_p99_ms: Option<f64>,
    /// The receiving members' share (`hco_gossip_acceptance_handling_seconds`, per message):
    /// from their network task handing a message up to its verdict.
    handling_p50_ms: Option<f64>,
    handling_p99_ms: Option<f64>,
    /// The same path timed from outside: pollers ask the other members for sampled identities
    /// until all show them active.
    polled_p50_ms: f64,
    polled_p99_ms: f64,
    polled_max_ms: f64,
    poll_interval_ms: u64,
    /// Time from a sample's acceptance until a poller first asks for it: the polled delays
    /// include it, so they are only as good as this is small.
    poll_lag_p99_ms: f64,
    rejected_batches: f64,
    strikes: f64,
    peers_banned: f64,
    gossip_dropped: f64,
    /// Messages gossipsub gave up sending to a peer whose send queue stayed full, during the
    /// ceremony.
    gossip_send_failed: f64,
    /// The same, during registration (before the ceremony).
    gossip_send_failed_registration: f64,
    /// Time from the end of registration until every member held every registration (or
    /// [`SETTLE`], if sooner).
    registry_settle_s: f64,
    recorded_per_node: Vec<u64>,
    seconds: f64,
    /// The load generator's niceness (`--client-nice`) and its share of the machine's cores
    /// during the ceremony.
    client_nice: i32,
    client_share_of_machine: f64,
    /// The members' (all of them together) share of the machine's cores during the ceremony.
    members_share_of_machine: f64,
}

/// How often a poller asks a node again.
const POLL: Duration = Duration::from_millis(2);
/// How long a sample is followed before it counts as unseen.
const FOLLOW: Duration = Duration::from_secs(10);
/// Pollers following samples. A sample that waits for one is measured late (`poll_lag_p99_ms`
/// shows how late); more pollers would load the nodes they measure.
const POLLERS: usize = 4;
/// Longest wait for registrations to reach every member before the ceremony.
const SETTLE: Duration = Duration::from_secs(60);
/// Registrations a member wrote (its clients' and its peers').
const REGISTRATIONS: &str = "hco_registrations_total";
/// The members' gossip delay histogram.
const DELAY: &str = "hco_gossip_acceptance_delay_seconds";
/// The members' handling time of messages of acceptances.
const HANDLING: &str = "hco_gossip_acceptance_handling_seconds";
/// The members' verification latency histogram.
const VERIFY: &str = "hco_verify_latency_seconds";
/// Sends gossipsub gave up.
const SEND_FAILED: &str = "hco_dropped_messages_total{queue=\"gossip_send\"}";

pub fn run(args: GossipArgs) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    // One window covers registration and the ceremony.
    let window = Duration::from_secs((4 * args.seconds + 120).max(300));
    let nodes = crate::devnet::up(dir.path(), args.nodes, window, false)?;
    let guard = DownOnDrop(dir.path().to_owned());
    // The members are started: from here on this thread and the clients it spawns run at
    // `--client-nice`.
    crate::priority::lower_priority(args.client_nice);
    let urls: Vec<String> = nodes.iter().map(|n| n.http.clone()).collect();
    let metrics_urls: Vec<String> = nodes.iter().map(|n| n.metrics.clone()).collect();
    let committee: Vec<NodeId> = nodes
        .iter()
        .map(|n| n.node.parse())
        .collect::<Result<_, _>>()
        .map_err(anyhow::Error::msg)?;
    // Let the mesh form before loading it.
    std::thread::sleep(Duration::from_secs(3));
    let (t, _) = current(&Wire::new(&urls[0]))?;
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
                let gateways: Vec<Wire> = urls.iter().map(|u| Wire::new(u)).collect();
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
    // Registrations are gossiped too: the ceremony starts once every member holds them (or
    // after a bound), so that its figures are not the registrations' backlog, nor acceptances
    // that peers must ignore for an identity they do not know yet.
    let settle_start = Instant::now();
    let expected = registered.load(Ordering::Relaxed) as f64 * args.nodes as f64;
    while settle_start.elapsed() < SETTLE
        && sum_of(&scrape(&metrics_urls), REGISTRATIONS) < expected
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    let registry_settle_s = settle_start.elapsed().as_secs_f64();
    let before = scrape(&metrics_urls);

    // The ceremony, with samples followed by the pollers.
    let (sample_tx, sample_rx) = mpsc::channel::<(usize, IdentityId, u64, u64)>();
    let sample_rx = Mutex::new(sample_rx);
    let delays = Mutex::new(Vec::new());
    let lags = Mutex::new(Vec::new());
    let unseen = AtomicUsize::new(0);
    let next = AtomicU64::new(0);
    let accepted = AtomicUsize::new(0);
    let pids: Vec<u32> = nodes.iter().map(|n| n.pid).collect();
    let meter = CpuMeter::start_all(&pids);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..POLLERS {
            s.spawn(|| follow_samples(&urls, &sample_rx, &delays, &lags, &unseen));
        }
        let clients: Vec<_> = (0..concurrency)
            .map(|_| {
                let sample_tx = sample_tx.clone();
                let (keys, issuers, urls) = (&keys, &issuers, &urls);
                let (next, accepted) = (&next, &accepted);
                s.spawn(move || {
                    let gateways: Vec<Wire> = urls.iter().map(|u| Wire::new(u)).collect();
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
    let cpu = meter.read(elapsed);
    // Let the last batches land before counting what every node recorded.
    std::thread::sleep(Duration::from_secs(2));
    let metrics = scrape(&metrics_urls);
    let sum = |name: &str| sum_of(&metrics, name);
    let recorded_per_node = urls
        .iter()
        .map(|u| {
            Wire::new(u)
                .get(&format!("/v1/windows/{t}"))
                .ok()
                .and_then(|r| r.body["active_count_local"].as_u64())
                .unwrap_or(0)
        })
        .collect();
    drop(guard);
    let mut delays = delays.into_inner().unwrap_or_default();
    delays.sort();
    let mut lags = lags.into_inner().unwrap_or_default();
    lags.sort();
    let accepted = accepted.into_inner();
    let peers = (args.nodes.max(2) - 1) as f64;
    let deliveries = accepted as f64 * peers;
    let report = Report {
        nodes: args.nodes,
        concurrency,
        identities_registered: registered.into_inner(),
        accepted,
        accepted_per_s: (accepted as f64 / elapsed).round(),
        samples: delays.len(),
        unseen_samples: unseen.into_inner(),
        p50_ms: quantile_between(&before, &metrics, DELAY, 0.5, deliveries),
        // P(slowest of the n-1 deliveries > x) <= (n-1) * P(a delivery > x) (union bound), so the
        // per-delivery quantile at 1 - 1%/(n-1) bounds the p99 to every member from above.
        p99_ms: quantile_between(&before, &metrics, DELAY, 1.0 - 0.01 / peers, deliveries),
        peer_p99_ms: quantile_between(&before, &metrics, DELAY, 0.99, deliveries),
        issuer_p50_ms: quantile_between(&before, &metrics, VERIFY, 0.5, 0.0),
        issuer_p99_ms: quantile_between(&before, &metrics, VERIFY, 0.99, 0.0),
        handling_p50_ms: quantile_between(&before, &metrics, HANDLING, 0.5, 0.0),
        handling_p99_ms: quantile_between(&before, &metrics, HANDLING, 0.99, 0.0),
        polled_p50_ms: quantile_ms(&delays, 0.5),
        polled_p99_ms: quantile_ms(&delays, 0.99),
        polled_max_ms: quantile_ms(&delays, 1.0),
        poll_interval_ms: POLL.as_millis() as u64,
        poll_lag_p99_ms: quantile_ms(&lags, 0.99),
        rejected_batches: sum(
            "hco_gossip_validations_total{topic=\"acceptance\",result=\"reject\"}",
        ) + sum(
            "hco_gossip_validations_total{topic=\"acceptance\",result=\"not_a_member\"}",
        ),
        strikes: sum("hco_gossip_validations_total{topic=\"acceptance\",result=\"reject\"}")
            + sum("hco_gossip_validations_total{topic=\"registry\",result=\"reject\"}")
            + sum("hco_gossip_validations_total{topic=\"registry_batch\",result=\"reject\"}")
            + sum("hco_gossip_validations_total{topic=\"summary\",result=\"reject\"}")
            + sum("hco_gossip_validations_total{topic=\"reveal\",result=\"reject\"}")
            + sum("hco_gossip_validations_total{topic=\"passkey\",result=\"reject\"}"),
        peers_banned: sum("hco_peers_banned_total"),
        gossip_dropped: sum("hco_dropped_messages_total{queue=\"gossip\"}")
            + sum("hco_dropped_messages_total{queue=\"publish\"}")
            + sum("hco_dropped_messages_total{queue=\"publish_failed\"}"),
        gossip_send_failed: sum(SEND_FAILED) - sum_of(&before, SEND_FAILED),
        gossip_send_failed_registration: sum_of(&before, SEND_FAILED),
        registry_settle_s: (registry_settle_s * 100.0).round() / 100.0,
        recorded_per_node,
        seconds: (elapsed * 100.0).round() / 100.0,
        client_nice: args.client_nice,
        client_share_of_machine: cpu.client_share(),
        members_share_of_machine: cpu.server_share(),
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
    lags: &Mutex<Vec<Duration>>,
    unseen: &AtomicUsize,
) {
    let gateways: Vec<Wire> = urls.iter().map(|u| Wire::new(u)).collect();
    loop {
        let next = samples.lock().ok().and_then(|rx| rx.recv().ok());
        let Some((issuer, id, t, accepted_at)) = next else {
            return;
        };
        let lag = Duration::from_millis(SystemClock.now().saturating_sub(accepted_at));
        if let Ok(mut all) = lags.lock() {
            all.push(lag);
        }
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

/// The `q` quantile (ms, as its bucket's upper bound) of the observations of the histogram
/// `name` (e.g. `hco_verify_latency_seconds`) in every member between the scrapes `before` and
/// `after`, out of at least `expected` observations (those missing count as slower than every
/// bucket); `None` without observations or beyond the last finite bound.
fn quantile_between(
    before: &[String],
    after: &[String],
    name: &str,
    q: f64,
    expected: f64,
) -> Option<f64> {
    let count = format!("{name}_count");
    let total = (sum_of(after, &count) - sum_of(before, &count)).max(expected);
    if total <= 0.0 {
        return None;
    }
    let (was, now) = (buckets(before, name), buckets(after, name));
    now.iter()
        .find(|(le, n)| {
            let earlier = was.iter().find(|(l, _)| l == le).map_or(0.0, |(_, n)| *n);
            n - earlier >= q * total
        })
        .filter(|(le, _)| le.is_finite())
        .map(|(le, _)| (le * 1000.0).round())
}

/// The cumulative buckets `(le, observations)` of the histogram `name`, summed over every
/// member, in increasing `le` (read as numbers, whatever their text form; `+Inf` last).
fn buckets(metrics: &[String], name: &str) -> Vec<(f64, f64)> {
    let prefix = format!("{name}_bucket{{le=\"");
    let mut sums: Vec<(f64, f64)> = Vec::new();
    for line in metrics.iter().flat_map(|m| m.lines()) {
        let Some((bound, value)) = line
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split_once("\"} "))
        else {
            continue;
        };
        let (Ok(le), Ok(n)) = (bound.parse::<f64>(), value.trim().parse::<f64>()) else {
            continue;
        };
        match sums.iter_mut().find(|(l, _)| *l == le) {
            Some((_, total)) => *total += n,
            None => sums.push((le, n)),
        }
    }
    sums.sort_by(|a, b| a.0.total_cmp(&b.0));
    sums
}

struct DownOnDrop(std::path::PathBuf);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        let _ = crate::devnet::down(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::GOSSIP_DELAY_BUCKETS;

    /// One member's scrape with `counts[i]` observations at most `GOSSIP_DELAY_BUCKETS[i]`.
    fn scrape_of(counts: &[f64]) -> String {
        let mut text = String::new();
        for (le, n) in GOSSIP_DELAY_BUCKETS.iter().zip(counts) {
            text += &format!("{DELAY}_bucket{{le=\"{le:?}\"}} {n}\n");
        }
        text += &format!("{DELAY}_bucket{{le=\"+Inf\"}} {}\n", counts.last().unwrap());
        text += &format!("{DELAY}_count {}\n", counts.last().unwrap());
        text
    }

    #[test]
    fn delay_quantiles_come_from_the_histogram_delta_and_count_missing_deliveries_as_slowest() {
        let before = vec![scrape_of(&[0.0; 18])];
        // 100 deliveries: 50 within 5 ms, 98 within 100 ms, all 100 within 300 ms.
        let mut counts = [0.0; 18];
        for (i, le) in GOSSIP_DELAY_BUCKETS.iter().enumerate() {
            counts[i] = match *le {
                x if x < 0.1 => 50.0,
                x if x < 0.3 => 98.0,
                _ => 100.0,
            };
        }
        let after = vec![scrape_of(&counts)];
        assert_eq!(
            quantile_between(&before, &after, DELAY, 0.5, 0.0),
            Some(5.0)
        );
        assert_eq!(
            quantile_between(&before, &after, DELAY, 0.98, 0.0),
            Some(100.0)
        );
        assert_eq!(
            quantile_between(&before, &after, DELAY, 0.99, 0.0),
            Some(300.0)
        );
        // Two more deliveries were expected than observed: the p99 is beyond every bucket.
        assert_eq!(quantile_between(&before, &after, DELAY, 0.99, 102.0), None);
        // What was there before the ceremony does not count.
        assert_eq!(quantile_between(&after, &after, DELAY, 0.5, 0.0), None);
    }
}
