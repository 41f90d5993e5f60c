// Bytes: hex and u64 decoding, encodings, concatenation and comparison.

import { fail } from './errors.js';

const HEX = /^[0-9a-fA-F]*$/;

/** `len` bytes from a hex string (either case, surrounding blanks ignored) or a Uint8Array. */
export function bytesOf(value, len, what) {
  if (value instanceof Uint8Array) {
    if (value.length !== len) fail('malformed', `${what}: expected ${len} bytes, got ${value.length}`);
    return value;
  }
  if (typeof value !== 'string') fail('malformed', `${what}: expected ${2 * len} hex characters`);
  const s = value.trim();
  if (s.length !== 2 * len || !HEX.test(s)) {
    fail('malformed', `${what}: expected ${2 * len} hex characters`);
  }
  const out = new Uint8Array(len);
  for (let i = 0; i < len; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Lower-case hex of bytes. */
export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A u64 from a JSON number (a safe integer) or a bigint. */
export function u64(value, what) {
  if (typeof value === 'bigint') {
    if (value < 0n || value >= 1n << 64n) fail('malformed', `${what}: not a u64`);
    return value;
  }
  if (!Number.isSafeInteger(value) || value < 0) {
    fail('malformed', `${what}: expected a non-negative integer below 2^53`);
  }
  return BigInt(value);
}

export function u64be(n) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, n, false);
  return out;
}

export function u64le(n) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, n, true);
  return out;
}

export function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function equal(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}
