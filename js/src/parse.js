// Parsing the served JSON: summaries, certificates, Merkle paths and membership proofs.

import { CLASSES, fail } from './errors.js';
import { bytesOf, u64 } from './bytes.js';

export function object(value, what) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    fail('malformed', `${what}: expected an object`);
  }
  return value;
}

export function parseSummary(summary) {
  const s = object(summary, 'summary');
  if (!Number.isInteger(s.version) || s.version < 0 || s.version > 255) {
    fail('malformed', 'summary.version: expected a byte');
  }
  return {
    version: s.version,
    t: u64(s.t, 'summary.t'),
    root: bytesOf(s.root, 32, 'summary.root'),
    count: u64(s.count, 'summary.count'),
    linksRoot: bytesOf(s.links_root, 32, 'summary.links_root'),
    params: bytesOf(s.params, 32, 'summary.params'),
  };
}

export function parseCertificate(certificate) {
  const c = object(certificate, 'certificate');
  if (!Array.isArray(c.signatures)) fail('malformed', 'certificate.signatures: expected an array');
  return {
    summary: parseSummary(c.summary),
    signatures: c.signatures.map((pair, i) => {
      if (!Array.isArray(pair) || pair.length !== 2) {
        fail('malformed', `certificate.signatures[${i}]: expected [node, sig]`);
      }
      return [bytesOf(pair[0], 32, `signatures[${i}] node`), bytesOf(pair[1], 64, `signatures[${i}] sig`)];
    }),
  };
}

export function parsePath(path) {
  const p = object(path, 'path');
  if (!Array.isArray(p.siblings)) fail('malformed', 'path.siblings: expected an array');
  return {
    index: u64(p.index, 'path.index'),
    leafCount: u64(p.leaf_count, 'path.leaf_count'),
    siblings: p.siblings.map((s, i) => bytesOf(s, 32, `path.siblings[${i}]`)),
  };
}

export function parseProof(proof) {
  const p = object(proof, 'proof');
  if (!CLASSES.includes(p.class)) {
    fail('malformed', `proof.class: expected "human" or "agent", got ${JSON.stringify(p.class)}`);
  }
  return { id: bytesOf(p.id, 32, 'proof.id'), class: p.class, path: parsePath(p.path) };
}
