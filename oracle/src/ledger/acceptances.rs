//! Issued challenges and acceptances: what each member issued and accepted per window.

use super::{IssuedRecord, Ledger, LedgerError, decode, keys, one_by_one, recent};
use crate::{Digest, IdentityId, SealedAcceptance, Sig, codec};

impl Ledger {
    /// The first-issue record of `(t, id, j)`.
    pub fn issued(
        &self,
        t: u64,
        id: &IdentityId,
        j: u32,
    ) -> Result<Option<IssuedRecord>, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        self.issued
            .get(key)?
            .map(|v| decode("issued", &v))
            .transpose()
    }

    /// Stores a first-issue record unless one exists; returns the record that holds.
    pub fn put_issued(
        &self,
        t: u64,
        id: &IdentityId,
        j: u32,
        record: &IssuedRecord,
    ) -> Result<IssuedRecord, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        self.meet(t);
        match self
            .issued
            .compare_and_swap(key, None::<&[u8]>, Some(codec::encode(record)))?
        {
            Ok(()) => {
                self.recent
                    .issued(t, &key, &record.challenge_id, &record.sig);
                Ok(record.clone())
            }
            Err(current) => match current.current {
                Some(bytes) => decode("issued", &bytes),
                None => Ok(record.clone()),
            },
        }
    }

    // Acceptances.

    /// Whether `(t, id, j)` was accepted.
    pub fn is_accepted(&self, t: u64, id: &IdentityId, j: u32) -> Result<bool, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        if self.recent.surely_unanswered(t, &key) {
            return Ok(false);
        }
        Ok(self.accepted.contains_key(key)?)
    }

    /// The acceptance of `(t, id, j)`.
    pub fn accepted(
        &self,
        t: u64,
        id: &IdentityId,
        j: u32,
    ) -> Result<Option<SealedAcceptance>, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        self.accepted
            .get(key)?
            .map(|v| decode("accepted", &v))
            .transpose()
    }

    /// Writes acceptances (in memory; call [`Ledger::make_durable`] before acknowledging).
    /// Idempotent: an `(t, id, j)` already present is kept. The caller must serialise calls
    /// that may race on the same key (the [`crate::Oracle`] holds its commit lock).
    pub fn insert_acceptances(&self, batch: &[SealedAcceptance]) -> Result<usize, LedgerError> {
        let mut writes = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for sealed in batch {
            let c = sealed.acceptance.challenge();
            let key = keys::window_id_index(c.t, &c.id, c.j);
            self.meet(c.t);
            if !seen.insert(key)
                || (!self.recent.surely_unanswered(c.t, &key) && self.accepted.contains_key(key)?)
            {
                continue;
            }
            writes.push((key, sealed.encode()));
        }
        let fresh = writes.len();
        self.insert_answers(writes)?;
        Ok(fresh)
    }

    /// Removes the acceptances `(id, j)` of window `t` (in memory; call
    /// [`Ledger::make_durable`] to make it last): those whose seal the audit found broken.
    pub fn remove_acceptances(
        &self,
        t: u64,
        keys: &[(IdentityId, u32)],
    ) -> Result<(), LedgerError> {
        one_by_one::remove_all(
            &self.accepted,
            keys.iter().map(|(id, j)| keys::window_id_index(t, id, *j)),
        )?;
        Ok(())
    }

    /// Writes acceptances the caller has found absent under its commit lock and holds as
    /// answered until this returns (the verification path), skipping the second lookup of
    /// [`Ledger::insert_acceptances`].
    pub(crate) fn insert_checked(&self, batch: &[SealedAcceptance]) -> Result<(), LedgerError> {
        let mut met = None;
        let writes = batch
            .iter()
            .map(|sealed| {
                let c = sealed.acceptance.challenge();
                if met != Some(c.t) {
                    self.meet(c.t);
                    met = Some(c.t);
                }
                (keys::window_id_index(c.t, &c.id, c.j), sealed.encode())
            })
            .collect();
        self.insert_answers(writes)
    }

    /// Writes acceptances of windows already met, and remembers them as answered.
    fn insert_answers(&self, writes: Vec<([u8; 44], Vec<u8>)>) -> Result<(), LedgerError> {
        let keys: Vec<[u8; 44]> = writes.iter().map(|(key, _)| *key).collect();
        let written = one_by_one::insert_all(&self.accepted, writes);
        // Also after a failed write: some keys may have landed, and a key remembered as
        // answered that was not is only a sled read more.
        for key in &keys {
            self.recent.answered(keys::t_of(key).unwrap_or(0), key);
        }
        Ok(written?)
    }

    /// Starts holding window `t` in memory if it is new (see `recent`). Call before writing
    /// an answer or an issue of `t`.
    pub(super) fn meet(&self, t: u64) {
        self.recent.meet(t, || {
            let prefix = keys::window(t);
            let holds = |tree: &sled::Tree| -> Result<bool, sled::Error> {
                Ok(tree.scan_prefix(prefix).next().transpose()?.is_some())
            };
            Ok(recent::Held {
                answers: holds(&self.accepted)? || holds(&self.answered)?,
                issues: holds(&self.issued)?,
            })
        });
    }

    /// Whether `(challenge_id, sig)` is the envelope first issued as `(t, id, j)`.
    pub fn issued_matches(
        &self,
        t: u64,
        id: &IdentityId,
        j: u32,
        challenge_id: &Digest,
        sig: &Sig,
    ) -> Result<bool, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        if let Some(matches) = self.recent.issued_matches(t, &key, challenge_id, sig) {
            return Ok(matches);
        }
        Ok(self
            .issued(t, id, j)?
            .is_some_and(|rec| rec.sig == *sig && rec.challenge_id == *challenge_id))
    }

    /// All acceptances of window `t`, in key order.
    pub fn acceptances(
        &self,
        t: u64,
    ) -> impl Iterator<Item = Result<SealedAcceptance, LedgerError>> + '_ {
        self.accepted
            .scan_prefix(keys::window(t))
            .map(|r| decode("accepted", &r?.1))
    }

    /// The `(id, j)` accepted in window `t`: what reconciliation exchanges.
    pub fn accepted_keys(&self, t: u64) -> Result<Vec<(IdentityId, u32)>, LedgerError> {
        let mut out = Vec::new();
        for entry in self.accepted.scan_prefix(keys::window(t)).keys() {
            let key = entry?;
            if let (Some(id), Some(j)) = (keys::id_of(&key), key.get(40..44)) {
                out.push((id, u32::from_be_bytes(j.try_into().unwrap_or([0; 4]))));
            }
        }
        Ok(out)
    }

    /// The `(id, j)` accepted in window `t` after `after`, in key order, at most `limit`.
    pub fn accepted_keys_after(
        &self,
        t: u64,
        after: Option<(IdentityId, u32)>,
        limit: usize,
    ) -> Result<Vec<(IdentityId, u32)>, LedgerError> {
        let start = match after {
            Some((id, j)) => std::ops::Bound::Excluded(keys::window_id_index(t, &id, j).to_vec()),
            None => std::ops::Bound::Included(keys::window(t).to_vec()),
        };
        let end = std::ops::Bound::Excluded(keys::window(t + 1).to_vec());
        let mut out = Vec::new();
        for entry in self
            .accepted
            .range::<Vec<u8>, _>((start, end))
            .keys()
            .take(limit)
        {
            let key = entry?;
            if let (Some(id), Some(j)) = (keys::id_of(&key), key.get(40..44)) {
                out.push((id, u32::from_be_bytes(j.try_into().unwrap_or([0; 4]))));
            }
        }
        Ok(out)
    }

    /// The indices `j` of `id`'s accepted challenges in window `t`, ascending.
    pub fn accepted_indices(&self, t: u64, id: &IdentityId) -> Result<Vec<u32>, LedgerError> {
        let mut out = Vec::new();
        for key in self.accepted.scan_prefix(keys::window_id(t, id)).keys() {
            if let Some(j) = key?.get(40..44) {
                out.push(u32::from_be_bytes(j.try_into().unwrap_or([0; 4])));
            }
        }
        Ok(out)
    }

    /// Accepted challenges of `id` in window `t`.
    pub fn solves(&self, t: u64, id: &IdentityId) -> Result<u32, LedgerError> {
        Ok(self
            .accepted
            .scan_prefix(keys::window_id(t, id))
            .keys()
            .count() as u32)
    }
}
