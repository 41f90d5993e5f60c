// Account links against links made and judged by the Rust code (test/fixtures/links.json, written
// and checked by oracle/tests/it/js_fixtures.rs), plus tampering done here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import {
  CODES,
  LightVerifier,
  VerifyError,
  checksumAddress,
  domainDigest,
  linkLeaf,
  linkText,
  parseAccount,
  personalMessageHash,
  recoverPersonalSign,
  summaryDigest,
  toHex,
  verifyLink,
} from '../index.js';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/links.json', import.meta.url), 'utf8'));
const { committee, quorum } = fixture.params.params;
const params = fixture.params.digest;
const verifier = () => new LightVerifier({ committee, quorum, params });
const clone = (v) => structuredClone(v);
const good = fixture.signed_link.body;
const [w11, w12] = fixture.windows;

function throwsCode(f, code) {
  assert.throws(f, (e) => {
    assert.ok(e instanceof VerifyError, `expected a VerifyError, got ${e}`);
    assert.equal(e.code, code, e.message);
    assert.ok(CODES.includes(e.code));
    return true;
  });
}

/** Flips one bit of the byte at `at` in a hex string. */
function flip(hex, at, bit = 0) {
  const byte = parseInt(hex.slice(2 * at, 2 * at + 2), 16) ^ (1 << bit);
  return hex.slice(0, 2 * at) + byte.toString(16).padStart(2, '0') + hex.slice(2 * at + 2);
}

test('the signed text, digests, leaves and summary bytes are the ones Rust makes', () => {
  const s = fixture.signed_link;
  assert.equal(linkText(s.body.link), s.text);
  assert.equal(s.text.split('\n').length, 5);
  assert.ok(!s.text.endsWith('\n'));
  assert.equal(toHex(domainDigest('hco account link v1', [new TextEncoder().encode(s.text)])), s.identity_digest);
  assert.equal(toHex(personalMessageHash(s.text)), s.personal_hash);
  assert.equal(checksumAddress(toHex(recoverPersonalSign(s.text, s.body.account_sig))), s.address);
  for (const w of fixture.windows) {
    assert.equal(toHex(summaryDigest(w.certificate.summary)), w.summary_digest);
    for (const l of w.links) assert.equal(toHex(linkLeaf(l.account, l.identity)), l.leaf);
  }
});

test('every signed link Rust judged is judged the same here', () => {
  assert.ok(fixture.link_cases.length >= 10);
  const codes = new Set();
  for (const c of fixture.link_cases) {
    let got;
    try {
      verifyLink(c.body);
      got = { ok: true };
    } catch (e) {
      assert.ok(e instanceof VerifyError, `${c.name}: ${e}`);
      got = { code: e.code };
    }
    assert.deepEqual(got, c.expect, c.name);
    if (c.expect.code) codes.add(c.expect.code);
  }
  for (const code of ['bad_identity_signature', 'bad_account_signature', 'malformed_account', 'unsupported_namespace', 'bad_checksum']) {
    assert.ok(codes.has(code), `no case for ${code}`);
  }
});

test('every linked-account check Rust judged is judged the same here', () => {
  const codes = new Set();
  for (const c of fixture.linked_cases) {
    let got;
    try {
      verifier().verifyLinked(c.certificate, c.account, c.identity, c.link_proof, c.membership_proof, c.class);
      got = { ok: true };
    } catch (e) {
      assert.ok(e instanceof VerifyError, `${c.name}: ${e}`);
      got = { code: e.code };
    }
    assert.deepEqual(got, c.expect, c.name);
    if (c.expect.code) codes.add(c.expect.code);
  }
  for (const code of ['link_not_in_window', 'wrong_class', 'not_included', 'bad_checksum', 'unsupported_namespace']) {
    assert.ok(codes.has(code), `no case for ${code}`);
  }
});

test('a signed link verifies and returns the canonical statement', () => {
  const r = verifyLink(good, { network: params });
  assert.equal(r.account, good.link.account);
  assert.equal(r.account, r.account.toLowerCase());
  assert.equal(r.identity, good.link.identity);
  assert.equal(r.text, fixture.signed_link.text);
  throwsCode(() => verifyLink(good, { network: '00'.repeat(32) }), 'wrong_network');
});

test('tampered signed links fail with their codes', () => {
  const other = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'; // Hardhat #1, not the signer
  let s = clone(good);
  s.link.account = `eip155:1:${other}`;
  throwsCode(() => verifyLink(s), 'bad_identity_signature'); // the identity signed the old text
  s = clone(good);
  s.identity_sig = flip(s.identity_sig, 0);
  throwsCode(() => verifyLink(s), 'bad_identity_signature');
  s = clone(good);
  s.link.from_window += 1;
  throwsCode(() => verifyLink(s), 'bad_identity_signature');
  for (const [at, bit] of [[0, 0], [31, 7], [32, 0], [63, 3]]) {
    s = clone(good);
    s.account_sig = flip(s.account_sig, at, bit);
    throwsCode(() => verifyLink(s), 'bad_account_signature');
  }
  for (const v of [2, 26, 29, 255]) {
    s = clone(good);
    s.account_sig = s.account_sig.slice(0, 128) + v.toString(16).padStart(2, '0');
    throwsCode(() => verifyLink(s), 'bad_account_signature');
  }
  s = clone(good);
  s.link.account = s.link.account.replace(/0x(.)/, (_, c) => `0x${c.toUpperCase()}`).replace(/f$/, 'F');
  throwsCode(() => verifyLink(s), 'bad_checksum');
  s = clone(good);
  s.link.account = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:7S3P4HxJpyyigGzodYwHtCxZyUQe9JiBMHyRWXArAaKv';
  throwsCode(() => verifyLink(s), 'unsupported_namespace');
  s = clone(good);
  s.identity_sig = 'zz';
  throwsCode(() => verifyLink(s), 'malformed');
});

test('CAIP-10 parsing: grammar, namespace, chain id, address and EIP-55', () => {
  const canonical = 'eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
  for (const spelling of [
    canonical,
    'eip155:1:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    'eip155:1:0xF39FD6E51AAD88F6F4CE6AB8827279CFFFB92266',
  ]) {
    assert.equal(parseAccount(spelling).canonical, canonical);
  }
  assert.equal(parseAccount(canonical).chainId, 'eip155:1');
  // The four examples of EIP-55.
  for (const a of [
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
  ]) {
    assert.equal(checksumAddress(a.toLowerCase()), a);
    // One letter's case flipped (the last letter of the address).
    const at = a.search(/[a-fA-F][0-9]*$/);
    const c = a[at];
    const broken = a.slice(0, at) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + a.slice(at + 1);
    throwsCode(() => parseAccount(`eip155:1:${broken}`), 'bad_checksum');
  }
  throwsCode(() => parseAccount('cosmos:cosmoshub-4:cosmos1t2uflqwqe0fsj0shcfkrvpukewcw40yjj6hdc0'), 'unsupported_namespace');
  for (const bad of [
    '',
    'eip155:1',
    'EIP155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    'eip155:01:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    'eip155:0:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    'eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb9226',
    'eip155:1:0Xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    'eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266:x',
    ' eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    'toolongnamespace:1:abc',
    42,
  ]) {
    throwsCode(() => parseAccount(bad), 'malformed_account');
  }
});

test('EIP-191 recovery matches the signature web3.js documents', () => {
  // docs.web3js.org, web3-eth-accounts `sign`: "Some data" signed with key 0x4c08…2318, whose
  // address is 0x2c7536E3605D9C16a7a3D7b1898e529396a65c23.
  assert.equal(toHex(personalMessageHash('Some data')), '1da44b586eb0729ff70a73c326926f6ed5a25f5b056e7f47fbc6e58d86871655');
  const sig =
    'b91467e570a6466aa9e9876cbcd013baba02900b8979d43fe208a4a4f339f5fd' +
    '6007e74cd82e037b800186422fc2da167c747ef045e5d18a5f5d4300f8e1a0291c';
  assert.equal(checksumAddress(recoverPersonalSign('Some data', sig)), '0x2c7536E3605D9C16a7a3D7b1898e529396a65c23');
  assert.equal(checksumAddress(recoverPersonalSign('Some data', `${sig.slice(0, 128)}01`)), '0x2c7536E3605D9C16a7a3D7b1898e529396a65c23');
  assert.equal(recoverPersonalSign('Some data', `${sig.slice(0, 128)}1d`), null);
});

test('a linked wallet verifies; tampered proofs fail with their codes', () => {
  const v = verifier();
  const person = w11.links.find((l) => l.account.startsWith('eip155:1:') && w11.members.some((m) => m.id === l.identity && m.class === 'human'));
  const member = (w, id) => w.members.find((m) => m.id === id).proof;
  const proofOf = (w, id) => member(w, id);
  const checksummed = `eip155:1:${checksumAddress(person.account.split(':')[2])}`;
  assert.equal(v.verifyLinked(w11.certificate, checksummed, person.identity, person.proof, proofOf(w11, person.identity), 'human'), person.account);
  throwsCode(() => v.verifyLinked(w11.certificate, person.account, person.identity, person.proof, proofOf(w11, person.identity), 'agent'), 'wrong_class');
  // Wrong account: another account's proof, or this proof asked about another account.
  const agent = w11.links.find((l) => l !== person && w11.members.some((m) => m.id === l.identity));
  throwsCode(() => v.verifyLinked(w11.certificate, person.account, person.identity, agent.proof, proofOf(w11, person.identity), 'human'), 'link_not_in_window');
  throwsCode(() => v.verifyLinked(w11.certificate, agent.account, person.identity, person.proof, proofOf(w11, person.identity), 'human'), 'link_not_in_window');
  // The proof of window 11 against window 12's certificate.
  throwsCode(() => v.verifyLinked(w12.certificate, person.account, person.identity, person.proof, proofOf(w12, person.identity), 'human'), 'link_not_in_window');
  // A flipped bit anywhere in the link path.
  for (let i = 0; i < person.proof.path.siblings.length; i++) {
    const p = clone(person.proof);
    p.path.siblings[i] = flip(p.path.siblings[i], 3);
    throwsCode(() => v.verifyLinked(w11.certificate, person.account, person.identity, p, proofOf(w11, person.identity), 'human'), 'link_not_in_window');
  }
  // A certificate whose links_root was changed no longer carries the quorum's signatures.
  const cert = clone(w11.certificate);
  cert.summary.links_root = flip(cert.summary.links_root, 0);
  throwsCode(() => v.verifyLinked(cert, person.account, person.identity, person.proof, proofOf(w11, person.identity), 'human'), 'bad_signature');
  // The account asked about is refused before anything else.
  const badChecksum = checksummed.replace(/[A-F]/, (c) => c.toLowerCase());
  throwsCode(() => v.verifyLinked(w11.certificate, badChecksum, person.identity, person.proof, proofOf(w11, person.identity), 'human'), 'bad_checksum');
  throwsCode(() => v.verifyLinked(w11.certificate, 'cosmos:cosmoshub-4:cosmos1t2uflqwqe0fsj0shcfkrvpukewcw40yjj6hdc0', person.identity, person.proof, proofOf(w11, person.identity), 'human'), 'unsupported_namespace');
});

test('a certificate without links_root is malformed (it signs a v2 summary)', () => {
  const cert = clone(w11.certificate);
  delete cert.summary.links_root;
  throwsCode(() => verifier().verifyCertificate(cert), 'malformed');
  assert.equal(verifier().verifyCertificate(w11.certificate).links_root, w11.certificate.summary.links_root);
});
