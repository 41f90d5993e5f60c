//! The light verifier: checks a window certificate against the committee's keys and an
//! identity's membership proof. No ledger, no network, no async runtime: this is what a chain's
//! validator-set logic or a DAO voting tool embeds (build the crate with
//! `default-features = false`).

use crate::certificate::{MembershipProof, WindowCertificate};
use hco_challenges::Class;

use crate::certificate::member_leaf;
use crate::{Digest, IdentityId, NodeId, sign};

/// Why a certificate or proof does not verify. Codes are stable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CertError {
    /// A signer outside the committee.
    #[error("signer {0} is not in the committee")]
    NotInCommittee(NodeId),
    /// The same signer twice.
    #[error("signer {0} appears twice")]
    DuplicateSigner(NodeId),
    /// A signature that does not verify.
    #[error("the signature of {0} does not verify")]
    BadSignature(NodeId),
    /// Fewer valid signers than the quorum.
    #[error("{got} signers, quorum is {quorum}")]
    BelowQuorum {
        /// Valid signers.
        got: usize,
        /// Needed.
        quorum: u32,
    },
    /// The certificate is for other network parameters.
    #[error("the certificate was made under other network parameters")]
    ParamsMismatch,
    /// The proof does not place the identity under the root.
    #[error("the proof does not show {0} in the active set")]
    NotIncluded(IdentityId),
    /// The identity was active, but as the other class.
    #[error("{id} was active as {certified:?}, not as {expected:?}")]
    WrongClass {
        /// The identity.
        id: IdentityId,
        /// The class certified.
        certified: Class,
        /// The class asked about.
        expected: Class,
    },
    /// A quorum that is not a strict majority of the committee (a verifier with quorum 0 would
    /// accept a certificate without a signature), or a committee listing a key twice.
    #[error(
        "quorum {quorum} is not a strict majority of a committee of {committee} distinct members"
    )]
    BadQuorum {
        /// The quorum asked for.
        quorum: u32,
        /// Distinct committee members.
        committee: usize,
    },
    /// The proof's tree size differs from the certified count.
    #[error("the proof is for a set of {proof} identities, the certificate has {certified}")]
    CountMismatch {
        /// Leaf count in the proof.
        proof: u64,
        /// Certified count.
        certified: u64,
    },
}

impl CertError {
    /// The stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            CertError::NotInCommittee(_) => "not_in_committee",
            CertError::DuplicateSigner(_) => "duplicate_signer",
            CertError::BadSignature(_) => "bad_signature",
            CertError::BelowQuorum { .. } => "below_quorum",
            CertError::ParamsMismatch => "params_mismatch",
            CertError::NotIncluded(_) => "not_included",
            CertError::CountMismatch { .. } => "count_mismatch",
            CertError::WrongClass { .. } => "wrong_class",
            CertError::BadQuorum { .. } => "bad_quorum",
        }
    }
}

/// What a consumer trusts: the committee's keys, the quorum, and optionally the parameter digest.
#[derive(Debug, Clone)]
pub struct LightVerifier {
    committee: Vec<NodeId>,
    quorum: u32,
    params: Option<Digest>,
}

impl LightVerifier {
    /// A verifier for a committee and quorum: `bad_quorum` unless the committee lists distinct
    /// keys and the quorum is a strict majority of them (`n/2 < quorum ≤ n`). The quorum is the
    /// number in `GET /v1/params` (`params.quorum`), never a config file's `0`.
    pub fn new(committee: Vec<NodeId>, quorum: u32) -> Result<Self, CertError> {
        let distinct: std::collections::BTreeSet<_> = committee.iter().collect();
        let n = committee.len();
        if distinct.len() != n || !(n / 2 < quorum as usize && quorum as usize <= n) {
            return Err(CertError::BadQuorum {
                quorum,
                committee: distinct.len(),
            });
        }
        Ok(Self {
            committee,
            quorum,
            params: None,
        })
    }

    /// Also require the certificate to name these network parameters.
    pub fn with_params(mut self, params: Digest) -> Self {
        self.params = Some(params);
        self
    }

    /// Checks the certificate: distinct committee signers, valid signatures, at least a quorum.
    pub fn verify_certificate(&self, cert: &WindowCertificate) -> Result<(), CertError> {
        if self.params.is_some_and(|p| p != cert.summary.params) {
            return Err(CertError::ParamsMismatch);
        }
        let digest = cert.summary.signing_digest();
        let mut seen = std::collections::BTreeSet::new();
        for (signer, _) in &cert.signatures {
            if !self.committee.contains(signer) {
                return Err(CertError::NotInCommittee(*signer));
            }
            if !seen.insert(*signer) {
                return Err(CertError::DuplicateSigner(*signer));
            }
        }
        let items: Vec<_> = cert
            .signatures
            .iter()
            .map(|(n, s)| (&n.0, &digest, s))
            .collect();
        let results = sign::verify_many(&items);
        if let Some(((bad, _), _)) = cert.signatures.iter().zip(&results).find(|(_, ok)| !**ok) {
            return Err(CertError::BadSignature(*bad));
        }
        if cert.signatures.len() < self.quorum as usize {
            return Err(CertError::BelowQuorum {
                got: cert.signatures.len(),
                quorum: self.quorum,
            });
        }
        Ok(())
    }

    /// Checks the certificate and that `proof` shows `id` active in its window; returns the
    /// class it was active as (committed to in the certified leaf).
    pub fn verify_membership(
        &self,
        cert: &WindowCertificate,
        id: &IdentityId,
        proof: &MembershipProof,
    ) -> Result<Class, CertError> {
        self.verify_certificate(cert)?;
        if proof.path.leaf_count != cert.summary.count {
            return Err(CertError::CountMismatch {
                proof: proof.path.leaf_count,
                certified: cert.summary.count,
            });
        }
        let leaf = member_leaf(id, proof.class);
        if proof.id != *id || !proof.path.verify(&cert.summary.root, &leaf) {
            return Err(CertError::NotIncluded(*id));
        }
        Ok(proof.class)
    }

    /// Checks that `id` was active in the certificate's window *as* `class`: what a chain or
    /// DAO gating people (`Class::Human`) must ask, so an agent-class identity kept alive by
    /// agent challenges never passes as a person.
    pub fn verify_member_of_class(
        &self,
        cert: &WindowCertificate,
        id: &IdentityId,
        class: Class,
        proof: &MembershipProof,
    ) -> Result<(), CertError> {
        let certified = self.verify_membership(cert, id, proof)?;
        if certified == class {
            Ok(())
        } else {
            Err(CertError::WrongClass {
                id: *id,
                certified,
                expected: class,
            })
        }
    }
}
