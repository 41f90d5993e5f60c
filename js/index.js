// @hco/verify: checks Human Challenge Oracle window certificates and membership proofs, the way
// the Rust light verifier (hco_oracle::LightVerifier) does, with the same error codes.
//
// A certificate is a window summary {version, t, root, count, links_root, params} signed by a
// quorum of the committee (ed25519 over a BLAKE3 derive-key digest of the summary); a membership
// proof is a BLAKE3 Merkle path from the leaf (identity, class) to the certified root, a link
// proof one from the leaf (account, identity) to the certified links_root. An account link is a
// statement signed by the identity (ed25519) and by the account (EIP-191 personal_sign,
// secp256k1). The byte layouts are in the integrator guide (docs/integrator.md) and in src/, next
// to the code that builds them.

export { CODES, CLASSES, VerifyError } from './src/errors.js';
export { toHex } from './src/bytes.js';
export { domainDigest, summaryDigest, memberLeaf, verifyPath } from './src/digest.js';
export {
  checksumAddress,
  parseAccount,
  linkText,
  personalMessageHash,
  recoverPersonalSign,
  linkLeaf,
  verifyLink,
} from './src/links.js';
export { LightVerifier } from './src/verifier.js';
export {
  fetchParams,
  fetchAndVerify,
  isActiveHuman,
  fetchAndVerifyLinked,
  wasActiveHuman,
  windowAt,
} from './src/http.js';
