// fetchAndVerifyLinked and wasActiveHuman with the global fetch, against a stand-in node on
// 127.0.0.1 that serves the Rust-made link fixtures in the gateway's route and shape
// (GET /v1/windows/{t}/links/{account}: {certificate, link, proof}; 404 {code: "not_linked"}).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

import { VerifyError, fetchAndVerifyLinked, wasActiveHuman } from '../index.js';

const links = JSON.parse(readFileSync(new URL('./fixtures/links.json', import.meta.url), 'utf8'));
const pinned = {
  committee: links.params.params.committee,
  quorum: links.params.params.quorum,
  params: links.params.digest,
};
const [first] = links.windows;
const classOf = (w, id) => w.members.find((m) => m.id === id)?.class;
const byClass = (cls) => first.links.find((l) => classOf(first, l.identity) === cls);

/** What the stand-in serves: `tamper(body)` may alter a body on its way out. */
let tamper = (body) => body;
let server;
let url;

before(async () => {
  server = createServer((req, res) => {
    const send = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const m = req.url.match(/^\/v1\/windows\/(\d+)\/links\/([^/]+)$/);
    if (!m) return send(404, { code: 'not_found', message: req.url });
    const w = links.windows.find((x) => x.t === Number(m[1]));
    const link = w?.links.find((l) => l.account === decodeURIComponent(m[2]));
    const member = link && w.members.find((x) => x.id === link.identity);
    if (!member) return send(404, { code: 'not_linked', message: `no certified link of ${m[2]}` });
    return send(200, tamper(structuredClone({ certificate: w.certificate, link: link.proof, proof: member.proof })));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${server.address().port}`;
});

after(() => server.close());

test('a linked account of a person verifies, and counts as one active human', async (t) => {
  const person = byClass('human');
  if (!person) return t.skip('the fixture window links no human');
  const r = await fetchAndVerifyLinked(url, person.account, first.t, pinned);
  assert.deepEqual(r, { linked: true, account: person.account, id: person.identity, class: 'human', window: first.t });
  assert.equal(await wasActiveHuman(url, person.account, first.t, pinned), true);
});

test('an agent\'s linked account, an unlinked one and a tampered proof are not active humans', async (t) => {
  const agent = byClass('agent');
  if (agent) {
    await assert.rejects(fetchAndVerifyLinked(url, agent.account, first.t, pinned), (e) => e instanceof VerifyError && e.code === 'wrong_class');
    assert.equal(await wasActiveHuman(url, agent.account, first.t, pinned), false);
  }
  const unlinked = 'eip155:1:0x000000000000000000000000000000000000dead';
  await assert.rejects(fetchAndVerifyLinked(url, unlinked, first.t, pinned), (e) => e.code === 'not_linked');
  assert.equal(await wasActiveHuman(url, unlinked, first.t, pinned), false);
  const person = byClass('human');
  if (!person) return t.skip('the fixture window links no human');
  tamper = (body) => ({ ...body, link: { ...body.link, identity: '11'.repeat(32) } });
  try {
    assert.equal(await wasActiveHuman(url, person.account, first.t, pinned), false);
  } finally {
    tamper = (body) => body;
  }
});

test('a caller\'s mistake throws rather than answering false', async () => {
  await assert.rejects(wasActiveHuman(url, 'cosmos:hub:abc', first.t, pinned), (e) => e.code === 'unsupported_namespace');
  await assert.rejects(wasActiveHuman('http://127.0.0.1:1', byClass('human')?.account ?? 'eip155:1:0x000000000000000000000000000000000000dead', 0, pinned), (e) => e.code === 'fetch_failed');
});
