//! Beat witnesses: a public value each member reveals when a beat of a window's global slot
//! begins, which every touch prompt on that beat carries, so that no presence assertion for it
//! can be made before the beat — not even by the member that issues the prompt.
//!
//! An issuer knows its window secret `w_t`, so it knows the challenge it will issue to any
//! identity; a malicious member could otherwise pick `issued_at` itself, compute the challenge id
//! (the WebAuthn challenge bytes) ahead, and have its own sybils' assertions made at leisure,
//! away from the beats where all of one person's prompts compete for the same seconds. A
//! [`SlotWitness`] is a member's signature over `(node, t, at)`, `at` the start of a beat of
//! `t`'s slot ([`crate::NetworkParams::beat`]): no one but that member can produce it, and an
//! honest member publishes it only once `at` has come (by its clock). A touch prompt's envelope
//! names the witness of **its own beat** by **another** member (the only member's own when the
//! committee has one), and its id covers the witness, so the assertion cannot exist before
//! that member published. Receivers check the witness ([`crate::Reason::BadWitness`]) and
//! refuse a prompt acceptance that reaches them later than the prompt's deadline plus one
//! relay round ([`crate::NetworkParams::relay_round_ms`], the delivery bound the relay rule
//! already assumes, clock differences included: [`crate::Reason::LateAcceptance`]). So the
//! touch for a prompt falls between its beat's start and its deadline plus a round, whoever
//! issued it: a span of `J + r + Δ` (prod: 0.5 + 6 + 5 s), not the slot's 100 s.
//!
//! What it assumes: the witness's member is honest, and honest members' deliveries (and clock
//! differences) stay within a relay round. A coalition names a colluder's witness, published
//! whenever it likes, so the prompts it issues need a touch only before their deadline plus a
//! round; a lone member cannot. Only `global` slots carry witnesses: a `staggered` slot is each
//! identity's own, and there is no one moment to reveal at.

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

use crate::{Digest, NodeId, Reason, Sig, Timestamp, sign};

/// A member's witness that beat `at` of window `t`'s slot has begun.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SlotWitness {
    /// The member.
    pub node: NodeId,
    /// The window.
    pub t: u64,
    /// The moment witnessed: the start of a beat of `t`'s global slot.
    pub at: Timestamp,
    /// The member's signature over [`SlotWitness::signing_digest`].
    pub sig: Sig,
}

impl SlotWitness {
    /// `node`'s witness of moment `at` of window `t` (deterministic: the same key, window and
    /// moment give the same bytes).
    pub fn new(key: &SigningKey, t: u64, at: Timestamp) -> Self {
        let node = NodeId(key.verifying_key().to_bytes());
        Self {
            node,
            t,
            at,
            sig: sign::sign(key, &Self::signing_digest(&node, t, at)),
        }
    }

    /// Domain `hco beat witness v2`, parts node, t u64, at u64.
    pub fn signing_digest(node: &NodeId, t: u64, at: Timestamp) -> Digest {
        sign::digest(
            "hco beat witness v2",
            &[&node.0, &t.to_be_bytes(), &at.to_be_bytes()],
        )
    }

    /// Checks the member's signature.
    pub fn check_signature(&self) -> Result<(), Reason> {
        if sign::verify(
            &self.node.0,
            &Self::signing_digest(&self.node, self.t, self.at),
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
    fn a_witness_verifies_only_for_its_member_window_and_moment() {
        let w = SlotWitness::new(&key(1), 7, 1_000);
        assert_eq!(w, SlotWitness::new(&key(1), 7, 1_000));
        w.check_signature().unwrap();
        let other_window = SlotWitness { t: 8, ..w };
        assert_eq!(
            other_window.check_signature().unwrap_err().code(),
            "bad_witness"
        );
        let other_beat = SlotWitness { at: 7_500, ..w };
        assert!(other_beat.check_signature().is_err());
        let other_member = SlotWitness {
            node: SlotWitness::new(&key(2), 7, 1_000).node,
            ..w
        };
        assert!(other_member.check_signature().is_err());
    }
}
