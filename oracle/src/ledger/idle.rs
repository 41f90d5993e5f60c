//! Pruning identities that never did anything: registration is open and cheap, so without it
//! every registration ever made (a flood's too) would stay on every member for good. An
//! identity registered before a given window that has no issued challenge and no acceptance in
//! any window the ledger keeps, and no passkey, is removed; it may register again.

use std::collections::HashSet;

use super::{IdentityRecord, Ledger, LedgerError, PruneStats, decode, keys};
use crate::IdentityId;

impl Ledger {
    /// Removes the identities recorded before window `registered_before` that were never
    /// active: no challenge issued to them and no acceptance in the kept windows, no passkey.
    /// One pass over the issued and accepted records, then one over the identities.
    pub fn prune_idle_identities(&self, registered_before: u64) -> Result<PruneStats, LedgerError> {
        let mut active: HashSet<IdentityId> = HashSet::new();
        for tree in [&self.issued, &self.accepted] {
            for key in tree.iter().keys() {
                if let Some(id) = keys::id_of(&key?) {
                    active.insert(id);
                }
            }
        }
        let mut idle = Vec::new();
        for entry in self.identities.iter() {
            let (key, value) = entry?;
            let record: IdentityRecord = decode("identities", &value)?;
            let id = record.register.body.id;
            if record.window >= registered_before || active.contains(&id) {
                continue;
            }
            if self.passkeys.scan_prefix(id.0).next().is_some() {
                continue;
            }
            idle.push(key);
        }
        let removed = super::one_by_one::remove_all(&self.identities, idle)?;
        Ok(PruneStats { removed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Class, SignedRegister, testing};

    fn record(seed: u64, window: u64) -> IdentityRecord {
        IdentityRecord {
            register: SignedRegister::new(&testing::key(seed), Class::Agent, 0),
            window,
        }
    }

    #[test]
    fn only_old_identities_that_never_acted_are_pruned() {
        let ledger = Ledger::temporary(crate::Digest::ZERO).unwrap();
        let idle_old = record(1, 2);
        let idle_new = record(2, 10);
        let active_old = record(3, 2);
        for r in [&idle_old, &idle_new, &active_old] {
            ledger.put_identity(r).unwrap();
        }
        // A challenge issued to `active_old` in window 3 (the key is all pruning reads).
        let key = keys::window_id_index(3, &active_old.register.body.id, 0);
        ledger.issued.insert(key, &b"issued"[..]).unwrap();

        let stats = ledger.prune_idle_identities(5).unwrap();
        assert_eq!(stats.removed, 1);
        let id = |r: &IdentityRecord| r.register.body.id;
        assert!(ledger.identity(&id(&idle_old)).unwrap().is_none());
        assert!(ledger.identity(&id(&idle_new)).unwrap().is_some());
        assert!(ledger.identity(&id(&active_old)).unwrap().is_some());
        // Pruned, it may register again.
        ledger.put_identity(&idle_old).unwrap();
        assert!(ledger.identity(&id(&idle_old)).unwrap().is_some());
        // Nothing else is old and idle.
        assert_eq!(ledger.prune_idle_identities(5).unwrap().removed, 1);
        assert_eq!(ledger.prune_idle_identities(2).unwrap().removed, 0);
    }
}
