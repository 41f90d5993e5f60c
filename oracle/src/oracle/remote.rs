//! Acceptances sealed by other committee members, received by gossip or reconciliation.

use std::collections::HashSet;

use crate::ledger::LedgerError;
use crate::secret::check_issuer;
use crate::{Digest, Reason, SealedAcceptance, sign};

use super::{Oracle, Outcome};

impl Oracle {
    /// Records acceptances sealed by another committee member (gossip or reconciliation).
    /// Checks each seal, the issuer's assignment and the identity's signature; returns how many
    /// were new. Durable when it returns.
    pub fn record_remote(&self, batch: &[SealedAcceptance]) -> Outcome<usize> {
        let mut good_seals = HashSet::new();
        for s in batch {
            let c = s.acceptance.challenge();
            if !self.params.committee.contains(&c.issuer) {
                return Ok(Err(Reason::NotInCommittee(c.issuer)));
            }
            if let Err(reason) = check_issuer(&self.params, &c.issuer, &c.id, c.t) {
                return Ok(Err(reason));
            }
            let proof_ok = s.proof.leaf_count == u64::from(s.seal.count)
                && s.proof.verify(&s.seal.root, &s.acceptance.digest())
                && c.issuer == s.seal.issuer
                && c.t == s.seal.t;
            if !proof_ok {
                return Ok(Err(Reason::BadIssuerSignature));
            }
            if good_seals.insert(s.seal.sig)
                && let Err(reason) = s.seal.check_signature()
            {
                return Ok(Err(reason));
            }
        }
        let digests: Vec<Digest> = batch
            .iter()
            .map(|s| s.acceptance.response.signing_digest())
            .collect();
        let items: Vec<_> = batch
            .iter()
            .zip(&digests)
            .map(|(s, d)| {
                (
                    &s.acceptance.challenge().id.0,
                    d,
                    &s.acceptance.response.sig,
                )
            })
            .collect();
        if sign::verify_many(&items).iter().any(|ok| !ok) {
            return Ok(Err(Reason::BadIdentitySignature));
        }
        let fresh = {
            let _guard = self.commit.lock().map_err(|_| LedgerError::Poisoned)?;
            let fresh = self.ledger.insert_acceptances(batch)?;
            // Presence assertions accepted by other issuers move this node's counters too, so
            // a cloned authenticator cannot replay counts at another issuer.
            for s in batch {
                let c = s.acceptance.challenge();
                let bound = self
                    .registry
                    .get(&c.family)
                    .is_some_and(|f| f.uses_passkeys());
                if let Some(update) = bound
                    .then(|| {
                        hco_challenges::presence::claimed_counter(&s.acceptance.response.answer)
                    })
                    .flatten()
                {
                    self.ledger
                        .raise_counter(&c.id, &update.credential_id, update.counter)?;
                }
            }
            fresh
        };
        if fresh > 0 {
            self.ledger.make_durable()?;
        }
        Ok(Ok(fresh))
    }
}
