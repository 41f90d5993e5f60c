// The signed and hashed bytes: domain digests, the summary digest, member leaves and Merkle paths.

import { blake3 } from '@noble/hashes/blake3.js';
import { CLASSES, fail } from './errors.js';
import { bytesOf, concat, equal, u64be, u64le } from './bytes.js';
import { parsePath, parseSummary } from './parse.js';

/** Most siblings a proof may carry (as the Rust `MAX_PROOF_DEPTH`). */
const MAX_PROOF_DEPTH = 64;

/** `BLAKE3.derive_key(domain, concat(u64_le(len(part)) ‖ part))`: the digest every signature of
 * the protocol covers (Rust `sign::digest`). */
export function domainDigest(domain, parts) {
  const framed = concat(parts.flatMap((p) => [u64le(BigInt(p.length)), p]));
  return blake3(framed, { context: new TextEncoder().encode(domain) });
}

/** The 32 bytes each committee member signs for a window summary, under domain
 * `hco window summary v2`: parts version (1 byte), t (u64 big-endian), root (32), count (u64
 * big-endian), links_root (32), params (32). */
export function summaryDigest(summary) {
  const s = parseSummary(summary);
  return domainDigest('hco window summary v2', [
    new Uint8Array([s.version]),
    u64be(s.t),
    s.root,
    u64be(s.count),
    s.linksRoot,
    s.params,
  ]);
}

/** The Merkle leaf of an active identity: BLAKE3(0x00 ‖ id ‖ class byte). */
export function memberLeaf(id, cls) {
  const idBytes = bytesOf(id, 32, 'identity');
  const i = CLASSES.indexOf(cls);
  if (i < 0) fail('malformed', `class: expected "human" or "agent", got ${JSON.stringify(cls)}`);
  return blake3(concat([new Uint8Array([0x00]), idBytes, new Uint8Array([i])]));
}

function nodeHash(left, right) {
  return blake3(concat([new Uint8Array([0x01]), left, right]));
}

/** Whether `leaf` sits at `path.index` under `root` (Rust `MerkleProof::verify`): at each level of
 * `width` nodes, combine with the sibling when `index ^ 1 < width` (on the right when `index` is
 * even), then `index /= 2`, `width = ceil(width / 2)`; every sibling must be used. */
export function verifyPath(path, root, leaf) {
  const p = parsePath(path);
  const rootBytes = bytesOf(root, 32, 'root');
  if (p.index >= p.leafCount || p.siblings.length > MAX_PROOF_DEPTH) return false;
  let hash = bytesOf(leaf, 32, 'leaf');
  let i = p.index;
  let width = p.leafCount;
  let next = 0;
  while (width > 1n) {
    if ((i ^ 1n) < width) {
      if (next >= p.siblings.length) return false;
      const s = p.siblings[next++];
      hash = i % 2n === 0n ? nodeHash(hash, s) : nodeHash(s, hash);
    }
    i /= 2n;
    width = (width + 1n) / 2n;
  }
  return next === p.siblings.length && equal(hash, rootBytes);
}
