//! First-write-wins records: a window's reveal of a member and a window's certificate are
//! written once. A second write of the same bytes is a [`FirstWrite::Duplicate`]; a second,
//! different record for the same key is a [`FirstWrite::Conflict`] carrying the record held,
//! which is never overwritten (the caller decides what the contradiction means: evidence for a
//! reveal, a loud refusal for a certificate).

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::codec;

use super::{LedgerError, decode};

/// What a first-write-wins put did (for a certificate, "the same" means the same summary:
/// another quorum's signatures over it are a duplicate, not a conflict).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum FirstWrite<T> {
    /// Nothing was held under the key: the record is stored.
    Stored,
    /// The same record was already held.
    Duplicate,
    /// A different record was already held; it is kept.
    Conflict {
        /// The record held (and kept).
        held: T,
    },
}

impl<T> FirstWrite<T> {
    /// Whether the record is now the one held (stored now or before).
    pub fn holds(&self) -> bool {
        !matches!(self, FirstWrite::Conflict { .. })
    }
}

/// Writes `value` under `key` in `tree` unless a record is there. A record held is a
/// duplicate when its encoding is `value`'s or `same(held, value)`, a conflict otherwise.
pub(super) fn put_first<T: Serialize + DeserializeOwned>(
    tree: &sled::Tree,
    name: &'static str,
    key: &[u8],
    value: &T,
    same: impl Fn(&T, &T) -> bool,
) -> Result<FirstWrite<T>, LedgerError> {
    let bytes = codec::encode(value);
    loop {
        match tree.compare_and_swap(key, None::<&[u8]>, Some(&bytes[..]))? {
            Ok(()) => return Ok(FirstWrite::Stored),
            Err(current) => match current.current {
                // Removed (pruned) between the swap and the read: try again.
                None => continue,
                Some(held) if held == bytes[..] => return Ok(FirstWrite::Duplicate),
                Some(held) => {
                    let held: T = decode(name, &held)?;
                    return Ok(if same(&held, value) {
                        FirstWrite::Duplicate
                    } else {
                        FirstWrite::Conflict { held }
                    });
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FirstWrite;
    use crate::testing::{key, node_id, params_for};
    use crate::{Digest, Ledger, SignedReveal, VERSION, WindowCertificate, WindowSummary};

    #[test]
    fn a_reveal_is_written_once_and_a_different_one_is_a_conflict() {
        let params = params_for(&[node_id(&key(1))]);
        let ledger = Ledger::temporary(params.digest()).unwrap();
        let first = SignedReveal::new(&key(1), 3, Digest([1; 32]), Digest([2; 32]));
        let other = SignedReveal::new(&key(1), 3, Digest([7; 32]), Digest([2; 32]));
        assert_eq!(ledger.put_reveal(&first).unwrap(), FirstWrite::Stored);
        assert_eq!(ledger.put_reveal(&first).unwrap(), FirstWrite::Duplicate);
        let conflict = ledger.put_reveal(&other).unwrap();
        assert!(!conflict.holds());
        assert_eq!(
            conflict,
            FirstWrite::Conflict {
                held: first.clone()
            }
        );
        assert_eq!(ledger.reveal(3, &node_id(&key(1))).unwrap(), Some(first));
    }

    #[test]
    fn a_certificate_is_written_once_and_a_different_one_is_a_conflict() {
        let params = params_for(&[node_id(&key(1))]);
        let ledger = Ledger::temporary(params.digest()).unwrap();
        let cert = |root: u8| WindowCertificate {
            summary: WindowSummary {
                version: VERSION,
                t: 5,
                root: Digest([root; 32]),
                count: 1,
                links_root: crate::merkle::empty_root(),
                params: params.digest(),
            },
            signatures: Vec::new(),
        };
        assert_eq!(
            ledger.put_certificate(&cert(1)).unwrap(),
            FirstWrite::Stored
        );
        assert!(ledger.put_certificate(&cert(1)).unwrap().holds());
        // The same summary under other signatures: a duplicate, the first kept.
        let mut resigned = cert(1);
        resigned
            .signatures
            .push((node_id(&key(1)), crate::Sig([3; 64])));
        assert_eq!(
            ledger.put_certificate(&resigned).unwrap(),
            FirstWrite::Duplicate
        );
        assert_eq!(ledger.certificate(5).unwrap(), Some(cert(1)));
        assert_eq!(
            ledger.put_certificate(&cert(2)).unwrap(),
            FirstWrite::Conflict { held: cert(1) }
        );
        assert_eq!(ledger.certified_root(5).unwrap(), Digest([1; 32]));
        // Once pruned, the window may be written again.
        ledger.prune_before(6).unwrap();
        assert_eq!(
            ledger.put_certificate(&cert(2)).unwrap(),
            FirstWrite::Stored
        );
    }
}
