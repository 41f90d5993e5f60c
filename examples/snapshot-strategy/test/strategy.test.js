// The strategy against a stand-in node on 127.0.0.1 (the devnet test in node/tests/it/links.rs
// runs it against real nodes): which URL it asks for each address and window, zero for an
// account the node has no link for, and an error, not zeros, when the node cannot be reached.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

import { getVotingPower, strategy } from '../index.js';

// A committee of one made-up key: nothing here verifies, the stand-in has no links.
const pinned = { committee: ['11'.repeat(32)], quorum: 1 };
let server;
let url;
const asked = [];

before(async () => {
  server = createServer((req, res) => {
    asked.push(req.url);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code: 'not_linked', message: 'no link' }));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  url = `http://127.0.0.1:${server.address().port}`;
});
after(() => server.close());

const a = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const b = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

test('an address without a certified link scores zero, keyed as given', async () => {
  asked.length = 0;
  const scores = await getVotingPower([a, b], 7, { ...pinned, node: url, chainId: 10 });
  assert.deepEqual(scores, { [a]: 0, [b]: 0 });
  assert.deepEqual(
    asked.sort(),
    [`/v1/windows/7/links/eip155:10:${a.toLowerCase()}`, `/v1/windows/7/links/eip155:10:${b}`].sort(),
  );
});

test('the snapshot block picks the last window closed at its time', async () => {
  asked.length = 0;
  const provider = { getBlock: async (n) => ({ number: n, timestamp: 1_000 + 25 }) };
  const options = { ...pinned, node: url, genesis_ms: 1_000_000, window_ms: 10_000 };
  // 1 025 000 ms is in window 2 (from 1 020 000): the last closed is 1.
  await strategy('space.eth', '1', provider, [b], options, 123);
  assert.deepEqual(asked, [`/v1/windows/1/links/eip155:1:${b}`]);
});

test('a node that cannot be reached is an error, not a tally of zeros', async () => {
  await assert.rejects(
    getVotingPower([a], 1, { ...pinned, node: 'http://127.0.0.1:9' }),
    (e) => e.code === 'fetch_failed',
  );
});

test('an address that does not parse is an error', async () => {
  await assert.rejects(
    getVotingPower(['0x1234'], 1, { ...pinned, node: url }),
    (e) => e.code === 'malformed_account',
  );
});
