//! Window secrets revealed after their window closes (DESIGN §5.6): each issuer signs its
//! `w_t` and commits to a later one, so anyone can regenerate and audit the window's challenges
//! ([`crate::audit`]).

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

use crate::{Digest, NetworkParams, NodeId, Reason, Sig, sign};

/// An issuer's window secret, published after the window closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Reveal {
    /// Message version.
    pub version: u8,
    /// The window.
    pub t: u64,
    /// The issuer.
    pub node: NodeId,
    /// `w_t`.
    pub secret: Digest,
    /// The commitment to the secret of window `t + L` ([`crate::secret::commitment`],
    /// [`crate::secret::commit_lead`]).
    pub next: Digest,
}

/// A reveal signed by its issuer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SignedReveal {
    /// The reveal.
    pub reveal: Reveal,
    /// The issuer's signature.
    pub sig: Sig,
}

impl SignedReveal {
    /// Signs a reveal of `secret` for window `t`, committing to `next` for window `t + L`.
    pub fn new(key: &SigningKey, t: u64, secret: Digest, next: Digest) -> Self {
        let reveal = Reveal {
            version: crate::messages::VERSION,
            t,
            node: NodeId(key.verifying_key().to_bytes()),
            secret,
            next,
        };
        let sig = sign::sign(key, &Self::signing_digest(&reveal));
        Self { reveal, sig }
    }

    fn signing_digest(reveal: &Reveal) -> Digest {
        sign::digest(
            "hco reveal v2",
            &[
                &[reveal.version],
                &reveal.t.to_be_bytes(),
                &reveal.node.0,
                &reveal.secret.0,
                &reveal.next.0,
            ],
        )
    }

    /// Checks the signature and that the node is in the committee.
    pub fn check(&self, params: &NetworkParams) -> Result<(), Reason> {
        crate::messages::check_version(self.reveal.version)?;
        if !params.committee.contains(&self.reveal.node) {
            return Err(Reason::NotInCommittee(self.reveal.node));
        }
        if sign::verify(
            &self.reveal.node.0,
            &Self::signing_digest(&self.reveal),
            &self.sig,
        ) {
            Ok(())
        } else {
            Err(Reason::BadIssuerSignature)
        }
    }
}
