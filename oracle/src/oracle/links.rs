//! Account links ([`hco_verify::link`]): the statements the committee records, which are in
//! force in a window, and the proofs it serves.
//!
//! A statement is recorded when both its signatures hold (the identity's ed25519, the account's
//! EIP-191), it names this network (the parameters' digest), its identity is registered here,
//! and its first window comes after the current one, at most [`MAX_LINK_LEAD`] windows ahead:
//! it then has at least the rest of the current window to reach every member by gossip before
//! any summary depends on it. An identity holds at most [`MAX_LINKS_PER_IDENTITY`] statements;
//! one superseded for every window still open is pruned when a newer one is recorded.
//!
//! In force in window `t`, the same on every member that holds the same statements:
//! 1. per account, the statement with the latest first window not after `t` (ties: the
//!    smallest identity key): the account holder's later choice replaces the earlier;
//! 2. of those, per identity and chain (CAIP-2 id), the latest first window (ties: the
//!    smallest account): the identity's later choice replaces the earlier;
//! 3. only identities active in `t`. The window's summary commits to what remains
//!    (`links_root`).

use std::collections::BTreeMap;
use std::sync::Arc;

use hco_verify::account::AccountId;
use hco_verify::link::{LinkProof, LinkSet, SignedLink};
use serde::{Deserialize, Serialize};

use crate::ledger::LedgerError;
use crate::{
    Class, IdentityId, MembershipProof, Reason, Timestamp, WindowCertificate, WindowSummary,
};

use super::{Oracle, Outcome};

/// How many windows ahead a statement's first window may be.
pub const MAX_LINK_LEAD: u64 = 24;
/// Statements one identity may hold at once (in force and pending, all chains).
pub const MAX_LINKS_PER_IDENTITY: usize = 8;

/// What `GET /v1/windows/{t}/links/{account}` serves: the certificate, the account's link in
/// it and the identity's membership proof (which carries its class).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkedProof {
    /// The window's certificate.
    pub certificate: WindowCertificate,
    /// The link under `certificate.summary.links_root`.
    pub link: LinkProof,
    /// The identity under `certificate.summary.root`.
    pub proof: MembershipProof,
}

impl Oracle {
    /// Records a client's or a peer's statement at `now` (see the module documentation);
    /// whether it was new.
    pub fn record_link(&self, signed: &SignedLink, now: Timestamp) -> Outcome<bool> {
        let link = &signed.link;
        if let Err(e) = signed.verify_on(&self.params_digest) {
            return Ok(Err(Reason::BadLink(format!("{}: {e}", e.code()))));
        }
        let current = match self.params.window_at(now) {
            Ok(t) => t,
            Err(reason) => return Ok(Err(reason)),
        };
        // Not the statement's fault alone (gossip may bring it after its window began): a
        // window refusal, not `bad_link`.
        if link.from_window <= current || link.from_window > current + MAX_LINK_LEAD {
            return Ok(Err(Reason::WrongWindow {
                t: link.from_window,
                current,
            }));
        }
        if !self.ledger.has_identity(&link.identity)? {
            return Ok(Err(Reason::UnknownIdentity));
        }
        let held = self.ledger.links_of(&link.identity)?;
        if held.iter().any(|h| h == signed) {
            return Ok(Ok(false));
        }
        // Statements of this identity and chain that no open window uses any more: older than
        // the latest one already in force for the window before the current one.
        let chain = link.account.chain_id();
        let in_force_before = held
            .iter()
            .filter(|h| h.link.account.chain_id() == chain && h.link.from_window < current)
            .map(|h| h.link.from_window)
            .max();
        let superseded: Vec<&SignedLink> = held
            .iter()
            .filter(|h| {
                h.link.account.chain_id() == chain
                    && in_force_before.is_some_and(|f| h.link.from_window < f)
            })
            .collect();
        if held.len() - superseded.len() >= MAX_LINKS_PER_IDENTITY {
            return Ok(Err(Reason::TooManyLinks {
                max: MAX_LINKS_PER_IDENTITY,
            }));
        }
        for old in superseded {
            self.ledger.remove_link(old)?;
        }
        let fresh = self.ledger.put_link(signed)?;
        self.ledger.make_durable()?;
        Ok(Ok(fresh))
    }

    /// The links in force in window `t` among the identities `active` (sorted; see the module
    /// documentation).
    pub(super) fn links_in_force(
        &self,
        t: u64,
        active: &[IdentityId],
    ) -> Result<Vec<(AccountId, IdentityId)>, LedgerError> {
        let mut by_account: BTreeMap<AccountId, (u64, std::cmp::Reverse<IdentityId>)> =
            BTreeMap::new();
        for s in self.ledger.all_links()? {
            let l = s.link;
            if l.from_window > t {
                continue;
            }
            let candidate = (l.from_window, std::cmp::Reverse(l.identity));
            let slot = by_account.entry(l.account).or_insert(candidate);
            if candidate > *slot {
                *slot = candidate;
            }
        }
        let mut by_identity: BTreeMap<(IdentityId, String), (u64, std::cmp::Reverse<AccountId>)> =
            BTreeMap::new();
        for (account, (from, std::cmp::Reverse(identity))) in by_account {
            let key = (identity, account.chain_id().to_owned());
            let candidate = (from, std::cmp::Reverse(account));
            match by_identity.get(&key) {
                Some(held) if *held >= candidate => {}
                _ => {
                    by_identity.insert(key, candidate);
                }
            }
        }
        Ok(by_identity
            .into_iter()
            .filter(|((identity, _), _)| active.binary_search(identity).is_ok())
            .map(|((identity, _), (_, std::cmp::Reverse(account)))| (account, identity))
            .collect())
    }

    /// The certificate of `t`, `account`'s link in it and its identity's membership proof;
    /// `None` without a certificate, a link in force or a set matching the certificate here.
    pub fn link_proof(
        &self,
        t: u64,
        account: &AccountId,
    ) -> Result<Option<LinkedProof>, LedgerError> {
        let Some(cert) = self.ledger.certificate(t)? else {
            return Ok(None);
        };
        let Some(set) = self.certified_set(t, &cert)? else {
            return Ok(None);
        };
        let links = LinkSet::new(self.links_in_force(t, set.ids())?);
        if links.root() != cert.summary.links_root {
            return Ok(None);
        }
        let Some(link) = links.proof(account) else {
            return Ok(None);
        };
        let Some(proof) = set.proof(&link.identity) else {
            return Ok(None);
        };
        Ok(Some(LinkedProof {
            certificate: cert,
            link,
            proof,
        }))
    }

    /// The summary of window `t` over `active`, committing to the links in force.
    pub(super) fn summary_of(
        &self,
        t: u64,
        active: Vec<(IdentityId, Class)>,
    ) -> Result<(WindowSummary, Arc<crate::certificate::ActiveSet>), LedgerError> {
        let mut ids: Vec<IdentityId> = active.iter().map(|(id, _)| *id).collect();
        ids.sort_unstable();
        let links = self.links_in_force(t, &ids)?;
        let (summary, set, _) = WindowSummary::with_links(t, active, links, self.params_digest);
        Ok((summary, Arc::new(set)))
    }
}
