// The protocol as the page speaks it: the bytes each signature covers (the table in the
// oracle's `sign` module), the identity key held by WebCrypto, and the signed JSON messages.
//
// digest = BLAKE3.derive_key(domain, concat(len_u64_le(part) ‖ part)); integers big-endian,
// keys and digests raw 32 bytes, strings UTF-8; ed25519 signs the 32-byte digest.

import { Hasher } from './blake3.js';

export const VERSION = 1;
const utf8 = new TextEncoder();

export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function fromHex(hex) {
  const clean = hex.trim().toLowerCase();
  if (!/^([0-9a-f]{2})*$/.test(clean)) throw new Error('not a hex string');
  return Uint8Array.from(clean.match(/../g) || [], (h) => parseInt(h, 16));
}

function u64le(n) {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
}

function u64be(n) {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), false);
  return b;
}

function u32be(n) {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, false);
  return b;
}

/** The digest of `parts` (Uint8Arrays) under `domain`; each part is length-prefixed. */
export function digest(domain, parts) {
  const h = Hasher.deriveKey(domain);
  for (const part of parts) {
    h.update(u64le(part.length));
    h.update(part);
  }
  return h.finalize();
}

/** What a registration's signature covers. */
export function registerDigest(body) {
  return digest('hco register v1', [
    Uint8Array.of(body.version),
    fromHex(body.id),
    utf8.encode(body.class),
    u64be(body.created_at),
    Uint8Array.of(body.visual_opt_out ? 1 : 0),
    // The proof-of-work nonce is a sixth part only when present.
    ...(body.pow_nonce == null ? [] : [u64be(body.pow_nonce)]),
  ]);
}

function leadingZeroBits(hash) {
  let bits = 0;
  for (const byte of hash) {
    if (byte !== 0) return bits + Math.clz32(byte) - 24;
    bits += 8;
  }
  return bits;
}

/**
 * The registration proof of work (`oracle::register_pow`): the first nonce from 0 such that
 * derive_key("hco register pow v1", id ‖ u64_be(created_at) ‖ u64_be(nonce)) starts with
 * `bits` zero bits. Yields to the page every few thousand hashes.
 */
export async function registerPowNonce(idHex, createdAt, bits) {
  const prefix = new Uint8Array(40);
  prefix.set(fromHex(idHex), 0);
  prefix.set(u64be(createdAt), 32);
  const input = new Uint8Array(48);
  input.set(prefix, 0);
  // The context's key once; each nonce then costs one hash of 48 bytes.
  const keyed = Hasher.deriveKey('hco register pow v1');
  for (let nonce = 0; ; nonce++) {
    input.set(u64be(nonce), 40);
    if (leadingZeroBits(new Hasher(keyed.key, keyed.flags).update(input).finalize()) >= bits) {
      return nonce;
    }
    if (nonce % 4096 === 4095) await new Promise((r) => setTimeout(r, 0));
  }
}

/** What a passkey enrolment's signature covers (`credential` is the JSON text sent). */
export function enrolmentDigest(body) {
  return digest('hco passkey enrolment v1', [
    Uint8Array.of(body.version),
    fromHex(body.id),
    u64be(body.created_at),
    utf8.encode(body.credential),
  ]);
}

/** What a challenge request's signature covers. */
export function requestDigest(body) {
  return digest('hco challenge request v1', [
    Uint8Array.of(body.version),
    fromHex(body.id),
    u64be(body.t),
    u32be(body.j),
  ]);
}

/** The challenge id: what the issuer signs and the response refers to (a touch prompt's
 * beat witness, when it carries one, adds its member and signature). */
export function challengeId(c) {
  const parts = [
    Uint8Array.of(c.version),
    fromHex(c.issuer),
    fromHex(c.id),
    u64be(c.t),
    u32be(c.j),
    utf8.encode(c.family),
    u64be(c.issued_at),
    u64be(c.deadline),
    fromHex(c.prompt_digest),
  ];
  if (c.witness) parts.push(fromHex(c.witness.node), fromHex(c.witness.sig));
  return digest('hco challenge id v1', parts);
}

/** What a response's signature covers. */
export function responseDigest(id, answer) {
  return digest('hco response v1', [id, answer]);
}

// ---- The identity key, kept in IndexedDB as a non-extractable CryptoKey. ----

const ED25519 = { name: 'Ed25519' };
// PKCS#8 wrapping of a 32-byte ed25519 secret (RFC 8410).
const PKCS8_PREFIX = fromHex('302e020100300506032b657004220420');

function store(mode, run) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open('hco', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('keys');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const tx = open.result.transaction('keys', mode);
      const req = run(tx.objectStore('keys'));
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error);
    };
  });
}

/** The stored identity `{id, privateKey}`, or undefined. */
export function loadIdentity() {
  return store('readonly', (s) => s.get('identity'));
}

async function keep(identity) {
  await store('readwrite', (s) => s.put(identity, 'identity'));
  return identity;
}

/** Creates a key in the browser; its secret can never be read out, not even by this page. */
export async function createIdentity() {
  const pair = await crypto.subtle.generateKey(ED25519, false, ['sign', 'verify']);
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  return keep({ id: toHex(raw), privateKey: pair.privateKey });
}

/**
 * Imports a secret key: 64 hex digits, or the JSON of an identity key file. The secret is
 * imported once to learn the public key, then again as non-extractable; only the latter is kept.
 */
export async function importIdentity(text) {
  let hex = text.trim();
  if (hex.startsWith('{')) {
    const file = JSON.parse(hex);
    if (file.kind && file.kind !== 'identity-key') throw new Error(`this is a ${file.kind} file, not an identity key`);
    hex = String(file.secret_key || '');
  }
  const secret = fromHex(hex);
  if (secret.length !== 32) throw new Error('an identity secret key is 32 bytes (64 hex digits)');
  const pkcs8 = new Uint8Array([...PKCS8_PREFIX, ...secret]);
  const probe = await crypto.subtle.importKey('pkcs8', pkcs8, ED25519, true, ['sign']);
  const jwk = await crypto.subtle.exportKey('jwk', probe);
  const pub = Uint8Array.from(atob(jwk.x.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const privateKey = await crypto.subtle.importKey('pkcs8', pkcs8, ED25519, false, ['sign']);
  secret.fill(0);
  pkcs8.fill(0);
  return keep({ id: toHex(pub), privateKey });
}

export function forgetIdentity() {
  return store('readwrite', (s) => s.delete('identity'));
}

async function sign(identity, digestBytes) {
  return toHex(new Uint8Array(await crypto.subtle.sign(ED25519, identity.privateKey, digestBytes)));
}

/** The text an account link's two keys sign (`AccountLink::text`); `account` is canonical
 * (`eip155:<chain>:0x` and 40 lower-case hex digits). */
export function linkText(link) {
  return `HCO account link v1\nnetwork: ${link.network}\nidentity: ${link.identity}\naccount: ${link.account}\nfrom window: ${link.from_window}`;
}

/** A link statement signed by the identity; the account's EIP-191 signature is `accountSig`
 * (`0x` and 130 hex digits, as wallets return it). */
export async function signedLink(identity, link, accountSig) {
  const sig = await sign(identity, digest('hco account link v1', [utf8.encode(linkText(link))]));
  return { link, identity_sig: sig, account_sig: accountSig };
}

/** A signed registration (`SignedRegister`). */
export async function signedRegister(identity, cls, createdAt, visualOptOut = false, powBits = 0) {
  const body = { version: VERSION, id: identity.id, class: cls, created_at: createdAt, visual_opt_out: visualOptOut };
  if (powBits > 0) body.pow_nonce = await registerPowNonce(identity.id, createdAt, powBits);
  return { body, sig: await sign(identity, registerDigest(body)) };
}

/** A signed passkey enrolment (`SignedEnrolment`); `credential` is the registration JSON. */
export async function signedEnrolment(identity, createdAt, credential) {
  const body = { version: VERSION, id: identity.id, created_at: createdAt, credential };
  return { body, sig: await sign(identity, enrolmentDigest(body)) };
}

/** A signed challenge request (`SignedRequest`). */
export async function signedRequest(identity, t, j) {
  const body = { version: VERSION, id: identity.id, t, j };
  return { body, sig: await sign(identity, requestDigest(body)) };
}

/** Checks the issuer's signature over the challenge id (the page refuses a forged envelope). */
export async function issuerSignatureValid(signed) {
  const key = await crypto.subtle.importKey('raw', fromHex(signed.challenge.issuer), ED25519, false, ['verify']);
  return crypto.subtle.verify(ED25519, key, fromHex(signed.sig), challengeId(signed.challenge));
}

/** The body that opens a challenge's live stream: the envelope and the identity's signature
 * over the stream digest of its id. */
export async function signedStreamOpen(identity, signed) {
  const id = challengeId(signed.challenge);
  return { challenge: signed, sig: await sign(identity, digest('hco live stream v1', [id])) };
}

/** A signed response (`Response`) carrying `answer` (a string, sent as UTF-8). */
export async function signedResponse(identity, signed, answer) {
  const bytes = utf8.encode(answer);
  const sig = await sign(identity, responseDigest(challengeId(signed.challenge), bytes));
  return { version: VERSION, challenge: signed, answer: toHex(bytes), sig };
}
