//! The committee's integrity at window close: reveals checked against their commitments,
//! equivocations and audit findings kept as [`Evidence`], and the members whose acceptances
//! of a window are left out of its certified active set.
//!
//! A member's acceptances of `t` count only if exactly one reveal of `w_t` by it counts (heard
//! in time, by the relay rule of [`crate::relay`]), that reveal opens the commitment of its
//! reveal of `t − L` (genesis windows `t < L` excepted, see [`crate::secret`]), and this node's
//! audit of the acceptances it holds finds nothing against it — all of which every honest
//! member decides alike (see `decide_excluded`). The list is fixed when this
//! node summarizes `t` (stored in the ledger), so the window's active set never changes after.

use std::collections::{BTreeMap, HashSet};

use crate::audit::SignedReveal;
use crate::ledger::{FirstWrite, LedgerError};
use crate::secret::{commit_lead, commitment, window_secret};
use crate::{Evidence, NodeId, Reason, RelayedReveal, SignedSummary, WindowCertificate};

use super::{Oracle, Outcome};

impl Oracle {
    /// This node's signed reveal of `t`, committing to its secret of `t + L`.
    pub(super) fn own_reveal(&self, t: u64) -> SignedReveal {
        let next = window_secret(
            &self.node_secret,
            t.saturating_add(commit_lead(&self.params)),
        );
        SignedReveal::new(
            &self.key,
            t,
            window_secret(&self.node_secret, t),
            commitment(&next),
        )
    }

    /// Stores a checked reveal unless the member's reveal of the window is held (the first is
    /// kept); a second, different reveal of the same window or one that does not open its
    /// commitment (in either order of arrival) is stored as evidence. Returns the new evidence.
    pub(super) fn record_reveal(&self, r: &SignedReveal) -> Result<Vec<Evidence>, LedgerError> {
        let (t, node) = (r.reveal.t, r.reveal.node);
        let mut found = Vec::new();
        match self.ledger.put_reveal(r)? {
            // The first reveal is kept; the second is the member's own equivocation.
            FirstWrite::Conflict { held } => {
                found.push(Evidence::DoubleReveal {
                    first: held,
                    second: r.clone(),
                });
            }
            FirstWrite::Duplicate => {}
            FirstWrite::Stored => {
                let lead = commit_lead(&self.params);
                let earlier = match t.checked_sub(lead) {
                    Some(before) => self.ledger.reveal(before, &node)?,
                    None => None,
                };
                if let Some(earlier) = earlier
                    && earlier.reveal.next != commitment(&r.reveal.secret)
                {
                    found.push(Evidence::BrokenCommitment {
                        earlier,
                        reveal: r.clone(),
                    });
                }
                if let Some(later) = self.ledger.reveal(t.saturating_add(lead), &node)?
                    && r.reveal.next != commitment(&later.reveal.secret)
                {
                    found.push(Evidence::BrokenCommitment {
                        earlier: r.clone(),
                        reveal: later,
                    });
                }
            }
        }
        self.keep_evidence(found)
    }

    /// Stores a peer's summary as [`crate::ledger::Ledger::put_summary`] does, and evidence if
    /// the signer already signed another summary of the window.
    pub(super) fn record_summary(&self, s: &SignedSummary) -> Result<Vec<Evidence>, LedgerError> {
        let first = self
            .ledger
            .summaries(s.summary.t)?
            .into_iter()
            .find(|held| held.signer == s.signer);
        match first {
            Some(first) if first.summary != s.summary => {
                self.keep_evidence(vec![Evidence::DoubleSummary {
                    first,
                    second: s.clone(),
                }])
            }
            Some(_) => Ok(Vec::new()),
            None => {
                self.ledger.put_summary(s)?;
                Ok(Vec::new())
            }
        }
    }

    /// A second certificate of a window, of another summary than the one `held` here, both
    /// checked to carry a quorum's signatures. That cannot happen while a majority is honest,
    /// so it is logged as an error; the members that signed both summaries are kept as
    /// [`Evidence::DoubleSummary`] and the first certificate stays: the slot beacons of the next
    /// windows and the membership proofs already given out were derived from it, and a
    /// certificate arriving later must not rewrite them. Returns the refusal.
    pub(super) fn conflicting_certificate(
        &self,
        held: &WindowCertificate,
        other: &WindowCertificate,
    ) -> Result<Reason, LedgerError> {
        let t = held.summary.t;
        let found: Vec<Evidence> = held
            .signatures
            .iter()
            .filter_map(|(signer, sig)| {
                let (_, again) = other.signatures.iter().find(|(s, _)| s == signer)?;
                let signed = |summary: &crate::WindowSummary, sig| SignedSummary {
                    summary: summary.clone(),
                    signer: *signer,
                    sig,
                };
                Some(Evidence::DoubleSummary {
                    first: signed(&held.summary, *sig),
                    second: signed(&other.summary, *again),
                })
            })
            .filter(|e| e.check(&self.params).is_ok())
            .collect();
        let signers: Vec<NodeId> = found.iter().map(Evidence::accused).collect();
        tracing::error!(
            t,
            held = %held.summary.root,
            other = %other.summary.root,
            ?signers,
            "two certificates of one window, each signed by a quorum: the committee's honest majority is broken; keeping the first"
        );
        self.keep_evidence(found)?;
        Ok(Reason::CertificateConflict {
            t,
            held: held.summary.root,
        })
    }

    /// Stores evidence; returns what was new, after telling the evidence observer of it. Every
    /// piece of evidence is stored through here.
    pub(super) fn keep_evidence(&self, found: Vec<Evidence>) -> Result<Vec<Evidence>, LedgerError> {
        let mut fresh = Vec::new();
        for e in found {
            if self.ledger.put_evidence(&e)? {
                fresh.push(e);
            }
        }
        if !fresh.is_empty() {
            self.ledger.make_durable()?;
            if let Some(observer) = self.evidence_observer.get() {
                fresh.iter().for_each(observer);
            }
        }
        Ok(fresh)
    }

    /// Records evidence received from a peer after checking it: standalone contradictions by
    /// their signatures, a failed audit by auditing the acceptance again here (which needs the
    /// issuer's reveal and the identity's registration). Returns whether it was new.
    pub fn add_evidence(&self, e: &Evidence) -> Outcome<bool> {
        if let Err(reason) = e.check(&self.params) {
            return Ok(Err(reason));
        }
        if let Evidence::FailedAudit { acceptance, .. } = e {
            let t = acceptance.seal.t;
            if self.ledger.reveal(t, &acceptance.seal.issuer)?.is_none() {
                return Ok(Err(Reason::Malformed(
                    "no reveal of the issuer to audit the acceptance with".into(),
                )));
            }
            let report = self.audit_acceptances(
                t,
                std::slice::from_ref(acceptance),
                &self.held_secrets(t)?,
            )?;
            let Some(finding) = report.findings.first() else {
                return Ok(Err(Reason::Malformed(
                    "the acceptance passes the audit here".into(),
                )));
            };
            return Ok(Ok(!self.keep_evidence(vec![finding.into()])?.is_empty()));
        }
        Ok(Ok(!self.keep_evidence(vec![e.clone()])?.is_empty()))
    }

    /// The members whose acceptances of closed window `t` are left out: as fixed when this node
    /// summarized `t`, or else as they would be now, accusing those with evidence held.
    pub fn excluded_members(&self, t: u64) -> Result<Vec<NodeId>, LedgerError> {
        if let Some(fixed) = self.ledger.excluded(t)? {
            return Ok(fixed);
        }
        let accused = self
            .ledger
            .evidence(t)?
            .iter()
            .filter(|e| e.excludes_acceptances())
            .map(Evidence::accused)
            .collect();
        self.decide_excluded(t, &self.decided_reveals(t, false)?, &accused)
    }

    /// Each member's relayed reveals of `t` that decide its fate here: those that count by the
    /// relay rule ([`crate::relay`]), the same at every honest member summarizing on time; for
    /// a node `catching_up` on a window it was not running for (it heard no reveal in time),
    /// the one it holds, with the member's reveal of `t − L` it holds.
    pub(super) fn decided_reveals(
        &self,
        t: u64,
        catching_up: bool,
    ) -> Result<BTreeMap<NodeId, Vec<RelayedReveal>>, LedgerError> {
        let before = t.checked_sub(commit_lead(&self.params));
        let mut out = BTreeMap::new();
        for member in &self.params.committee {
            let mut reveals = self.ledger.counted_reveals_of(t, member)?;
            if reveals.is_empty()
                && catching_up
                && let Some(held) = self.checked_reveal(t, member)?
            {
                let earlier = match before {
                    Some(b) => self.checked_reveal(b, member)?,
                    None => None,
                };
                reveals.push(RelayedReveal::new(held, earlier));
            }
            if !reveals.is_empty() {
                out.insert(*member, reveals);
            }
        }
        Ok(out)
    }

    /// The members left out of `t`, from what every honest member decides alike: those without
    /// a `decided` reveal of `t` (this node's own always counts), with two different ones
    /// (equivocation), whose reveal no decided message shows to open the commitment of their
    /// reveal of `t − L` (genesis windows `t < L` excepted; the message carries it), and those
    /// `accused` by this node's own audit of the acceptances it holds. Evidence gossiped by
    /// others is kept and reported but leaves no one out here: when it arrives depends on the
    /// sender, so counting it would let a member split honest views with its own contradictions.
    pub(super) fn decide_excluded(
        &self,
        t: u64,
        decided: &BTreeMap<NodeId, Vec<RelayedReveal>>,
        accused: &HashSet<NodeId>,
    ) -> Result<Vec<NodeId>, LedgerError> {
        let genesis = t < commit_lead(&self.params);
        let mut out = Vec::new();
        for member in &self.params.committee {
            if *member == self.node {
                continue;
            }
            let messages = decided.get(member).map(Vec::as_slice).unwrap_or_default();
            let mut reveals: Vec<&SignedReveal> = Vec::new();
            for m in messages {
                if !reveals.contains(&&m.reveal) {
                    reveals.push(&m.reveal);
                }
            }
            let committed = genesis || messages.iter().any(RelayedReveal::opens_commitment);
            if reveals.len() != 1 || !committed || accused.contains(member) {
                out.push(*member);
            }
        }
        Ok(out)
    }

    fn checked_reveal(&self, t: u64, member: &NodeId) -> Result<Option<SignedReveal>, LedgerError> {
        Ok(self
            .ledger
            .reveal(t, member)?
            .filter(|r| r.check(&self.params).is_ok()))
    }
    /// Members that signed two summaries of `t`: their summaries do not count for it.
    pub(super) fn equivocators(&self, t: u64) -> Result<Vec<NodeId>, LedgerError> {
        Ok(self
            .ledger
            .evidence(t)?
            .iter()
            .filter(|e| matches!(e, Evidence::DoubleSummary { .. }))
            .map(Evidence::accused)
            .collect())
    }
}
