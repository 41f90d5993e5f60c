// The error a failed check throws, its codes, and the identity classes.

/** Every code a VerifyError carries. The first nine are the Rust light verifier's
 * (`CertError::code`); `wrong_window` is the protocol's code for a message of another window
 * (the certificate is not for the window asked about); `not_active` is the node's answer when it
 * has no certified proof; `malformed` is input that does not parse (Rust refuses it while
 * deserializing); `fetch_failed` is a node that could not be reached or answered with an error.
 * The last seven are account links': the account id's (`malformed_account`,
 * `unsupported_namespace`, `bad_checksum`: Rust's `AccountError::code`), a signed link's
 * (`bad_identity_signature`, `bad_account_signature`, `wrong_network`: `LinkError::code`) and
 * `link_not_in_window` (`CertError::code`, as the account codes). */
export const CODES = Object.freeze([
  'bad_quorum',
  'not_in_committee',
  'duplicate_signer',
  'bad_signature',
  'below_quorum',
  'params_mismatch',
  'count_mismatch',
  'not_included',
  'wrong_class',
  'wrong_window',
  'not_active',
  'malformed',
  'fetch_failed',
  'malformed_account',
  'unsupported_namespace',
  'bad_checksum',
  'bad_identity_signature',
  'bad_account_signature',
  'wrong_network',
  'link_not_in_window',
  'not_linked',
]);

/** The classes an identity is certified as, in leaf-byte order (0x00 human, 0x01 agent). */
export const CLASSES = Object.freeze(['human', 'agent']);

/** Why a certificate or proof does not verify: `code` is one of CODES, stable. */
export class VerifyError extends Error {
  constructor(code, message, details = {}) {
    super(message);
    this.name = 'VerifyError';
    this.code = code;
    this.details = details;
  }
}

export const fail = (code, message, details) => {
  throw new VerifyError(code, message, details);
};
