// @hco/verify: checks Human Challenge Oracle window certificates and membership proofs, the way
// the Rust light verifier (hco_oracle::LightVerifier) does, with the same error codes.
//
// A certificate is a window summary {version, t, root, count, links_root, params} signed by a
// quorum of the committee (ed25519 over a BLAKE3 derive-key digest of the summary); a membership
// proof is a BLAKE3 Merkle path from the leaf (identity, class) to the certified root, a link
// proof one from the leaf (account, identity) to the certified links_root. An account link is a
// statement signed by the identity (ed25519) and by the account (EIP-191 personal_sign,
// secp256k1). The byte layouts are in the integrator guide (docs/integrator.md) and below, next
// to the code that builds them.

import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { blake3 } from '@noble/hashes/blake3.js';
import { keccak_256 } from '@noble/hashes/sha3.js';

/** Every code a VerifyError carries. The first nine are the Rust light verifier's
 * (`CertError::code`); `wrong_window` is the protocol's code for a message of another window
 * (the certificate is not for the window asked about); `not_active` is the node's answer when it
 * has no certified proof; `malformed` is input that does not parse (Rust refuses it while
 * deserializing); `fetch_failed` is a node that could not be reached or answered with an error.
 * The last seven are account links': the account id's (`malformed_account`,
 * `unsupported_namespace`, `bad_checksum`: Rust's `AccountError::code`), a signed link's
 * (`bad_identity_signature`, `bad_account_signature`, `wrong_network`: `LinkError::code`) and
 * `link_not_in_window` (`CertError::code`, as the account codes). */
export const CODES = Object.freeze([
  'bad_quorum',
  'not_in_committee',
  'duplicate_signer',
  'bad_signature',
  'below_quorum',
  'params_mismatch',
  'count_mismatch',
  'not_included',
  'wrong_class',
  'wrong_window',
  'not_active',
  'malformed',
  'fetch_failed',
  'malformed_account',
  'unsupported_namespace',
  'bad_checksum',
  'bad_identity_signature',
  'bad_account_signature',
  'wrong_network',
  'link_not_in_window',
  'not_linked',
]);

/** The classes an identity is certified as, in leaf-byte order (0x00 human, 0x01 agent). */
export const CLASSES = Object.freeze(['human', 'agent']);

/** Most siblings a proof may carry (as the Rust `MAX_PROOF_DEPTH`). */
const MAX_PROOF_DEPTH = 64;

/** Why a certificate or proof does not verify: `code` is one of CODES, stable. */
export class VerifyError extends Error {
  constructor(code, message, details = {}) {
    super(message);
    this.name = 'VerifyError';
    this.code = code;
    this.details = details;
  }
}

const fail = (code, message, details) => {
  throw new VerifyError(code, message, details);
};

// ---- bytes ----------------------------------------------------------------------------------

const HEX = /^[0-9a-fA-F]*$/;

/** `len` bytes from a hex string (either case, surrounding blanks ignored) or a Uint8Array. */
function bytesOf(value, len, what) {
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
function u64(value, what) {
  if (typeof value === 'bigint') {
    if (value < 0n || value >= 1n << 64n) fail('malformed', `${what}: not a u64`);
    return value;
  }
  if (!Number.isSafeInteger(value) || value < 0) {
    fail('malformed', `${what}: expected a non-negative integer below 2^53`);
  }
  return BigInt(value);
}

function u64be(n) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, n, false);
  return out;
}

function u64le(n) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, n, true);
  return out;
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function equal(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

// ---- the signed and hashed bytes ------------------------------------------------------------

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

// ---- parsing the served JSON ----------------------------------------------------------------

function object(value, what) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    fail('malformed', `${what}: expected an object`);
  }
  return value;
}

function parseSummary(summary) {
  const s = object(summary, 'summary');
  if (!Number.isInteger(s.version) || s.version < 0 || s.version > 255) {
    fail('malformed', 'summary.version: expected a byte');
  }
  return {
    version: s.version,
    t: u64(s.t, 'summary.t'),
    root: bytesOf(s.root, 32, 'summary.root'),
    count: u64(s.count, 'summary.count'),
    linksRoot: bytesOf(s.links_root, 32, 'summary.links_root'),
    params: bytesOf(s.params, 32, 'summary.params'),
  };
}

function parseCertificate(certificate) {
  const c = object(certificate, 'certificate');
  if (!Array.isArray(c.signatures)) fail('malformed', 'certificate.signatures: expected an array');
  return {
    summary: parseSummary(c.summary),
    signatures: c.signatures.map((pair, i) => {
      if (!Array.isArray(pair) || pair.length !== 2) {
        fail('malformed', `certificate.signatures[${i}]: expected [node, sig]`);
      }
      return [bytesOf(pair[0], 32, `signatures[${i}] node`), bytesOf(pair[1], 64, `signatures[${i}] sig`)];
    }),
  };
}

function parsePath(path) {
  const p = object(path, 'path');
  if (!Array.isArray(p.siblings)) fail('malformed', 'path.siblings: expected an array');
  return {
    index: u64(p.index, 'path.index'),
    leafCount: u64(p.leaf_count, 'path.leaf_count'),
    siblings: p.siblings.map((s, i) => bytesOf(s, 32, `path.siblings[${i}]`)),
  };
}

function parseProof(proof) {
  const p = object(proof, 'proof');
  if (!CLASSES.includes(p.class)) {
    fail('malformed', `proof.class: expected "human" or "agent", got ${JSON.stringify(p.class)}`);
  }
  return { id: bytesOf(p.id, 32, 'proof.id'), class: p.class, path: parsePath(p.path) };
}

// ---- ed25519 --------------------------------------------------------------------------------

/** Strict ed25519 as Rust's `verify_strict`: canonical encodings of key and nonce, s < L, and
 * small-order keys or nonces refused. The nonce must also be torsion-free: noble checks the
 * cofactored equation, Rust the cofactorless one, and for a torsion-free key and nonce the two
 * agree (a nonce with a small-order part passes only the cofactored check). */
function verifySignature(node, digest, sig) {
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

// ---- account links --------------------------------------------------------------------------

const NAMESPACE = /^[-a-z0-9]{3,8}$/;
const REFERENCE = /^[-_a-zA-Z0-9]{1,32}$/;
const ADDRESS = /^[-.%a-zA-Z0-9]{1,128}$/;
const utf8 = (s) => new TextEncoder().encode(s);

/** The EIP-55 spelling of 40 hex digits: a letter is upper case where the matching nibble of
 * keccak256(lower-case digits) is 8 or more. */
function eip55(hex) {
  const lower = hex.toLowerCase();
  const hash = keccak_256(utf8(lower));
  let out = '';
  for (let i = 0; i < 40; i++) {
    const nibble = (hash[i >> 1] >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    out += nibble >= 8 ? lower[i].toUpperCase() : lower[i];
  }
  return out;
}

/** The EIP-55 checksummed address (`0x…`) of 20 bytes or 40 hex digits. */
export function checksumAddress(address) {
  return `0x${eip55(toHex(bytesOf(typeof address === 'string' ? address.replace(/^0x/, '') : address, 20, 'address')))}`;
}

/**
 * Parses a CAIP-10 account id (Rust `AccountId::parse`): the CAIP-2/CAIP-10 grammar
 * (`malformed_account`), the `eip155` namespace only (`unsupported_namespace`), a decimal chain
 * id without leading zeros and `0x` + 40 hex digits (`malformed_account`), a mixed-case address
 * passing EIP-55 (`bad_checksum`). Returns `{canonical, chainId, namespace, address}` with the
 * address in lower case (as in `canonical`, the form signed and hashed).
 */
export function parseAccount(account) {
  if (typeof account !== 'string') fail('malformed_account', 'account: expected a CAIP-10 string');
  const first = account.indexOf(':');
  const second = first < 0 ? -1 : account.indexOf(':', first + 1);
  if (second < 0) fail('malformed_account', `${JSON.stringify(account)} is not a CAIP-10 account id`);
  const namespace = account.slice(0, first);
  const reference = account.slice(first + 1, second);
  const address = account.slice(second + 1);
  if (!NAMESPACE.test(namespace) || !REFERENCE.test(reference) || !ADDRESS.test(address)) {
    fail('malformed_account', `${JSON.stringify(account)} is not a CAIP-10 account id`);
  }
  if (namespace !== 'eip155') {
    fail('unsupported_namespace', `the namespace ${namespace} is not supported (only eip155)`, { namespace });
  }
  if (!/^[1-9][0-9]*$/.test(reference)) {
    fail('malformed_account', `eip155 chain id ${JSON.stringify(reference)}: expected a decimal number without leading zeros`);
  }
  const m = /^0x([0-9a-fA-F]{40})$/.exec(address);
  if (!m) fail('malformed_account', `eip155 address ${JSON.stringify(address)}: expected 0x and 40 hex digits`);
  const hex = m[1];
  if (/[a-f]/.test(hex) && /[A-F]/.test(hex) && eip55(hex) !== hex) {
    fail('bad_checksum', `the mixed-case address ${address} fails its EIP-55 checksum`, { address });
  }
  const lower = `0x${hex.toLowerCase()}`;
  return { canonical: `eip155:${reference}:${lower}`, chainId: `eip155:${reference}`, namespace, address: lower };
}

/** The text an account link's two keys sign (Rust `AccountLink::text`): five lines joined with
 * `\n`, no trailing newline; `link` is `{network, identity, account, from_window}`. */
export function linkText(link) {
  const l = parseLink(link);
  return linkTextOf(l);
}

function linkTextOf(l) {
  return [
    'HCO account link v1',
    `network: ${toHex(l.network)}`,
    `identity: ${toHex(l.identity)}`,
    `account: ${l.account}`,
    `from window: ${l.fromWindow}`,
  ].join('\n');
}

function parseLink(link) {
  const l = object(link, 'link');
  return {
    network: bytesOf(l.network, 32, 'link.network'),
    identity: bytesOf(l.identity, 32, 'link.identity'),
    account: parseAccount(l.account).canonical,
    fromWindow: u64(l.from_window, 'link.from_window'),
  };
}

/** The EIP-191 `personal_sign` hash: keccak256("\x19Ethereum Signed Message:\n" ‖ decimal byte
 * length ‖ message); `message` a string (UTF-8) or bytes. */
export function personalMessageHash(message) {
  const bytes = typeof message === 'string' ? utf8(message) : message;
  return keccak_256(concat([utf8(`\x19Ethereum Signed Message:\n${bytes.length}`), bytes]));
}

const HALF_ORDER = secp256k1.Point.CURVE().n >> 1n;

/** The address (20 bytes) that made a 65-byte `personal_sign` signature `r ‖ s ‖ v` (v 27/28 or
 * 0/1) over `message`, or null: v out of range, r or s zero or not below the group order, s in
 * the upper half (malleable), no point to recover (Rust `recover_personal_sign`). */
export function recoverPersonalSign(message, signature) {
  const sig = bytesOf(signature, 65, 'account signature');
  const v = sig[64];
  const recovery = v === 27 || v === 0 ? 0 : v === 28 || v === 1 ? 1 : -1;
  if (recovery < 0) return null;
  try {
    const parsed = secp256k1.Signature.fromBytes(sig.subarray(0, 64), 'compact');
    if (parsed.s > HALF_ORDER) return null;
    const point = parsed.addRecoveryBit(recovery).recoverPublicKey(personalMessageHash(message));
    return keccak_256(point.toBytes(false).subarray(1)).subarray(12);
  } catch {
    return null;
  }
}

/** The Merkle leaf of a link: BLAKE3(0x00 ‖ "hco link leaf v1" ‖ 0x00 ‖ canonical account ‖ 0x00 ‖
 * identity) (Rust `link_leaf`). */
export function linkLeaf(account, identity) {
  const canonical = parseAccount(account).canonical;
  const id = bytesOf(identity, 32, 'identity');
  const zero = new Uint8Array([0x00]);
  return blake3(concat([zero, utf8('hco link leaf v1'), zero, utf8(canonical), zero, id]));
}

/**
 * Checks a signed link `{link: {network, identity, account, from_window}, identity_sig,
 * account_sig}` (Rust `SignedLink::verify`): the account id (`malformed_account`,
 * `unsupported_namespace`, `bad_checksum`), the identity's strict ed25519 signature over
 * `domainDigest("hco account link v1", [text])` (`bad_identity_signature`), then the account's
 * EIP-191 signature over the text, recovered to the account's address
 * (`bad_account_signature`). With `options.network` (the pinned parameter digest) the link must
 * name it (`wrong_network`, checked first). `account_sig` may carry the wallets' `0x` prefix.
 * Returns `{network, identity, account, from_window, text}`, canonical.
 */
export function verifyLink(signedLink, options = {}) {
  const s = object(signedLink, 'signed link');
  const l = parseLink(s.link);
  const identitySig = bytesOf(s.identity_sig, 64, 'identity_sig');
  const accountSig = bytesOf(typeof s.account_sig === 'string' ? s.account_sig.trim().replace(/^0x/, '') : s.account_sig, 65, 'account_sig');
  if (options.network !== undefined && options.network !== null) {
    if (!equal(bytesOf(options.network, 32, 'network'), l.network)) {
      fail('wrong_network', 'the link was made for another network');
    }
  }
  const text = linkTextOf(l);
  const digest = domainDigest('hco account link v1', [utf8(text)]);
  if (!verifySignature(l.identity, digest, identitySig)) {
    fail('bad_identity_signature', "the identity's signature over the link does not verify");
  }
  const address = recoverPersonalSign(text, accountSig);
  const expected = bytesOf(l.account.slice(l.account.lastIndexOf(':') + 3), 20, 'address');
  if (!address || !equal(address, expected)) {
    fail('bad_account_signature', "the account's signature over the link does not recover to the account's address");
  }
  return {
    network: toHex(l.network),
    identity: toHex(l.identity),
    account: l.account,
    from_window: Number(l.fromWindow),
    text,
  };
}

// ---- the verifier ---------------------------------------------------------------------------

/** The membership checks after the certificate's (as Rust's `verify_membership`). */
function included(summary, certificate, id, proof) {
  const p = parseProof(proof);
  const idBytes = bytesOf(id, 32, 'identity');
  if (p.path.leafCount !== BigInt(summary.count)) {
    fail(
      'count_mismatch',
      `the proof is for a set of ${p.path.leafCount} identities, the certificate has ${summary.count}`,
      { proof: Number(p.path.leafCount), certified: summary.count },
    );
  }
  const leaf = memberLeaf(idBytes, p.class);
  if (!equal(p.id, idBytes) || !verifyPath(proof.path, certificate.summary.root, leaf)) {
    fail('not_included', `the proof does not show ${toHex(idBytes)} in the active set`, { id: toHex(idBytes) });
  }
  return p.class;
}

function ofClass(id, certified, cls) {
  if (certified !== cls) {
    const hex = toHex(bytesOf(id, 32, 'identity'));
    fail('wrong_class', `${hex} was active as ${certified}, not as ${cls}`, { id: hex, certified, expected: cls });
  }
}

/**
 * What a consumer trusts: the committee's ed25519 keys, the quorum, and optionally the
 * parameter digest. As the Rust `LightVerifier::new`: `bad_quorum` unless the committee lists
 * distinct keys and the quorum is a strict majority of them (`n/2 < quorum <= n`). The quorum is
 * the number `GET /v1/params` serves (`params.quorum`), never a config file's `0`.
 */
export class LightVerifier {
  #committee;
  #quorum;
  #params;

  constructor({ committee, quorum, params } = {}) {
    if (!Array.isArray(committee)) fail('malformed', 'committee: expected an array of keys');
    const keys = committee.map((k, i) => bytesOf(k, 32, `committee[${i}]`));
    const distinct = new Set(keys.map(toHex));
    const n = keys.length;
    if (!Number.isSafeInteger(quorum) || quorum < 0 || quorum > 0xffffffff) {
      fail('bad_quorum', `quorum ${quorum} is not a u32`, { quorum, committee: distinct.size });
    }
    if (distinct.size !== n || !(Math.floor(n / 2) < quorum && quorum <= n)) {
      fail(
        'bad_quorum',
        `quorum ${quorum} is not a strict majority of a committee of ${distinct.size} distinct members`,
        { quorum, committee: distinct.size },
      );
    }
    this.#committee = new Set(distinct);
    this.#quorum = quorum;
    this.#params = params === undefined || params === null ? null : bytesOf(params, 32, 'params');
  }

  /** The quorum this verifier asks for. */
  get quorum() {
    return this.#quorum;
  }

  /**
   * Checks the certificate: (the window, when `options.window` is given), the parameter digest
   * when the verifier pins one, distinct committee signers, valid signatures, at least a quorum.
   * Returns the summary as `{version, t, root, count, links_root, params}` (t and count as numbers, byte
   * strings as lower-case hex).
   */
  verifyCertificate(certificate, options = {}) {
    const cert = parseCertificate(certificate);
    const { summary } = cert;
    if (options.window !== undefined && u64(options.window, 'window') !== summary.t) {
      fail('wrong_window', `the certificate is for window ${summary.t}, not ${options.window}`, {
        certified: Number(summary.t),
        expected: Number(options.window),
      });
    }
    if (this.#params && !equal(this.#params, summary.params)) {
      fail('params_mismatch', 'the certificate was made under other network parameters');
    }
    const seen = new Set();
    for (const [node] of cert.signatures) {
      const hex = toHex(node);
      if (!this.#committee.has(hex)) fail('not_in_committee', `signer ${hex} is not in the committee`, { signer: hex });
      if (seen.has(hex)) fail('duplicate_signer', `signer ${hex} appears twice`, { signer: hex });
      seen.add(hex);
    }
    const digest = summaryDigest(certificate.summary);
    for (const [node, sig] of cert.signatures) {
      if (!verifySignature(node, digest, sig)) {
        fail('bad_signature', `the signature of ${toHex(node)} does not verify`, { signer: toHex(node) });
      }
    }
    if (cert.signatures.length < this.#quorum) {
      fail('below_quorum', `${cert.signatures.length} signers, quorum is ${this.#quorum}`, {
        got: cert.signatures.length,
        quorum: this.#quorum,
      });
    }
    return {
      version: summary.version,
      t: Number(summary.t),
      root: toHex(summary.root),
      count: Number(summary.count),
      links_root: toHex(summary.linksRoot),
      params: toHex(summary.params),
    };
  }

  /**
   * Checks the certificate and that `proof` shows `id` active in its window; returns the class
   * it was active as (`"human"` or `"agent"`, committed to in the certified leaf). Never treat
   * an agent's success as "a person": ask `verifyMemberOfClass(…, "human", …)`.
   */
  verifyMembership(certificate, id, proof, options = {}) {
    const summary = this.verifyCertificate(certificate, options);
    return included(summary, certificate, id, proof);
  }

  /** Checks that `id` was active in the certificate's window *as* `cls` (`"human"` or
   * `"agent"`): `wrong_class` when it was active as the other class. */
  verifyMemberOfClass(certificate, id, cls, proof, options = {}) {
    if (!CLASSES.includes(cls)) fail('malformed', `class: expected "human" or "agent", got ${JSON.stringify(cls)}`);
    const certified = this.verifyMembership(certificate, id, proof, options);
    ofClass(id, certified, cls);
  }

  /**
   * Checks that `account` (a CAIP-10 id, any valid spelling) belonged to `id` in the
   * certificate's window and that `id` was active in it as `cls` (Rust
   * `LightVerifier::verify_linked`). In order: the account parses (`malformed_account`,
   * `unsupported_namespace`, `bad_checksum`), the certificate verifies, `linkProof` places
   * (account, id) under the certified `links_root` (`link_not_in_window`), `membershipProof`
   * places `id` under `root` (`count_mismatch`, `not_included`) as `cls` (`wrong_class`).
   * Returns the canonical account.
   */
  verifyLinked(certificate, account, id, linkProof, membershipProof, cls, options = {}) {
    const canonical = parseAccount(account).canonical;
    if (!CLASSES.includes(cls)) fail('malformed', `class: expected "human" or "agent", got ${JSON.stringify(cls)}`);
    const summary = this.verifyCertificate(certificate, options);
    const idBytes = bytesOf(id, 32, 'identity');
    const lp = object(linkProof, 'link proof');
    if (typeof lp.account !== 'string') fail('malformed', 'link proof.account: expected a string');
    let proofAccount;
    try {
      proofAccount = parseAccount(lp.account).canonical;
    } catch (e) {
      // Rust refuses such a proof while deserializing it.
      fail('malformed', `link proof.account: ${e.message}`);
    }
    const proofId = bytesOf(lp.identity, 32, 'link proof.identity');
    parsePath(lp.path);
    if (
      proofAccount !== canonical ||
      !equal(proofId, idBytes) ||
      !verifyPath(lp.path, summary.links_root, linkLeaf(canonical, idBytes))
    ) {
      fail('link_not_in_window', `the link proof does not show ${canonical} linked to ${toHex(idBytes)} in the certified window`, {
        account: canonical,
        id: toHex(idBytes),
      });
    }
    const certified = included(summary, certificate, idBytes, membershipProof);
    ofClass(idBytes, certified, cls);
    return canonical;
  }

  /** Checks a body as `GET /v1/windows/{t}/proofs/{id}` serves it (`{certificate, proof}`) for
   * identity `id` in window `window`, as class `cls` when given. Returns
   * `{active: true, id, class, window, count}` or throws a VerifyError. */
  verifyProofResponse(body, id, window, cls) {
    const b = object(body, 'proof response');
    const options = { window };
    const certified =
      cls === undefined || cls === null
        ? this.verifyMembership(b.certificate, id, b.proof, options)
        : (this.verifyMemberOfClass(b.certificate, id, cls, b.proof, options), cls);
    return {
      active: true,
      id: toHex(bytesOf(id, 32, 'identity')),
      class: certified,
      window: Number(b.certificate.summary.t),
      count: Number(b.certificate.summary.count),
    };
  }
}

// ---- over HTTP ------------------------------------------------------------------------------

function base(nodeUrl) {
  return String(nodeUrl).replace(/\/+$/, '');
}

async function getJson(url, fetchImpl) {
  let response;
  try {
    response = await fetchImpl(url, { headers: { accept: 'application/json' } });
  } catch (e) {
    fail('fetch_failed', `GET ${url}: ${e?.message ?? e}`, { url });
  }
  let body;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  return { status: response.status, ok: response.ok, body };
}

/** The committee, quorum and parameter digest a node serves at `GET /v1/params`, shaped as
 * LightVerifier options. Fetch them once and pin them (in code or configuration): taking them
 * from the node each time trusts that node. */
export async function fetchParams(nodeUrl, { fetch: fetchImpl = globalThis.fetch } = {}) {
  const url = `${base(nodeUrl)}/v1/params`;
  const r = await getJson(url, fetchImpl);
  if (!r.ok) fail('fetch_failed', `GET ${url}: HTTP ${r.status}`, { url, status: r.status, body: r.body });
  const p = object(object(r.body, 'params response').params, 'params');
  return { committee: p.committee, quorum: p.quorum, params: r.body.digest };
}

/**
 * Fetches `GET {nodeUrl}/v1/windows/{window}/proofs/{identityId}` from any node, cache or
 * relayer, and checks it offline against the pinned `committee` and `quorum` (and `params`, the
 * parameter digest, when given; and `class`, "human" or "agent", when given). Returns
 * `{active: true, id, class, window, count}`; throws a VerifyError: `not_active` when the node
 * has no certified proof (404), `fetch_failed` when it cannot be reached or fails otherwise,
 * and the verifier's codes when what it served does not verify.
 */
export async function fetchAndVerify(nodeUrl, identityId, window, options = {}) {
  const { committee, quorum, params, class: cls, fetch: fetchImpl = globalThis.fetch } = options;
  if (cls !== undefined && cls !== null && !CLASSES.includes(cls)) {
    fail('malformed', `class: expected "human" or "agent", got ${JSON.stringify(cls)}`);
  }
  const verifier = new LightVerifier({ committee, quorum, params });
  const id = toHex(bytesOf(identityId, 32, 'identity'));
  const t = u64(window, 'window');
  const url = `${base(nodeUrl)}/v1/windows/${t}/proofs/${id}`;
  const r = await getJson(url, fetchImpl);
  if (r.status === 404) {
    fail('not_active', r.body?.message ?? `no certified proof that ${id} was active in window ${t}`, { url });
  }
  if (!r.ok) fail('fetch_failed', `GET ${url}: HTTP ${r.status}`, { url, status: r.status, body: r.body });
  try {
    return verifier.verifyProofResponse(r.body, id, t, cls);
  } catch (e) {
    // What the node served does not parse: say so (it is the node's fault, not the caller's).
    if (e instanceof VerifyError && e.code === 'malformed') e.details = { ...e.details, served: true, url };
    throw e;
  }
}

/**
 * Whether `id` was active in window `t` as a person, by a proof fetched from `nodeUrl` and
 * checked against `verifierOpts` ({committee, quorum, params?}). False when the node has no
 * proof or what it serves does not verify (another node may still have one: a node can
 * withhold a proof, never forge one); throws when the node cannot be reached or the options
 * are wrong (`bad_quorum`, `malformed`).
 */
export async function isActiveHuman(nodeUrl, id, t, verifierOpts = {}) {
  try {
    await fetchAndVerify(nodeUrl, id, t, { ...verifierOpts, class: 'human' });
    return true;
  } catch (e) {
    // No answer (unreachable node) or wrong options (bad_quorum, a malformed id or key) is not
    // "not active": throw. Anything the node served that does not verify is.
    const noAnswer =
      ['fetch_failed', 'bad_quorum'].includes(e?.code) || (e?.code === 'malformed' && !e.details?.served);
    if (e instanceof VerifyError && !noAnswer) return false;
    throw e;
  }
}

/**
 * Fetches `GET {nodeUrl}/v1/windows/{window}/links/{account}` from any node, cache or relayer
 * and checks it offline against the pinned `committee` and `quorum` (and `params` when given):
 * the certificate, the account's link under its `links_root` and the linked identity's
 * membership as `class` (default "human"). Returns `{linked: true, account, id, class,
 * window}`; throws a VerifyError: `not_linked` when the node has no certified link of the
 * account to an active identity (404), `fetch_failed` when it cannot be reached or fails
 * otherwise, and the verifier's codes when what it served does not verify.
 */
export async function fetchAndVerifyLinked(nodeUrl, account, window, options = {}) {
  const { committee, quorum, params, class: cls = 'human', fetch: fetchImpl = globalThis.fetch } = options;
  if (!CLASSES.includes(cls)) fail('malformed', `class: expected "human" or "agent", got ${JSON.stringify(cls)}`);
  const verifier = new LightVerifier({ committee, quorum, params });
  const canonical = parseAccount(account).canonical;
  const t = u64(window, 'window');
  const url = `${base(nodeUrl)}/v1/windows/${t}/links/${canonical}`;
  const r = await getJson(url, fetchImpl);
  if (r.status === 404) {
    fail('not_linked', r.body?.message ?? `no certified link of ${canonical} in window ${t}`, { url });
  }
  if (!r.ok) fail('fetch_failed', `GET ${url}: HTTP ${r.status}`, { url, status: r.status, body: r.body });
  try {
    const b = object(r.body, 'linked proof response');
    const link = object(b.link, 'link');
    verifier.verifyLinked(b.certificate, canonical, link.identity, link, b.proof, cls, { window: t });
    return { linked: true, account: canonical, id: toHex(bytesOf(link.identity, 32, 'identity')), class: cls, window: Number(t) };
  } catch (e) {
    if (e instanceof VerifyError && e.code === 'malformed') e.details = { ...e.details, served: true, url };
    throw e;
  }
}

/**
 * Whether `account` (CAIP-10, e.g. `eip155:1:0x…`) was linked in window `t` to an identity
 * active in it as a person: one vote per active person, counted by account. False when the node
 * has no such link or what it serves does not verify; throws when the node cannot be reached
 * or the options are wrong (`bad_quorum`, `malformed`, or an account that does not parse).
 */
export async function wasActiveHuman(nodeUrl, account, t, verifierOpts = {}) {
  try {
    await fetchAndVerifyLinked(nodeUrl, account, t, { ...verifierOpts, class: 'human' });
    return true;
  } catch (e) {
    const callers =
      ['fetch_failed', 'bad_quorum', 'malformed_account', 'unsupported_namespace', 'bad_checksum'].includes(e?.code) ||
      (e?.code === 'malformed' && !e.details?.served);
    if (e instanceof VerifyError && !callers) return false;
    throw e;
  }
}

/** The window containing `ms` (ms since the Unix epoch), from the pinned `genesis_ms` and
 * `window_ms` of `GET /v1/params`: `floor((ms - genesis_ms) / window_ms)`. */
export function windowAt({ genesis_ms, window_ms }, ms) {
  if (!Number.isSafeInteger(ms) || !Number.isSafeInteger(genesis_ms) || !(window_ms > 0)) {
    fail('malformed', 'windowAt: expected integer ms, genesis_ms and a positive window_ms');
  }
  if (ms < genesis_ms) fail('malformed', `${ms} is before genesis (${genesis_ms})`);
  return Math.floor((ms - genesis_ms) / window_ms);
}
