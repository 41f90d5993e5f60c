//! The admission credential of the agent-admission game (aCAPTCHA): a node's signed statement
//! that the holder of a registered agent identity completed a three-round session within the
//! per-round budget. The identity signed the session's start ([`SessionStart`]) and the
//! credential carries that signature, so anyone verifies offline, with the node's public key
//! pinned, both that the node admitted and that the identity asked to play.

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
    /// The identity that started the session (a registered agent identity).
    pub identity: IdentityId,
    /// The window the session started in.
    pub window: u64,
    /// The identity's nonce for the session.
    pub nonce: Digest,
    /// The identity's signature over the start ([`SessionStart::digest`]).
    pub start_sig: Sig,
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

/// What an agent identity signs to start a session at `node` in `window`: the session is bound
/// to the identity, and the node counts sessions per identity and window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SessionStart {
    /// The identity (a registered agent identity).
    pub identity: IdentityId,
    /// The current window.
    pub window: u64,
    /// Any 32 bytes the identity chooses, so two starts differ.
    pub nonce: Digest,
    /// The identity's signature over [`SessionStart::digest`]: BLAKE3 derive_key("hco
    /// admission start v1", node ‖ identity ‖ window u64 BE ‖ nonce), each part
    /// length-prefixed.
    pub sig: Sig,
}

impl SessionStart {
    /// The signed bytes: domain `hco admission start v1`, parts node, identity, window u64,
    /// nonce.
    pub fn digest(node: &NodeId, identity: &IdentityId, window: u64, nonce: &Digest) -> Digest {
        sign::digest(
            "hco admission start v1",
            &[&node.0, &identity.0, &window.to_be_bytes(), &nonce.0],
        )
    }

    /// A start signed with the identity's `key`.
    pub fn sign(key: &SigningKey, node: &NodeId, window: u64, nonce: Digest) -> Self {
        let identity = IdentityId(key.verifying_key().to_bytes());
        let sig = sign::sign(key, &Self::digest(node, &identity, window, &nonce));
        Self {
            identity,
            window,
            nonce,
            sig,
        }
    }

    /// Whether the identity signed this start for `node`.
    pub fn verify(&self, node: &NodeId) -> bool {
        sign::verify(
            &self.identity.0,
            &Self::digest(node, &self.identity, self.window, &self.nonce),
            &self.sig,
        )
    }
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
    /// The identity's signature over the session start does not verify.
    #[error("the identity's signature over the session start does not verify")]
    BadStartSignature,
}

impl CredentialError {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            CredentialError::BadSignature => "bad_signature",
            CredentialError::UntrustedNode(_) => "untrusted_node",
            CredentialError::Expired(_) => "credential_expired",
            CredentialError::BadStartSignature => "bad_identity_signature",
        }
    }
}

fn digest(a: &Admission) -> Digest {
    sign::digest(
        "hco admission v2",
        &[
            &[a.version],
            &a.node.0,
            &a.identity.0,
            &a.window.to_be_bytes(),
            &a.nonce.0,
            &a.start_sig.0,
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
    /// credential itself names, the identity's signature over the start, and the expiry at
    /// `now`. Anyone signs a credential that passes
    /// this with a key of their own, so it never makes one valid ([`AdmissionCredential::verify`]
    /// does, with the issuing node's key pinned).
    pub fn check_self_signed(&self, now: Timestamp) -> Result<(), CredentialError> {
        if !sign::verify(&self.admission.node.0, &digest(&self.admission), &self.sig) {
            return Err(CredentialError::BadSignature);
        }
        let a = &self.admission;
        let start = SessionStart {
            identity: a.identity,
            window: a.window,
            nonce: a.nonce,
            sig: a.start_sig,
        };
        if !start.verify(&a.node) {
            return Err(CredentialError::BadStartSignature);
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
        let start = SessionStart::sign(&testing::key(7), &node, 4, Digest([5; 32]));
        let cred = AdmissionCredential::sign(
            &key,
            Admission {
                version: 1,
                node,
                identity: start.identity,
                window: start.window,
                nonce: start.nonce,
                start_sig: start.sig,
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

        // The node cannot name an identity that did not sign the start: the credential is
        // invalid even under the pinned node key.
        let mut admission = cred.admission.clone();
        admission.identity = testing::identity_id(&testing::key(8));
        let unsigned = AdmissionCredential::sign(&key, admission);
        assert_eq!(
            unsigned.verify(&node, 2000).unwrap_err().code(),
            "bad_identity_signature"
        );

        // A start signed for one node does not carry over to another.
        let other = testing::key(2);
        let mut admission = cred.admission.clone();
        admission.node = testing::node_id(&other);
        let moved = AdmissionCredential::sign(&other, admission.clone());
        assert_eq!(
            moved.check_self_signed(2000).unwrap_err().code(),
            "bad_identity_signature"
        );

        // Anyone with an identity key and a key of their own signs a credential that checks
        // out against the node key it names itself: only a pinned node key tells it from the
        // node's.
        let start = SessionStart::sign(&testing::key(7), &admission.node, 4, Digest([5; 32]));
        admission.start_sig = start.sig;
        let self_made = AdmissionCredential::sign(&other, admission);
        self_made.check_self_signed(2000).unwrap();
        assert_eq!(
            self_made.verify(&node, 2000).unwrap_err().code(),
            "untrusted_node"
        );
    }
}
