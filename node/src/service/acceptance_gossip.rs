//! Gossip of this node's acceptances, coalesced: the verification batcher hands each batch's
//! acceptances here, and one task publishes them at most once every [`LINGER`], everything
//! that waited in as few payloads as peers decode.
//!
//! Why: under load the verification batches are small (a batch is taken as soon as one
//! response waits, which keeps verification latency low), and a gossip message per batch held
//! one acceptance at the median. Every gossip message costs each receiver a gossipsub
//! signature check, a seal check, a blocking-pool hop and — in a full mesh — up to three copies
//! of itself, each checked again; and gossipsub's per-peer send queues overflowed and dropped
//! sends. With at most one message per [`LINGER`] per member, the message rate is bounded
//! whatever the load, messages carry many acceptances (above gossipsub's IDONTWANT size
//! threshold, so peers stop the duplicate forwards), and a quiet node still publishes an
//! acceptance the moment it is made.

use std::time::Duration;

use hco_oracle::SealedAcceptance;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::metrics::Metrics;
use crate::network::NetworkClient;
use crate::network::protocol::{Topic, acceptance_payloads};

/// Shortest time between two publications of acceptances by one node.
pub const LINGER: Duration = Duration::from_millis(20);
/// Acceptances waiting for publication; beyond this they are dropped from gossip (counted as
/// `hco_dropped_messages_total{queue="acceptance_gossip"}`) and reach peers by reconciliation.
const CAPACITY: usize = 16 * 1024;
/// Most acceptances published at one time (the rest go at the next publication).
const MAX_AT_ONCE: usize = 4096;

/// The batcher's side: queues acceptances for gossip, never waiting.
#[derive(Clone)]
pub(super) struct AcceptanceGossip {
    tx: mpsc::Sender<SealedAcceptance>,
}

impl AcceptanceGossip {
    /// Queues `accepted` for the next publication; what does not fit is counted as dropped.
    pub(super) fn queue(&self, accepted: &[SealedAcceptance], metrics: &Metrics) {
        let mut dropped = 0;
        for sealed in accepted {
            if self.tx.try_send(sealed.clone()).is_err() {
                dropped += 1;
            }
        }
        if dropped > 0 {
            metrics.drop_many("acceptance_gossip", dropped);
        }
    }
}

/// The queue and the task that publishes from it (until every [`AcceptanceGossip`] is dropped).
pub(super) fn start(
    net: NetworkClient,
) -> (AcceptanceGossip, impl std::future::Future<Output = ()>) {
    let (tx, rx) = mpsc::channel(CAPACITY);
    let task = coalesce(
        rx,
        LINGER,
        MAX_AT_ONCE,
        move |batch: Vec<SealedAcceptance>| {
            for payload in acceptance_payloads(&batch) {
                net.publish(Topic::Acceptance, payload);
            }
        },
    );
    (AcceptanceGossip { tx }, task)
}

/// Publishes what arrives on `rx`: an item that arrives after a quiet `linger` goes at once;
/// otherwise it waits until `linger` after the last publication, and goes with everything else
/// that waited (at most `max` at a time).
async fn coalesce<T>(
    mut rx: mpsc::Receiver<T>,
    linger: Duration,
    max: usize,
    mut publish: impl FnMut(Vec<T>),
) {
    let mut last: Option<Instant> = None;
    while let Some(first) = rx.recv().await {
        if let Some(last) = last {
            tokio::time::sleep_until(last + linger).await;
        }
        let mut batch = vec![first];
        while batch.len() < max {
            match rx.try_recv() {
                Ok(item) => batch.push(item),
                Err(_) => break,
            }
        }
        publish(batch);
        last = Some(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    type Published = Arc<Mutex<Vec<(Duration, Vec<u32>)>>>;

    fn spawn(linger_ms: u64, max: usize) -> (mpsc::Sender<u32>, Published, Instant) {
        let (tx, rx) = mpsc::channel(64);
        let published: Published = Arc::default();
        let seen = published.clone();
        let start = Instant::now();
        tokio::spawn(coalesce(
            rx,
            Duration::from_millis(linger_ms),
            max,
            move |batch| seen.lock().unwrap().push((start.elapsed(), batch)),
        ));
        (tx, published, start)
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_node_publishes_at_once_and_a_busy_one_once_per_linger() {
        let (tx, published, _) = spawn(20, 100);
        tx.send(1).await.unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        // Four more while the first publication's linger runs: they go together, 20 ms later.
        for i in 2..=5 {
            tx.send(i).await.unwrap();
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        // Long quiet: the next one goes at once again.
        tx.send(6).await.unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        let published = published.lock().unwrap().clone();
        let times: Vec<u128> = published.iter().map(|(at, _)| at.as_millis()).collect();
        let batches: Vec<Vec<u32>> = published.into_iter().map(|(_, b)| b).collect();
        assert_eq!(batches, vec![vec![1], vec![2, 3, 4, 5], vec![6]]);
        assert_eq!(times[0], 0);
        assert_eq!(times[1], 20);
        assert_eq!(times[2], 113);
    }

    #[tokio::test(start_paused = true)]
    async fn a_backlog_goes_in_publications_of_at_most_max() {
        let (tx, published, _) = spawn(10, 3);
        for i in 0..7 {
            tx.send(i).await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let batches: Vec<Vec<u32>> = published
            .lock()
            .unwrap()
            .iter()
            .map(|(_, b)| b.clone())
            .collect();
        assert_eq!(batches, vec![vec![0, 1, 2], vec![3, 4, 5], vec![6]]);
    }
}
