//! What the commit lock guards besides the ledger's writes: the numbers of the commits and the
//! challenges each recent one answered (accepted or marked wrong). A verification batch reads
//! the ledger's answered state without the lock, noting the last commit's number first; under
//! the lock it then needs only the challenges answered by the commits since, which this log
//! holds, instead of reading the ledger a second time (two tree lookups per response). Where
//! the log no longer holds every commit since, or too many came in between, the batch reads
//! the ledger as before.
//!
//! Correct because every writer of answered state (`verify_responses`, wrong stage answers,
//! `record_remote`) writes under the commit lock and records its commit here before releasing
//! it, and a commit's number is published only after its writes: a batch that read number `e`
//! sees in the ledger every write of commits up to `e`, and finds those after `e` here.

use std::collections::{HashSet, VecDeque};
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
