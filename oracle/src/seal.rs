//! Acceptances are signed in batches: the issuer signs the Merkle root of a batch once, and each
//! acceptance keeps its inclusion proof, so every acceptance remains standalone evidence signed
//! by its issuer while signing costs one signature per batch rather than per response.

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

use crate::merkle::{MerkleProof, MerkleTree};
use crate::{Acceptance, Digest, NodeId, Reason, Sig, codec, sign};

/// The issuer's signature over a batch of acceptances of one window.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BatchSeal {
    /// Message version.
    pub version: u8,
    /// The issuer.
    pub issuer: NodeId,
    /// The window of every acceptance in the batch.
    pub t: u64,
    /// Merkle root of the acceptance digests, in batch order.
    pub root: Digest,
    /// Acceptances in the batch.
    pub count: u32,
    /// The issuer's signature.
    pub sig: Sig,
}

impl BatchSeal {
    fn signing_digest(issuer: &NodeId, t: u64, root: &Digest, count: u32) -> Digest {
        sign::digest(
            "hco acceptance batch v1",
            &[&issuer.0, &t.to_be_bytes(), &root.0, &count.to_be_bytes()],
        )
    }

    /// Verifies the issuer's signature.
    pub fn check_signature(&self) -> Result<(), Reason> {
        crate::messages::check_version(self.version)?;
        let digest = Self::signing_digest(&self.issuer, self.t, &self.root, self.count);
        if sign::verify(&self.issuer.0, &digest, &self.sig) {
            Ok(())
        } else {
            Err(Reason::BadIssuerSignature)
        }
    }
}

/// One acceptance with the seal of its batch and its place in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SealedAcceptance {
    /// The acceptance.
    pub acceptance: Acceptance,
    /// The batch seal.
    pub seal: BatchSeal,
    /// Inclusion of the acceptance in the seal's root.
    pub proof: MerkleProof,
}

impl SealedAcceptance {
    /// Checks that the issuer sealed this acceptance (the signature and the inclusion proof),
    /// and that the seal's issuer and window match the challenge's.
    pub fn check_seal(&self) -> Result<(), Reason> {
        self.check_inclusion()?;
        self.seal.check_signature()
    }

    /// Every part of [`SealedAcceptance::check_seal`] but the seal's signature: the seal's
    /// issuer and window match the challenge's and the proof places the acceptance under the
    /// seal's root. Callers checking many acceptances verify each distinct seal once; the
    /// cache of verified seals must be keyed by the whole seal, never by its signature alone
    /// (a signature reused under another root would pass).
    pub fn check_inclusion(&self) -> Result<(), Reason> {
        let challenge = self.acceptance.challenge();
        if challenge.issuer != self.seal.issuer || challenge.t != self.seal.t {
            return Err(Reason::BadIssuerSignature);
        }
        if self.proof.leaf_count != u64::from(self.seal.count)
            || !self
                .proof
                .verify(&self.seal.root, &self.acceptance.digest())
        {
            return Err(Reason::BadIssuerSignature);
        }
        Ok(())
    }

    /// Encodes for storage or transport.
    pub fn encode(&self) -> Vec<u8> {
        codec::encode(self)
    }
}

/// Seals acceptances of one window `t` with one signature.
pub fn seal_batch(key: &SigningKey, t: u64, acceptances: Vec<Acceptance>) -> Vec<SealedAcceptance> {
    if acceptances.is_empty() {
        return Vec::new();
    }
    let issuer = NodeId(key.verifying_key().to_bytes());
    let tree = MerkleTree::new(acceptances.iter().map(Acceptance::digest).collect());
    let root = tree.root();
    let count = acceptances.len() as u32;
    let seal = BatchSeal {
        version: crate::messages::VERSION,
        issuer,
        t,
        root,
        count,
        sig: sign::sign(key, &BatchSeal::signing_digest(&issuer, t, &root, count)),
    };
    acceptances
        .into_iter()
        .enumerate()
        .filter_map(|(i, acceptance)| {
            Some(SealedAcceptance {
                acceptance,
                seal: seal.clone(),
                proof: tree.proof(i)?,
            })
        })
        .collect()
}
