//! Window summaries and quorum certificates (DESIGN §7).
//!
//! After window `t` closes, each committee node signs a [`WindowSummary`] of its active set: the
//! Merkle root over the sorted identity keys. Summaries from a quorum on the same root form a
//! [`WindowCertificate`]; an identity proves it was active with a [`MembershipProof`].

use std::collections::BTreeMap;

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

use crate::merkle::{MerkleProof, MerkleTree, leaf_hash};
use crate::{Digest, IdentityId, NetworkParams, NodeId, Reason, Sig, sign};

/// What a node attests about a closed window.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct WindowSummary {
    /// Message version.
    pub version: u8,
    /// The window.
    pub t: u64,
    /// Merkle root of the sorted active identities.
    pub root: Digest,
    /// Number of active identities.
    pub count: u64,
    /// Digest of the network parameters the window ran under.
    pub params: Digest,
}

impl WindowSummary {
    /// The summary of an active set (sorted and deduplicated here).
    pub fn of(t: u64, mut active: Vec<IdentityId>, params: Digest) -> (Self, ActiveSet) {
        active.sort_unstable();
        active.dedup();
        let set = ActiveSet::new(active);
        let summary = Self {
            version: crate::messages::VERSION,
            t,
            root: set.root(),
            count: set.ids.len() as u64,
            params,
        };
        (summary, set)
    }

    pub(crate) fn signing_digest(&self) -> Digest {
        sign::digest(
            "hco window summary v1",
            &[
                &[self.version],
                &self.t.to_be_bytes(),
                &self.root.0,
                &self.count.to_be_bytes(),
                &self.params.0,
            ],
        )
    }
}

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

/// A summary endorsed by a quorum of the committee.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowCertificate {
    /// The summary all signers signed.
    pub summary: WindowSummary,
    /// Signers and signatures, sorted by signer.
    pub signatures: Vec<(NodeId, Sig)>,
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

/// A window's active set, sorted, with its Merkle tree for proofs.
#[derive(Debug, Clone)]
pub struct ActiveSet {
    ids: Vec<IdentityId>,
    tree: MerkleTree,
}

impl ActiveSet {
    /// Builds from sorted, deduplicated ids.
    fn new(ids: Vec<IdentityId>) -> Self {
        let tree = MerkleTree::new(ids.iter().map(|id| leaf_hash(&id.0)).collect());
        Self { ids, tree }
    }

    /// The Merkle root.
    pub fn root(&self) -> Digest {
        self.tree.root()
    }

    /// The identities, sorted.
    pub fn ids(&self) -> &[IdentityId] {
        &self.ids
    }

    /// The proof that `id` is in the set, if it is.
    pub fn proof(&self, id: &IdentityId) -> Option<MembershipProof> {
        let index = self.ids.binary_search(id).ok()?;
        Some(MembershipProof {
            id: *id,
            path: self.tree.proof(index)?,
        })
    }
}

/// A proof that `id` is in a certified active set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MembershipProof {
    /// The identity.
    pub id: IdentityId,
    /// Its Merkle path.
    pub path: MerkleProof,
}
