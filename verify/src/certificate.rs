//! Window summaries, quorum certificates and membership proofs (DESIGN §7).
//!
//! After window `t` closes, each committee node signs a [`WindowSummary`] of its active set: the
//! Merkle root over the sorted `(identity, class)` leaves, so a consumer learns from a proof not
//! only that an identity was active but whether it was active as a person or as an agent.
//! Summaries from a quorum on the same root form a [`WindowCertificate`]; an identity proves it
//! was active with a [`MembershipProof`]. The summary also commits to the window's account links
//! ([`WindowSummary::links_root`], see [`crate::link`]).

use alloc::vec::Vec;

use crate::link::LinkSet;
use crate::merkle::{MerkleProof, MerkleTree, leaf_hash};
use crate::{AccountId, Class, Digest, IdentityId, NodeId, Sig, VERSION, sign};

/// What a node attests about a closed window.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowSummary {
    /// Message version.
    pub version: u8,
    /// The window.
    pub t: u64,
    /// Merkle root of the sorted active `(identity, class)` leaves.
    pub root: Digest,
    /// Number of active identities.
    pub count: u64,
    /// Merkle root of the window's account links, sorted by canonical account (leaves
    /// [`link_leaf`](crate::link::link_leaf)); [`merkle::empty_root`](crate::merkle::empty_root)
    /// when the window has none.
    pub links_root: Digest,
    /// Digest of the network parameters the window ran under.
    pub params: Digest,
}

impl WindowSummary {
    /// The summary of an active set of identities with their classes (sorted and deduplicated
    /// here), and no account links (`links_root` is the empty set's root).
    pub fn of(t: u64, active: Vec<(IdentityId, Class)>, params: Digest) -> (Self, ActiveSet) {
        let (summary, set, _) = Self::with_links(t, active, Vec::new(), params);
        (summary, set)
    }

    /// The summary of an active set and of the window's account links: `(account, identity)`
    /// pairs, one identity per account and one account per identity and chain, made
    /// deterministic as [`LinkSet::new`] says.
    pub fn with_links(
        t: u64,
        mut active: Vec<(IdentityId, Class)>,
        links: Vec<(AccountId, IdentityId)>,
        params: Digest,
    ) -> (Self, ActiveSet, LinkSet) {
        active.sort_unstable();
        active.dedup_by_key(|(id, _)| *id);
        let set = ActiveSet::new(active);
        let links = LinkSet::new(links);
        let summary = Self {
            version: VERSION,
            t,
            root: set.root(),
            count: set.ids.len() as u64,
            links_root: links.root(),
            params,
        };
        (summary, set, links)
    }

    /// The digest every committee signature covers: domain `hco window summary v2`, parts
    /// version u8, t u64, root, count u64, links_root, params digest (see [`sign::digest`]).
    /// (`v1` signed the same parts without `links_root`.)
    pub fn signing_digest(&self) -> Digest {
        sign::digest(
            "hco window summary v2",
            &[
                &[self.version],
                &self.t.to_be_bytes(),
                &self.root.0,
                &self.count.to_be_bytes(),
                &self.links_root.0,
                &self.params.0,
            ],
        )
    }
}

/// A summary endorsed by a quorum of the committee.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowCertificate {
    /// The summary all signers signed.
    pub summary: WindowSummary,
    /// Signers and signatures, sorted by signer.
    pub signatures: Vec<(NodeId, Sig)>,
}

/// The Merkle leaf of an active identity: `leaf_hash(key ‖ class byte)` (0 human, 1 agent).
pub fn member_leaf(id: &IdentityId, class: Class) -> Digest {
    let mut bytes = [0u8; 33];
    bytes[..32].copy_from_slice(&id.0);
    bytes[32] = class.leaf_byte();
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
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MembershipProof {
    /// The identity.
    pub id: IdentityId,
    /// The class it was active as (committed to in the leaf).
    pub class: Class,
    /// Its Merkle path.
    pub path: MerkleProof,
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn summaries_sort_deduplicate_and_prove_every_member() {
        let id = |b: u8| IdentityId([b; 32]);
        let active = vec![
            (id(3), Class::Agent),
            (id(1), Class::Human),
            (id(3), Class::Agent),
            (id(2), Class::Human),
        ];
        let (summary, set) = WindowSummary::of(7, active, Digest::ZERO);
        assert_eq!(summary.count, 3);
        assert_eq!(set.ids(), &[id(1), id(2), id(3)]);
        for (who, class) in [(1, Class::Human), (2, Class::Human), (3, Class::Agent)] {
            let proof = set.proof(&id(who)).unwrap();
            assert_eq!(proof.class, class);
            assert!(
                proof
                    .path
                    .verify(&summary.root, &member_leaf(&id(who), class))
            );
        }
        assert!(set.proof(&id(4)).is_none());
        let (empty, _) = WindowSummary::of(7, Vec::new(), Digest::ZERO);
        assert_eq!(empty.root, crate::merkle::empty_root());
        assert_ne!(empty.signing_digest(), summary.signing_digest());
    }

    #[test]
    fn the_links_root_is_signed_and_of_commits_to_no_links() {
        let id = |b: u8| IdentityId([b; 32]);
        let active = vec![(id(1), Class::Human), (id(2), Class::Agent)];
        let (plain, _) = WindowSummary::of(7, active.clone(), Digest::ZERO);
        assert_eq!(plain.links_root, crate::merkle::empty_root());
        let (none, set, links) =
            WindowSummary::with_links(7, active.clone(), Vec::new(), Digest::ZERO);
        assert_eq!(none, plain);
        assert!(links.is_empty());
        assert_eq!(set.ids(), &[id(1), id(2)]);
        let account =
            AccountId::parse("eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266").unwrap();
        let (linked, _, links) =
            WindowSummary::with_links(7, active, vec![(account.clone(), id(1))], Digest::ZERO);
        assert_eq!(linked.links_root, links.root());
        assert_eq!((linked.root, linked.count), (plain.root, plain.count));
        assert_ne!(linked.signing_digest(), plain.signing_digest());
        assert!(links.proof(&account).unwrap().verify(&linked.links_root));
        // Every part is in the signed bytes.
        let mut changed = linked.clone();
        changed.links_root.0[0] ^= 1;
        assert_ne!(changed.signing_digest(), linked.signing_digest());
    }
}
