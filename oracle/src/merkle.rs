//! BLAKE3 Merkle trees over sorted leaves, with inclusion proofs: `hco_verify::merkle`,
//! re-exported (the window certificates, the acceptance batches and the narrative corpus all use
//! that one tree).
//!
//! Leaves and inner nodes are hashed with distinct prefixes (as in RFC 6962), so a leaf can
//! never pass for an inner node. A level of odd length promotes its last node unchanged.

pub use hco_verify::merkle::{
    MAX_PROOF_DEPTH, MerkleProof, MerkleTree, NodeHash, empty_root, leaf_hash, node_hash, path_root,
};
