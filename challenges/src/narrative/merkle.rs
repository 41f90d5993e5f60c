//! The corpus commitment: a BLAKE3 Merkle tree whose leaves are the parts of every set (set
//! order by id, then part order). A network fixes the root in its parameters; when a window's
//! secret is revealed, an auditor is shown only the parts that were used, each with its proof,
//! and checks them against the root without seeing the rest of the (private) corpus.
//!
//! Leaves and inner nodes use distinct BLAKE3 derive-key contexts; a level with an odd number
//! of nodes carries its last node up unchanged. The tree and the path check are the one Merkle
//! implementation of the workspace, `hco_verify::merkle`, with this tree's node hash.

use hco_verify::Digest;
use hco_verify::merkle::{self, MerkleTree};
use serde::{Deserialize, Serialize};

use super::{Corpus, NarrativeSet};

fn put(hasher: &mut blake3::Hasher, bytes: &[u8]) {
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// The leaf hash of one part of a set: every field that a session shows or checks.
pub fn part_leaf(set: &NarrativeSet, part: usize) -> Option<[u8; 32]> {
    let p = set.parts.get(part)?;
    let mut h = blake3::Hasher::new_derive_key("hco corpus leaf v1");
    put(&mut h, set.id.as_bytes());
    put(&mut h, set.domain.as_bytes());
    h.update(&(part as u64).to_le_bytes());
    put(&mut h, p.narrative.as_bytes());
    h.update(&(p.questions.len() as u64).to_le_bytes());
    for q in &p.questions {
        put(&mut h, q.question.as_bytes());
        let variants = q.variants();
        h.update(&(variants.len() as u64).to_le_bytes());
        for v in variants {
            put(&mut h, v.as_bytes());
        }
        put(&mut h, q.reasoning_type.as_str().as_bytes());
        put(&mut h, q.answer_type.as_str().as_bytes());
    }
    Some(*h.finalize().as_bytes())
}

/// The corpus tree's inner-node hash (the tree itself is `hco_verify::merkle`'s).
fn node(left: &Digest, right: &Digest) -> Digest {
    let mut h = blake3::Hasher::new_derive_key("hco corpus node v1");
    h.update(&left.0);
    h.update(&right.0);
    Digest(*h.finalize().as_bytes())
}

/// An inclusion proof of one leaf (the corpus commitment's own JSON shape: hex siblings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MerkleProof {
    /// Position of the leaf.
    pub leaf_index: u64,
    /// Number of leaves in the tree.
    pub leaf_count: u64,
    /// Sibling hashes from the leaf up, hex-encoded.
    pub siblings: Vec<String>,
}

impl MerkleProof {
    /// Whether `leaf` at this position hashes up to `root`.
    pub fn verify(&self, root: &[u8; 32], leaf: &[u8; 32]) -> bool {
        let siblings = self.siblings.iter().map(|s| {
            let mut out = [0u8; 32];
            hex::decode_to_slice(s, &mut out).ok().map(|()| Digest(out))
        });
        merkle::path_root(
            self.leaf_index,
            self.leaf_count,
            siblings,
            &Digest(*leaf),
            node,
        )
        .is_some_and(|r| r.0 == *root)
    }
}

impl Corpus {
    /// Every leaf, in tree order, with the `(set id, part)` it commits to.
    pub fn leaves(&self) -> Vec<(&str, usize, [u8; 32])> {
        self.sets()
            .iter()
            .flat_map(|s| {
                (0..s.parts.len()).filter_map(move |p| Some((s.id.as_str(), p, part_leaf(s, p)?)))
            })
            .collect()
    }

    fn tree(&self) -> MerkleTree {
        let leaves = self.leaves().into_iter().map(|(_, _, h)| Digest(h));
        MerkleTree::with_node_hash(leaves.collect(), node)
    }

    /// The Merkle root over all parts (a fixed value for an empty corpus).
    pub fn merkle_root(&self) -> [u8; 32] {
        match self.tree().top() {
            Some(root) => root.0,
            None => *blake3::Hasher::new_derive_key("hco corpus empty v1")
                .finalize()
                .as_bytes(),
        }
    }

    /// The leaf hash and inclusion proof of one part.
    pub fn merkle_proof(&self, set_id: &str, part: usize) -> Option<([u8; 32], MerkleProof)> {
        let leaves = self.leaves();
        let index = leaves
            .iter()
            .rposition(|(id, p, _)| *id == set_id && *p == part)?;
        let tree = MerkleTree::with_node_hash(leaves.iter().map(|l| Digest(l.2)).collect(), node);
        let proof = tree.proof(index)?;
        Some((
            leaves[index].2,
            MerkleProof {
                leaf_index: proof.index,
                leaf_count: proof.leaf_count,
                siblings: proof.siblings.iter().map(|s| s.to_hex()).collect(),
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_of_the_embedded_corpus_proves_against_the_root() {
        let corpus = Corpus::embedded();
        let root = corpus.merkle_root();
        let mut n = 0;
        for set in corpus.sets() {
            for part in 0..3 {
                let (leaf, proof) = corpus.merkle_proof(&set.id, part).unwrap();
                assert!(proof.verify(&root, &leaf));
                let mut wrong = proof.clone();
                wrong.leaf_index = (wrong.leaf_index + 1) % wrong.leaf_count;
                assert!(!wrong.verify(&root, &leaf) || wrong.leaf_count == 1);
                n += 1;
            }
        }
        assert!(n >= 30);
    }

    #[test]
    fn trees_of_every_shape_verify_and_detect_tampering() {
        let corpus = Corpus::embedded();
        for keep in 1..=corpus.sets().len().min(7) {
            let small = Corpus::from_sets(corpus.sets()[..keep].to_vec()).unwrap();
            let root = small.merkle_root();
            for set in small.sets() {
                for part in 0..3 {
                    let (leaf, proof) = small.merkle_proof(&set.id, part).unwrap();
                    assert!(
                        proof.verify(&root, &leaf),
                        "{keep} sets, {} part {part}",
                        set.id
                    );
                    let mut bad_leaf = leaf;
                    bad_leaf[0] ^= 1;
                    assert!(!proof.verify(&root, &bad_leaf));
                }
            }
        }
        let mut edited = corpus.sets().to_vec();
        edited[0].parts[1].questions[0]
            .answers
            .push("anything".into());
        let edited = Corpus::from_sets(edited).unwrap();
        assert_ne!(edited.merkle_root(), corpus.merkle_root());
        assert_ne!(Corpus::default().merkle_root(), corpus.merkle_root());
        assert!(corpus.merkle_proof("no-such-set", 0).is_none());
    }
}
