//! What the window's step sequence reads and writes: the challenges issued to an identity in a
//! window, the answered-markers of wrong answers (the first answer is final), the accepted
//! count per identity, and the certified roots that place the next slots.

use serde::{Deserialize, Serialize};

use super::{IssuedRecord, Ledger, LedgerError, decode, keys};
use crate::{Digest, IdentityId, Timestamp, codec};

/// The marker of a challenge answered wrong: nothing else of a rejected answer is stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnsweredRecord {
    /// When the answer arrived.
    pub answered_at: Timestamp,
    /// The rejection's code (for the operator's logs and metrics).
    pub code: String,
}

impl Ledger {
    /// Records that `(t, id, j)` was answered wrong, unless it was answered already; true if
    /// stored. Call [`Ledger::make_durable`] before replying.
    pub fn mark_answered(
        &self,
        t: u64,
        id: &IdentityId,
        j: u32,
        record: &AnsweredRecord,
    ) -> Result<bool, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        self.meet(t);
        let stored = self
            .answered
            .compare_and_swap(key, None::<&[u8]>, Some(codec::encode(record)))?
            .is_ok();
        self.recent.answered(t, &key);
        Ok(stored)
    }

    /// The answered-marker of `(t, id, j)`.
    pub fn answered(
        &self,
        t: u64,
        id: &IdentityId,
        j: u32,
    ) -> Result<Option<AnsweredRecord>, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        if self.recent.surely_unanswered(t, &key) {
            return Ok(None);
        }
        self.answered
            .get(key)?
            .map(|v| decode("answered", &v))
            .transpose()
    }

    /// Whether `(t, id, j)` was answered, right (accepted) or wrong (marked).
    pub fn is_answered(&self, t: u64, id: &IdentityId, j: u32) -> Result<bool, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        if self.recent.surely_unanswered(t, &key) {
            return Ok(false);
        }
        Ok(self.accepted.contains_key(key)? || self.answered.contains_key(key)?)
    }

    /// Answered-markers held for window `t`.
    pub fn answered_count(&self, t: u64) -> usize {
        self.answered.scan_prefix(keys::window(t)).count()
    }

    /// The challenges issued to `id` in window `t`, by index.
    pub fn issued_in(
        &self,
        t: u64,
        id: &IdentityId,
    ) -> Result<Vec<(u32, IssuedRecord)>, LedgerError> {
        let prefix = keys::window_id(t, id);
        if self.recent.surely_issued_nothing(t, &prefix) {
            return Ok(Vec::new());
        }
        self.issued
            .scan_prefix(prefix)
            .map(|entry| {
                let (key, value) = entry?;
                let j = key
                    .get(40..44)
                    .and_then(|b| b.try_into().ok())
                    .map(u32::from_be_bytes)
                    .ok_or(LedgerError::Corrupt {
                        tree: "issued",
                        detail: "short key".into(),
                    })?;
                Ok((j, decode("issued", &value)?))
            })
            .collect()
    }

    /// The families of the challenges `id` had accepted in window `t`, by index.
    pub fn accepted_families(&self, t: u64, id: &IdentityId) -> Result<Vec<String>, LedgerError> {
        self.accepted
            .scan_prefix(keys::window_id(t, id))
            .map(|entry| {
                let sealed: crate::SealedAcceptance = decode("accepted", &entry?.1)?;
                Ok(sealed.acceptance.challenge().family.clone())
            })
            .collect()
    }

    /// Accepted challenges per identity in window `t`, sorted by identity.
    pub fn accepted_counts(&self, t: u64) -> Result<Vec<(IdentityId, u32)>, LedgerError> {
        let mut out: Vec<(IdentityId, u32)> = Vec::new();
        for key in self.accepted.scan_prefix(keys::window(t)).keys() {
            let Some(id) = keys::id_of(&key?) else {
                continue;
            };
            match out.last_mut() {
                Some((last, n)) if *last == id => *n += 1,
                _ => out.push((id, 1)),
            }
        }
        Ok(out)
    }

    /// The certified roots of the latest two certified windows in `[t − lookback, t)`, newest
    /// first.
    pub fn latest_roots_before(
        &self,
        t: u64,
        lookback: u64,
    ) -> Result<Vec<(u64, Digest)>, LedgerError> {
        let from = keys::window(t.saturating_sub(lookback));
        let to = keys::window(t);
        let mut out = Vec::with_capacity(2);
        for entry in self.certs.range(from..to).rev().take(2) {
            let (_, value) = entry?;
            let cert: crate::WindowCertificate = decode("certs", &value)?;
            out.push((cert.summary.t, cert.summary.root));
        }
        Ok(out)
    }
}
