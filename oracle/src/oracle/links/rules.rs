//! Which statements are in force in a window, and which a member may drop: pure functions of
//! the statements held, so members that count the same statements agree whatever order they
//! heard them in.
//!
//! Ranks: of an identity's statements for one chain and first window, the one with the
//! smallest [`link_subject`] stands (two spellings of one choice cannot split members). An
//! identity links at most [`MAX_LINKED_CHAINS`] chains in a window: the smallest CAIP-2 ids
//! among those its standing statements name with first window ≤ `t`.
//!
//! Dropping is safe when the dropped statement is in force in no window from `settled` on
//! (`settled` is a window whose statements are all decided): a statement outranked in its
//! chain and first window; one before the latest of its chain with first window ≤ `settled`;
//! one of a chain with [`MAX_LINKED_CHAINS`] smaller chains among the statements of its own
//! first window, or among those with first window ≤ `settled` (those chains stay held for good).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use hco_verify::account::AccountId;
use hco_verify::link::SignedLink;

use crate::relay::link_subject;
use crate::{Digest, IdentityId};

/// Chains one identity may link in a window.
pub const MAX_LINKED_CHAINS: usize = 8;

/// Why a statement is not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    /// Another statement of its identity, chain and first window ranks before it.
    Outranked,
    /// Its identity links [`MAX_LINKED_CHAINS`] chains that rank before its chain.
    TooManyChains,
    /// A later statement of its chain is in force from a settled window on.
    Superseded,
}

/// The statements standing: per identity, chain and first window, the smallest by
/// [`link_subject`].
fn standing(
    statements: &[SignedLink],
) -> BTreeMap<(IdentityId, String, u64), (Digest, &SignedLink)> {
    let mut out: BTreeMap<(IdentityId, String, u64), (Digest, &SignedLink)> = BTreeMap::new();
    for s in statements {
        let l = &s.link;
        let key = (l.identity, l.account.chain_id().to_owned(), l.from_window);
        let rank = link_subject(s);
        match out.get(&key) {
            Some((held, _)) if *held <= rank => {}
            _ => {
                out.insert(key, (rank, s));
            }
        }
    }
    out
}

/// The links in force in window `t` among the identities `active` (sorted), from the
/// statements held:
/// 1. per identity and chain, the standing statement with the latest first window ≤ `t`, for
///    the identity's [`MAX_LINKED_CHAINS`] smallest chains: the identity's later choice
///    replaces the earlier;
/// 2. per account, of those, the latest first window (ties: the smallest identity): the
///    account holder's later choice replaces the earlier, and the identity it left has no link
///    on that chain;
/// 3. only identities active in `t`.
pub fn in_force(
    statements: &[SignedLink],
    t: u64,
    active: &[IdentityId],
) -> Vec<(AccountId, IdentityId)> {
    // Per identity and chain, the latest first window ≤ t (keys iterate in window order).
    let mut latest: BTreeMap<(IdentityId, String), &SignedLink> = BTreeMap::new();
    for ((identity, chain, from), (_, s)) in standing(statements) {
        if from <= t {
            latest.insert((identity, chain), s);
        }
    }
    let mut chains_of: BTreeMap<IdentityId, usize> = BTreeMap::new();
    let mut by_account: BTreeMap<&AccountId, (u64, Reverse<IdentityId>)> = BTreeMap::new();
    for ((identity, _), s) in &latest {
        let n = chains_of.entry(*identity).or_default();
        *n += 1;
        if *n > MAX_LINKED_CHAINS {
            continue;
        }
        let candidate = (s.link.from_window, Reverse(*identity));
        let slot = by_account.entry(&s.link.account).or_insert(candidate);
        if candidate > *slot {
            *slot = candidate;
        }
    }
    by_account
        .into_iter()
        .filter(|(_, (_, Reverse(identity)))| active.binary_search(identity).is_ok())
        .map(|(account, (_, Reverse(identity)))| (account.clone(), identity))
        .collect()
}

/// Of the statements held, which to keep once every statement with first window ≤ `settled`
/// is decided (see the module documentation): `Ok` for a kept statement, the reason otherwise,
/// in the order given.
pub fn keep(statements: &[SignedLink], settled: Option<u64>) -> Vec<Result<(), Dropped>> {
    let standing = standing(statements);
    let settled_le = |from: u64| settled.is_some_and(|s| from <= s);
    // Per identity and chain, the latest first window ≤ settled; per identity, the chains that
    // have one; per identity and first window, its chains.
    let mut in_force_from: BTreeMap<(IdentityId, &str), u64> = BTreeMap::new();
    let mut settled_chains: BTreeMap<IdentityId, BTreeSet<&str>> = BTreeMap::new();
    let mut chains_by_from: BTreeMap<(IdentityId, u64), BTreeSet<&str>> = BTreeMap::new();
    for (identity, chain, from) in standing.keys() {
        if settled_le(*from) {
            in_force_from.insert((*identity, chain.as_str()), *from);
            settled_chains
                .entry(*identity)
                .or_default()
                .insert(chain.as_str());
        }
        chains_by_from
            .entry((*identity, *from))
            .or_default()
            .insert(chain.as_str());
    }
    let before = |set: Option<&BTreeSet<&str>>, chain: &str| {
        set.is_some_and(|set| set.range(..chain).count() >= MAX_LINKED_CHAINS)
    };
    statements
        .iter()
        .map(|s| {
            let l = &s.link;
            let chain = l.account.chain_id();
            let key = (l.identity, chain.to_owned(), l.from_window);
            match standing.get(&key) {
                Some((_, kept)) if *kept == s => {}
                _ => return Err(Dropped::Outranked),
            }
            if before(settled_chains.get(&l.identity), chain)
                || before(chains_by_from.get(&(l.identity, l.from_window)), chain)
            {
                return Err(Dropped::TooManyChains);
            }
            if in_force_from
                .get(&(l.identity, chain))
                .is_some_and(|f| l.from_window < *f)
            {
                return Err(Dropped::Superseded);
            }
            Ok(())
        })
        .collect()
}

#[cfg(test)]
mod tests;
