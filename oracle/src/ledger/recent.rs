//! What the ledger remembers in memory about its newest windows, so that verifying a fresh
//! answer reads nothing from sled but the write it makes: whether `(t, id, j)` was answered,
//! and which envelope was issued under it.
//!
//! Both are 64-bit fingerprints under a key drawn at random for each process, so no one can
//! choose keys that collide:
//! - **answered** (accepted or marked wrong), per window: a window is *tracked* when the
//!   ledger held nothing answered for it when this process first met it, and every later
//!   write of an acceptance or a marker adds its key before the write is acknowledged. In a
//!   tracked window a key that is absent was never answered; one that is present may have
//!   been (a fingerprint collision, or an acceptance the audit removed since) and is read
//!   from sled. A window that already held answers when first met (a restart in mid-window)
//!   is read from sled throughout.
//! - **issued**: the envelope stored by a first issue in this process. Issue records are
//!   never rewritten, only pruned with their window, so a fingerprint that matches is the
//!   record, and one that differs is another envelope. A window is *issue-tracked* when the
//!   ledger held no issue of it when this process first met it: there, an identity whose
//!   fingerprint (of `t ‖ id`) is absent was issued nothing, and an identity's first request
//!   of a window reads nothing from sled to learn that its sequence is empty.
//!
//! Only the [`KEEP_WINDOWS`] newest windows are held, and at most [`MAX_ENTRIES`]
//! fingerprints in all: a window past either bound is forgotten, and every question about it
//! goes to sled, which is always right.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;

use crate::{Digest, Sig};

/// Windows held: the current one, the one before it (answers in its grace) and the next.
pub const KEEP_WINDOWS: u64 = 3;

/// Fingerprints held in all (10–21 bytes each answered or identity issued to, 19–39 each
/// issued envelope): under 500 MB.
pub const MAX_ENTRIES: usize = 12_000_000;

/// A key `t ‖ id ‖ j` as the ledger stores it.
pub type Key = [u8; 44];

/// The prefix `t ‖ id` of an identity's keys in a window.
pub type IdentityPrefix = [u8; 40];

/// What sled held of a window when this process first met it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Held {
    /// Some answer (an acceptance or an answered-marker).
    pub answers: bool,
    /// Some issue record.
    pub issues: bool,
}

#[derive(Default)]
struct Window {
    /// Whether every answer of this window is in `answered` (see the module doc).
    tracked: bool,
    /// Whether every issue of this window is in `issued` (see the module doc).
    issues_tracked: bool,
    answered: HashSet<u64>,
    issued: HashMap<u64, u64>,
    /// The identities issued something in this window (fingerprints of `t ‖ id`).
    issued_to: HashSet<u64>,
}

impl Window {
    fn entries(&self) -> usize {
        self.answered.len() + self.issued.len() + self.issued_to.len()
    }
}

#[derive(Default)]
struct Windows {
    by_t: BTreeMap<u64, Window>,
    entries: usize,
}

impl Windows {
    /// Whether window `t` is too old to hold (the newest windows are kept).
    fn too_old(&self, t: u64) -> bool {
        self.by_t
            .last_key_value()
            .is_some_and(|(newest, _)| t.saturating_add(KEEP_WINDOWS) <= *newest)
    }

    fn forget(&mut self, t: u64) {
        if let Some(w) = self.by_t.remove(&t) {
            self.entries -= w.entries();
        }
    }

    /// Room for one more fingerprint in window `t`, forgetting `t` itself when full.
    fn room(&mut self, t: u64) -> Option<&mut Window> {
        if self.entries >= MAX_ENTRIES {
            self.forget(t);
            return None;
        }
        self.by_t.get_mut(&t)
    }
}

/// See the module doc.
pub struct Recent {
    windows: Mutex<Windows>,
    fingerprint: RandomState,
}

impl Recent {
    pub fn new() -> Self {
        Self {
            windows: Mutex::new(Windows::default()),
            fingerprint: RandomState::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Windows> {
        // The state is a cache of sled: one a panicking thread left is still right, since
        // each change is a single insert or removal.
        self.windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn key_fp(&self, key: &Key) -> u64 {
        self.fingerprint.hash_one(key)
    }

    /// The fingerprint of an identity's `t ‖ id` prefix.
    fn identity_fp(&self, prefix: &IdentityPrefix) -> u64 {
        self.fingerprint.hash_one(prefix)
    }

    fn envelope_fp(&self, challenge_id: &Digest, sig: &Sig) -> u64 {
        self.fingerprint.hash_one((challenge_id.0, sig.0))
    }

    /// Starts holding window `t` if it is new and not too old; `held` says what sled has of
    /// `t` (asked only then). Call before writing an answer or an issue of `t`.
    pub fn meet(&self, t: u64, held: impl FnOnce() -> Result<Held, sled::Error>) {
        let mut w = self.lock();
        if w.by_t.contains_key(&t) || w.too_old(t) {
            return;
        }
        // Asked under the lock: a writer meets the window before it writes, so no answer or
        // issue can land between this look and the window being held. A failed look is not
        // trusted: the window is then left to sled.
        let held = held();
        w.by_t.insert(
            t,
            Window {
                tracked: matches!(held, Ok(Held { answers: false, .. })),
                issues_tracked: matches!(held, Ok(Held { issues: false, .. })),
                ..Window::default()
            },
        );
        while w.by_t.len() as u64 > KEEP_WINDOWS {
            let Some(oldest) = w.by_t.keys().next().copied() else {
                break;
            };
            w.forget(oldest);
        }
    }

    /// Records that `key` of window `t` was answered (after the write to sled, before the
    /// write is acknowledged).
    pub fn answered(&self, t: u64, key: &Key) {
        let fp = self.key_fp(key);
        let mut w = self.lock();
        if let Some(window) = w.room(t)
            && window.answered.insert(fp)
        {
            w.entries += 1;
        }
    }

    /// Whether `key` of window `t` was surely never answered (false: only sled can tell).
    pub fn surely_unanswered(&self, t: u64, key: &Key) -> bool {
        let fp = self.key_fp(key);
        let w = self.lock();
        w.by_t
            .get(&t)
            .is_some_and(|window| window.tracked && !window.answered.contains(&fp))
    }

    /// Records the envelope first issued under `key` of window `t`.
    pub fn issued(&self, t: u64, key: &Key, challenge_id: &Digest, sig: &Sig) {
        let (fp, envelope) = (self.key_fp(key), self.envelope_fp(challenge_id, sig));
        let mut prefix: IdentityPrefix = [0; 40];
        prefix.copy_from_slice(&key[..40]);
        let to = self.identity_fp(&prefix);
        let mut w = self.lock();
        let Some(window) = w.room(t) else {
            return;
        };
        let added = usize::from(window.issued.insert(fp, envelope).is_none())
            + usize::from(window.issued_to.insert(to));
        w.entries += added;
    }

    /// Whether the identity of `prefix` (`t ‖ id`) was surely issued nothing in window `t`
    /// (false: only sled can tell).
    pub fn surely_issued_nothing(&self, t: u64, prefix: &IdentityPrefix) -> bool {
        let fp = self.identity_fp(prefix);
        let w = self.lock();
        w.by_t
            .get(&t)
            .is_some_and(|window| window.issues_tracked && !window.issued_to.contains(&fp))
    }

    /// Whether the envelope `(challenge_id, sig)` is the one issued under `key` of window `t`;
    /// `None` when only sled can tell.
    pub fn issued_matches(
        &self,
        t: u64,
        key: &Key,
        challenge_id: &Digest,
        sig: &Sig,
    ) -> Option<bool> {
        let (fp, envelope) = (self.key_fp(key), self.envelope_fp(challenge_id, sig));
        let w = self.lock();
        w.by_t
            .get(&t)?
            .issued
            .get(&fp)
            .map(|held| *held == envelope)
    }

    /// Forgets the windows before `t` (pruned from sled).
    pub fn prune_before(&self, t: u64) {
        let mut w = self.lock();
        let old: Vec<u64> = w.by_t.range(..t).map(|(t, _)| *t).collect();
        for t in old {
            w.forget(t);
        }
    }

    /// Fingerprints held (for the scale benchmark's memory figures and the tests).
    pub fn entries(&self) -> usize {
        self.lock().entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(t: u64, n: u8) -> Key {
        let mut k = [n; 44];
        k[..8].copy_from_slice(&t.to_be_bytes());
        k
    }

    fn prefix(t: u64, n: u8) -> IdentityPrefix {
        let mut p = [0u8; 40];
        p.copy_from_slice(&key(t, n)[..40]);
        p
    }

    #[test]
    fn a_window_met_empty_answers_for_itself() {
        let r = Recent::new();
        assert!(!r.surely_unanswered(5, &key(5, 1)), "not met yet");
        r.meet(5, || Ok(Held::default()));
        assert!(r.surely_unanswered(5, &key(5, 1)));
        r.answered(5, &key(5, 1));
        assert!(!r.surely_unanswered(5, &key(5, 1)), "answered: ask sled");
        assert!(r.surely_unanswered(5, &key(5, 2)));
    }

    #[test]
    fn a_window_met_with_answers_is_left_to_sled() {
        let r = Recent::new();
        r.meet(5, || {
            Ok(Held {
                answers: true,
                issues: false,
            })
        });
        assert!(!r.surely_unanswered(5, &key(5, 2)));
        r.meet(6, || Err(sled::Error::Unsupported("test".into())));
        assert!(
            !r.surely_unanswered(6, &key(6, 2)),
            "a failed look is not trusted"
        );
    }

    #[test]
    fn a_window_is_met_once() {
        let r = Recent::new();
        r.meet(5, || Ok(Held::default()));
        r.answered(5, &key(5, 1));
        r.meet(5, || panic!("asked again"));
        assert!(!r.surely_unanswered(5, &key(5, 1)));
    }

    #[test]
    fn issued_envelopes_match_only_themselves() {
        let r = Recent::new();
        let (id, sig) = (Digest([1; 32]), Sig([2; 64]));
        r.meet(5, || Ok(Held::default()));
        assert_eq!(r.issued_matches(5, &key(5, 1), &id, &sig), None);
        r.issued(5, &key(5, 1), &id, &sig);
        assert_eq!(r.issued_matches(5, &key(5, 1), &id, &sig), Some(true));
        assert_eq!(
            r.issued_matches(5, &key(5, 1), &id, &Sig([3; 64])),
            Some(false)
        );
        assert_eq!(r.issued_matches(5, &key(5, 2), &id, &sig), None);
    }

    #[test]
    fn a_window_met_without_issues_knows_who_was_issued_nothing() {
        let r = Recent::new();
        let (id, sig) = (Digest([1; 32]), Sig([2; 64]));
        assert!(!r.surely_issued_nothing(5, &prefix(5, 1)), "not met yet");
        r.meet(5, || Ok(Held::default()));
        assert!(r.surely_issued_nothing(5, &prefix(5, 1)));
        // Index 2 of identity 1: the identity's other indices are no longer known empty.
        let mut later = key(5, 1);
        later[40..].copy_from_slice(&2u32.to_be_bytes());
        r.issued(5, &later, &id, &sig);
        assert!(
            !r.surely_issued_nothing(5, &prefix(5, 1)),
            "issued: ask sled"
        );
        assert!(r.surely_issued_nothing(5, &prefix(5, 2)));
        assert_eq!(r.entries(), 2, "the envelope and the identity");
        r.meet(6, || {
            Ok(Held {
                answers: false,
                issues: true,
            })
        });
        assert!(
            !r.surely_issued_nothing(6, &prefix(6, 2)),
            "issues before: sled"
        );
        assert!(r.surely_unanswered(6, &key(6, 2)), "answers tracked apart");
        r.meet(7, || Err(sled::Error::Unsupported("test".into())));
        assert!(!r.surely_issued_nothing(7, &prefix(7, 2)), "a failed look");
        assert!(!r.surely_unanswered(7, &key(7, 2)));
    }

    #[test]
    fn a_window_forgotten_when_full_is_left_to_sled() {
        let r = Recent::new();
        r.meet(5, || Ok(Held::default()));
        r.lock().entries = MAX_ENTRIES;
        r.issued(5, &key(5, 1), &Digest([1; 32]), &Sig([2; 64]));
        assert!(
            !r.surely_issued_nothing(5, &prefix(5, 1)),
            "not recorded: forgotten"
        );
        assert!(!r.surely_issued_nothing(5, &prefix(5, 2)));
    }

    #[test]
    fn only_the_newest_windows_are_held() {
        let r = Recent::new();
        for t in 0..=KEEP_WINDOWS {
            r.meet(t, || Ok(Held::default()));
            r.answered(t, &key(t, 1));
        }
        assert_eq!(r.entries(), KEEP_WINDOWS as usize);
        assert!(!r.surely_unanswered(0, &key(0, 2)), "window 0 forgotten");
        assert!(r.surely_unanswered(1, &key(1, 2)));
        r.meet(0, || panic!("too old to hold again"));
        r.prune_before(KEEP_WINDOWS);
        assert!(!r.surely_unanswered(1, &key(1, 2)), "pruned");
        assert_eq!(r.entries(), 1);
    }

    #[test]
    fn unmet_windows_record_nothing() {
        let r = Recent::new();
        r.answered(5, &key(5, 1));
        r.issued(5, &key(5, 1), &Digest([1; 32]), &Sig([2; 64]));
        assert_eq!(r.entries(), 0);
    }
}
