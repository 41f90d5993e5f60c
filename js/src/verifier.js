// The verifier: LightVerifier and the membership checks after the certificate's.

import { CLASSES, fail } from './errors.js';
import { bytesOf, equal, toHex, u64 } from './bytes.js';
import { object, parseCertificate, parsePath, parseProof } from './parse.js';
import { memberLeaf, summaryDigest, verifyPath } from './digest.js';
import { verifySignature } from './ed25519.js';
import { linkLeaf, parseAccount } from './links.js';

/** The membership checks after the certificate's (as Rust's `verify_membership`). */
function included(summary, certificate, id, proof) {
  const p = parseProof(proof);
  const idBytes = bytesOf(id, 32, 'identity');
  if (p.path.leafCount !== BigInt(summary.count)) {
    fail(
      'count_mismatch',
      `the proof is for a set of ${p.path.leafCount} identities, the certificate has ${summary.count}`,
      { proof: Number(p.path.leafCount), certified: summary.count },
    );
  }
  const leaf = memberLeaf(idBytes, p.class);
  if (!equal(p.id, idBytes) || !verifyPath(proof.path, certificate.summary.root, leaf)) {
    fail('not_included', `the proof does not show ${toHex(idBytes)} in the active set`, { id: toHex(idBytes) });
  }
  return p.class;
}

function ofClass(id, certified, cls) {
  if (certified !== cls) {
    const hex = toHex(bytesOf(id, 32, 'identity'));
    fail('wrong_class', `${hex} was active as ${certified}, not as ${cls}`, { id: hex, certified, expected: cls });
  }
}

/**
 * What a consumer trusts: the committee's ed25519 keys, the quorum, and optionally the
 * parameter digest. As the Rust `LightVerifier::new`: `bad_quorum` unless the committee lists
 * distinct keys and the quorum is a strict majority of them (`n/2 < quorum <= n`). The quorum is
 * the number `GET /v1/params` serves (`params.quorum`), never a config file's `0`.
 */
export class LightVerifier {
  #committee;
  #quorum;
  #params;

  constructor({ committee, quorum, params } = {}) {
    if (!Array.isArray(committee)) fail('malformed', 'committee: expected an array of keys');
    const keys = committee.map((k, i) => bytesOf(k, 32, `committee[${i}]`));
    const distinct = new Set(keys.map(toHex));
    const n = keys.length;
    if (!Number.isSafeInteger(quorum) || quorum < 0 || quorum > 0xffffffff) {
      fail('bad_quorum', `quorum ${quorum} is not a u32`, { quorum, committee: distinct.size });
    }
    if (distinct.size !== n || !(Math.floor(n / 2) < quorum && quorum <= n)) {
      fail(
        'bad_quorum',
        `quorum ${quorum} is not a strict majority of a committee of ${distinct.size} distinct members`,
        { quorum, committee: distinct.size },
      );
    }
    this.#committee = new Set(distinct);
    this.#quorum = quorum;
    this.#params = params === undefined || params === null ? null : bytesOf(params, 32, 'params');
  }

  /** The quorum this verifier asks for. */
  get quorum() {
    return this.#quorum;
  }

  /**
   * Checks the certificate: (the window, when `options.window` is given), the parameter digest
   * when the verifier pins one, distinct committee signers, valid signatures, at least a quorum.
   * Returns the summary as `{version, t, root, count, links_root, params}` (t and count as numbers, byte
   * strings as lower-case hex).
   */
  verifyCertificate(certificate, options = {}) {
    const cert = parseCertificate(certificate);
    const { summary } = cert;
    if (options.window !== undefined && u64(options.window, 'window') !== summary.t) {
      fail('wrong_window', `the certificate is for window ${summary.t}, not ${options.window}`, {
        certified: Number(summary.t),
        expected: Number(options.window),
      });
    }
    if (this.#params && !equal(this.#params, summary.params)) {
      fail('params_mismatch', 'the certificate was made under other network parameters');
    }
    const seen = new Set();
    for (const [node] of cert.signatures) {
      const hex = toHex(node);
      if (!this.#committee.has(hex)) fail('not_in_committee', `signer ${hex} is not in the committee`, { signer: hex });
      if (seen.has(hex)) fail('duplicate_signer', `signer ${hex} appears twice`, { signer: hex });
      seen.add(hex);
    }
    const digest = summaryDigest(certificate.summary);
    for (const [node, sig] of cert.signatures) {
      if (!verifySignature(node, digest, sig)) {
        fail('bad_signature', `the signature of ${toHex(node)} does not verify`, { signer: toHex(node) });
      }
    }
    if (cert.signatures.length < this.#quorum) {
      fail('below_quorum', `${cert.signatures.length} signers, quorum is ${this.#quorum}`, {
        got: cert.signatures.length,
        quorum: this.#quorum,
      });
    }
    return {
      version: summary.version,
      t: Number(summary.t),
      root: toHex(summary.root),
      count: Number(summary.count),
      links_root: toHex(summary.linksRoot),
      params: toHex(summary.params),
    };
  }

  /**
   * Checks the certificate and that `proof` shows `id` active in its window; returns the class
   * it was active as (`"human"` or `"agent"`, committed to in the certified leaf). Never treat
   * an agent's success as "a person": ask `verifyMemberOfClass(…, "human", …)`.
   */
  verifyMembership(certificate, id, proof, options = {}) {
    const summary = this.verifyCertificate(certificate, options);
    return included(summary, certificate, id, proof);
  }

  /** Checks that `id` was active in the certificate's window *as* `cls` (`"human"` or
   * `"agent"`): `wrong_class` when it was active as the other class. */
  verifyMemberOfClass(certificate, id, cls, proof, options = {}) {
    if (!CLASSES.includes(cls)) fail('malformed', `class: expected "human" or "agent", got ${JSON.stringify(cls)}`);
    const certified = this.verifyMembership(certificate, id, proof, options);
    ofClass(id, certified, cls);
  }

  /**
   * Checks that `account` (a CAIP-10 id, any valid spelling) belonged to `id` in the
   * certificate's window and that `id` was active in it as `cls` (Rust
   * `LightVerifier::verify_linked`). In order: the account parses (`malformed_account`,
   * `unsupported_namespace`, `bad_checksum`), the certificate verifies, `linkProof` places
   * (account, id) under the certified `links_root` (`link_not_in_window`), `membershipProof`
   * places `id` under `root` (`count_mismatch`, `not_included`) as `cls` (`wrong_class`).
   * Returns the canonical account.
   */
  verifyLinked(certificate, account, id, linkProof, membershipProof, cls, options = {}) {
    const canonical = parseAccount(account).canonical;
    if (!CLASSES.includes(cls)) fail('malformed', `class: expected "human" or "agent", got ${JSON.stringify(cls)}`);
    const summary = this.verifyCertificate(certificate, options);
    const idBytes = bytesOf(id, 32, 'identity');
    const lp = object(linkProof, 'link proof');
    if (typeof lp.account !== 'string') fail('malformed', 'link proof.account: expected a string');
    let proofAccount;
    try {
      proofAccount = parseAccount(lp.account).canonical;
    } catch (e) {
      // Rust refuses such a proof while deserializing it.
      fail('malformed', `link proof.account: ${e.message}`);
    }
    const proofId = bytesOf(lp.identity, 32, 'link proof.identity');
    parsePath(lp.path);
    if (
      proofAccount !== canonical ||
      !equal(proofId, idBytes) ||
      !verifyPath(lp.path, summary.links_root, linkLeaf(canonical, idBytes))
    ) {
      fail('link_not_in_window', `the link proof does not show ${canonical} linked to ${toHex(idBytes)} in the certified window`, {
        account: canonical,
        id: toHex(idBytes),
      });
    }
    const certified = included(summary, certificate, idBytes, membershipProof);
    ofClass(idBytes, certified, cls);
    return canonical;
  }

  /** Checks a body as `GET /v1/windows/{t}/proofs/{id}` serves it (`{certificate, proof}`) for
   * identity `id` in window `window`, as class `cls` when given. Returns
   * `{active: true, id, class, window, count}` or throws a VerifyError. */
  verifyProofResponse(body, id, window, cls) {
    const b = object(body, 'proof response');
    const options = { window };
    const certified =
      cls === undefined || cls === null
        ? this.verifyMembership(b.certificate, id, b.proof, options)
        : (this.verifyMemberOfClass(b.certificate, id, cls, b.proof, options), cls);
    return {
      active: true,
      id: toHex(bytesOf(id, 32, 'identity')),
      class: certified,
      window: Number(b.certificate.summary.t),
      count: Number(b.certificate.summary.count),
    };
  }
}
