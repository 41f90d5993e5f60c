// The page's flow: identity, registration, the current window, one challenge at a time.
// Everything signed is signed here, with the key WebCrypto holds for this origin.

import * as P from './protocol.js';
import * as Passkey from './passkey.js';
import { render } from './families.js';

const $ = (id) => document.getElementById(id);

const state = {
  identity: undefined, // {id, privateKey}
  offset: 0, // the node's clock minus ours, ms
  window: null, // GET /v1/windows/current
  registered: false,
  passkeys: { passkeys: [] }, // GET /v1/identities/{id}/passkeys
  challenge: null, // {view, renderer, sending}
};

const now = () => Date.now() + state.offset;

class ApiError extends Error {
  constructor(code, message, opensAt) {
    super(message);
    this.code = code;
    this.opensAt = opensAt;
  }
}

async function api(method, path, body) {
  const init = { method, headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const json = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(json?.code || `http_${res.status}`, json?.message || res.statusText, json?.opens_at);
  return json;
}

function showError(e) {
  $('error').textContent = e ? (e.code ? `${e.code}: ${e.message}` : String(e.message || e)) : '';
}

/** Runs a button's action with the button disabled and errors shown. */
function action(button, run) {
  $(button).addEventListener('click', async () => {
    $(button).disabled = true;
    showError(null);
    try {
      await run();
    } catch (e) {
      showError(e);
    } finally {
      update();
    }
  });
}

function duration(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

function minutes(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

function clock(ms) {
  return new Date(ms - state.offset).toLocaleTimeString();
}

// ---- identity ----

function showIdentity() {
  const have = Boolean(state.identity);
  $('identity-none').hidden = have;
  $('identity-have').hidden = !have;
  $('identity-make').hidden = have;
  $('identity-id').textContent = have ? state.identity.id : '';
}

action('create', async () => {
  state.identity = await P.createIdentity();
  await refresh();
});

action('import', async () => {
  state.identity = await P.importIdentity($('import-key').value);
  $('import-key').value = '';
  await refresh();
});

action('forget', async () => {
  if (!window.confirm('Forget this identity? Unless you have its key file, it is lost.')) return;
  await P.forgetIdentity();
  state.identity = undefined;
  state.registered = false;
  clearChallenge();
  await refresh();
});

// ---- window and status ----

async function refresh() {
  const id = state.identity ? `?id=${state.identity.id}` : '';
  const before = Date.now();
  const w = await api('GET', `/v1/windows/current${id}`);
  state.offset = w.now - Math.round((before + Date.now()) / 2);
  state.window = w;
  $('window-t').textContent = String(w.t);
  $('window-slot').textContent = w.slot_mode === 'open'
    ? 'any time in the window'
    : `${clock(w.slot.start)} to ${clock(w.slot.end)}`;
  const policy = w.policy.human;
  const spares = policy.spares === 1 ? '1 spare try' : `${policy.spares} spare tries`;
  $('window-k').textContent = `${policy.steps.join(', ')} (${spares})`;
  const me = w.identity;
  state.nextJ = me ? me.next_j : 0;
  $('window-progress').textContent = me && me.steps != null
    ? `${me.steps_passed} of ${me.steps} steps passed, ${me.next_j} of ${policy.tries} tries used`
    : '–';
  state.allPassed = Boolean(me && me.steps != null && me.steps_passed >= me.steps);
  $('next-step').textContent = state.allPassed ? 'nothing: every step passed' : `challenge ${state.nextJ}`;
  $('dev-presence').hidden = !w.presence?.software_authenticators_accepted;
  if (state.identity) {
    try {
      const s = await api('GET', `/v1/identities/${state.identity.id}`);
      state.registered = true;
      const last = s.last_active == null ? 'never active yet' : `last active in window ${s.last_active}`;
      const visual = s.visual_opt_out ? ', no visual challenges' : '';
      $('status').textContent = `${s.status} (${s.class}${visual}, ${last})`;
      $('visual-opt-out').checked = s.visual_opt_out;
      state.passkeys = await api('GET', `/v1/identities/${state.identity.id}/passkeys`);
      const n = state.passkeys.passkeys.length;
      $('passkey-status').textContent = n === 0 ? 'none enrolled' : `${n} enrolled`;
    } catch (e) {
      if (e.code !== 'unknown_identity') throw e;
      state.registered = false;
      state.passkeys = { passkeys: [] };
      $('status').textContent = 'not registered';
      $('passkey-status').textContent = 'register first';
    }
  } else {
    $('status').textContent = 'no identity';
    $('passkey-status').textContent = 'no identity';
  }
  update();
}

action('register', async () => {
  const optOut = $('visual-opt-out').checked;
  // The network's registration proof of work (a one-off wait; 0: none).
  const { params } = await api('GET', '/v1/params');
  const powBits = params.registration_pow_bits || 0;
  if (powBits > 0) $('status').textContent = 'registering (a short proof of work)…';
  const reg = await P.signedRegister(state.identity, 'human', Math.round(now()), optOut, powBits);
  await api('POST', '/v1/identities', reg);
  await refresh();
});

action('enrol', async () => {
  if (!Passkey.supported()) throw new ApiError('webauthn_unavailable', 'this browser cannot use passkeys here (it needs WebAuthn and a secure origin)');
  const createdAt = Math.round(now());
  const id = state.identity.id;
  const options = await api('GET', `/v1/identities/${id}/passkeys/options?created_at=${createdAt}`);
  let credential;
  try {
    credential = await Passkey.create(options);
  } catch (e) {
    throw new ApiError('passkey_not_created', `the browser did not create a passkey: ${e.message}`);
  }
  await api('POST', `/v1/identities/${id}/passkeys`, await P.signedEnrolment(state.identity, createdAt, credential));
  await refresh();
});

// ---- wallet link ----

action('link', async () => {
  const wallet = window.ethereum;
  if (!wallet?.request) {
    $('link-no-wallet').hidden = false;
    throw new ApiError('no_wallet', 'no wallet found in this browser');
  }
  const [address] = await wallet.request({ method: 'eth_requestAccounts' });
  const chain = BigInt(await wallet.request({ method: 'eth_chainId' })).toString();
  const { digest } = await api('GET', '/v1/params');
  const link = {
    network: digest,
    identity: state.identity.id,
    account: `eip155:${chain}:${String(address).toLowerCase()}`,
    from_window: state.window.t,
  };
  const text = P.linkText(link);
  $('link-status').textContent = 'waiting for the wallet to sign…';
  let accountSig;
  try {
    const hexText = `0x${P.toHex(new TextEncoder().encode(text))}`;
    accountSig = await wallet.request({ method: 'personal_sign', params: [hexText, address] });
  } catch (e) {
    $('link-status').textContent = state.linked || 'nothing yet';
    throw new ApiError('not_signed', `the wallet did not sign the link: ${e.message || e}`);
  }
  const r = await api('POST', '/v1/links', await P.signedLink(state.identity, link, accountSig));
  state.linked = `${r.account} from window ${r.from_window}`;
  $('link-status').textContent = state.linked;
});

// ---- the challenge ----

function clearChallenge() {
  state.challenge = null;
  $('challenge').hidden = true;
  $('answer-area').replaceChildren();
}

function showVerdict(code, message) {
  $('verdict').hidden = false;
  $('verdict').dataset.code = code;
  $('verdict-code').textContent = code;
  $('verdict-message').textContent = message;
}

action('get', async () => {
  clearChallenge();
  $('verdict').hidden = true;
  await refresh();
  const j = state.nextJ;
  const req = await P.signedRequest(state.identity, state.window.t, j);
  let view;
  try {
    view = await api('POST', '/v1/challenges', req);
  } catch (e) {
    // Before the slot, or before the step's moment in it: say when, and fetch it then.
    const slotStart = state.window?.slot?.start;
    // A touch prompt whose issuer has no witness of its beat yet: ask again at once (the
    // reaction window is already running).
    const opensAt = e.code === 'step_not_open' ? e.opensAt
      : e.code === 'no_slot_witness' ? now() + 50
      : e.code === 'outside_slot' && slotStart > now() ? slotStart : 0;
    if (!opensAt) throw e;
    const what = e.code === 'outside_slot' ? 'The slot opens' : 'The next step opens';
    showVerdict(e.code, `${what} at ${clock(opensAt)}; keep this page open: the steps appear here then.`);
    clearTimeout(state.waiting);
    state.waiting = setTimeout(() => $('get').click(), Math.max(0, opensAt - now()) + 100);
    return;
  }
  if (!(await P.issuerSignatureValid(view.challenge))) {
    throw new ApiError('bad_issuer_signature', 'the challenge is not signed by its issuer; not answering it');
  }
  const form = $('challenge');
  $('family').textContent = `Family: ${view.prompt.family.replace(/_/g, ' ')}`;
  $('prompt-text').textContent = view.prompt.text;
  const area = $('answer-area');
  const context = {
    passkeys: state.passkeys,
    assert: () => Passkey.assert(P.challengeId(view.challenge.challenge), state.passkeys),
    finished: () => Boolean(state.challenge?.done),
    // A presence step inside a ceremony slot is a touch prompt: its reaction window is short.
    prompt: state.window?.slot_mode !== 'open',
    // Multi-stage families: the identity-signed answer to stages 1..=k unlocks stage k + 1.
    stage: async (k, partial) => api('POST', '/v1/challenges/stage',
      await P.signedResponse(state.identity, view.challenge, `stage ${k}:${partial}`)),
    text: (t) => { $('prompt-text').textContent = t; },
    openStream: async () => api('POST', view.prompt.data.stream, await P.signedStreamOpen(state.identity, view.challenge)),
  };
  const renderer = render(view.prompt, area, form, () => send().catch(showError), context);
  state.challenge = { view, renderer, sending: false };
  $('send').hidden = Boolean(renderer.auto);
  form.hidden = false;
  form.dataset.family = view.prompt.family;
  (renderer.focus || form.querySelector('input, button'))?.focus();
  tick();
});

// Rejections that leave the challenge unanswered (the answer never reached a verdict); every
// other verdict is final: the first answer to a challenge counts, right or wrong.
const NOT_JUDGED = ['malformed', 'message_too_large', 'answer_too_large', 'bad_identity_signature',
  'unknown_challenge', 'issuer_unreachable', 'overloaded', 'internal'];

async function send() {
  const c = state.challenge;
  if (!c || c.sending || c.done) return;
  const answer = c.renderer.answer();
  if (!answer) {
    showError({ message: 'Give an answer first.' });
    return;
  }
  c.sending = true;
  $('send').disabled = true;
  $('verdict').hidden = true;
  $('verdict-code').textContent = '';
  showError(null);
  try {
    if (c.renderer.advance && (await c.renderer.advance())) return;
    const response = await P.signedResponse(state.identity, c.view.challenge, answer);
    const v = await api('POST', '/v1/responses', response);
    showVerdict(v.verdict, `Challenge ${v.j} of window ${v.window} (${v.family}) accepted.`);
    c.done = 'answered';
    await refresh();
    nextInSlot();
  } catch (e) {
    if (!e.code) throw e;
    showVerdict(e.code, e.message);
    if (!NOT_JUDGED.includes(e.code)) {
      c.done = e.code === 'challenge_expired' ? 'time is up' : 'answered';
      await refresh();
      nextInSlot();
    }
  } finally {
    c.sending = false;
    update();
  }
}

// Inside a ceremony slot the steps come one after another at moments the node sets (touch
// prompts a few seconds apart): once a challenge has its verdict, the page asks for the next
// one by itself, and waits on the node's `step_not_open` moment.
function nextInSlot() {
  if (state.window?.slot_mode === 'open' || state.allPassed) return;
  clearTimeout(state.waiting);
  state.waiting = setTimeout(() => $('get').click(), 300);
}

$('challenge').addEventListener('submit', (e) => {
  e.preventDefault();
  send().catch(showError);
});

// ---- the clock ----

function tick() {
  const w = state.window;
  if (w) {
    const left = w.end - now();
    $('window-ends').textContent = left > 0 ? duration(left) : 'now: refreshing';
    if (left <= -1000 && !state.refreshing) {
      state.refreshing = true;
      refresh().catch(showError).finally(() => { state.refreshing = false; });
    }
  }
  const c = state.challenge;
  if (c) {
    const left = c.view.challenge.challenge.deadline - now();
    const out = $('countdown');
    out.textContent = c.done || (left > 0 ? minutes(left) : 'time is up');
    out.classList.toggle('late', !c.done && left <= 0);
    out.classList.toggle('soon', !c.done && left > 0 && left <= 5000);
  }
}

function update() {
  showIdentity();
  const id = Boolean(state.identity);
  $('register').disabled = !id || state.registered;
  $('visual-opt-out').disabled = !id || state.registered;
  $('enrol').disabled = !id || !state.registered;
  $('link').disabled = !id || !state.registered;
  $('get').disabled = !id || !state.registered || Boolean(state.allPassed);
  const c = state.challenge;
  $('send').disabled = !c || c.sending || Boolean(c.done);
  if (c?.done) $('answer-area').querySelectorAll('input, button').forEach((e) => { e.disabled = true; });
}

async function main() {
  if (!window.crypto?.subtle || !window.indexedDB) {
    showError({ message: 'This browser lacks WebCrypto or IndexedDB; the page needs both (and a secure origin).' });
    return;
  }
  state.identity = await P.loadIdentity();
  update();
  await refresh();
  setInterval(tick, 250);
  document.body.dataset.ready = 'true';
}

main().catch(showError);
