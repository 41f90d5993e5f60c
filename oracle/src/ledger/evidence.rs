//! Evidence against committee members and the members left out of each summarized window.

use crate::{Evidence, NodeId, codec};

use super::{Ledger, LedgerError, decode, keys};

impl Ledger {
    /// Stores evidence; returns whether it was new.
    pub fn put_evidence(&self, e: &Evidence) -> Result<bool, LedgerError> {
        let mut key = keys::window_node(e.window(), &e.accused().0).to_vec();
        key.extend_from_slice(&e.digest().0);
        Ok(self
            .evidence
            .compare_and_swap(key, None::<&[u8]>, Some(codec::encode(e)))?
            .is_ok())
    }

    /// The evidence concerning window `t`.
    pub fn evidence(&self, t: u64) -> Result<Vec<Evidence>, LedgerError> {
        self.evidence
            .scan_prefix(keys::window(t))
            .map(|r| decode("evidence", &r?.1))
            .collect()
    }

    /// Every piece of evidence held, window by window.
    pub fn all_evidence(&self) -> impl Iterator<Item = Result<Evidence, LedgerError>> + '_ {
        self.evidence.iter().map(|r| decode("evidence", &r?.1))
    }

    /// Records which members' acceptances of `t` were left out of its summary (the first
    /// record is kept, so the active set of a summarized window never changes).
    pub fn put_excluded(&self, t: u64, members: &[NodeId]) -> Result<Vec<NodeId>, LedgerError> {
        let key = keys::window(t);
        match self
            .excluded
            .compare_and_swap(key, None::<&[u8]>, Some(codec::encode(&members)))?
        {
            Ok(()) => Ok(members.to_vec()),
            Err(current) => current
                .current
                .map_or(Ok(Vec::new()), |v| decode("excluded", &v)),
        }
    }

    /// The members left out of window `t`, once it was summarized.
    pub fn excluded(&self, t: u64) -> Result<Option<Vec<NodeId>>, LedgerError> {
        self.excluded
            .get(keys::window(t))?
            .map(|v| decode("excluded", &v))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{key, node_id, params_for};
    use crate::{Digest, Evidence, Ledger, SignedReveal};

    #[test]
    fn evidence_is_kept_once_and_exclusions_never_change() {
        let params = params_for(&[node_id(&key(1))]);
        let ledger = Ledger::temporary(params.digest()).unwrap();
        let a = SignedReveal::new(&key(1), 4, Digest([1; 32]), Digest([2; 32]));
        let b = SignedReveal::new(&key(1), 4, Digest([3; 32]), Digest([2; 32]));
        let e = Evidence::DoubleReveal {
            first: a,
            second: b,
        };
        assert!(ledger.put_evidence(&e).unwrap());
        assert!(!ledger.put_evidence(&e).unwrap());
        assert_eq!(ledger.evidence(4).unwrap(), vec![e.clone()]);
        assert!(ledger.evidence(3).unwrap().is_empty());
        assert_eq!(ledger.all_evidence().count(), 1);

        assert_eq!(ledger.excluded(4).unwrap(), None);
        let first = [node_id(&key(1))];
        assert_eq!(ledger.put_excluded(4, &first).unwrap(), first.to_vec());
        assert_eq!(ledger.put_excluded(4, &[]).unwrap(), first.to_vec());
        assert_eq!(ledger.excluded(4).unwrap(), Some(first.to_vec()));
        // Pruning drops the window's records but keeps the evidence.
        ledger.prune_before(5).unwrap();
        assert_eq!(ledger.evidence(4).unwrap(), vec![e]);
        assert_eq!(ledger.excluded(4).unwrap(), None);
    }
}
