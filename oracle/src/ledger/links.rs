//! Account links (tree `links`): `identity ‖ chain ‖ 0x00 ‖ from_window` → the
//! [`SignedLink`], one statement per identity, chain (CAIP-2 id) and first window. Which
//! statement stands and which are in force in a window are the oracle's rules; here they are
//! only stored, listed and removed.

use hco_verify::link::SignedLink;

use super::{Ledger, LedgerError, decode};
use crate::{IdentityId, codec};

fn key(link: &SignedLink) -> Vec<u8> {
    let l = &link.link;
    key_of(&l.identity, l.account.chain_id(), l.from_window)
}

/// The key of `(identity, chain, first window)`: keys sort as those tuples do (the `0x00` after
/// the chain sorts a chain before the longer ones it begins).
fn key_of(identity: &IdentityId, chain: &str, from_window: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(32 + chain.len() + 9);
    key.extend_from_slice(&identity.0);
    key.extend_from_slice(chain.as_bytes());
    key.push(0);
    key.extend_from_slice(&from_window.to_be_bytes());
    key
}

impl Ledger {
    /// Stores a checked statement, replacing the one held for its identity, chain and first
    /// window (the oracle decides which stands).
    pub fn put_link(&self, link: &SignedLink) -> Result<(), LedgerError> {
        self.links.insert(key(link), codec::encode(link))?;
        Ok(())
    }

    /// The statements of `id`, by chain and first window.
    pub fn links_of(&self, id: &IdentityId) -> Result<Vec<SignedLink>, LedgerError> {
        self.links
            .scan_prefix(id.0)
            .map(|entry| decode("links", &entry?.1))
            .collect()
    }

    /// The statements after `(identity, chain, first window)` in that order: a page of them
    /// reads from where the last one ended, not the whole tree.
    pub fn links_after(
        &self,
        after: Option<(&IdentityId, &str, u64)>,
    ) -> impl Iterator<Item = Result<SignedLink, LedgerError>> + '_ {
        let start = match after {
            Some((id, chain, from)) => std::ops::Bound::Excluded(key_of(id, chain, from)),
            None => std::ops::Bound::Unbounded,
        };
        self.links
            .range::<Vec<u8>, _>((start, std::ops::Bound::Unbounded))
            .map(|entry| decode("links", &entry?.1))
    }

    /// Every statement held.
    pub fn all_links(&self) -> Result<Vec<SignedLink>, LedgerError> {
        self.links
            .iter()
            .map(|entry| decode("links", &entry?.1))
            .collect()
    }

    /// Removes a statement (one the oracle's rules drop).
    pub fn remove_link(&self, link: &SignedLink) -> Result<(), LedgerError> {
        self.links.remove(key(link))?;
        Ok(())
    }
}
