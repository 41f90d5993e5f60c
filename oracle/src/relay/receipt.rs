//! A member's receipt: its signature saying it heard a message in time to count it, and the
//! check of a message's receipts.

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

use crate::{Digest, NetworkParams, NodeId, Reason, Sig, sign};

/// A member's signature saying it heard a message (a reveal, or acceptances under a seal) in
/// time to count it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The member that relays.
    pub node: NodeId,
    /// Its signature over the message's receipt digest.
    pub sig: Sig,
}

impl Receipt {
    /// `key`'s receipt for the message whose receipt digest is `subject`.
    pub fn new(key: &SigningKey, subject: &Digest) -> Self {
        Self {
            node: NodeId(key.verifying_key().to_bytes()),
            sig: sign::sign(key, subject),
        }
    }

    fn verifies(&self, subject: &Digest) -> bool {
        sign::verify(&self.node.0, subject, &self.sig)
    }
}

/// Checks receipts for one message signed first by `author` (none for a client's message):
/// each from a committee member other than the author, no member twice, each signature good
/// over `subject`. Returns the distinct members that signed, the author included.
pub(super) fn check_receipts<'a>(
    params: &NetworkParams,
    author: Option<&NodeId>,
    subject: &Digest,
    receipts: impl IntoIterator<Item = &'a Receipt>,
) -> Result<usize, Reason> {
    let mut seen: Vec<NodeId> = author.into_iter().copied().collect();
    for r in receipts {
        if !params.committee.contains(&r.node) {
            return Err(Reason::BadReceipt(format!("{} is not a member", r.node)));
        }
        if seen.contains(&r.node) {
            return Err(Reason::BadReceipt(format!("{} signs twice", r.node)));
        }
        if !r.verifies(subject) {
            return Err(Reason::BadReceipt(format!("{}'s signature", r.node)));
        }
        seen.push(r.node);
    }
    Ok(seen.len())
}
