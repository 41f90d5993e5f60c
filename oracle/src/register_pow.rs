//! A small proof of work on registration: a speed bump against junk registrations.
//!
//! The network parameter `registration_pow_bits` (0: off) is the number of leading zero bits
//! the hash
//!
//! ```text
//! BLAKE3.derive_key("hco register pow v1", id (32 B) ‖ created_at (u64 BE) ‖ nonce (u64 BE))
//! ```
//!
//! must have. The nonce travels in the signed [`crate::Register`] body (`pow_nonce`), so the
//! proof binds the identity key and the registration's own time and cannot be moved to another
//! identity. A client entry point, and a member receiving a registration on gossip, refuse a new
//! identity's registration whose `created_at` is older than the previous window
//! ([`MAX_AGE_WINDOWS`]): proofs cannot be stockpiled for longer than that. Reconciliation
//! re-checks the hash, not the age (it replays old registrations).
//!
//! The expected work is `2^bits` hashes. It is a speed bump, not a price on identities: the
//! per-window human step is what an identity really costs.

use crate::{IdentityId, Timestamp};

/// Domain of the proof hash.
pub const DOMAIN: &str = "hco register pow v1";

/// The largest difficulty a network may set (2^32 hashes is hours of one core).
pub const MAX_BITS: u32 = 32;

/// How many windows before the current one a client's registration may be dated when the
/// proof of work is on: `created_at` in the current or the previous window.
pub const MAX_AGE_WINDOWS: u64 = 1;

/// The proof hash of `(id, created_at, nonce)`.
pub fn hash(id: &IdentityId, created_at: Timestamp, nonce: u64) -> [u8; 32] {
    Prover::new(id, created_at).hash(nonce)
}

/// Leading zero bits of a hash, most significant bit of byte 0 first: the count the
/// `proof_of_work` family uses too.
pub use hco_challenges::leading_zero_bits;

/// Whether `nonce` proves `bits` of work for `(id, created_at)`.
pub fn meets(id: &IdentityId, created_at: Timestamp, nonce: u64, bits: u32) -> bool {
    bits == 0 || leading_zero_bits(&hash(id, created_at, nonce)) >= bits
}

/// The first nonce from 0 that proves `bits` of work for `(id, created_at)`. Expected
/// `2^bits` hashes; `bits` above [`MAX_BITS`] is clamped to it.
pub fn solve(id: &IdentityId, created_at: Timestamp, bits: u32) -> u64 {
    let bits = bits.min(MAX_BITS);
    let prover = Prover::new(id, created_at);
    (0..=u64::MAX)
        .find(|&nonce| leading_zero_bits(&prover.hash(nonce)) >= bits)
        .expect("2^64 nonces hold a 32-bit proof")
}

/// The hasher keyed for one `(id, created_at)`, cloned per nonce.
struct Prover {
    prefix: blake3::Hasher,
}

impl Prover {
    fn new(id: &IdentityId, created_at: Timestamp) -> Self {
        let mut prefix = blake3::Hasher::new_derive_key(DOMAIN);
        prefix.update(&id.0);
        prefix.update(&created_at.to_be_bytes());
        Self { prefix }
    }

    fn hash(&self, nonce: u64) -> [u8; 32] {
        let mut h = self.prefix.clone();
        h.update(&nonce.to_be_bytes());
        *h.finalize().as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_zero_bits_counts_from_the_first_byte() {
        let mut h = [0xffu8; 32];
        assert_eq!(leading_zero_bits(&h), 0);
        h[0] = 0x01;
        assert_eq!(leading_zero_bits(&h), 7);
        h[0] = 0;
        h[1] = 0x20;
        assert_eq!(leading_zero_bits(&h), 10);
        assert_eq!(leading_zero_bits(&[0; 32]), 256);
    }

    #[test]
    fn a_solved_nonce_meets_its_difficulty_and_is_bound_to_id_and_time() {
        let id = IdentityId([7; 32]);
        let nonce = solve(&id, 1_000, 10);
        assert!(meets(&id, 1_000, nonce, 10));
        assert!(leading_zero_bits(&hash(&id, 1_000, nonce)) >= 10);
        // The first solution: no smaller nonce works.
        assert!((0..nonce).all(|n| !meets(&id, 1_000, n, 10)));
        // Another identity or time needs its own work (a 10-bit proof carries over by chance
        // with probability 2^-10; these fixed inputs do not).
        let other = IdentityId([8; 32]);
        let moved = [
            meets(&other, 1_000, nonce, 10),
            meets(&id, 1_001, nonce, 10),
        ];
        assert_eq!(moved, [false, false]);
        assert!(meets(&id, 1_000, 12345, 0), "0 bits: off");
    }

    /// Vectors shared with the page's JavaScript (`node/web/protocol.js`), computed there.
    #[test]
    fn vectors_match_the_page() {
        let id = IdentityId([7; 32]);
        assert_eq!(solve(&id, 1_000, 10), 827);
        assert_eq!(solve(&id, 1_000, 18), 330_692);
        let mut body = crate::Register {
            version: 1,
            id,
            class: hco_challenges::Class::Agent,
            created_at: 5,
            visual_opt_out: false,
            pow_nonce: None,
        };
        let hex = |d: crate::Digest| d.0.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(
            hex(crate::SignedRegister::signing_digest(&body)),
            "c1bb6d167db894e455ea84e6cfeb38f85eb477c076fdd022365f8fe390c91083"
        );
        body.pow_nonce = Some(9);
        assert_eq!(
            hex(crate::SignedRegister::signing_digest(&body)),
            "45d7df6354431a2b6d108c0c0675201823d7cf40147b37527c1df8c98f37de4b"
        );
    }

    #[test]
    fn the_hash_is_the_documented_derive_key() {
        let id = IdentityId([3; 32]);
        let mut input = id.0.to_vec();
        input.extend_from_slice(&9u64.to_be_bytes());
        input.extend_from_slice(&5u64.to_be_bytes());
        assert_eq!(hash(&id, 9, 5), blake3::derive_key(DOMAIN, &input));
    }
}
