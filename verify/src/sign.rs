//! Signing and verification. Every signature covers a 32-byte BLAKE3 digest derived under a
//! domain string, so a signature made for one message type is never valid for another.
//!
//! The signed bytes are spelled out field by field (no serialisation format), so a client in
//! any language can rebuild them:
//! `digest = BLAKE3.derive_key(domain, concat(len_u64_le(part) ‖ part for part in parts))`,
//! integers big-endian, keys and digests raw 32 bytes, strings UTF-8. The one message a light
//! verifier checks is the window summary ([`WindowSummary::signing_digest`]); the oracle's
//! `sign` module lists every other domain.
//!
//! [`WindowSummary::signing_digest`]: crate::WindowSummary::signing_digest

use alloc::vec::Vec;

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

use crate::{Digest, Sig};

/// The digest of `parts` under `domain`; each part is length-prefixed.
pub fn digest(domain: &str, parts: &[&[u8]]) -> Digest {
    let mut hasher = blake3::Hasher::new_derive_key(domain);
    for part in parts {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    Digest(*hasher.finalize().as_bytes())
}

/// Signs a digest.
pub fn sign(key: &SigningKey, message: &Digest) -> Sig {
    Sig(key.sign(&message.0).to_bytes())
}

/// Parses a public key, refusing invalid points and weak (small-order) keys.
pub fn public_key(bytes: &[u8; 32]) -> Option<VerifyingKey> {
    VerifyingKey::from_bytes(bytes)
        .ok()
        .filter(|k| !k.is_weak())
}

/// Verifies one signature (strict: non-canonical encodings and small-order keys or nonces are
/// refused, so no separate weak-key check is needed).
pub fn verify(signer: &[u8; 32], message: &Digest, sig: &Sig) -> bool {
    VerifyingKey::from_bytes(signer).is_ok_and(|key| {
        key.verify_strict(&message.0, &Signature::from_bytes(&sig.0))
            .is_ok()
    })
}

/// Verifies many signatures: with the `batch` feature, one batch verification when all are
/// valid (the common case, about twice as fast per signature), falling back to one-by-one to
/// find the bad ones; without it, one by one.
///
/// The batch equation does not look for small-order components, so callers pass keys that were
/// checked once already: identity keys are refused at registration if weak ([`public_key`]),
/// committee keys come from configuration. The one-by-one fallback is strict.
pub fn verify_many(items: &[(&[u8; 32], &Digest, &Sig)]) -> Vec<bool> {
    let keys: Vec<Option<VerifyingKey>> = items
        .iter()
        .map(|(k, _, _)| VerifyingKey::from_bytes(k).ok())
        .collect();
    let parsed: Vec<_> = items
        .iter()
        .zip(&keys)
        .map(|((_, m, s), k)| (k.as_ref(), *m, *s))
        .collect();
    verify_many_parsed(&parsed)
}

/// [`verify_many`] over keys already parsed (`None`: not a valid point, so never valid). Items
/// without a key are refused without weighing on the batch: only a bad signature sends the
/// batch one by one.
pub fn verify_many_parsed(items: &[(Option<&VerifyingKey>, &Digest, &Sig)]) -> Vec<bool> {
    if all_valid_in_one_batch(items) {
        return items.iter().map(|(k, _, _)| k.is_some()).collect();
    }
    items
        .iter()
        .map(|(k, m, s)| {
            k.is_some_and(|key| {
                key.verify_strict(&m.0, &Signature::from_bytes(&s.0))
                    .is_ok()
            })
        })
        .collect()
}

/// Whether every keyed item's signature is valid, by one batch verification (from two
/// signatures on, a batch costs less than checking them one by one); `false` sends the caller
/// one by one.
#[cfg(feature = "batch")]
fn all_valid_in_one_batch(items: &[(Option<&VerifyingKey>, &Digest, &Sig)]) -> bool {
    let keyed: Vec<(&VerifyingKey, &Digest, &Sig)> = items
        .iter()
        .filter_map(|(k, m, s)| Some(((*k)?, *m, *s)))
        .collect();
    if keyed.len() < 2 {
        return false;
    }
    let keys: Vec<VerifyingKey> = keyed.iter().map(|(k, _, _)| **k).collect();
    let messages: Vec<&[u8]> = keyed.iter().map(|(_, m, _)| &m.0[..]).collect();
    let sigs: Vec<Signature> = keyed
        .iter()
        .map(|(_, _, s)| Signature::from_bytes(&s.0))
        .collect();
    ed25519_dalek::verify_batch(&messages, &sigs, &keys).is_ok()
}

/// Without the `batch` feature every signature is checked on its own.
#[cfg(not(feature = "batch"))]
fn all_valid_in_one_batch(_items: &[(Option<&VerifyingKey>, &Digest, &Sig)]) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn batch_agrees_with_single_verification() {
        let keys: Vec<SigningKey> = (0..8u8)
            .map(|i| SigningKey::from_bytes(&[i + 1; 32]))
            .collect();
        let msgs: Vec<Digest> = (0..8u8).map(|i| digest("test", &[&[i]])).collect();
        let mut sigs: Vec<Sig> = keys.iter().zip(&msgs).map(|(k, m)| sign(k, m)).collect();
        let pubs: Vec<[u8; 32]> = keys.iter().map(|k| k.verifying_key().to_bytes()).collect();
        let items = |sigs: &[Sig]| -> Vec<bool> {
            let v: Vec<_> = pubs
                .iter()
                .zip(&msgs)
                .zip(sigs)
                .map(|((k, m), s)| (k, m, s))
                .collect();
            verify_many(&v)
        };
        assert!(items(&sigs).iter().all(|ok| *ok));
        // An item without a valid key is refused; the others still pass (in one batch).
        let parsed: Vec<_> = pubs
            .iter()
            .map(|k| VerifyingKey::from_bytes(k).ok())
            .collect();
        let with_keys = |missing: usize| -> Vec<bool> {
            let v: Vec<_> = parsed
                .iter()
                .enumerate()
                .zip(&msgs)
                .zip(&sigs)
                .map(|(((i, k), m), s)| (k.as_ref().filter(|_| i != missing), m, s))
                .collect();
            verify_many_parsed(&v)
        };
        let result = with_keys(3);
        assert_eq!(result.iter().filter(|ok| !**ok).count(), 1);
        assert!(!result[3]);
        sigs[5].0[0] ^= 1;
        let result = items(&sigs);
        assert_eq!(result.iter().filter(|ok| !**ok).count(), 1);
        assert!(!result[5]);
        // The smallest batches (two and three signatures) judge each as a single check does.
        for n in [2, 3] {
            let v: Vec<_> = pubs[4..4 + n]
                .iter()
                .zip(&msgs[4..4 + n])
                .zip(&sigs[4..4 + n])
                .map(|((k, m), s)| (k, m, s))
                .collect();
            let singles: Vec<bool> = v.iter().map(|(k, m, s)| verify(k, m, s)).collect();
            assert_eq!(verify_many(&v), singles);
            assert_eq!(singles.iter().filter(|ok| !**ok).count(), 1);
        }
    }

    #[test]
    fn domains_separate_digests() {
        assert_ne!(digest("a", &[b"x"]), digest("b", &[b"x"]));
        assert_ne!(digest("a", &[b"xy", b""]), digest("a", &[b"x", b"y"]));
    }

    #[test]
    fn weak_and_invalid_keys_never_verify() {
        let m = digest("t", &[]);
        assert!(!verify(&[0; 32], &m, &Sig([0; 64])));
        let mut identity_point = [0u8; 32];
        identity_point[0] = 1; // the neutral element: small order
        assert!(public_key(&identity_point).is_none());
    }
}
