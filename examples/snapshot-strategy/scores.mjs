#!/usr/bin/env node
// The strategy's scores from the command line, as JSON:
//
//   node scores.mjs --node URL --window T [--chain 1] --pinned pinned.json ADDRESS...
//
// `pinned.json` is {committee, quorum, params} as fetchParams returns it from a node you trust;
// without --pinned, this command takes them from --node (fine for a devnet, not for a tally).

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { fetchParams } from '../../js/index.js';
import { getVotingPower } from './index.js';

const { values, positionals } = parseArgs({
  options: {
    node: { type: 'string' },
    window: { type: 'string' },
    chain: { type: 'string', default: '1' },
    pinned: { type: 'string' },
  },
  allowPositionals: true,
});
if (!values.node || values.window === undefined) {
  console.error('usage: scores.mjs --node URL --window T [--chain 1] [--pinned FILE] ADDRESS...');
  process.exit(2);
}
try {
  const pinned = values.pinned
    ? JSON.parse(readFileSync(values.pinned, 'utf8'))
    : await fetchParams(values.node);
  const scores = await getVotingPower(positionals, Number(values.window), {
    ...pinned,
    node: values.node,
    chainId: Number(values.chain),
  });
  console.log(JSON.stringify(scores));
} catch (e) {
  console.error(JSON.stringify({ code: e?.code ?? 'error', message: e?.message ?? String(e) }));
  process.exit(1);
}
