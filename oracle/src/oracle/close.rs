//! Closing a window: the active set (identities whose acceptances pass every step of their
//! class's policy, with their class), summaries, certificates, membership proofs, reveals,
//! audits, and each identity's lifecycle status.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crate::audit::{AuditReport, audit_window};
use crate::certificate::{
    ActiveSet, MembershipProof, SignedSummary, WindowCertificate, WindowSummary, assemble,
};
use crate::ledger::{FirstWrite, LedgerError};
use crate::lifecycle::{IdentityStatus, status};
use crate::{Digest, IdentityId, NodeId, Reason, RelayedReveal, SealedAcceptance, Timestamp};

use super::active::Counted;
use super::{Oracle, Outcome};

/// Acceptances of other members audited at a time while summarizing (the audit reads the
/// window's reveals once per chunk).
const AUDIT_CHUNK: usize = 4096;

impl Oracle {
    pub(super) fn check_closed(&self, t: u64, now: Timestamp) -> Result<(), Reason> {
        let closes_at = self.params.closes_at(t);
        if now < closes_at {
            Err(Reason::WindowNotClosed { t, closes_at })
        } else {
            Ok(())
        }
    }

    /// Signs this node's summary of closed window `t` and stores it (and a certificate if a
    /// quorum now agrees). First it stores its own reveal of `t`, audits `t` with the reveals
    /// held (findings become evidence) and fixes the members left out of `t`; call it once the
    /// committee's reveals of `t` had time to arrive. A window summarized before keeps its
    /// summary.
    pub fn summarize(&self, t: u64, now: Timestamp) -> Outcome<SignedSummary> {
        if let Err(reason) = self.check_closed(t, now) {
            return Ok(Err(reason));
        }
        if let Some(mine) = self
            .ledger
            .summaries(t)?
            .into_iter()
            .find(|s| s.signer == self.node)
        {
            return Ok(Ok(mine));
        }
        self.count_own_reveal(t)?;
        let catching_up = self.catching_up(t);
        let decided = self.decided_reveals(t, catching_up)?;
        let secrets = first_secrets(&decided);
        // One pass over the window: the acceptances other members issued are audited (this
        // node's own passed its own verification) a chunk at a time, and what the active set
        // needs of every acceptance is kept, to count once the members left out are known.
        let mut counted = Vec::new();
        let mut others = Vec::with_capacity(AUDIT_CHUNK);
        let mut findings = Vec::new();
        let mut unsealed = HashSet::new();
        let mut audit = |others: &mut Vec<SealedAcceptance>| -> Result<(), LedgerError> {
            let report = self.audit_acceptances(t, others, &secrets)?;
            findings.extend(report.findings);
            unsealed.extend(report.unsealed);
            others.clear();
            Ok(())
        };
        for sealed in self.ledger.acceptances(t) {
            let sealed = sealed?;
            counted.push(Counted::of(&sealed));
            if sealed.seal.issuer != self.node {
                others.push(sealed);
            }
            if others.len() == AUDIT_CHUNK {
                audit(&mut others)?;
            }
        }
        audit(&mut others)?;
        self.keep_evidence(findings.iter().map(Into::into).collect())?;
        // An acceptance whose seal does not hold accuses nobody and counts for nobody; it is
        // nobody's signature either, so it leaves the ledger (a set derived again later, to
        // serve proofs, must match the one summarized here).
        if !unsealed.is_empty() {
            let keys: Vec<_> = unsealed.iter().copied().collect();
            self.ledger.remove_acceptances(t, &keys)?;
            self.ledger.make_durable()?;
        }
        counted.retain(|c| !unsealed.contains(&c.key()));
        let accused: HashSet<NodeId> = findings.iter().map(|f| f.evidence.seal.issuer).collect();
        let excluded = self.decide_excluded(t, &decided, &accused)?;
        let excluded = self.ledger.put_excluded(t, &excluded)?;
        let active = self.active_of(counted.into_iter().map(Ok), &excluded)?;
        let (summary, set) = self.summary_of(t, active)?;
        self.keep_proof_set(t, set)?;
        let signed = SignedSummary::new(&self.key, summary);
        self.ledger.put_summary(&signed)?;
        self.try_certify(t)?;
        Ok(Ok(signed))
    }

    /// Records a peer's summary (a second, different one from the same signer is kept as
    /// evidence); returns the window's certificate if one now exists.
    pub fn add_summary(&self, s: &SignedSummary) -> Outcome<Option<WindowCertificate>> {
        if let Err(reason) = s.check(&self.params) {
            return Ok(Err(reason));
        }
        self.record_summary(s)?;
        Ok(Ok(self.try_certify(s.summary.t)?))
    }

    fn try_certify(&self, t: u64) -> Result<Option<WindowCertificate>, LedgerError> {
        if let Some(cert) = self.ledger.certificate(t)? {
            return Ok(Some(cert));
        }
        // A member that signed two summaries of `t` counts for neither.
        let equivocators = self.equivocators(t)?;
        let summaries: Vec<SignedSummary> = self
            .ledger
            .summaries(t)?
            .into_iter()
            .filter(|s| !equivocators.contains(&s.signer))
            .collect();
        let Some(cert) = assemble(&summaries, self.params.quorum) else {
            return Ok(None);
        };
        // Another thread may have stored one since: the first is kept.
        let held = match self.ledger.put_certificate(&cert)? {
            FirstWrite::Conflict { held } => held,
            FirstWrite::Stored | FirstWrite::Duplicate => cert,
        };
        self.ledger.make_durable()?;
        Ok(Some(held))
    }

    /// Stores a certificate received from a peer after checking it with the light verifier.
    /// The first certificate of a window is kept: one of another summary is refused with
    /// [`Reason::CertificateConflict`] (see `Oracle::conflicting_certificate`).
    pub fn add_certificate(&self, cert: &WindowCertificate) -> Outcome<()> {
        let checked = crate::LightVerifier::new(self.params.committee.clone(), self.params.quorum)
            .and_then(|v| v.with_params(self.params_digest).verify_certificate(cert));
        if let Err(e) = checked {
            return Ok(Err(Reason::Malformed(e.to_string())));
        }
        match self.ledger.put_certificate(cert)? {
            FirstWrite::Stored => self.ledger.make_durable()?,
            FirstWrite::Duplicate => {}
            FirstWrite::Conflict { held } => {
                return Ok(Err(self.conflicting_certificate(&held, cert)?));
            }
        }
        Ok(Ok(()))
    }

    /// The certificate of window `t` and the proof that `id` is in it. `None` when there is no
    /// certificate yet, the identity was not active, or this node's set differs from the
    /// certified one (it must reconcile first).
    pub fn membership(
        &self,
        t: u64,
        id: &IdentityId,
    ) -> Result<Option<(WindowCertificate, MembershipProof)>, LedgerError> {
        let Some(cert) = self.ledger.certificate(t)? else {
            return Ok(None);
        };
        let Some(set) = self.certified_set(t, &cert)? else {
            return Ok(None);
        };
        Ok(set.proof(id).map(|proof| (cert, proof)))
    }

    /// This node's active set of window `t` if its root is the one `cert` certifies. The set
    /// last summarized or proved from is kept and reused while it matches, so serving a proof
    /// does not scan the window (a full scan per request at 10^6 identities takes seconds);
    /// otherwise the set is derived again from the ledger (reconciliation may have completed
    /// it since) and kept if it matches.
    pub(super) fn certified_set(
        &self,
        t: u64,
        cert: &WindowCertificate,
    ) -> Result<Option<Arc<ActiveSet>>, LedgerError> {
        let root = cert.summary.root;
        let kept = self
            .proof_set
            .lock()
            .map_err(|_| LedgerError::Poisoned)?
            .as_ref()
            .filter(|(kept_t, set)| *kept_t == t && set.root() == root)
            .map(|(_, set)| Arc::clone(set));
        if kept.is_some() {
            return Ok(kept);
        }
        let (summary, set) = WindowSummary::of(t, self.active_set(t)?, self.params_digest);
        if summary.root != root {
            return Ok(None);
        }
        let set = Arc::new(set);
        self.keep_proof_set(t, Arc::clone(&set))?;
        Ok(Some(set))
    }

    fn keep_proof_set(&self, t: u64, set: Arc<ActiveSet>) -> Result<(), LedgerError> {
        *self.proof_set.lock().map_err(|_| LedgerError::Poisoned)? = Some((t, set));
        Ok(())
    }

    /// Audits every acceptance of window `t` this node holds against the reveals it holds;
    /// each finding is kept as evidence against its issuer.
    pub fn audit(&self, t: u64) -> Result<AuditReport, LedgerError> {
        let acceptances: Vec<SealedAcceptance> =
            self.ledger.acceptances(t).collect::<Result<_, _>>()?;
        let report = self.audit_acceptances(t, &acceptances, &self.held_secrets(t)?)?;
        self.keep_evidence(report.findings.iter().map(Into::into).collect())?;
        Ok(report)
    }

    /// The secrets of `t` in the reveals held (each member's first).
    pub(super) fn held_secrets(&self, t: u64) -> Result<BTreeMap<NodeId, Digest>, LedgerError> {
        Ok(self
            .ledger
            .reveals(t)?
            .into_iter()
            .filter(|r| r.check(&self.params).is_ok())
            .map(|r| (r.reveal.node, r.reveal.secret))
            .collect())
    }

    /// Audits `acceptances` of window `t` against the issuers' `reveals` (secrets).
    pub(super) fn audit_acceptances(
        &self,
        t: u64,
        acceptances: &[SealedAcceptance],
        reveals: &BTreeMap<NodeId, Digest>,
    ) -> Result<AuditReport, LedgerError> {
        let beacon = self.beacon(t)?;
        Ok(audit_window(
            &self.params,
            &self.registry,
            t,
            &beacon,
            reveals,
            |id| {
                // Cached when the acceptance arrived (its envelope was checked against it).
                let profile = self.profile_of(id).ok().flatten()?;
                // The audit re-checks each assertion's binding and signature; counters moved
                // since, so each passkey is taken at counter 0.
                let passkeys = self
                    .passkeys_of(id)
                    .ok()?
                    .into_iter()
                    .map(|p| p.with_counter(0))
                    .collect();
                Some(crate::audit::Audited { profile, passkeys })
            },
            acceptances,
        ))
    }

    /// The lifecycle status of `id` at `now`.
    pub fn status(&self, id: &IdentityId, now: Timestamp) -> Outcome<IdentityStatus> {
        self.status_counting(id, now, true)
    }

    /// [`Oracle::status`] with the windows still taking answers (grace included) not counted as
    /// solved even when they are (in progress, as before an answer): for a node that withholds
    /// a class's verdicts until the close, so that its status tells nothing the verdict would.
    pub fn status_before_close(&self, id: &IdentityId, now: Timestamp) -> Outcome<IdentityStatus> {
        self.status_counting(id, now, false)
    }

    fn status_counting(
        &self,
        id: &IdentityId,
        now: Timestamp,
        count_open: bool,
    ) -> Outcome<IdentityStatus> {
        let Some(record) = self.ledger.identity(id)? else {
            return Ok(Err(Reason::UnknownIdentity));
        };
        let current = match self.params.window_at(now) {
            Ok(t) => t,
            Err(reason) => return Ok(Err(reason)),
        };
        let policy = self.params.policy(record.register.body.class);
        let mut failure = None;
        let s = status(&self.params.lifecycle, current, record.window, |t| {
            // A window still taking answers (its grace included) is in progress.
            let families = if !count_open && self.params.closes_at(t) > now {
                Ok(Vec::new())
            } else {
                self.ledger.accepted_families(t, id)
            };
            match families {
                Ok(families) => policy.covered_by(families.iter().map(String::as_str)),
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        });
        match failure {
            Some(e) => Err(e),
            None => Ok(Ok(s)),
        }
    }
}

/// Each member's secret in its first decided reveal (a member with two is left out anyway).
fn first_secrets(decided: &BTreeMap<NodeId, Vec<RelayedReveal>>) -> BTreeMap<NodeId, Digest> {
    decided
        .iter()
        .filter_map(|(node, reveals)| Some((*node, reveals.first()?.reveal.reveal.secret)))
        .collect()
}
