//! Window summaries and quorum certificates (DESIGN §7).
//!
//! After window `t` closes, each committee node signs a [`WindowSummary`] of its active set: the
//! Merkle root over the sorted `(identity, class)` leaves: a consumer learns from a proof not only
//! that an identity was active but whether it was active as a person or as an agent. Summaries
//! from a quorum on the same root form a [`WindowCertificate`]; an identity proves it was active
//! with a [`MembershipProof`].
//!
//! What a verifier checks (the summary, the certificate, the proof, the leaf) is `hco-verify`'s,
//! re-exported here; the node's side stays here: signing a summary against the network
//! parameters ([`SignedSummary`]) and assembling a certificate from a quorum ([`assemble`]).

use std::collections::BTreeMap;

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

pub use hco_verify::certificate::{
    ActiveSet, MembershipProof, WindowCertificate, WindowSummary, member_leaf,
};

use crate::{NetworkParams, NodeId, Reason, Sig, sign};

/// A summary signed by one committee node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedSummary {
    /// The summary.
    pub summary: WindowSummary,
    /// The signing node.
    pub signer: NodeId,
    /// Its signature.
    pub sig: Sig,
}

impl SignedSummary {
    /// Signs a summary.
    pub fn new(key: &SigningKey, summary: WindowSummary) -> Self {
        let sig = sign::sign(key, &summary.signing_digest());
        Self {
            summary,
            signer: NodeId(key.verifying_key().to_bytes()),
            sig,
        }
    }

    /// Checks the signer is in the committee and the signature holds.
    pub fn check(&self, params: &NetworkParams) -> Result<(), Reason> {
        crate::messages::check_version(self.summary.version)?;
        if self.summary.params != params.digest() {
            return Err(Reason::ParamsMismatch);
        }
        if !params.committee.contains(&self.signer) {
            return Err(Reason::NotInCommittee(self.signer));
        }
        if sign::verify(&self.signer.0, &self.summary.signing_digest(), &self.sig) {
            Ok(())
        } else {
            Err(Reason::BadIssuerSignature)
        }
    }
}

/// Forms a certificate from checked summaries of one window, if a quorum agrees on one summary.
/// When several summaries reach quorum (impossible with an honest majority), the one with the
/// most signers wins, ties broken by the summary's order.
pub fn assemble(summaries: &[SignedSummary], quorum: u32) -> Option<WindowCertificate> {
    let mut by_summary: BTreeMap<&WindowSummary, BTreeMap<NodeId, Sig>> = BTreeMap::new();
    for s in summaries {
        by_summary
            .entry(&s.summary)
            .or_default()
            .insert(s.signer, s.sig);
    }
    by_summary
        .into_iter()
        .filter(|(_, signers)| signers.len() >= quorum as usize)
        .max_by_key(|(_, signers)| signers.len())
        .map(|(summary, signers)| WindowCertificate {
            summary: summary.clone(),
            signatures: signers.into_iter().collect(),
        })
}
