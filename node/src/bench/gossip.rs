//! `hco bench gossip`: on a local 4-node devnet, the time from an acceptance at its issuer to
//! its recording on every node. Nodes share the machine's clock, so the issuer's receipt time
//! and the observers' polling times are comparable; polling every 2 ms bounds the resolution.

use std::time::{Duration, Instant};

use clap::Args;
use hco_challenges::Registry;
use hco_oracle::secret::issuer_order;
use hco_oracle::{Clock, IdentityId, NodeId, SystemClock};
use serde::Serialize;

use super::load::{current, quantile_ms, round_trip};
use crate::client::Gateway;

/// Options of `hco bench gossip`.
#[derive(Debug, Args)]
pub struct GossipArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Acceptances to follow.
    #[arg(long, default_value_t = 50)]
    pub samples: u64,
    /// Committee size.
    #[arg(long, default_value_t = 4)]
    pub nodes: usize,
}

#[derive(Debug, Serialize)]
struct Report {
    nodes: usize,
    samples: usize,
    propagation_p50_ms: f64,
    propagation_p99_ms: f64,
    propagation_max_ms: f64,
    poll_interval_ms: u64,
}

pub fn run(args: GossipArgs) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let nodes = crate::devnet::up(dir.path(), args.nodes, Duration::from_secs(30), false)?;
    let guard = DownOnDrop(dir.path().to_owned());
    let gateways: Vec<Gateway> = nodes.iter().map(|n| Gateway::new(&n.http)).collect();
    let committee: Vec<NodeId> = nodes
        .iter()
        .map(|n| n.node.parse())
        .collect::<Result<_, _>>()
        .map_err(anyhow::Error::msg)?;
    // Let the mesh form before measuring.
    std::thread::sleep(Duration::from_secs(3));
    let registry = Registry::builtin();
    let mut delays = Vec::new();
    for i in 0..args.samples {
        let key = hco_oracle::testing::key(20_000_000 + i);
        let id = IdentityId(key.verifying_key().to_bytes());
        let (t, now) = current(&gateways[0])?;
        let issuer = issuer_order(&committee, &id, t)[0];
        let at = committee.iter().position(|n| *n == issuer).unwrap_or(0);
        let trip = round_trip(&gateways[at], &registry, &key, now, t);
        let Some((t, accepted_at)) = trip.accepted_at else {
            continue;
        };
        let start = Instant::now();
        let mut pending: Vec<usize> = (0..gateways.len()).filter(|j| *j != at).collect();
        while !pending.is_empty() && start.elapsed() < Duration::from_secs(10) {
            pending.retain(|j| {
                let seen = gateways[*j]
                    .get(&format!("/v1/identities/{id}"))
                    .is_ok_and(|r| r.body["last_active"].as_u64() == Some(t));
                !seen
            });
            if !pending.is_empty() {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        if pending.is_empty() {
            delays.push(Duration::from_millis(
                SystemClock.now().saturating_sub(accepted_at),
            ));
        }
    }
    drop(guard);
    delays.sort();
    let report = Report {
        nodes: args.nodes,
        samples: delays.len(),
        propagation_p50_ms: quantile_ms(&delays, 0.5),
        propagation_p99_ms: quantile_ms(&delays, 0.99),
        propagation_max_ms: quantile_ms(&delays, 1.0),
        poll_interval_ms: 2,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

struct DownOnDrop(std::path::PathBuf);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        let _ = crate::devnet::down(&self.0);
    }
}
