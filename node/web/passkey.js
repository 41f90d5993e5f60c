// Passkeys for the presence family. Enrolment runs navigator.credentials.create() with the
// options the node derives from (identity, created_at), so the node keeps no ceremony state;
// an assertion runs navigator.credentials.get() with the challenge id as its WebAuthn
// challenge, which binds it to (identity, window, index). Credentials travel as the JSON the
// node's WebAuthn library reads: binary fields in base64url without padding.

export function b64url(buffer) {
  let s = '';
  for (const b of new Uint8Array(buffer)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromB64url(s) {
  const padded = s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4);
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

/** A copy of `value` without null or undefined members (the browser rejects some nulls). */
function compact(value) {
  if (Array.isArray(value)) return value.map(compact);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, compact(v)]));
  }
  return value;
}

export function supported() {
  return Boolean(window.PublicKeyCredential && navigator.credentials);
}

/** Creates a passkey from the node's creation options; returns the registration JSON text. */
export async function create(options) {
  const pk = compact(options.publicKey);
  pk.challenge = fromB64url(pk.challenge);
  pk.user.id = fromB64url(pk.user.id);
  pk.excludeCredentials = (pk.excludeCredentials || []).map((c) => ({ ...c, id: fromB64url(c.id) }));
  const cred = await navigator.credentials.create({ publicKey: pk });
  return JSON.stringify({
    id: cred.id,
    rawId: b64url(cred.rawId),
    type: cred.type,
    response: {
      attestationObject: b64url(cred.response.attestationObject),
      clientDataJSON: b64url(cred.response.clientDataJSON),
    },
    extensions: {},
  });
}

/**
 * Asks the authenticator for an assertion over `challenge` (the challenge id, 32 bytes) with one
 * of the enrolled credentials; returns the assertion JSON text that is the answer.
 */
export async function assert(challenge, passkeys) {
  const cred = await navigator.credentials.get({
    publicKey: {
      challenge,
      rpId: passkeys.rp_id,
      allowCredentials: passkeys.passkeys.map((p) => ({ type: 'public-key', id: fromB64url(p.credential_id) })),
      userVerification: passkeys.user_verification,
      timeout: 60000,
    },
  });
  const r = cred.response;
  return JSON.stringify({
    id: cred.id,
    rawId: b64url(cred.rawId),
    type: cred.type,
    response: {
      authenticatorData: b64url(r.authenticatorData),
      clientDataJSON: b64url(r.clientDataJSON),
      signature: b64url(r.signature),
      userHandle: r.userHandle ? b64url(r.userHandle) : null,
    },
    extensions: {},
  });
}
