// ed25519: the strict signature check committee members' and identities' signatures pass.

import { ed25519 } from '@noble/curves/ed25519.js';

/** Strict ed25519 as Rust's `verify_strict`: canonical encodings of key and nonce, s < L, and
 * small-order keys or nonces refused. The nonce must also be torsion-free: noble checks the
 * cofactored equation, Rust the cofactorless one, and for a torsion-free key and nonce the two
 * agree (a nonce with a small-order part passes only the cofactored check). */
export function verifySignature(node, digest, sig) {
  try {
    const R = ed25519.Point.fromBytes(sig.subarray(0, 32), false);
    if (R.isSmallOrder() || !R.isTorsionFree()) return false;
  } catch {
    return false;
  }
  try {
    return ed25519.verify(sig, digest, node, { zip215: false });
  } catch {
    return false;
  }
}
