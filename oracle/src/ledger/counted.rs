//! Reveals that count ([`crate::relay`]): per window, member and reveal, the relayed reveal that
//! made it count here, with this node's receipt where it added one. Each distinct reveal of a
//! member counts on its own (two that count are the member's equivocation, seen by every
//! honest member alike). Written once: counting is never taken back.

use crate::{NodeId, RelayedReveal, codec};

use super::{Ledger, LedgerError, decode, keys};

impl Ledger {
    /// Records that `relayed`'s reveal counts here; false if that reveal already counted (the
    /// first record is kept).
    pub fn put_counted_reveal(&self, relayed: &RelayedReveal) -> Result<bool, LedgerError> {
        let r = &relayed.reveal.reveal;
        let mut key = keys::window_node(r.t, &r.node.0).to_vec();
        key.extend_from_slice(&relayed.subject().0);
        Ok(self
            .counted_reveals
            .compare_and_swap(key, None::<&[u8]>, Some(codec::encode(relayed)))?
            .is_ok())
    }

    /// Whether a reveal of `t` by `node` counts here.
    pub fn reveal_counts(&self, t: u64, node: &NodeId) -> Result<bool, LedgerError> {
        Ok(!self.counted_reveals_of(t, node)?.is_empty())
    }

    /// The reveals of `t` by `node` that count here (two or more: it equivocated).
    pub fn counted_reveals_of(
        &self,
        t: u64,
        node: &NodeId,
    ) -> Result<Vec<RelayedReveal>, LedgerError> {
        self.counted_reveals
            .scan_prefix(keys::window_node(t, &node.0))
            .map(|r| decode("counted_reveals", &r?.1))
            .collect()
    }

    /// The relayed reveals of `t` that count here, as this node holds them.
    pub fn counted_reveals(&self, t: u64) -> Result<Vec<RelayedReveal>, LedgerError> {
        self.counted_reveals
            .scan_prefix(keys::window(t))
            .map(|r| decode("counted_reveals", &r?.1))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{key, params_for};
    use crate::{Digest, Ledger, RelayedReveal, SignedReveal};

    #[test]
    fn each_distinct_reveal_counts_once() {
        let ledger = Ledger::temporary(params_for(&[]).digest()).unwrap();
        let first = RelayedReveal::direct(SignedReveal::new(
            &key(1),
            4,
            Digest([1; 32]),
            Digest([2; 32]),
        ));
        let other = RelayedReveal::direct(SignedReveal::new(
            &key(1),
            4,
            Digest([3; 32]),
            Digest([2; 32]),
        ));
        let node = first.reveal.reveal.node;
        assert!(!ledger.reveal_counts(4, &node).unwrap());
        assert!(ledger.put_counted_reveal(&first).unwrap());
        assert!(!ledger.put_counted_reveal(&first).unwrap());
        assert!(ledger.reveal_counts(4, &node).unwrap());
        assert!(!ledger.reveal_counts(5, &node).unwrap());
        assert!(ledger.put_counted_reveal(&other).unwrap());
        assert_eq!(ledger.counted_reveals_of(4, &node).unwrap().len(), 2);
        assert_eq!(ledger.counted_reveals(4).unwrap().len(), 2);
    }
}
