// The JavaScript verifier against certificates and proofs made by the Rust code
// (test/fixtures/, written and checked by oracle/tests/it/js_fixtures.rs).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import {
  CODES,
  LightVerifier,
  VerifyError,
  memberLeaf,
  summaryDigest,
  toHex,
} from '../index.js';

const load = (name) => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
const certificates = load('certificates.json');
const { cases } = load('cases.json');
const { committee, quorum } = certificates.params.params;
const params = certificates.params.digest;
const clone = (v) => structuredClone(v);

/** Asserts `f` throws a VerifyError with `code`. */
function throwsCode(f, code) {
  assert.throws(f, (e) => {
    assert.ok(e instanceof VerifyError, `expected a VerifyError, got ${e}`);
    assert.equal(e.code, code, e.message);
    assert.ok(CODES.includes(e.code));
    return true;
  });
}

test('the summary bytes and leaves are the ones Rust signs and hashes', () => {
  for (const w of certificates.windows) {
    assert.equal(toHex(summaryDigest(w.certificate.summary)), w.summary_digest);
    for (const p of w.proofs) assert.equal(toHex(memberLeaf(p.id, p.class)), p.leaf);
  }
});

test('every fixture proof verifies, as its class, in its window', () => {
  const v = new LightVerifier({ committee, quorum, params });
  let seen = { human: 0, agent: 0 };
  for (const w of certificates.windows) {
    assert.deepEqual(v.verifyCertificate(w.certificate, { window: w.t }).t, w.t);
    for (const p of w.proofs) {
      const { certificate, proof } = p.body;
      assert.equal(v.verifyMembership(certificate, p.id, proof), p.class);
      v.verifyMemberOfClass(certificate, p.id, p.class, proof, { window: w.t });
      assert.deepEqual(v.verifyProofResponse(p.body, p.id, w.t, p.class), {
        active: true,
        id: p.id,
        class: p.class,
        window: w.t,
        count: certificate.summary.count,
      });
      seen[p.class] += 1;
    }
  }
  assert.ok(seen.human > 0 && seen.agent > 0, 'fixtures cover both classes');
});

test('every case the Rust verifier judged is judged the same here', () => {
  assert.ok(cases.length >= 20);
  const codes = new Set();
  for (const c of cases) {
    let got;
    try {
      const v = new LightVerifier({ committee: c.committee, quorum: c.quorum, params: c.params });
      const { certificate, proof } = c.body;
      got =
        c.class === null
          ? { ok: v.verifyMembership(certificate, c.id, proof) }
          : (v.verifyMemberOfClass(certificate, c.id, c.class, proof), { ok: c.class });
    } catch (e) {
      assert.ok(e instanceof VerifyError, `${c.name}: ${e}`);
      got = { code: e.code };
    }
    assert.deepEqual(got, c.expect, c.name);
    if (c.expect.code) codes.add(c.expect.code);
  }
  // Every code of the Rust light verifier is exercised.
  for (const code of CODES.slice(0, 9)) assert.ok(codes.has(code), `no case for ${code}`);
});

const w7 = certificates.windows.find((w) => w.t === 7);
const w8 = certificates.windows.find((w) => w.t === 8);
const human = w7.proofs.find((p) => p.class === 'human');
const agent = w7.proofs.find((p) => p.class === 'agent');
const verifier = () => new LightVerifier({ committee, quorum, params });

test('a tampered signature fails with bad_signature', () => {
  const body = clone(human.body);
  const sig = body.certificate.signatures[0][1];
  body.certificate.signatures[0][1] = (sig[0] === '0' ? '1' : '0') + sig.slice(1);
  throwsCode(() => verifier().verifyMembership(body.certificate, human.id, body.proof), 'bad_signature');
});

test('fewer signatures than the quorum fail with below_quorum', () => {
  const body = clone(human.body);
  body.certificate.signatures.pop();
  throwsCode(() => verifier().verifyCertificate(body.certificate), 'below_quorum');
});

test('the other class fails with wrong_class', () => {
  const v = verifier();
  throwsCode(() => v.verifyMemberOfClass(agent.body.certificate, agent.id, 'human', agent.body.proof), 'wrong_class');
  throwsCode(() => v.verifyMemberOfClass(human.body.certificate, human.id, 'agent', human.body.proof), 'wrong_class');
  throwsCode(() => v.verifyProofResponse(agent.body, agent.id, 7, 'human'), 'wrong_class');
});

test('a certificate of another window fails with wrong_window', () => {
  const p = w8.proofs.find((x) => x.class === 'human');
  throwsCode(() => verifier().verifyProofResponse(p.body, p.id, 7, 'human'), 'wrong_window');
  throwsCode(() => verifier().verifyCertificate(w7.certificate, { window: 8 }), 'wrong_window');
});

test('a flipped bit anywhere in the Merkle path fails with not_included', () => {
  const v = verifier();
  for (let s = 0; s < human.body.proof.path.siblings.length; s++) {
    for (const bit of [0, 7]) {
      const body = clone(human.body);
      const hex = body.proof.path.siblings[s];
      const byte = parseInt(hex.slice(0, 2), 16) ^ (1 << bit);
      body.proof.path.siblings[s] = byte.toString(16).padStart(2, '0') + hex.slice(2);
      throwsCode(() => v.verifyMembership(body.certificate, human.id, body.proof), 'not_included');
    }
  }
  const moved = clone(human.body);
  moved.proof.path.index += 1;
  throwsCode(() => v.verifyMembership(moved.certificate, human.id, moved.proof), 'not_included');
});

test('a quorum that is not a strict majority fails with bad_quorum', () => {
  for (const q of [0, 1, 2, 5, 2.5, -1, '3']) {
    throwsCode(() => new LightVerifier({ committee, quorum: q }), 'bad_quorum');
  }
  throwsCode(() => new LightVerifier({ committee: [], quorum: 0 }), 'bad_quorum');
  for (const q of [3, 4]) new LightVerifier({ committee, quorum: q });
});

test('a committee listing a key twice fails with bad_quorum', () => {
  const dup = [...committee.slice(0, 3), committee[0]];
  for (const q of [2, 3, 4]) throwsCode(() => new LightVerifier({ committee: dup, quorum: q }), 'bad_quorum');
  // The same key in upper case is the same key.
  const upper = [...committee.slice(0, 3), committee[0].toUpperCase()];
  throwsCode(() => new LightVerifier({ committee: upper, quorum: 3 }), 'bad_quorum');
});

test('a pinned parameter digest must match', () => {
  const other = '00'.repeat(32);
  const v = new LightVerifier({ committee, quorum, params: other });
  throwsCode(() => v.verifyCertificate(w7.certificate), 'params_mismatch');
  new LightVerifier({ committee, quorum }).verifyCertificate(w7.certificate);
});

test('input that does not parse fails with malformed', () => {
  const v = verifier();
  const bad = [
    (b) => (b.certificate.summary.root = 'zz'),
    (b) => (b.certificate.signatures[0] = ['00']),
    (b) => (b.proof.class = 'robot'),
    (b) => (b.proof.path.index = -1),
    (b) => (b.proof.path.siblings = 'none'),
    (b) => (b.certificate.summary.count = 2 ** 60),
  ];
  for (const edit of bad) {
    const body = clone(human.body);
    edit(body);
    throwsCode(() => v.verifyMembership(body.certificate, human.id, body.proof), 'malformed');
  }
  throwsCode(() => v.verifyMemberOfClass(human.body.certificate, human.id, 'person', human.body.proof), 'malformed');
  throwsCode(() => v.verifyMembership(human.body.certificate, 'abc', human.body.proof), 'malformed');
});

test('byte inputs work as hex does', () => {
  const bytes = (hex) => Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));
  const v = new LightVerifier({ committee: committee.map(bytes), quorum, params: bytes(params) });
  assert.equal(v.verifyMembership(human.body.certificate, bytes(human.id), human.body.proof), 'human');
});

test('a nonce with a small-order part is refused, as the cofactorless check in Rust refuses it', async () => {
  const { ed25519 } = await import('@noble/curves/ed25519.js');
  const { sha512 } = await import('@noble/hashes/sha2.js');
  const { Point } = ed25519;
  const L = Point.Fn.ORDER;
  const le = (bytes) => bytes.reduceRight((n, b) => (n << 8n) | BigInt(b), 0n);
  const le32 = (n) => Uint8Array.from({ length: 32 }, (_, i) => Number((n >> BigInt(8 * i)) & 0xffn));
  // A point of order 8.
  const T = Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a');
  assert.ok(T.isSmallOrder() && !T.is0());
  const scalars = [11n, 22n, 33n].map((n) => (n * 0x1234567890abcdefn) % L);
  const keys = scalars.map((a) => Point.BASE.multiply(a).toBytes());
  const summary = { ...w7.certificate.summary, params: '00'.repeat(32) };
  const m = summaryDigest(summary);
  const sign = (a, A, torsion) => {
    const r = (a * 7n + 5n) % L;
    const R = torsion ? Point.BASE.multiply(r).add(T) : Point.BASE.multiply(r);
    const Rb = R.toBytes();
    const k = le(sha512(new Uint8Array([...Rb, ...A, ...m]))) % L;
    return toHex(new Uint8Array([...Rb, ...le32((r + k * a) % L)]));
  };
  const cert = (torsion) => ({
    summary,
    signatures: [0, 1].map((i) => [toHex(keys[i]), sign(scalars[i], keys[i], torsion && i === 0)]),
  });
  const v = new LightVerifier({ committee: keys, quorum: 2 });
  v.verifyCertificate(cert(false));
  const mixed = cert(true);
  const sig = Uint8Array.from(mixed.signatures[0][1].match(/../g), (h) => parseInt(h, 16));
  // The cofactored check alone would take it.
  assert.equal(ed25519.verify(sig, m, keys[0], { zip215: false }), true);
  throwsCode(() => v.verifyCertificate(mixed), 'bad_signature');
});
