//! A bounded queue whose items are handled in batches: a caller submits one item and awaits its
//! own result; the queue's task takes every item waiting (up to a batch's size) and hands the
//! batch to a handler, with a bounded number of batches in flight ([`InFlight`]: small batches
//! wait for the one in flight rather than run beside it, and may gather under load). The
//! verification batcher and the registrar use it so that one blocking-pool hop and one flush
//! serve a whole batch; the request checks, so that one batched signature check serves many.
//!
//! A full queue refuses at once ([`BatchQueue::submit`] returns `None`, and the caller answers
//! `overloaded`); a handler that returns `None` (storage failed) drops the batch's reply
//! channels, so its callers see an error rather than a verdict.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Notify, mpsc, oneshot};

type Item<I, O> = (I, oneshot::Sender<O>);

/// The submitting side of a batch queue.
pub(super) struct BatchQueue<I, O> {
    tx: mpsc::Sender<Item<I, O>>,
}

/// The receiving side, consumed by [`run`].
pub(super) struct Batches<I, O> {
    rx: mpsc::Receiver<Item<I, O>>,
}

/// A queue holding up to `capacity` waiting items.
pub(super) fn channel<I, O>(capacity: usize) -> (BatchQueue<I, O>, Batches<I, O>) {
    let (tx, rx) = mpsc::channel(capacity);
    (BatchQueue { tx }, Batches { rx })
}

impl<I, O> BatchQueue<I, O> {
    /// Queues `item`; the receiver yields its result. `None` when the queue is full.
    pub(super) fn submit(&self, item: I) -> Option<oneshot::Receiver<O>> {
        let (tx, rx) = oneshot::channel();
        self.tx.try_send((item, tx)).ok()?;
        Some(rx)
    }

    /// Queues `item`, waiting up to `limit` for room; `None` when none was made in time.
    pub(super) async fn submit_within(
        &self,
        item: I,
        limit: std::time::Duration,
    ) -> Option<oneshot::Receiver<O>> {
        let (tx, rx) = oneshot::channel();
        match tokio::time::timeout(limit, self.tx.send((item, tx))).await {
            Ok(Ok(())) => Some(rx),
            Ok(Err(_)) | Err(_) => None,
        }
    }
}

/// How many batches may be in flight at once.
#[derive(Debug, Clone, Copy)]
pub(super) struct InFlight {
    /// Most batches in flight.
    pub most: usize,
    /// A batch of fewer items than this waits (gathering more) until no other batch is in
    /// flight. Each batch costs a fixed overhead (a blocking-pool hop, a flush), so small batches
    /// side by side cost more CPU per item than one larger batch a moment later; only batches
    /// large enough to keep a core busy run beside others. 1: every batch may.
    pub beside_others_from: usize,
    /// Under load (the batch before began less than this long ago), a batch smaller than
    /// `beside_others_from` first gathers items for up to this long. For a handler whose
    /// batches are quick (no flush), items arrive one by one between batches, and a batch of
    /// one costs what a batch of several does; a lone item, with the queue otherwise quiet,
    /// does not wait. `None`: never gathers.
    pub gather: Option<std::time::Duration>,
}

/// Takes batches of up to `max` items off the queue and runs `handle` on each, as many at once
/// as `in_flight` allows. `handle` returns one result per item, in order, or `None` when the
/// batch failed as a whole. Returns when every [`BatchQueue`] is dropped.
pub(super) async fn run<I, O, F, Fut>(
    mut batches: Batches<I, O>,
    max: usize,
    in_flight: InFlight,
    handle: F,
) where
    I: Send + 'static,
    O: Send + 'static,
    F: Fn(Vec<I>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Option<Vec<O>>> + Send + 'static,
{
    let handle = Arc::new(handle);
    let running = Arc::new(AtomicUsize::new(0));
    // Signalled as each batch ends; a signal with nobody waiting is kept for the next wait.
    let ended = Arc::new(Notify::new());
    let max = max.max(1);
    let mut open = true;
    let mut last_batch: Option<tokio::time::Instant> = None;
    while open {
        let Some(first) = batches.rx.recv().await else {
            break;
        };
        let mut batch = vec![first];
        let gather = in_flight
            .gather
            .filter(|g| last_batch.is_some_and(|at| at.elapsed() < *g));
        if let Some(gather) = gather {
            let until = tokio::time::sleep(gather);
            tokio::pin!(until);
            while open && batch.len() < in_flight.beside_others_from.min(max) {
                tokio::select! {
                    item = batches.rx.recv() => match item {
                        Some(item) => batch.push(item),
                        None => open = false,
                    },
                    () = &mut until => break,
                }
            }
        }
        loop {
            while batch.len() < max {
                match batches.rx.try_recv() {
                    Ok(item) => batch.push(item),
                    Err(_) => break,
                }
            }
            let now = running.load(Ordering::Acquire);
            if now == 0
                || (now < in_flight.most.max(1) && batch.len() >= in_flight.beside_others_from)
            {
                break;
            }
            tokio::select! {
                () = ended.notified() => {}
                item = batches.rx.recv(), if open && batch.len() < max => match item {
                    Some(item) => batch.push(item),
                    None => open = false,
                },
            }
        }
        last_batch = Some(tokio::time::Instant::now());
        running.fetch_add(1, Ordering::AcqRel);
        let (handle, running, ended) = (handle.clone(), running.clone(), ended.clone());
        tokio::spawn(async move {
            let (items, replies): (Vec<I>, Vec<oneshot::Sender<O>>) = batch.into_iter().unzip();
            if let Some(results) = handle(items).await {
                for (result, reply) in results.into_iter().zip(replies) {
                    let _ = reply.send(result);
                }
            }
            running.fetch_sub(1, Ordering::AcqRel);
            ended.notify_one();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn every(most: usize) -> InFlight {
        InFlight {
            most,
            beside_others_from: 1,
            gather: None,
        }
    }

    #[tokio::test]
    async fn items_are_answered_in_batches_and_a_full_queue_refuses() {
        let (queue, batches) = channel::<u32, u32>(8);
        // Fill the queue before the task runs: the first batch takes every waiting item.
        let waiting: Vec<_> = (0..8).map(|i| queue.submit(i).unwrap()).collect();
        assert!(queue.submit(99).is_none(), "a full queue refuses at once");
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let seen = sizes.clone();
        let task = tokio::spawn(run(batches, 5, every(2), move |items: Vec<u32>| {
            seen.lock().unwrap().push(items.len());
            async move { Some(items.into_iter().map(|i| i * 10).collect()) }
        }));
        for (i, rx) in waiting.into_iter().enumerate() {
            assert_eq!(rx.await.unwrap(), i as u32 * 10);
        }
        assert_eq!(*sizes.lock().unwrap(), vec![5, 3]);
        drop(queue);
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_submit_gets_in_once_room_is_made_or_gives_up_at_its_limit() {
        let (queue, batches) = channel::<u32, u32>(2);
        let first: Vec<_> = (0..2).map(|i| queue.submit(i).unwrap()).collect();
        let limit = std::time::Duration::from_secs(5);
        assert!(
            queue.submit_within(7, limit).await.is_none(),
            "nothing drains the queue: the wait ends at its limit"
        );
        let task = tokio::spawn(run(batches, 2, every(1), |items: Vec<u32>| async move {
            Some(items.into_iter().map(|i| i + 100).collect())
        }));
        let waited = queue.submit_within(8, limit).await.unwrap();
        assert_eq!(waited.await.unwrap(), 108);
        for (i, rx) in first.into_iter().enumerate() {
            assert_eq!(rx.await.unwrap(), i as u32 + 100);
        }
        drop(queue);
        task.await.unwrap();
    }

    #[tokio::test]
    async fn a_failed_batch_drops_its_replies() {
        let (queue, batches) = channel::<u32, u32>(4);
        let rx = queue.submit(1).unwrap();
        tokio::spawn(run(batches, 4, every(1), |_items: Vec<u32>| async { None }));
        assert!(rx.await.is_err());
    }

    #[tokio::test]
    async fn a_small_batch_waits_for_the_one_in_flight_and_a_large_one_runs_beside_it() {
        let (queue, batches) = channel::<u32, u32>(16);
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let (release, held) = tokio::sync::watch::channel(false);
        let seen = sizes.clone();
        let in_flight = InFlight {
            most: 2,
            beside_others_from: 4,
            gather: None,
        };
        tokio::spawn(run(batches, 8, in_flight, move |items: Vec<u32>| {
            seen.lock().unwrap().push(items.clone());
            let mut held = held.clone();
            async move {
                // The batch holding item 0 stays in flight until released.
                if items.contains(&0) {
                    let _ = held.wait_for(|r| *r).await;
                }
                Some(items)
            }
        }));
        let first = queue.submit(0).unwrap();
        tokio::task::yield_now().await;
        while sizes.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        // Two items: too few to run beside the held batch; they wait and gather.
        let small: Vec<_> = (1..3).map(|i| queue.submit(i).unwrap()).collect();
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
        assert_eq!(sizes.lock().unwrap().len(), 1, "a small batch waits");
        // Two more make four: a batch large enough to run beside the held one.
        let more: Vec<_> = (3..5).map(|i| queue.submit(i).unwrap()).collect();
        for rx in small.into_iter().chain(more) {
            rx.await.unwrap();
        }
        assert_eq!(*sizes.lock().unwrap(), vec![vec![0], vec![1, 2, 3, 4]]);
        release.send(true).unwrap();
        assert_eq!(first.await.unwrap(), 0);
        // With nothing in flight, a lone item runs at once.
        assert_eq!(queue.submit(9).unwrap().await.unwrap(), 9);
    }

    #[tokio::test(start_paused = true)]
    async fn under_load_a_small_batch_gathers_for_a_while_and_a_lone_item_does_not_wait() {
        let (queue, batches) = channel::<u32, u32>(16);
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let seen = sizes.clone();
        let gather = std::time::Duration::from_millis(2);
        let in_flight = InFlight {
            most: 1,
            beside_others_from: 4,
            gather: Some(gather),
        };
        tokio::spawn(run(batches, 8, in_flight, move |items: Vec<u32>| {
            seen.lock()
                .unwrap()
                .push((items.clone(), tokio::time::Instant::now()));
            async move { Some(items) }
        }));
        let start = tokio::time::Instant::now();
        // The first item: no batch before it, so no load; it is checked at once.
        assert_eq!(queue.submit(0).unwrap().await.unwrap(), 0);
        // Right after a batch: the next items gather, up to 4 ...
        let four: Vec<_> = (1..5).map(|i| queue.submit(i).unwrap()).collect();
        for rx in four {
            rx.await.unwrap();
        }
        // ... or for at most `gather`.
        let two: Vec<_> = (5..7).map(|i| queue.submit(i).unwrap()).collect();
        for rx in two {
            rx.await.unwrap();
        }
        // Long after the last batch, a lone item does not wait.
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let quiet = tokio::time::Instant::now();
        assert_eq!(queue.submit(9).unwrap().await.unwrap(), 9);
        let sizes = sizes.lock().unwrap();
        let batches: Vec<&Vec<u32>> = sizes.iter().map(|(b, _)| b).collect();
        assert_eq!(
            batches,
            vec![&vec![0], &vec![1, 2, 3, 4], &vec![5, 6], &vec![9]]
        );
        assert_eq!(sizes[0].1, start, "the first item waited for nothing");
        assert_eq!(sizes[1].1, start, "four items: the batch is full at once");
        assert_eq!(
            sizes[2].1,
            start + gather,
            "two items waited out the gathering"
        );
        assert_eq!(
            sizes[3].1, quiet,
            "a lone item on a quiet queue waited for nothing"
        );
    }
}
