//! BLAKE3 Merkle trees with inclusion proofs: the one tree of the workspace.
//!
//! A level of odd length promotes its last node unchanged; a proof lists the siblings from the
//! leaf up, skipping the levels where the node had none. How two children combine is a
//! parameter ([`NodeHash`]): the window certificates and the acceptance batches use
//! [`node_hash`] (leaves and inner nodes hashed with distinct prefixes, as in RFC 6962, so a leaf
//! can never pass for an inner node); the narrative corpus commitment uses its own derive-key
//! contexts over the same tree shape.

use alloc::vec;
use alloc::vec::Vec;

use crate::Digest;

/// Most siblings a proof may carry (trees of up to 2^64 leaves).
pub const MAX_PROOF_DEPTH: usize = 64;

/// How a parent is hashed from its left and right children.
pub type NodeHash = fn(&Digest, &Digest) -> Digest;

/// The leaf hash of `bytes`: `BLAKE3(0x00 ‖ bytes)`.
pub fn leaf_hash(bytes: &[u8]) -> Digest {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&[0x00]).update(bytes);
    Digest(*hasher.finalize().as_bytes())
}

/// The inner-node hash of the certificate and batch trees: `BLAKE3(0x01 ‖ left ‖ right)`.
pub fn node_hash(left: &Digest, right: &Digest) -> Digest {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&[0x01]).update(&left.0).update(&right.0);
    Digest(*hasher.finalize().as_bytes())
}

/// The root of the empty tree: `BLAKE3.derive_key("hco merkle empty v1", "")`.
pub fn empty_root() -> Digest {
    Digest(blake3::derive_key("hco merkle empty v1", b""))
}

/// A proof that a leaf is at `index` in a tree of `leaf_count` leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MerkleProof {
    /// Position of the leaf.
    pub index: u64,
    /// Leaves in the tree.
    pub leaf_count: u64,
    /// Sibling hashes from the leaf up.
    pub siblings: Vec<Digest>,
}

/// A Merkle tree kept whole, to answer proofs for any leaf.
#[derive(Debug, Clone)]
pub struct MerkleTree {
    levels: Vec<Vec<Digest>>,
}

impl MerkleTree {
    /// Builds the tree over leaf hashes with [`node_hash`].
    pub fn new(leaves: Vec<Digest>) -> Self {
        Self::with_node_hash(leaves, node_hash)
    }

    /// Builds the tree over leaf hashes, combining children with `node`.
    pub fn with_node_hash(leaves: Vec<Digest>, node: NodeHash) -> Self {
        let mut levels = vec![leaves];
        while levels.last().is_some_and(|l| l.len() > 1) {
            let below = levels.last().map(Vec::as_slice).unwrap_or_default();
            let above = below
                .chunks(2)
                .map(|pair| match pair {
                    [l, r] => node(l, r),
                    [single] => *single,
                    _ => unreachable!("chunks(2) yields one or two"),
                })
                .collect();
            levels.push(above);
        }
        Self { levels }
    }

    /// The root ([`empty_root`] for no leaves).
    pub fn root(&self) -> Digest {
        self.top().unwrap_or_else(empty_root)
    }

    /// The root, `None` for no leaves (for trees whose empty root is another constant).
    pub fn top(&self) -> Option<Digest> {
        self.levels.last().and_then(|l| l.first()).copied()
    }

    /// Number of leaves.
    pub fn len(&self) -> usize {
        self.levels[0].len()
    }

    /// Whether the tree has no leaves.
    pub fn is_empty(&self) -> bool {
        self.levels[0].is_empty()
    }

    /// The inclusion proof of leaf `index`.
    pub fn proof(&self, index: usize) -> Option<MerkleProof> {
        if index >= self.len() {
            return None;
        }
        let mut siblings = Vec::new();
        let mut i = index;
        for level in &self.levels[..self.levels.len() - 1] {
            let sibling = i ^ 1;
            if sibling < level.len() {
                siblings.push(level[sibling]);
            }
            i /= 2;
        }
        Some(MerkleProof {
            index: index as u64,
            leaf_count: self.len() as u64,
            siblings,
        })
    }
}

impl MerkleProof {
    /// Whether `leaf` is at `self.index` in the tree with this `root` (built with [`node_hash`]).
    pub fn verify(&self, root: &Digest, leaf: &Digest) -> bool {
        self.verify_with(root, leaf, node_hash)
    }

    /// [`MerkleProof::verify`] for a tree whose parents are hashed with `node`.
    pub fn verify_with(&self, root: &Digest, leaf: &Digest, node: NodeHash) -> bool {
        path_root(
            self.index,
            self.leaf_count,
            self.siblings.iter().copied().map(Some),
            leaf,
            node,
        )
        .is_some_and(|r| r == *root)
    }
}

/// The root that `leaf` at `index` in a tree of `leaf_count` leaves hashes up to with these
/// siblings (leaf up), or `None` when the path cannot be right: the index outside the tree, more
/// than [`MAX_PROOF_DEPTH`] siblings, too few or too many for the tree's shape, or a sibling
/// that is `None` (one that did not decode).
pub fn path_root<I>(
    index: u64,
    leaf_count: u64,
    siblings: I,
    leaf: &Digest,
    node: NodeHash,
) -> Option<Digest>
where
    I: ExactSizeIterator<Item = Option<Digest>>,
{
    if index >= leaf_count || siblings.len() > MAX_PROOF_DEPTH {
        return None;
    }
    let mut siblings = siblings;
    let mut hash = *leaf;
    let mut i = index;
    let mut width = leaf_count;
    while width > 1 {
        let sibling = i ^ 1;
        if sibling < width {
            let s = siblings.next()??;
            hash = if i.is_multiple_of(2) {
                node(&hash, &s)
            } else {
                node(&s, &hash)
            };
        }
        i /= 2;
        width = width.div_ceil(2);
    }
    siblings.next().is_none().then_some(hash)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn leaves(n: usize) -> Vec<Digest> {
        (0..n).map(|i| leaf_hash(&i.to_le_bytes())).collect()
    }

    #[test]
    fn every_leaf_proves_and_nothing_else_does() {
        for n in 1..40 {
            let tree = MerkleTree::new(leaves(n));
            let root = tree.root();
            for i in 0..n {
                let proof = tree.proof(i).unwrap();
                assert!(proof.verify(&root, &leaves(n)[i]), "n={n} i={i}");
                assert!(!proof.verify(&root, &leaf_hash(b"other")));
                let mut moved = proof.clone();
                moved.index = (moved.index + 1) % n as u64;
                if n > 1 {
                    assert!(!moved.verify(&root, &leaves(n)[i]));
                }
                let mut longer = proof.clone();
                longer.siblings.push(root);
                assert!(!longer.verify(&root, &leaves(n)[i]));
            }
            assert!(tree.proof(n).is_none());
        }
        assert_eq!(MerkleTree::new(vec![]).root(), empty_root());
        assert_eq!(MerkleTree::new(vec![]).top(), None);
    }

    #[test]
    fn another_node_hash_gives_another_tree_of_the_same_shape() {
        fn other(l: &Digest, r: &Digest) -> Digest {
            let mut h = blake3::Hasher::new_derive_key("test node");
            h.update(&l.0).update(&r.0);
            Digest(*h.finalize().as_bytes())
        }
        for n in 2..20 {
            let ours = MerkleTree::new(leaves(n));
            let theirs = MerkleTree::with_node_hash(leaves(n), other);
            assert_ne!(ours.root(), theirs.root());
            for i in 0..n {
                let proof = theirs.proof(i).unwrap();
                assert_eq!(proof.siblings.len(), ours.proof(i).unwrap().siblings.len());
                assert!(proof.verify_with(&theirs.root(), &leaves(n)[i], other));
                assert!(!proof.verify(&theirs.root(), &leaves(n)[i]));
            }
        }
    }

    #[test]
    fn a_sibling_that_did_not_decode_fails_the_path() {
        let tree = MerkleTree::new(leaves(5));
        let proof = tree.proof(2).unwrap();
        let mut siblings: Vec<Option<Digest>> = proof.siblings.iter().copied().map(Some).collect();
        let leaf = leaves(5)[2];
        let ok = path_root(2, 5, siblings.clone().into_iter(), &leaf, node_hash);
        assert_eq!(ok, Some(tree.root()));
        siblings[1] = None;
        assert_eq!(
            path_root(2, 5, siblings.into_iter(), &leaf, node_hash),
            None
        );
        let too_many = core::iter::repeat_n(Some(leaf), MAX_PROOF_DEPTH + 1);
        assert_eq!(path_root(0, u64::MAX, too_many, &leaf, node_hash), None);
    }

    proptest! {
        #[test]
        fn tampered_proofs_fail(n in 1usize..200, pick in any::<prop::sample::Index>(), flip in any::<u8>()) {
            let tree = MerkleTree::new(leaves(n));
            let i = pick.index(n);
            let mut proof = tree.proof(i).unwrap();
            prop_assume!(!proof.siblings.is_empty());
            let s = flip as usize % proof.siblings.len();
            proof.siblings[s].0[0] ^= 0x80;
            prop_assert!(!proof.verify(&tree.root(), &leaves(n)[i]));
        }
    }
}
