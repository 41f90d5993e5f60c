//! The corpus commitment: a BLAKE3 Merkle tree whose leaves are the parts of every set (set
//! order by id, then part order). A network fixes the root in its parameters; when a window's
//! secret is revealed, an auditor is shown only the parts that were used, each with its proof,
//! and checks them against the root without seeing the rest of the (private) corpus.
//!
//! Leaves and inner nodes use distinct BLAKE3 derive-key contexts; a level with an odd number
//! of nodes carries its last node up unchanged.

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

fn node(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("hco corpus node v1");
    h.update(left);
    h.update(right);
    *h.finalize().as_bytes()
}

fn next_level(level: &[[u8; 32]]) -> Vec<[u8; 32]> {
    level
        .chunks(2)
        .map(|c| match c {
            [l, r] => node(l, r),
            [only] => *only,
            _ => [0; 32],
        })
        .collect()
}

/// An inclusion proof of one leaf.
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
        if self.leaf_index >= self.leaf_count || self.siblings.len() > 64 {
            return false;
        }
        let mut siblings = self.siblings.iter().map(|s| {
            let mut out = [0u8; 32];
            hex::decode_to_slice(s, &mut out).ok().map(|()| out)
        });
        let (mut index, mut count, mut hash) = (self.leaf_index, self.leaf_count, *leaf);
        while count > 1 {
            if index % 2 == 1 || index + 1 < count {
                let Some(Some(sibling)) = siblings.next() else {
                    return false;
                };
                hash = if index % 2 == 1 {
                    node(&sibling, &hash)
                } else {
                    node(&hash, &sibling)
                };
            }
            index /= 2;
            count = count.div_ceil(2);
        }
        siblings.next().is_none() && &hash == root
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

    /// The Merkle root over all parts (a fixed value for an empty corpus).
    pub fn merkle_root(&self) -> [u8; 32] {
        let mut level: Vec<[u8; 32]> = self.leaves().into_iter().map(|(_, _, h)| h).collect();
        if level.is_empty() {
            return *blake3::Hasher::new_derive_key("hco corpus empty v1")
                .finalize()
                .as_bytes();
        }
        while level.len() > 1 {
            level = next_level(&level);
        }
        level[0]
    }

    /// The leaf hash and inclusion proof of one part.
    pub fn merkle_proof(&self, set_id: &str, part: usize) -> Option<([u8; 32], MerkleProof)> {
        let mut level: Vec<[u8; 32]> = Vec::new();
        let mut found = None;
        for (i, (id, p, h)) in self.leaves().into_iter().enumerate() {
            if id == set_id && p == part {
                found = Some(i);
            }
            level.push(h);
        }
        let leaf_index = found?;
        let leaf = level[leaf_index];
        let leaf_count = level.len() as u64;
        let mut siblings = Vec::new();
        let mut index = leaf_index;
        while level.len() > 1 {
            if let Some(s) = level.get(index ^ 1) {
                siblings.push(hex::encode(s));
            }
            level = next_level(&level);
            index /= 2;
        }
        Some((
            leaf,
            MerkleProof {
                leaf_index: leaf_index as u64,
                leaf_count,
                siblings,
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
