//! Evidence against a committee member: its own signed messages that no honest member signs.
//!
//! - [`Evidence::FailedAudit`]: an acceptance it sealed that does not hold against its revealed
//!   secret (wrong answer, backdated, minted, …): the seal is the proof.
//! - [`Evidence::BrokenCommitment`]: its reveal of `t` does not match the commitment its
//!   reveal of `t − L` made (see [`crate::secret`]).
//! - [`Evidence::DoubleReveal`] and [`Evidence::DoubleSummary`]: two different signed reveals
//!   or summaries of one window.
//!
//! Anyone holding the parameters checks the last three from the evidence alone
//! ([`Evidence::check`]); a failed audit needs the issuer's reveal and the identity's
//! registration, so a receiver re-audits it (`Oracle::add_evidence`). A member with evidence in
//! window `t` has its acceptances of `t` left out of the certified active set.

use serde::{Deserialize, Serialize};

use crate::audit::{Finding, SignedReveal};
use crate::certificate::SignedSummary;
use crate::seal::SealedAcceptance;
use crate::secret::{commit_lead, commitment};
use crate::{Digest, NetworkParams, NodeId, Reason, codec, sign};

/// A member's own signed messages proving it misbehaved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// A sealed acceptance that fails the audit.
    FailedAudit {
        /// The acceptance under the issuer's seal (boxed: it is by far the largest variant).
        acceptance: Box<SealedAcceptance>,
        /// What the audit found ([`crate::audit::Violation::code`]).
        violation: String,
    },
    /// A reveal that does not open the commitment made `L` windows earlier.
    BrokenCommitment {
        /// The reveal of `t − L` carrying the commitment.
        earlier: SignedReveal,
        /// The reveal of `t`.
        reveal: SignedReveal,
    },
    /// Two different reveals of one window.
    DoubleReveal {
        /// One reveal.
        first: SignedReveal,
        /// Another.
        second: SignedReveal,
    },
    /// Two different summaries of one window.
    DoubleSummary {
        /// One summary.
        first: SignedSummary,
        /// Another.
        second: SignedSummary,
    },
}

/// The kinds of evidence, as named in [`Evidence::kind`] (metric labels, `/status`).
pub const EVIDENCE_KINDS: [&str; 4] = [
    "failed_audit",
    "broken_commitment",
    "double_reveal",
    "double_summary",
];

impl From<&Finding> for Evidence {
    fn from(f: &Finding) -> Self {
        Evidence::FailedAudit {
            acceptance: Box::new(f.evidence.clone()),
            violation: f.violation.code(),
        }
    }
}

impl Evidence {
    /// The member accused.
    pub fn accused(&self) -> NodeId {
        match self {
            Evidence::FailedAudit { acceptance, .. } => acceptance.seal.issuer,
            Evidence::BrokenCommitment { reveal, .. } => reveal.reveal.node,
            Evidence::DoubleReveal { first, .. } => first.reveal.node,
            Evidence::DoubleSummary { first, .. } => first.signer,
        }
    }

    /// The window the misbehaviour concerns.
    pub fn window(&self) -> u64 {
        match self {
            Evidence::FailedAudit { acceptance, .. } => acceptance.seal.t,
            Evidence::BrokenCommitment { reveal, .. } => reveal.reveal.t,
            Evidence::DoubleReveal { first, .. } => first.reveal.t,
            Evidence::DoubleSummary { first, .. } => first.summary.t,
        }
    }

    /// A stable name of the kind (one of [`EVIDENCE_KINDS`]).
    pub fn kind(&self) -> &'static str {
        match self {
            Evidence::FailedAudit { .. } => EVIDENCE_KINDS[0],
            Evidence::BrokenCommitment { .. } => EVIDENCE_KINDS[1],
            Evidence::DoubleReveal { .. } => EVIDENCE_KINDS[2],
            Evidence::DoubleSummary { .. } => EVIDENCE_KINDS[3],
        }
    }

    /// Whether it leaves the member's acceptances of its window out of the certified set
    /// (a double summary does not concern acceptances: the summaries are not counted instead).
    pub fn excludes_acceptances(&self) -> bool {
        !matches!(self, Evidence::DoubleSummary { .. })
    }

    /// A digest naming this piece of evidence.
    pub fn digest(&self) -> Digest {
        sign::digest("hco evidence v1", &[&codec::encode(self)])
    }

    /// Checks evidence that stands alone: both messages signed by the accused member and in
    /// contradiction. A failed audit is checked by re-auditing (it needs the reveal), so here it
    /// is only checked for the issuer's seal.
    pub fn check(&self, params: &NetworkParams) -> Result<(), Reason> {
        let contradiction = |holds: bool| {
            if holds {
                Ok(())
            } else {
                Err(Reason::Malformed(
                    "the evidence shows no contradiction".into(),
                ))
            }
        };
        match self {
            Evidence::FailedAudit { acceptance, .. } => acceptance.check_seal(),
            Evidence::BrokenCommitment { earlier, reveal } => {
                earlier.check(params)?;
                reveal.check(params)?;
                contradiction(
                    earlier.reveal.node == reveal.reveal.node
                        && earlier.reveal.t.checked_add(commit_lead(params))
                            == Some(reveal.reveal.t)
                        && earlier.reveal.next != commitment(&reveal.reveal.secret),
                )
            }
            Evidence::DoubleReveal { first, second } => {
                first.check(params)?;
                second.check(params)?;
                contradiction(
                    first.reveal.node == second.reveal.node
                        && first.reveal.t == second.reveal.t
                        && first != second,
                )
            }
            Evidence::DoubleSummary { first, second } => {
                first.check(params)?;
                second.check(params)?;
                contradiction(
                    first.signer == second.signer
                        && first.summary.t == second.summary.t
                        && first.summary != second.summary,
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certificate::WindowSummary;
    use crate::testing::{key, node_id, params_for};

    #[test]
    fn contradictions_check_and_consistent_pairs_do_not() {
        let (a, b) = (key(1), key(2));
        let params = params_for(&[node_id(&a), node_id(&b)]);
        let lead = commit_lead(&params);
        let secret = Digest([5; 32]);
        let honest_earlier = SignedReveal::new(&a, 0, Digest([1; 32]), commitment(&secret));
        let reveal = SignedReveal::new(&a, lead, secret, Digest([0; 32]));
        let liar_earlier = SignedReveal::new(&a, 0, Digest([1; 32]), Digest([9; 32]));

        let broken = Evidence::BrokenCommitment {
            earlier: liar_earlier.clone(),
            reveal: reveal.clone(),
        };
        broken.check(&params).unwrap();
        assert_eq!(broken.accused(), node_id(&a));
        assert_eq!(broken.window(), lead);
        let kept = Evidence::BrokenCommitment {
            earlier: honest_earlier.clone(),
            reveal,
        };
        assert_eq!(kept.check(&params).unwrap_err().code(), "malformed");

        let double = Evidence::DoubleReveal {
            first: honest_earlier.clone(),
            second: liar_earlier,
        };
        double.check(&params).unwrap();
        let same = Evidence::DoubleReveal {
            first: honest_earlier.clone(),
            second: honest_earlier,
        };
        assert!(same.check(&params).is_err());

        let summary = |root: u8| {
            let (mut s, _) = WindowSummary::of(3, Vec::new(), params.digest());
            s.root = Digest([root; 32]);
            SignedSummary::new(&b, s)
        };
        let two = Evidence::DoubleSummary {
            first: summary(1),
            second: summary(2),
        };
        two.check(&params).unwrap();
        assert_eq!((two.accused(), two.kind()), (node_id(&b), "double_summary"));
        assert!(!two.excludes_acceptances());
        // Signed by someone else than the accused: not evidence.
        let forged = Evidence::DoubleSummary {
            first: summary(1),
            second: SignedSummary::new(&a, summary(2).summary),
        };
        assert!(forged.check(&params).is_err());
    }
}
