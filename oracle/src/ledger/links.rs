//! Account links (tree `links`): `identity ‖ chain ‖ 0x00 ‖ from_window` → the
//! [`SignedLink`], one statement per identity, chain (CAIP-2 id) and first window. Which
//! statements are in force in a window is the oracle's rule (`Oracle::links_in_force`); here
//! they are only stored, listed and pruned.

use hco_verify::link::SignedLink;

use super::{Ledger, LedgerError, decode};
use crate::{IdentityId, codec};

fn key(link: &SignedLink) -> Vec<u8> {
    let l = &link.link;
    let mut key = Vec::with_capacity(32 + l.account.chain_id().len() + 9);
    key.extend_from_slice(&l.identity.0);
    key.extend_from_slice(l.account.chain_id().as_bytes());
    key.push(0);
    key.extend_from_slice(&l.from_window.to_be_bytes());
    key
}

impl Ledger {
    /// Stores a checked statement unless one is held for its identity, chain and first window
    /// (the first held is kept); whether it was new.
    pub fn put_link(&self, link: &SignedLink) -> Result<bool, LedgerError> {
        let swapped =
            self.links
                .compare_and_swap(key(link), None::<&[u8]>, Some(codec::encode(link)))?;
        Ok(swapped.is_ok())
    }

    /// The statements of `id`, by chain and first window.
    pub fn links_of(&self, id: &IdentityId) -> Result<Vec<SignedLink>, LedgerError> {
        self.links
            .scan_prefix(id.0)
            .map(|entry| decode("links", &entry?.1))
            .collect()
    }

    /// Every statement held.
    pub fn all_links(&self) -> Result<Vec<SignedLink>, LedgerError> {
        self.links
            .iter()
            .map(|entry| decode("links", &entry?.1))
            .collect()
    }

    /// Removes a statement (superseded for every window still open).
    pub fn remove_link(&self, link: &SignedLink) -> Result<(), LedgerError> {
        self.links.remove(key(link))?;
        Ok(())
    }
}
