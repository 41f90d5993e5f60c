// Types of @hco/verify (hand-written; the package is plain ES modules, no build step).

/** A byte string: lower-case (or upper-case) hex, or the raw bytes. */
export type Bytes = string | Uint8Array;

/** The class an identity is certified as. */
export type IdentityClass = 'human' | 'agent';

/** Every code a VerifyError carries. */
export type VerifyErrorCode =
  | 'bad_quorum'
  | 'not_in_committee'
  | 'duplicate_signer'
  | 'bad_signature'
  | 'below_quorum'
  | 'params_mismatch'
  | 'count_mismatch'
  | 'not_included'
  | 'wrong_class'
  | 'wrong_window'
  | 'not_active'
  | 'malformed'
  | 'fetch_failed'
  | 'malformed_account'
  | 'unsupported_namespace'
  | 'bad_checksum'
  | 'bad_identity_signature'
  | 'bad_account_signature'
  | 'wrong_network'
  | 'link_not_in_window'
  | 'not_linked';

export const CODES: readonly VerifyErrorCode[];
export const CLASSES: readonly IdentityClass[];

/** Why a certificate or proof does not verify; `code` is stable. */
export class VerifyError extends Error {
  readonly name: 'VerifyError';
  readonly code: VerifyErrorCode;
  /** What the message says, as values (signer, got/quorum, certified/expected, url, …). */
  readonly details: Record<string, unknown>;
  constructor(code: VerifyErrorCode, message: string, details?: Record<string, unknown>);
}

/** A window summary as served (JSON). */
export interface WindowSummary {
  version: number;
  t: number;
  root: string;
  count: number;
  /** Merkle root of the window's account links. */
  links_root: string;
  params: string;
}

/** A window certificate as served by `GET /v1/windows/{t}/certificate`. */
export interface WindowCertificate {
  summary: WindowSummary;
  /** `[node key, signature]` pairs, hex. */
  signatures: [string, string][];
}

/** A Merkle path. */
export interface MerkleProof {
  index: number;
  leaf_count: number;
  siblings: string[];
}

/** A membership proof. */
export interface MembershipProof {
  id: string;
  class: IdentityClass;
  path: MerkleProof;
}

/** The body of `GET /v1/windows/{t}/proofs/{id}`. */
export interface ProofResponse {
  certificate: WindowCertificate;
  proof: MembershipProof;
}

/** What a consumer pins (from `GET /v1/params`: `params.committee`, `params.quorum`, `digest`). */
export interface VerifierOptions {
  /** The committee's ed25519 keys. */
  committee: Bytes[];
  /** How many must sign: a strict majority of the committee (`n/2 < quorum <= n`). */
  quorum: number;
  /** The parameter digest certificates must name; not checked when absent. */
  params?: Bytes | null;
}

/** A checked summary: numbers, and byte strings as lower-case hex. */
export interface CheckedSummary {
  version: number;
  t: number;
  root: string;
  count: number;
  links_root: string;
  params: string;
}

/** An account link statement as JSON. */
export interface AccountLink {
  /** The network's parameter digest. */
  network: string;
  identity: string;
  /** A CAIP-10 account id (`eip155:<chain id>:0x…`). */
  account: string;
  from_window: number;
}

/** A link signed by the identity (ed25519) and the account (EIP-191 personal_sign). */
export interface SignedLink {
  link: AccountLink;
  /** ed25519, 64 bytes hex. */
  identity_sig: Bytes;
  /** r ‖ s ‖ v, 65 bytes hex (a `0x` prefix is accepted). */
  account_sig: Bytes;
}

/** A signed link that verified, canonical. */
export interface VerifiedLink {
  network: string;
  identity: string;
  account: string;
  from_window: number;
  /** The text both keys signed. */
  text: string;
}

/** A proof that an account is linked to an identity in a certified window. */
export interface LinkProof {
  account: string;
  identity: string;
  path: MerkleProof;
}

/** A parsed CAIP-10 account id. */
export interface ParsedAccount {
  /** `eip155:<chain id>:0x<40 lower-case hex>`. */
  canonical: string;
  /** The CAIP-2 chain id, `eip155:<chain id>`. */
  chainId: string;
  namespace: string;
  /** `0x` and 40 lower-case hex digits. */
  address: string;
}

/** A proof that verified. */
export interface Active {
  active: true;
  id: string;
  class: IdentityClass;
  window: number;
  /** Identities active in the window. */
  count: number;
}

export interface WindowOption {
  /** The window the certificate must be for (`wrong_window` otherwise). */
  window?: number | bigint;
}

export class LightVerifier {
  /** Throws `bad_quorum` unless the keys are distinct and the quorum a strict majority. */
  constructor(options: VerifierOptions);
  readonly quorum: number;
  verifyCertificate(certificate: WindowCertificate, options?: WindowOption): CheckedSummary;
  /** The class `id` was active as; never read an agent's success as "a person". */
  verifyMembership(
    certificate: WindowCertificate,
    id: Bytes,
    proof: MembershipProof,
    options?: WindowOption,
  ): IdentityClass;
  /** Throws `wrong_class` when `id` was active as the other class. */
  verifyMemberOfClass(
    certificate: WindowCertificate,
    id: Bytes,
    cls: IdentityClass,
    proof: MembershipProof,
    options?: WindowOption,
  ): void;
  /** Checks that `account` belonged to `id` in the certificate's window and that `id` was
   * active as `cls`; returns the canonical account. Throws `malformed_account`,
   * `unsupported_namespace`, `bad_checksum`, the certificate's codes, `link_not_in_window`,
   * `count_mismatch`, `not_included`, `wrong_class`. */
  verifyLinked(
    certificate: WindowCertificate,
    account: string,
    id: Bytes,
    linkProof: LinkProof,
    membershipProof: MembershipProof,
    cls: IdentityClass,
    options?: WindowOption,
  ): string;
  verifyProofResponse(
    body: ProofResponse,
    id: Bytes,
    window: number | bigint,
    cls?: IdentityClass | null,
  ): Active;
}

export interface FetchOptions {
  /** A fetch to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
}

export interface FetchAndVerifyOptions extends VerifierOptions, FetchOptions {
  /** The class to require; any class when absent. */
  class?: IdentityClass | null;
}

/** `GET {nodeUrl}/v1/params` as LightVerifier options. Pin what it returns. */
export function fetchParams(
  nodeUrl: string,
  options?: FetchOptions,
): Promise<{ committee: string[]; quorum: number; params: string }>;

/** Fetches `GET {nodeUrl}/v1/windows/{window}/proofs/{identityId}` and checks it offline. */
export function fetchAndVerify(
  nodeUrl: string,
  identityId: Bytes,
  window: number | bigint,
  options: FetchAndVerifyOptions,
): Promise<Active>;

/** Whether `id` was active in window `t` as a person (a proof fetched from `nodeUrl`). */
export function isActiveHuman(
  nodeUrl: string,
  id: Bytes,
  t: number | bigint,
  verifierOpts: VerifierOptions & FetchOptions,
): Promise<boolean>;

/** What `fetchAndVerifyLinked` returns for an account linked to an active identity. */
export interface Linked {
  linked: true;
  /** The account, canonical. */
  account: string;
  /** The identity it is linked to (hex). */
  id: string;
  class: IdentityClass;
  window: number;
}

/** Fetches `GET {nodeUrl}/v1/windows/{window}/links/{account}` and checks it offline: the
 * certificate, the link under `links_root`, the identity's membership as `class` (default
 * "human"). Throws `not_linked` when the node has none. */
export function fetchAndVerifyLinked(
  nodeUrl: string,
  account: string,
  window: number | bigint,
  options: VerifierOptions & FetchOptions & { class?: IdentityClass },
): Promise<Linked>;

/** Whether `account` was linked in window `t` to an identity active in it as a person. */
export function wasActiveHuman(
  nodeUrl: string,
  account: string,
  t: number | bigint,
  verifierOpts: VerifierOptions & FetchOptions,
): Promise<boolean>;

/** The window containing `ms`: `floor((ms - genesis_ms) / window_ms)`. */
export function windowAt(params: { genesis_ms: number; window_ms: number }, ms: number): number;

/** The 32 bytes committee members sign for a summary. */
export function summaryDigest(summary: WindowSummary): Uint8Array;
/** `BLAKE3.derive_key(domain, concat(u64_le(len(part)) ‖ part))`. */
export function domainDigest(domain: string, parts: Uint8Array[]): Uint8Array;
/** The Merkle leaf `BLAKE3(0x00 ‖ id ‖ class byte)`. */
export function memberLeaf(id: Bytes, cls: IdentityClass): Uint8Array;
/** Whether `leaf` is at `path.index` under `root`. */
export function verifyPath(path: MerkleProof, root: Bytes, leaf: Bytes): boolean;
/** Lower-case hex. */
export function toHex(bytes: Uint8Array): string;

/** Checks both signatures of a signed link (and its network, when given): throws
 * `malformed_account`, `unsupported_namespace`, `bad_checksum`, `wrong_network`,
 * `bad_identity_signature`, `bad_account_signature`. */
export function verifyLink(signedLink: SignedLink, options?: { network?: Bytes | null }): VerifiedLink;
/** Parses a CAIP-10 account id (eip155 only). */
export function parseAccount(account: string): ParsedAccount;
/** The five-line text an account link's keys sign. */
export function linkText(link: AccountLink): string;
/** The Merkle leaf `BLAKE3(0x00 ‖ "hco link leaf v1" ‖ 0x00 ‖ account ‖ 0x00 ‖ identity)`. */
export function linkLeaf(account: string, identity: Bytes): Uint8Array;
/** keccak256("\x19Ethereum Signed Message:\n" ‖ length ‖ message). */
export function personalMessageHash(message: string | Uint8Array): Uint8Array;
/** The 20-byte address that made a personal_sign signature, or null. */
export function recoverPersonalSign(message: string | Uint8Array, signature: Bytes): Uint8Array | null;
/** The EIP-55 checksummed `0x…` spelling of an address. */
export function checksumAddress(address: Bytes): string;
