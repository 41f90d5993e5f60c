//! Gossip this node originates in bulk, coalesced: the acceptances of its verification batches
//! and the registrations its gateway accepted are handed to a queue each, and one task per queue
//! publishes everything that waited in as few payloads as peers decode: acceptances at most once
//! every [`LINGER`], registrations as soon as they are written ([`REGISTRATION_LINGER`]).
//!
//! Why: under load the verification and registration batches are small (a batch is taken as
//! soon as one item waits, which keeps latency low), and a gossip message per batch — or, for
//! registrations, per registration — held one item at the median. Every gossip message costs
//! each receiver a gossipsub signature check, its own checks, a blocking-pool hop and — in a
//! full mesh — copies of itself, each checked again; gossipsub's per-peer send queues
//! overflowed and dropped sends. With at most one message per [`LINGER`] per member and topic,
//! the message rate is bounded whatever the load, messages carry many items (above gossipsub's
//! IDONTWANT size threshold, so peers stop the duplicate forwards), and a quiet node still
//! publishes an item the moment it is made.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::metrics::Metrics;
use crate::network::NetworkClient;
use crate::network::protocol::Topic;

/// Shortest time between two publications of acceptances by one node.
pub const LINGER: Duration = Duration::from_millis(20);
/// The same for registrations: none. A client may register at one member and ask the issuer
/// elsewhere for a challenge at once; every millisecond a registration waits here is one in
/// which that issuer answers `unknown_identity`. Each registrar batch (one flush) still goes as
/// one message rather than one per registration.
pub const REGISTRATION_LINGER: Duration = Duration::ZERO;
/// Items waiting for publication; beyond this they are dropped from gossip (counted as
/// `hco_dropped_messages_total{queue=…}`) and reach peers by reconciliation.
const CAPACITY: usize = 16 * 1024;
/// Most items published at one time (the rest go at the next publication).
const MAX_AT_ONCE: usize = 4096;

/// The producers' side of one coalesced topic: queues items, never waiting.
pub(super) struct GossipOut<T> {
    tx: mpsc::Sender<T>,
    /// The `queue` label under which items that did not fit are counted.
    drop_label: &'static str,
    metrics: Arc<Metrics>,
}

impl<T> GossipOut<T> {
    /// Queues `items` for the next publication; what does not fit is counted as dropped.
    pub(super) fn queue(&self, items: Vec<T>) {
        let mut dropped = 0;
        for item in items {
            if self.tx.try_send(item).is_err() {
                dropped += 1;
            }
        }
        if dropped > 0 {
            self.metrics.drop_many(self.drop_label, dropped);
        }
    }
}

/// A coalesced topic: the queue, and the task that publishes from it on `topic` at most once
/// every `linger`, each time as
/// the payloads `encode` splits the waiting items into (until the [`GossipOut`] is dropped).
pub(super) fn start<T: Send + 'static>(
    net: NetworkClient,
    metrics: Arc<Metrics>,
    (topic, linger): (Topic, Duration),
    drop_label: &'static str,
    encode: fn(&[T]) -> Vec<Vec<u8>>,
) -> (GossipOut<T>, impl std::future::Future<Output = ()>) {
    let (tx, rx) = mpsc::channel(CAPACITY);
    let task = coalesce(rx, linger, MAX_AT_ONCE, move |batch: Vec<T>| {
        for payload in encode(&batch) {
            net.publish(topic, payload);
        }
    });
    let out = GossipOut {
        tx,
        drop_label,
        metrics,
    };
    (out, task)
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

/// Relays the acceptances of `batch` under the seals this node just counted in their last relay
/// round (`mine`: its receipts for them, hco_oracle::relay), with the receipts it received for
/// those seals (`incoming`), on `hco/acceptance-relay/1`. Nothing when `mine` is empty.
pub(crate) fn relay_acceptances(
    net: &NetworkClient,
    batch: &[hco_oracle::SealedAcceptance],
    incoming: &[hco_oracle::SealReceipt],
    mine: Vec<hco_oracle::SealReceipt>,
) {
    if mine.is_empty() {
        return;
    }
    let seals: Vec<_> = mine.iter().map(|r| r.seal).collect();
    let relayed: Vec<_> = batch
        .iter()
        .filter(|s| seals.contains(&hco_oracle::relay::seal_subject(&s.seal)))
        .cloned()
        .collect();
    let receipts: Vec<_> = incoming
        .iter()
        .filter(|r| seals.contains(&r.seal))
        .cloned()
        .chain(mine)
        .collect();
    for payload in crate::network::protocol::relay_payloads(&relayed, &receipts) {
        net.publish(Topic::AcceptanceRelay, payload);
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
