// Account links: CAIP-10 account ids, EIP-55 and EIP-191, link leaves and signed links.

import { secp256k1 } from '@noble/curves/secp256k1.js';
import { blake3 } from '@noble/hashes/blake3.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { fail } from './errors.js';
import { bytesOf, concat, equal, toHex, u64 } from './bytes.js';
import { object } from './parse.js';
import { domainDigest } from './digest.js';
import { verifySignature } from './ed25519.js';

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
