//! Slot witnesses: a public value each member reveals when a window's global slot opens, which
//! every touch prompt of that slot carries, so that no presence assertion can be made before
//! the slot opens — not even by the member that issues the prompt.
//!
//! An issuer knows its window secret `w_t`, so it knows the challenge it will issue to any
//! identity; a malicious member could otherwise pick `issued_at` itself, compute the challenge id
//! (the WebAuthn challenge bytes) hours ahead, and have its own sybils' assertions made at
//! leisure, outside any slot. A [`SlotWitness`] is a member's signature over `(node, t)`: no one
//! but that member can produce it, and an honest member publishes it only once `t`'s global slot
//! has opened (by its clock). A touch prompt's envelope names one witness of **another** member
//! (the only member's own when the committee has one), and its id covers the witness, so the
//! assertion cannot exist before that member published. Receivers check the witness
//! ([`crate::Reason::BadWitness`]) and refuse prompt acceptances that reach them later than the
//! slot's end plus the family's deadline, the allowed clock skew and [`GOSSIP_ALLOWANCE_MS`]
//! ([`crate::Reason::LateAcceptance`]), so the touch itself falls inside that span.
//!
//! What it assumes: the witness's member is honest. A coalition names a colluder's witness,
//! published whenever it likes, so it passes the tries it issues without a touch in the slot,
//! as before; a lone member cannot. Only `global` slots carry witnesses: a `staggered` slot is
//! each identity's own, and there is no one moment to reveal at.

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

use crate::{Digest, NodeId, Reason, Sig, sign};

/// How late, beyond the slot's end, the family's deadline and the allowed clock skew, a prompt
/// acceptance may reach another member: gossip's delay between members. Later ones are
/// refused there (not blamed on whoever relayed them).
pub const GOSSIP_ALLOWANCE_MS: u64 = 10_000;

/// A member's witness of window `t`'s slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SlotWitness {
    /// The member.
    pub node: NodeId,
    /// The window.
    pub t: u64,
    /// The member's signature over [`SlotWitness::signing_digest`].
    pub sig: Sig,
}

impl SlotWitness {
    /// `node`'s witness of window `t` (deterministic: the same key and window give the same
    /// bytes).
    pub fn new(key: &SigningKey, t: u64) -> Self {
        let node = NodeId(key.verifying_key().to_bytes());
        Self {
            node,
            t,
            sig: sign::sign(key, &Self::signing_digest(&node, t)),
        }
    }

    /// Domain `hco slot witness v1`, parts node, t u64.
    pub fn signing_digest(node: &NodeId, t: u64) -> Digest {
        sign::digest("hco slot witness v1", &[&node.0, &t.to_be_bytes()])
    }

    /// Checks the member's signature.
    pub fn check_signature(&self) -> Result<(), Reason> {
        if sign::verify(
            &self.node.0,
            &Self::signing_digest(&self.node, self.t),
            &self.sig,
        ) {
            Ok(())
        } else {
            Err(Reason::BadWitness(
                "the witness's signature does not verify".into(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::key;

    #[test]
    fn a_witness_verifies_only_for_its_member_and_window() {
        let w = SlotWitness::new(&key(1), 7);
        assert_eq!(w, SlotWitness::new(&key(1), 7));
        w.check_signature().unwrap();
        let other_window = SlotWitness { t: 8, ..w };
        assert_eq!(
            other_window.check_signature().unwrap_err().code(),
            "bad_witness"
        );
        let other_member = SlotWitness {
            node: SlotWitness::new(&key(2), 7).node,
            ..w
        };
        assert!(other_member.check_signature().is_err());
    }
}
