//! Reveals that count ([`crate::relay`]): per window and member, the relayed reveal that made
//! the member's reveal count here, with this node's receipt where it added one. Written once:
//! counting is never taken back.

use crate::{NodeId, RelayedReveal, codec};

use super::{Ledger, LedgerError, decode, keys};

impl Ledger {
    /// Records that `relayed`'s reveal counts here; false if the member's reveal of the window
    /// already counted (the first record is kept).
    pub fn put_counted_reveal(&self, relayed: &RelayedReveal) -> Result<bool, LedgerError> {
        let r = &relayed.reveal.reveal;
        let key = keys::window_node(r.t, &r.node.0);
        Ok(self
            .counted_reveals
            .compare_and_swap(key, None::<&[u8]>, Some(codec::encode(relayed)))?
            .is_ok())
    }

    /// Whether `node`'s reveal of `t` counts here.
    pub fn reveal_counts(&self, t: u64, node: &NodeId) -> Result<bool, LedgerError> {
        Ok(self
            .counted_reveals
            .contains_key(keys::window_node(t, &node.0))?)
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
    fn the_first_counted_reveal_is_kept() {
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
        assert!(!ledger.put_counted_reveal(&other).unwrap());
        assert!(ledger.reveal_counts(4, &node).unwrap());
        assert!(!ledger.reveal_counts(5, &node).unwrap());
        assert_eq!(ledger.counted_reveals(4).unwrap(), vec![first]);
    }
}
