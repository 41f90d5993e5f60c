//! What the commit lock guards besides the ledger's writes: the numbers of the commits and the
//! challenges each recent one answered (accepted or marked wrong). A verification batch reads
//! the ledger's answered state without the lock, noting the last commit's number first; under
//! the lock it then needs only the challenges answered by the commits since, which this log
//! holds, instead of reading the ledger a second time (two tree lookups per response). Where
//! the log no longer holds every commit since, or too many came in between, the batch reads
//! the ledger as before.
//!
//! Correct because every writer of answered state (`verify_responses`, wrong stage answers,
//! `record_remote`) decides under the commit lock and records its commit here before releasing
//! it, and a commit's number is published only once each of its answers is in the ledger or
//! in [`Unwritten`]: a batch that read number `e` finds every answer of commits up to `e` in
//! `Unwritten` or the ledger (asked in that order), and those after `e` here.
//!
//! Verification writes its acceptances after the lock (sealing and writing a batch is most of
//! its commit; under the lock another batch's workers waited for it). Its answered-markers and
//! counters are still written under the lock, so the ledger alone answers for them.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::IdentityId;

/// A challenge, as the answered state is keyed: `(t, identity, j)`.
pub(crate) type AnsweredKey = (u64, IdentityId, u32);

/// Commits remembered.
const KEPT: usize = 16;

/// The commits under the lock.
#[derive(Debug, Default)]
pub(crate) struct CommitLog {
    /// The number of the last commit recorded.
    last: u64,
    /// The last commits' numbers and the challenges each answered, oldest first.
    recent: VecDeque<(u64, HashSet<AnsweredKey>)>,
}

/// The last commit's number, readable without the lock.
#[derive(Debug, Default)]
pub(crate) struct LastCommit(AtomicU64);

impl LastCommit {
    /// The number to note before reading the ledger without the lock.
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// Acceptances decided under the commit lock whose records are still being written after it.
/// A key leaves only once its record is in the ledger; after a failed write it stays
/// (answered, as far as this node can tell).
#[derive(Debug, Default)]
pub(crate) struct Unwritten(Mutex<HashSet<AnsweredKey>>);

impl Unwritten {
    fn keys(&self) -> std::sync::MutexGuard<'_, HashSet<AnsweredKey>> {
        // Each change is one insert or removal: a set a panicking thread left is still right.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Holds `keys` as answered; call under the commit lock, before publishing the commit.
    pub(crate) fn hold(&self, keys: impl IntoIterator<Item = AnsweredKey>) {
        self.keys().extend(keys);
    }

    /// Lets `keys` go, once their records are in the ledger.
    pub(crate) fn release(&self, keys: &[AnsweredKey]) {
        let mut held = self.keys();
        for key in keys {
            held.remove(key);
        }
    }

    /// Whether `key` is held.
    pub(crate) fn contains(&self, key: &AnsweredKey) -> bool {
        self.keys().contains(key)
    }
}

impl CommitLog {
    /// The challenges answered by the commits after number `since`, one set per commit; `None`
    /// when the log does not hold all of them (read the ledger instead).
    pub(crate) fn answered_since(&self, since: u64) -> Option<Vec<&HashSet<AnsweredKey>>> {
        if since >= self.last {
            return Some(Vec::new());
        }
        let oldest = self.recent.front().map(|(n, _)| *n)?;
        if oldest > since + 1 {
            return None;
        }
        Some(
            self.recent
                .iter()
                .filter(|(n, _)| *n > since)
                .map(|(_, keys)| keys)
                .collect(),
        )
    }

    /// Forgets every commit (after a failed one, whose writes may have partly landed): a batch
    /// that read before this reads the ledger again under the lock.
    pub(crate) fn forget(&mut self, published: &LastCommit) {
        self.last += 1;
        self.recent.clear();
        published.0.store(self.last, Ordering::Release);
    }

    /// Records a commit that answered `keys` and publishes its number. Call with the lock
    /// held, after the commit's ledger writes.
    pub(crate) fn record(
        &mut self,
        keys: impl IntoIterator<Item = AnsweredKey>,
        published: &LastCommit,
    ) {
        let keys: HashSet<AnsweredKey> = keys.into_iter().collect();
        if keys.is_empty() {
            return;
        }
        self.last += 1;
        self.recent.push_back((self.last, keys));
        if self.recent.len() > KEPT {
            self.recent.pop_front();
        }
        published.0.store(self.last, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u8) -> AnsweredKey {
        (1, IdentityId([i; 32]), 0)
    }

    #[test]
    fn a_batch_finds_what_was_answered_after_its_reads_and_reads_the_ledger_past_the_log() {
        let (mut log, published) = (CommitLog::default(), LastCommit::default());
        let since = published.get();
        assert_eq!(log.answered_since(since).map(|s| s.len()), Some(0));
        log.record([key(1), key(2)], &published);
        log.record([], &published); // wrote nothing: not a commit
        log.record([key(3)], &published);
        assert_eq!(published.get(), 2);
        let sets = log.answered_since(since).unwrap();
        assert!(sets.iter().any(|s| s.contains(&key(1))));
        assert!(sets.iter().any(|s| s.contains(&key(3))));
        assert!(!sets.iter().any(|s| s.contains(&key(4))));
        // A batch that read after the first commit needs only the second.
        let later = log.answered_since(1).unwrap();
        assert_eq!(later.len(), 1);
        assert!(!later.iter().any(|s| s.contains(&key(1))));
        for i in 0..KEPT as u8 {
            log.record([key(10 + i)], &published);
        }
        assert!(
            log.answered_since(since).is_none(),
            "forgotten: read the ledger"
        );
        assert!(log.answered_since(published.get() - 1).is_some());
        log.forget(&published);
        assert!(log.answered_since(published.get() - 1).is_none());
        assert_eq!(
            log.answered_since(published.get()).map(|s| s.len()),
            Some(0)
        );
    }
}
