//! Acceptances sealed by other committee members, received by gossip or reconciliation.
//!
//! Each is checked as far as a member without the issuer's window secret can: the seal and
//! the issuer's assignment, the identity's signature, and every check the issuer ran on the
//! envelope (see [`super::envelope`]) with the signed receipt time standing for the issuer's
//! clock. What needs the secret (prompt, answer key, exact opening moment) is left to the
//! audit. One failing acceptance rejects the whole batch, so nothing of it is stored. An
//! acceptance sealed by a member for a try it may not issue is kept as evidence against it. Nothing
//! is added to a window this node has summarized (see [`Oracle::record_remote`]).

use std::collections::{HashMap, HashSet};

use crate::audit::Violation;
use crate::evidence::Evidence;
use crate::ledger::LedgerError;
use crate::relay::{Heard, Receipt, SealReceipt, seal_signers, seal_subject};
use crate::secret::check_issuer;
use crate::{Digest, Profile, Reason, SealedAcceptance, Timestamp, sign};

use super::{Oracle, Outcome};

/// What [`Oracle::record_relayed`] did.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Acceptances new here.
    pub fresh: usize,
    /// This node's receipts for the seals it must relay (counted in their last round).
    pub relay: Vec<SealReceipt>,
}

impl Oracle {
    /// [`Oracle::record_relayed`], falling back to one acceptance at a time when the batch as a
    /// whole is refused, so one bad acceptance does not sink the good ones in a gossip message
    /// or a reconciliation chunk. Returns how many were new, the refusal to act on (the first
    /// that blames the sender, [`super::blames_sender`], else the first) and this node's
    /// receipts for the seals to relay.
    pub fn record_remote_each(
        &self,
        batch: &[SealedAcceptance],
        receipts: &[SealReceipt],
        heard: Heard,
        now: Timestamp,
    ) -> Result<(usize, Option<Reason>, Vec<SealReceipt>), LedgerError> {
        let first = match self.record_relayed(batch, receipts, heard, now)? {
            Ok(done) => return Ok((done.fresh, None, done.relay)),
            Err(reason) if batch.len() <= 1 => return Ok((0, Some(reason), Vec::new())),
            Err(reason) => reason,
        };
        let (mut fresh, mut blamed, mut other, mut relay) = (0, None, None, Vec::new());
        for s in batch {
            match self.record_relayed(std::slice::from_ref(s), receipts, heard, now)? {
                Ok(done) => {
                    fresh += done.fresh;
                    for r in done.relay {
                        if !relay.contains(&r) {
                            relay.push(r);
                        }
                    }
                }
                Err(reason) if super::blames_sender(&reason) => {
                    blamed.get_or_insert(reason);
                }
                Err(reason) => {
                    other.get_or_insert(reason);
                }
            }
        }
        Ok((fresh, blamed.or(other).or(Some(first)), relay))
    }

    /// This node's receipts for the seals of `acceptances` it holds from other issuers (what it
    /// sends with acceptances a member reconciles: each counts one signer more there).
    pub fn receipts_for(&self, acceptances: &[SealedAcceptance]) -> Vec<SealReceipt> {
        let mut out: Vec<SealReceipt> = Vec::new();
        for s in acceptances.iter().filter(|s| s.seal.issuer != self.node) {
            let seal = seal_subject(&s.seal);
            if !out.iter().any(|r| r.seal == seal) {
                out.push(SealReceipt {
                    seal,
                    receipt: Receipt::new(&self.key, &seal),
                });
            }
        }
        out
    }

    /// [`Oracle::record_relayed`] without receipts; returns how many were new.
    pub fn record_remote(&self, batch: &[SealedAcceptance], now: Timestamp) -> Outcome<usize> {
        Ok(self
            .record_relayed(batch, &[], Heard::ByGossip, now)?
            .map(|done| done.fresh))
    }

    /// Records acceptances sealed by another committee member (gossip or reconciliation).
    /// Checks each seal, the issuer's assignment, the envelope as the issuer checked it, the
    /// human-speed floor and the identity's signature; returns how many were new. The batch is
    /// all or nothing: the first failing acceptance's reason rejects it and nothing is written.
    /// Written, not flushed, when it returns (the next flush, at the latest the one before this
    /// node signs its summary, covers it; a raised passkey counter is flushed at once).
    /// [`super::blames_sender`] tells whether a reason proves the
    /// sender wrong. A window this node has summarized takes no more (`window_summarized`),
    /// unless the certificate shows its summary missed part of the window. A touch prompt's
    /// acceptance reaching this node (`now`) later than its slot allows is refused
    /// (`late_acceptance`, [`crate::witness`]) unless this node is repairing a summary the
    /// window's certificate does not match: then the quorum vouches for what it missed.
    ///
    /// Every acceptance has an arrival deadline (the relay rule, [`crate::relay`]): a touch
    /// prompt's slot allows the one above, any other acceptance of `t` counts until
    /// [`crate::NetworkParams::acceptance_base_deadline`]; each valid receipt of another member
    /// for its seal in `receipts` adds a relay round (up to `f`), and a refused one is
    /// `bad_receipt`. A seal counted with at most `f` signers gets this node's receipt,
    /// returned for the caller to relay with the acceptances, when `heard` by request or in the
    /// last round before its deadline (gossip forwards the rest in time). A node that started after `t` closed takes what it is sent.
    pub fn record_relayed(
        &self,
        batch: &[SealedAcceptance],
        receipts: &[SealReceipt],
        heard: Heard,
        now: Timestamp,
    ) -> Outcome<Recorded> {
        let signers = match seal_signers(&self.params, batch.iter().map(|s| &s.seal), receipts) {
            Ok(signers) => signers,
            Err(reason) => return Ok(Err(reason)),
        };
        let signers_of = |s: &SealedAcceptance| signers.get(&seal_subject(&s.seal)).copied();
        let mut late_region = HashSet::new();
        let mut good_seals = HashSet::new();
        let mut open_windows = HashMap::new();
        for s in batch {
            let c = s.acceptance.challenge();
            let repairing = match open_windows.get(&c.t) {
                Some(repairing) => *repairing,
                None => {
                    if self.settled(c.t)? {
                        return Ok(Err(Reason::WindowSummarized { t: c.t }));
                    }
                    // Repairing: this node signed a summary the certificate does not match (it
                    // missed part of the window), so it takes what it missed, late or not. A
                    // node that has not summarized yet keeps the deadlines, certificate or not:
                    // what arrives late now would make its summary differ.
                    let repairing = self.ledger.certificate(c.t)?.is_some()
                        && self
                            .ledger
                            .summaries(c.t)?
                            .iter()
                            .any(|s| s.signer == self.node);
                    open_windows.insert(c.t, repairing);
                    repairing
                }
            };
            if !self.params.committee.contains(&c.issuer) {
                return Ok(Err(Reason::NotInCommittee(c.issuer)));
            }
            if let Err(reason) = check_issuer(&self.params, &c.issuer, &c.id, c.t, c.j) {
                // A member that seals a try it may not issue signed its own misbehaviour.
                if s.check_seal().is_ok() {
                    self.keep_evidence(vec![Evidence::FailedAudit {
                        acceptance: Box::new(s.clone()),
                        violation: Violation::NotAssignedIssuer.code(),
                    }])?;
                }
                return Ok(Err(reason));
            }
            if let Err(reason) = s.check_inclusion() {
                return Ok(Err(reason));
            }
            // Keyed by the whole seal: a signature copied under another root must be checked.
            if good_seals.insert(&s.seal)
                && let Err(reason) = s.seal.check_signature()
            {
                return Ok(Err(reason));
            }
            if let Err(reason) = self.check_remote_envelope(s)? {
                return Ok(Err(reason));
            }
            if !repairing && !self.catching_up(c.t) {
                let base = self.arrival_base(c);
                let r = signers_of(s).unwrap_or(1);
                let latest = self.params.arrival_deadline(base, r);
                if now > latest {
                    return Ok(Err(Reason::LateAcceptance { at: now, latest }));
                }
                let last_round = latest.saturating_sub(self.params.relay_round_ms);
                let unforwarded = heard == Heard::ByRequest || now > last_round;
                if unforwarded && r <= self.params.faults_tolerated() {
                    late_region.insert(seal_subject(&s.seal));
                }
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
        let (fresh, counters_raised) = {
            let mut log = self.commit.lock().map_err(|_| LedgerError::Poisoned)?;
            // One this node decided and is still writing is held already (as when written).
            let unwritten = |s: &SealedAcceptance| {
                let c = s.acceptance.challenge();
                self.unwritten.contains(&(c.t, c.id, c.j))
            };
            let fresh = if batch.iter().any(unwritten) {
                let rest: Vec<SealedAcceptance> =
                    batch.iter().filter(|s| !unwritten(s)).cloned().collect();
                self.ledger.insert_acceptances(&rest)?
            } else {
                self.ledger.insert_acceptances(batch)?
            };
            log.record(
                batch.iter().map(|s| {
                    let c = s.acceptance.challenge();
                    (c.t, c.id, c.j)
                }),
                &self.last_commit,
            );
            let mut counters_raised = false;
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
                    counters_raised = true;
                }
            }
            (fresh, counters_raised)
        };
        // Another member's acceptances are not flushed here: this node acknowledged nothing to
        // a client, the issuer holds them durably, and a crash that loses the last moments of
        // them is repaired by the window's reconciliation before this node signs its summary
        // (sled also writes them out within its flush interval). Waiting for a flush on every
        // received batch put an fsync into the gossip path of every acceptance. A raised
        // passkey counter is flushed at once: losing it would let a cloned authenticator
        // replay counts here.
        if counters_raised {
            self.ledger.make_durable()?;
        }
        // Relayed once, when first counted here: a batch that brought nothing new was counted
        // (and relayed where needed) before.
        if fresh == 0 {
            late_region.clear();
        }
        let relay = late_region
            .into_iter()
            .map(|seal| SealReceipt {
                seal,
                receipt: Receipt::new(&self.key, &seal),
            })
            .collect();
        Ok(Ok(Recorded { fresh, relay }))
    }

    /// Whether window `t` is settled here: this node signed its summary, and the certificate
    /// (if held) has the same root. An acceptance added now would not be audited (the audit
    /// runs when the window is summarized) and could only make the node's set differ from
    /// what it signed, so every proof of the window would fail here. A node whose summary
    /// differs from the certificate (it missed part of the window) still takes acceptances.
    fn settled(&self, t: u64) -> Result<bool, LedgerError> {
        let Some(mine) = self
            .ledger
            .summaries(t)?
            .into_iter()
            .find(|s| s.signer == self.node)
        else {
            return Ok(false);
        };
        Ok(self
            .ledger
            .certificate(t)?
            .is_none_or(|cert| cert.summary.root == mine.summary.root))
    }

    /// The issuer's secret-free checks of one acceptance, at its signed receipt time.
    fn check_remote_envelope(&self, s: &SealedAcceptance) -> Outcome<()> {
        let a = &s.acceptance;
        if let Err(reason) = crate::messages::check_version(a.version)
            .and_then(|()| crate::messages::check_version(a.response.version))
        {
            return Ok(Err(reason));
        }
        let c = a.challenge();
        let envelope = match self.check_envelope(c, &a.response.answer, a.accepted_at)? {
            Ok(envelope) => envelope,
            // The issuer may hold another registration of the identity than this member (it
            // signed two, at two members): judged under the profiles the family admits, as
            // the audit does. The active set takes the class from the families, so every
            // member still counts the same.
            Err(reason @ (Reason::WrongClass { .. } | Reason::UnknownFamily(_))) => {
                let slot = self.slot(c.t, &c.id)?;
                let Some(class) = self.registry.get(&c.family).map(|f| f.class()) else {
                    return Ok(Err(reason));
                };
                let split = [false, true].into_iter().find_map(|opt_out| {
                    self.check_family(c, &a.response.answer, Profile::new(class, opt_out), &slot)
                        .ok()
                });
                match split {
                    Some(envelope) => envelope,
                    None => return Ok(Err(reason)),
                }
            }
            Err(reason) => return Ok(Err(reason)),
        };
        Ok(super::envelope::solve_time(
            envelope.config,
            c,
            a.accepted_at,
        ))
    }
}
