// Over HTTP: fetching proofs and links from a node and checking them offline, and windowAt.

import { CLASSES, VerifyError, fail } from './errors.js';
import { bytesOf, toHex, u64 } from './bytes.js';
import { object } from './parse.js';
import { parseAccount } from './links.js';
import { LightVerifier } from './verifier.js';

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

/** `GET url` and `check(body)`: `notFound` (a VerifyError code and message) on 404,
 * `fetch_failed` on another error; a `malformed` from `check` is marked as served by the node
 * (the node's fault, not the caller's). */
async function fetchChecked(url, fetchImpl, [notFoundCode, notFoundMessage], check) {
  const r = await getJson(url, fetchImpl);
  if (r.status === 404) fail(notFoundCode, r.body?.message ?? notFoundMessage, { url });
  if (!r.ok) fail('fetch_failed', `GET ${url}: HTTP ${r.status}`, { url, status: r.status, body: r.body });
  try {
    return check(r.body);
  } catch (e) {
    if (e instanceof VerifyError && e.code === 'malformed') e.details = { ...e.details, served: true, url };
    throw e;
  }
}

/** Whether a yes/no question's error means "no": something the node served that does not
 * verify (or no such proof), not a node that cannot be reached or options that are wrong
 * (`callerCodes`, or a `malformed` not marked as served). */
function meansNo(e, callerCodes) {
  const caller = callerCodes.includes(e?.code) || (e?.code === 'malformed' && !e.details?.served);
  return e instanceof VerifyError && !caller;
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
  const notFound = ['not_active', `no certified proof that ${id} was active in window ${t}`];
  return fetchChecked(url, fetchImpl, notFound, (body) => verifier.verifyProofResponse(body, id, t, cls));
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
    if (meansNo(e, ['fetch_failed', 'bad_quorum'])) return false;
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
  const notFound = ['not_linked', `no certified link of ${canonical} in window ${t}`];
  return fetchChecked(url, fetchImpl, notFound, (body) => {
    const b = object(body, 'linked proof response');
    const link = object(b.link, 'link');
    verifier.verifyLinked(b.certificate, canonical, link.identity, link, b.proof, cls, { window: t });
    return { linked: true, account: canonical, id: toHex(bytesOf(link.identity, 32, 'identity')), class: cls, window: Number(t) };
  });
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
    if (meansNo(e, ['fetch_failed', 'bad_quorum', 'malformed_account', 'unsupported_namespace', 'bad_checksum'])) {
      return false;
    }
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
