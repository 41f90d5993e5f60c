//! Account links ([`hco_verify::link`]): the statements the committee records, which are in
//! force in a window, and the proofs it serves.
//!
//! A client racing the members must not make them commit to different links (they would sign
//! different summaries and nobody's work would be certified), so nothing here depends on when
//! or in what order a member heard what it keeps:
//! - a statement counts by the relay rule ([`crate::relay::RelayedLink`]): heard by
//!   `link_deadline(from, k)` with `k` members' receipts; a member that keeps one with `k ≤ f`
//!   relays it with its receipt, and members pull each other's statements of a window before
//!   they summarize it;
//! - one from a client (no receipt) also needs its identity registered here and its first
//!   window at most [`MAX_LINK_LEAD`] windows ahead (one more with a receipt); a member that
//!   refuses it for that still counts it when another member relays or serves it;
//! - one with at most `f` receipts needs its identity registered here or the registration a
//!   member relays it with (which is then recorded): a faulty member cannot make honest ones
//!   store statements of identities nobody registered;
//! - what is kept and what is in force are pure functions of the statements ([`rules`]);
//! - one with `f + 1` receipts counts whenever it comes: an honest member counted it in time. A
//!   member that was down or cut off past a deadline catches up by pulling statements from
//!   several members and merging their receipts.

mod rules;

use std::sync::Arc;

use hco_verify::account::AccountId;
use hco_verify::link::{LinkProof, LinkSet, SignedLink};
use serde::{Deserialize, Serialize};

use crate::ledger::LedgerError;
use crate::relay::RelayedLink;
use crate::{
    Class, IdentityId, MembershipProof, Reason, Timestamp, WindowCertificate, WindowSummary,
};

use super::{Oracle, Outcome};

use rules::Dropped;
pub use rules::MAX_LINKED_CHAINS;

/// How many windows ahead of the current one a client's statement may start.
pub const MAX_LINK_LEAD: u64 = 4;

/// What hearing a statement did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkHeard {
    /// Whether this member did not hold it yet.
    pub fresh: bool,
    /// The statement with this member's receipt, to relay (a fresh one heard with at most
    /// `f` receipts, none of them this member's).
    pub relay: Option<RelayedLink>,
}

/// What `GET /v1/windows/{t}/links/{account}` serves: the certificate, the account's link in
/// it and the identity's membership proof (which carries its class).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LinkedProof {
    /// The window's certificate.
    pub certificate: WindowCertificate,
    /// The link under `certificate.summary.links_root`.
    pub link: LinkProof,
    /// The identity under `certificate.summary.root`.
    pub proof: MembershipProof,
}

impl Oracle {
    /// Hears a statement, from a client (no receipt) or a member, at `now` (see the module
    /// documentation).
    pub fn hear_link(&self, relayed: &RelayedLink, now: Timestamp) -> Outcome<LinkHeard> {
        let signed = &relayed.link;
        let link = &signed.link;
        // Pulls bring back what is held: nothing to check or relay then.
        if self.ledger.links_of(&link.identity)?.contains(signed) {
            return Ok(Ok(LinkHeard {
                fresh: false,
                relay: None,
            }));
        }
        // Timing first, on the receipts it claims (no signature checked yet: a peer's junk is
        // refused cheaply); a claim that does not check is refused below.
        let receipts = relayed.receipts.len();
        let current = match self.params.window_at(now) {
            Ok(t) => t,
            Err(reason) => return Ok(Err(reason)),
        };
        // With f + 1 receipts an honest member counted it in time, so every honest member
        // counts it: a member that missed it (down, or cut off past its deadline) catches up.
        let decided = receipts > self.params.faults_tolerated();
        let lead = MAX_LINK_LEAD + u64::from(receipts > 0);
        if !decided
            && (now > self.params.link_deadline(link.from_window, receipts)
                || link.from_window > current.saturating_add(lead))
        {
            return Ok(Err(Reason::WrongWindow {
                t: link.from_window,
                current,
            }));
        }
        if let Err(reason) = relayed.check_receipts(&self.params) {
            return Ok(Err(reason));
        }
        if let Err(e) = signed.verify_on(&self.params_digest) {
            return Ok(Err(Reason::BadLink(format!("{}: {e}", e.code()))));
        }
        // Not yet decided: only for an identity registered here, or registered now from the
        // registration a member's relay carries (its proof of work checked, not its age).
        if !decided && !self.ledger.has_identity(&link.identity)? {
            match &relayed.registration {
                Some(reg) if receipts > 0 && reg.body.id == link.identity => {
                    if let Err(reason) = self.register(reg, now)? {
                        return Ok(Err(reason));
                    }
                }
                _ => return Ok(Err(Reason::UnknownIdentity)),
            }
        }
        let _one_at_a_time = self.links_lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut held = self.ledger.links_of(&link.identity)?;
        if held.contains(signed) {
            return Ok(Ok(LinkHeard {
                fresh: false,
                relay: None,
            }));
        }
        held.push(signed.clone());
        // Every statement with first window ≤ current − 2 is decided (its deadline passed a
        // relay round or more after current − 1 began).
        let verdicts = rules::keep(&held, current.checked_sub(2));
        if let Some(Err(dropped)) = verdicts.last() {
            return Ok(Err(match dropped {
                Dropped::Outranked => Reason::LinkOutranked,
                Dropped::TooManyChains => Reason::TooManyLinks {
                    max: MAX_LINKED_CHAINS,
                },
                Dropped::Superseded => Reason::WrongWindow {
                    t: link.from_window,
                    current,
                },
            }));
        }
        for (old, verdict) in held.iter().zip(&verdicts) {
            if verdict.is_err() {
                self.ledger.remove_link(old)?;
            }
        }
        self.ledger.put_link(signed)?;
        self.ledger.make_durable()?;
        let relays = receipts <= self.params.faults_tolerated()
            && !relayed.receipts.iter().any(|r| r.node == self.node);
        let relay = if relays {
            Some(
                self.with_registration(relayed.clone())?
                    .with_receipt(&self.key),
            )
        } else {
            None
        };
        Ok(Ok(LinkHeard { fresh: true, relay }))
    }

    /// [`Oracle::hear_link`] for a client's statement; whether it was new.
    pub fn record_link(&self, signed: &SignedLink, now: Timestamp) -> Outcome<bool> {
        Ok(self
            .hear_link(&RelayedLink::new(signed.clone()), now)?
            .map(|heard| heard.fresh))
    }

    /// The statements held whose first window is in `windows`, after `(identity, chain, first
    /// window)` in that order, at most `limit`, each with this member's receipt: what a member
    /// pulls before it summarizes a window, and what a starting member catches up on.
    pub fn links_between(
        &self,
        windows: std::ops::RangeInclusive<u64>,
        after: Option<&(IdentityId, String, u64)>,
        limit: usize,
    ) -> Result<Vec<RelayedLink>, LedgerError> {
        let mut out = Vec::new();
        let after = after.map(|(id, chain, from)| (id, chain.as_str(), *from));
        for signed in self.ledger.links_after(after) {
            let signed = signed?;
            if !windows.contains(&signed.link.from_window) {
                continue;
            }
            out.push(
                self.with_registration(RelayedLink::new(signed))?
                    .with_receipt(&self.key),
            );
            if out.len() == limit {
                break;
            }
        }
        Ok(out)
    }

    /// `relayed` with its identity's registration as held here (if it is).
    fn with_registration(&self, relayed: RelayedLink) -> Result<RelayedLink, LedgerError> {
        let held = self.ledger.identity(&relayed.link.link.identity)?;
        Ok(relayed.with_registration(held.map(|record| record.register)))
    }

    /// The links in force in window `t` among the identities `active` (sorted; see
    /// [`rules::in_force`]).
    pub(super) fn links_in_force(
        &self,
        t: u64,
        active: &[IdentityId],
    ) -> Result<Vec<(AccountId, IdentityId)>, LedgerError> {
        Ok(rules::in_force(&self.ledger.all_links()?, t, active))
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
