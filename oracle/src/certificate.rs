//! Window summaries and quorum certificates (DESIGN §7).
//!
//! After window `t` closes, each committee node signs a [`WindowSummary`] of its active set: the
//! Merkle root over the sorted `(identity, class)` leaves: a consumer learns from a proof not only
//! that an identity was active but whether it was active as a person or as an agent. Summaries from a quorum on the same root form a
//! [`WindowCertificate`]; an identity proves it was active with a [`MembershipProof`].

use std::collections::BTreeMap;

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

use hco_challenges::Class;

use crate::merkle::{MerkleProof, MerkleTree, leaf_hash};
use crate::{Digest, IdentityId, NetworkParams, NodeId, Reason, Sig, sign};

/// What a node attests about a closed window.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct WindowSummary {
    /// Message version.
    pub version: u8,
    /// The window.
    pub t: u64,
    /// Merkle root of the sorted active `(identity, class)` leaves.
    pub root: Digest,
    /// Number of active identities.
    pub count: u64,
    /// Digest of the network parameters the window ran under.
    pub params: Digest,
}

impl WindowSummary {
    /// The summary of an active set of identities with their classes (sorted and deduplicated
    /// here).
    pub fn of(t: u64, mut active: Vec<(IdentityId, Class)>, params: Digest) -> (Self, ActiveSet) {
        active.sort_unstable();
        active.dedup_by_key(|(id, _)| *id);
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

/// The Merkle leaf of an active identity: its key and its class.
pub fn member_leaf(id: &IdentityId, class: Class) -> Digest {
    let mut bytes = [0u8; 33];
    bytes[..32].copy_from_slice(&id.0);
    bytes[32] = match class {
        Class::Human => 0,
        Class::Agent => 1,
    };
    leaf_hash(&bytes)
}

/// A window's active set, sorted by identity, with its Merkle tree for proofs.
#[derive(Debug, Clone)]
pub struct ActiveSet {
    ids: Vec<IdentityId>,
    classes: Vec<Class>,
    tree: MerkleTree,
}

impl ActiveSet {
    /// Builds from members sorted and deduplicated by identity.
    fn new(members: Vec<(IdentityId, Class)>) -> Self {
        let tree = MerkleTree::new(
            members
                .iter()
                .map(|(id, class)| member_leaf(id, *class))
                .collect(),
        );
        let (ids, classes) = members.into_iter().unzip();
        Self { ids, classes, tree }
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
            class: *self.classes.get(index)?,
            path: self.tree.proof(index)?,
        })
    }
}

/// A proof that `id` is in a certified active set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MembershipProof {
    /// The identity.
    pub id: IdentityId,
    /// The class it was active as (committed to in the leaf).
    pub class: Class,
    /// Its Merkle path.
    pub path: MerkleProof,
}
