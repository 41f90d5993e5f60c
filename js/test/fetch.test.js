// fetchAndVerify, isActiveHuman and fetchParams with the global fetch, against a stand-in node
// on 127.0.0.1 that serves the Rust-made fixtures in the gateway's routes and shapes
// (GET /v1/params, GET /v1/windows/{t}/proofs/{id}; 404 {code: "not_active"} when it has none).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

import { VerifyError, fetchAndVerify, fetchParams, isActiveHuman, windowAt } from '../index.js';

const certificates = JSON.parse(
  readFileSync(new URL('./fixtures/certificates.json', import.meta.url), 'utf8'),
);
const pinned = {
  committee: certificates.params.params.committee,
  quorum: certificates.params.params.quorum,
  params: certificates.params.digest,
};
const w7 = certificates.windows.find((w) => w.t === 7);
const human = w7.proofs.find((p) => p.class === 'human');
const agent = w7.proofs.find((p) => p.class === 'agent');
const absentHuman = certificates.windows
  .find((w) => w.t === 8)
  .proofs.map((p) => p.id);
const notIn8 = w7.proofs.find((p) => p.class === 'human' && !absentHuman.includes(p.id));

/** What the stand-in node serves: `tamper(t, id, body)` may alter a proof on its way out. */
let tamper = (_t, _id, body) => body;
let server;
let url;

before(async () => {
  server = createServer((req, res) => {
    const send = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (req.url === '/v1/params') return send(200, certificates.params);
    const m = req.url.match(/^\/v1\/windows\/(\d+)\/proofs\/([0-9a-f]{64})$/);
    if (!m) return send(404, { code: 'not_found', message: req.url });
    const t = Number(m[1]);
    if (t === 99) return send(500, { code: 'internal', message: 'down' });
    const found = certificates.windows.find((w) => w.t === t)?.proofs.find((p) => p.id === m[2]);
    if (!found) return send(404, { code: 'not_active', message: `no certified proof that ${m[2]} was active in window ${t}` });
    return send(200, tamper(t, m[2], structuredClone(found.body)));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${server.address().port}/`;
});

after(() => server.close());

const rejects = (promise, code) =>
  assert.rejects(promise, (e) => {
    assert.ok(e instanceof VerifyError, String(e));
    assert.equal(e.code, code, e.message);
    return true;
  });

test('fetchParams reads the committee, quorum and digest a node serves', async () => {
  assert.deepEqual(await fetchParams(url), pinned);
});

test('fetchAndVerify checks a served proof offline against the pinned committee', async () => {
  tamper = (_t, _id, body) => body;
  assert.deepEqual(await fetchAndVerify(url, human.id, 7, { ...pinned, class: 'human' }), {
    active: true,
    id: human.id,
    class: 'human',
    window: 7,
    count: w7.certificate.summary.count,
  });
  const a = await fetchAndVerify(url, agent.id, 7, pinned);
  assert.equal(a.class, 'agent');
  await rejects(fetchAndVerify(url, agent.id, 7, { ...pinned, class: 'human' }), 'wrong_class');
  await rejects(fetchAndVerify(url, notIn8.id, 8, pinned), 'not_active');
  await rejects(fetchAndVerify(url, human.id, 7, { ...pinned, quorum: 2 }), 'bad_quorum');
  await rejects(fetchAndVerify('http://127.0.0.1:1', human.id, 7, pinned), 'fetch_failed');
  await rejects(fetchAndVerify(url, human.id, 99, pinned), 'fetch_failed');
});

test('isActiveHuman: true for a human, false for an agent, an absent proof or a forgery', async () => {
  tamper = (_t, _id, body) => body;
  assert.equal(await isActiveHuman(url, human.id, 7, pinned), true);
  assert.equal(await isActiveHuman(url, agent.id, 7, pinned), false);
  assert.equal(await isActiveHuman(url, notIn8.id, 8, pinned), false);
  // A node serving another window's certificate for the window asked about.
  tamper = (_t, id, body) => {
    const other = certificates.windows.find((w) => w.t === 8).proofs.find((p) => p.id === id);
    return other ? structuredClone(other.body) : body;
  };
  const both = w7.proofs.find((p) => p.class === 'human' && absentHuman.includes(p.id));
  await rejects(fetchAndVerify(url, both.id, 7, pinned), 'wrong_window');
  assert.equal(await isActiveHuman(url, both.id, 7, pinned), false);
  // A forged signature, a served body that does not parse.
  tamper = (_t, _id, body) => {
    body.certificate.signatures[0][1] = 'ff' + body.certificate.signatures[0][1].slice(2);
    return body;
  };
  await rejects(fetchAndVerify(url, human.id, 7, pinned), 'bad_signature');
  assert.equal(await isActiveHuman(url, human.id, 7, pinned), false);
  tamper = () => 'not json';
  await rejects(fetchAndVerify(url, human.id, 7, pinned), 'malformed');
  assert.equal(await isActiveHuman(url, human.id, 7, pinned), false);
  tamper = (_t, _id, body) => body;
  // The caller's mistakes and an unreachable node throw rather than answer false.
  await rejects(isActiveHuman(url, human.id, 7, { ...pinned, quorum: 0 }), 'bad_quorum');
  await rejects(isActiveHuman('http://127.0.0.1:1', human.id, 7, pinned), 'fetch_failed');
  await rejects(isActiveHuman(url, 'not an id', 7, pinned), 'malformed');
});

test('windowAt maps a time to its window', () => {
  const p = { genesis_ms: 1_700_000_000_000, window_ms: 60_000 };
  assert.equal(windowAt(p, p.genesis_ms), 0);
  assert.equal(windowAt(p, p.genesis_ms + 7 * 60_000 + 59_999), 7);
  assert.throws(() => windowAt(p, p.genesis_ms - 1), VerifyError);
});
