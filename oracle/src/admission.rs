//! The admission credential of the agent-admission game (aCAPTCHA): a node's signed statement
//! that an entity completed a three-round session within the per-round budget. Anyone verifies
//! it offline with the node's public key.

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

use crate::{Digest, IdentityId, NodeId, Sig, Timestamp, sign};

/// What the node attests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Admission {
    /// Message version.
    pub version: u8,
    /// The node that ran the session.
    pub node: NodeId,
    /// The identity the session was bound to, if the client named one. The client names it
    /// when it starts the session, unsigned: it is what the client asked for, not a proof that
    /// the identity's holder played.
    pub identity: Option<IdentityId>,
    /// Digest of the session (its id, narrative set and questions).
    pub session: Digest,
    /// Effective time of each round (elapsed minus the connection's RTT), in milliseconds.
    pub round_ms: [u64; 3],
    /// When the last round was answered.
    pub issued_at: Timestamp,
    /// After this the credential is no longer valid.
    pub expires_at: Timestamp,
}

/// An admission signed by its node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdmissionCredential {
    /// The statement.
    pub admission: Admission,
    /// The node's signature.
    pub sig: Sig,
}

/// Why a credential does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CredentialError {
    /// The signature does not verify under the named node key.
    #[error("the credential's signature does not verify")]
    BadSignature,
    /// Signed by another node than the one trusted.
    #[error("the credential was issued by {0}, not the trusted node")]
    UntrustedNode(NodeId),
    /// Past its expiry.
    #[error("the credential expired at {0}")]
    Expired(Timestamp),
}

impl CredentialError {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            CredentialError::BadSignature => "bad_signature",
            CredentialError::UntrustedNode(_) => "untrusted_node",
            CredentialError::Expired(_) => "credential_expired",
        }
    }
}

fn digest(a: &Admission) -> Digest {
    let identity = a.identity.map(|i| i.0).unwrap_or([0; 32]);
    sign::digest(
        "hco admission v1",
        &[
            &[a.version],
            &a.node.0,
            &[u8::from(a.identity.is_some())],
            &identity,
            &a.session.0,
            &a.round_ms[0].to_be_bytes(),
            &a.round_ms[1].to_be_bytes(),
            &a.round_ms[2].to_be_bytes(),
            &a.issued_at.to_be_bytes(),
            &a.expires_at.to_be_bytes(),
        ],
    )
}

impl AdmissionCredential {
    /// Signs an admission with the node's key.
    pub fn sign(key: &SigningKey, admission: Admission) -> Self {
        let sig = sign::sign(key, &digest(&admission));
        Self { admission, sig }
    }

    /// Verifies the credential for a verifier that trusts the node `trusted`: issued by that
    /// node, its signature valid, not expired at `now`. Only this makes a credential valid.
    pub fn verify(&self, trusted: &NodeId, now: Timestamp) -> Result<(), CredentialError> {
        if *trusted != self.admission.node {
            return Err(CredentialError::UntrustedNode(self.admission.node));
        }
        self.check_self_signed(now)
    }

    /// What can be checked without a trusted node key: the signature under the key the
    /// credential itself names, and the expiry at `now`. Anyone signs a credential that passes
    /// this with a key of their own, so it never makes one valid ([`AdmissionCredential::verify`]
    /// does, with the issuing node's key pinned).
    pub fn check_self_signed(&self, now: Timestamp) -> Result<(), CredentialError> {
        if !sign::verify(&self.admission.node.0, &digest(&self.admission), &self.sig) {
            return Err(CredentialError::BadSignature);
        }
        if now > self.admission.expires_at {
            return Err(CredentialError::Expired(self.admission.expires_at));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn credentials_verify_offline_and_refuse_tampering() {
        let key = testing::key(1);
        let node = testing::node_id(&key);
        let cred = AdmissionCredential::sign(
            &key,
            Admission {
                version: 1,
                node,
                identity: None,
                session: Digest([3; 32]),
                round_ms: [900, 1200, 1500],
                issued_at: 1000,
                expires_at: 5000,
            },
        );
        cred.verify(&node, 2000).unwrap();
        assert_eq!(
            cred.verify(&node, 6000).unwrap_err().code(),
            "credential_expired"
        );
        assert_eq!(
            cred.verify(&NodeId([9; 32]), 2000).unwrap_err().code(),
            "untrusted_node"
        );
        let mut forged = cred.clone();
        forged.admission.round_ms[0] = 10;
        assert_eq!(
            forged.check_self_signed(2000).unwrap_err().code(),
            "bad_signature"
        );
        assert_eq!(
            forged.verify(&node, 2000).unwrap_err().code(),
            "bad_signature"
        );

        // Any key signs a credential that checks out against the key it names itself: only a
        // pinned node key tells it from the node's.
        let other = testing::key(2);
        let mut admission = cred.admission.clone();
        admission.node = testing::node_id(&other);
        let self_made = AdmissionCredential::sign(&other, admission);
        self_made.check_self_signed(2000).unwrap();
        assert_eq!(
            self_made.verify(&node, 2000).unwrap_err().code(),
            "untrusted_node"
        );
    }
}
