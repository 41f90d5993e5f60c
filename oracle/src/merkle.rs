//! BLAKE3 Merkle trees over sorted leaves, with inclusion proofs.
//!
//! Leaves and inner nodes are hashed with distinct prefixes (as in RFC 6962), so a leaf can
//! never pass for an inner node. A level of odd length promotes its last node unchanged.

use serde::{Deserialize, Serialize};

use crate::Digest;

/// Most siblings a proof may carry (trees of up to 2^64 leaves).
pub const MAX_PROOF_DEPTH: usize = 64;

/// The leaf hash of `bytes`.
pub fn leaf_hash(bytes: &[u8]) -> Digest {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&[0x00]).update(bytes);
    Digest(*hasher.finalize().as_bytes())
}

fn node_hash(left: &Digest, right: &Digest) -> Digest {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&[0x01]).update(&left.0).update(&right.0);
    Digest(*hasher.finalize().as_bytes())
}

/// The root of the empty tree.
pub fn empty_root() -> Digest {
    Digest(blake3::derive_key("hco merkle empty v1", b""))
}

/// A proof that a leaf is at `index` in a tree of `leaf_count` leaves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Builds the tree over leaf hashes.
    pub fn new(leaves: Vec<Digest>) -> Self {
        let mut levels = vec![leaves];
        while levels.last().is_some_and(|l| l.len() > 1) {
            let below = levels.last().map(Vec::as_slice).unwrap_or_default();
            let above = below
                .chunks(2)
                .map(|pair| match pair {
                    [l, r] => node_hash(l, r),
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
        match self.levels.last().and_then(|l| l.first()) {
            Some(root) => *root,
            None => empty_root(),
        }
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
    /// Whether `leaf` is at `self.index` in the tree with this `root`.
    pub fn verify(&self, root: &Digest, leaf: &Digest) -> bool {
        if self.index >= self.leaf_count || self.siblings.len() > MAX_PROOF_DEPTH {
            return false;
        }
        let mut hash = *leaf;
        let mut i = self.index;
        let mut width = self.leaf_count;
        let mut siblings = self.siblings.iter();
        while width > 1 {
            let sibling = i ^ 1;
            if sibling < width {
                let Some(s) = siblings.next() else {
                    return false;
                };
                hash = if i.is_multiple_of(2) {
                    node_hash(&hash, s)
                } else {
                    node_hash(s, &hash)
                };
            }
            i /= 2;
            width = width.div_ceil(2);
        }
        siblings.next().is_none() && hash == *root
    }
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
            }
            assert!(tree.proof(n).is_none());
        }
        assert_eq!(MerkleTree::new(vec![]).root(), empty_root());
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
