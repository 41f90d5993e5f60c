// A DAO voting strategy on HCO certificates, shaped as a Snapshot strategy: one vote for each
// address linked to an identity the committee certified active as a person in the window,
// zero for every other address. Nothing a node serves is trusted: each vote is a link proof and
// a membership proof checked offline against the committee you pinned (@hco/verify).
//
// In your own project, import from '@hco/verify'; here the package is the repository's js/.

import { VerifyError, parseAccount, wasActiveHuman, windowAt } from '../../js/index.js';

/** How many proofs are fetched at once. */
const CONCURRENCY = 8;

/**
 * One vote per person: `{[address]: 1}` for each address whose account on `chainId` (CAIP-2
 * reference, e.g. 1 for Ethereum mainnet) was linked in window `window` to an identity active
 * in it as a human, `{[address]: 0}` otherwise. The keys are the addresses as given.
 *
 * `options`: `node` (any node, cache or relayer URL), `committee`, `quorum` and `params` (pinned
 * once from `GET /v1/params` of a node you trust), `chainId` (default 1), `fetch` (optional).
 *
 * One person cannot get two votes: an identity links one account per chain, an account one
 * identity, and the committee keeps one identity per person's presence (docs/operator.md says
 * what that assumes). Throws when a node cannot be reached or an address does not parse: a
 * tally must not silently count an unreachable node's voters as zero.
 */
export async function getVotingPower(addresses, window, options) {
  const { node, committee, quorum, params, chainId = 1, fetch } = options ?? {};
  if (typeof node !== 'string') throw new TypeError('options.node: the URL of a node');
  const pinned = { committee, quorum, params, ...(fetch ? { fetch } : {}) };
  const accounts = addresses.map((a) => parseAccount(`eip155:${chainId}:${a}`).canonical);
  const scores = {};
  for (let i = 0; i < addresses.length; i += CONCURRENCY) {
    const batch = addresses.slice(i, i + CONCURRENCY).map(async (address, k) => {
      const human = await wasActiveHuman(node, accounts[i + k], window, pinned);
      scores[address] = human ? 1 : 0;
    });
    await Promise.all(batch);
  }
  // In the order given.
  return Object.fromEntries(addresses.map((a) => [a, scores[a]]));
}

/**
 * The same as a Snapshot strategy: `strategy(space, network, provider, addresses, options,
 * snapshot)`. The window is `options.window` when set; otherwise the last window closed when the
 * snapshot block was made (`options.genesis_ms` and `options.window_ms` pinned from
 * `GET /v1/params`, the block's time from `provider.getBlock(snapshot)`): a window's certificate
 * exists only once it has closed. `network` is the chain id.
 */
export async function strategy(space, network, provider, addresses, options, snapshot) {
  let window = options.window;
  if (window === undefined) {
    const block = await provider.getBlock(snapshot === 'latest' ? 'latest' : Number(snapshot));
    const current = windowAt(options, Number(block.timestamp) * 1000);
    if (current === 0) throw new VerifyError('not_active', 'no window had closed at the snapshot');
    window = current - 1;
  }
  return getVotingPower(addresses, window, { ...options, chainId: Number(network) });
}
