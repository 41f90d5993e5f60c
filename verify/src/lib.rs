//! The light verifier of the Human Challenge Oracle, `no_std`: what a chain runtime, a contract,
//! a wasm sandbox or a DAO tool links to check that an identity was active in a window, and as
//! which class, without trusting the node that served the answer.
//!
//! After each window a quorum of the committee signs a [`WindowSummary`]: the Merkle root of
//! the window's sorted active set, whose leaves commit to each identity's key and [`Class`].
//! The [`WindowCertificate`] carries those signatures; a [`MembershipProof`] places one
//! identity under the root. [`LightVerifier`] checks both against the committee keys and quorum
//! a consumer pinned once (`GET /v1/params`), and names every refusal with a stable
//! [`CertError::code`].
//!
//! This crate owns the bytes those checks rest on, and the rest of the workspace uses it rather
//! than a copy: the fixed-size keys, digests and signatures ([`IdentityId`], [`NodeId`],
//! [`Digest`], [`Sig`]), the signing digest every protocol message uses ([`sign::digest`]), the
//! window summary's signed bytes ([`WindowSummary::signing_digest`]), the Merkle tree and proof
//! ([`merkle`]) and the class names and leaf bytes, and the account links' statement, leaves
//! and EIP-191 recovery ([`link`], [`account`]). Its dependencies are `ed25519-dalek`,
//! `blake3` and `sha3` (Keccak-256, for EVM addresses' checksums), all without std; `k256`
//! (secp256k1 ECDSA with public-key recovery) behind the default `eip191` feature, which checks
//! an EVM account's signature of a link (a consumer of certificates and link proofs does without
//! it); and `serde` (with `alloc`) behind the default `serde` feature, which gives every type the
//! JSON shape the node serves (hex strings for bytes).
//!
//! ```
//! use ed25519_dalek::SigningKey;
//! use hco_verify::{Class, Digest, IdentityId, LightVerifier, NodeId, WindowCertificate};
//! use hco_verify::{WindowSummary, sign};
//!
//! // A committee of three closes window 7 (what the nodes do).
//! let keys: Vec<SigningKey> = (1..=3).map(|i| SigningKey::from_bytes(&[i; 32])).collect();
//! let committee: Vec<NodeId> = keys.iter().map(|k| NodeId(k.verifying_key().to_bytes())).collect();
//! let (person, agent) = (IdentityId([7; 32]), IdentityId([8; 32]));
//! let active = vec![(person, Class::Human), (agent, Class::Agent)];
//! let (summary, set) = WindowSummary::of(7, active, Digest::ZERO);
//! let digest = summary.signing_digest();
//! let signatures = committee.iter().zip(&keys).map(|(n, k)| (*n, sign::sign(k, &digest))).collect();
//! let certificate = WindowCertificate { summary, signatures };
//!
//! // What a consumer checks.
//! let verifier = LightVerifier::new(committee.clone(), 2).unwrap();
//! let proof = set.proof(&person).unwrap();
//! assert_eq!(verifier.verify_membership(&certificate, &person, &proof), Ok(Class::Human));
//! let proof = set.proof(&agent).unwrap();
//! let refused = verifier.verify_member_of_class(&certificate, &agent, Class::Human, &proof);
//! assert_eq!(refused.unwrap_err().code(), "wrong_class");
//! assert_eq!(LightVerifier::new(committee, 1).unwrap_err().code(), "bad_quorum");
//! ```
//!
//! **Account links.** An identity links an external account (a CAIP-10 id such as
//! `eip155:1:0x…`) with a [`SignedLink`]: one statement signed by the identity key and, with
//! EIP-191 `personal_sign`, by the wallet ([`link`]). Each window's summary commits to the
//! window's links ([`WindowSummary::links_root`]); a DAO counting one vote per person per wallet
//! asks [`LightVerifier::verify_linked`]:
//!
//! ```
//! # use ed25519_dalek::SigningKey;
//! # use hco_verify::{AccountId, Class, Digest, IdentityId, LightVerifier, NodeId, WindowCertificate, WindowSummary, sign};
//! # let keys: Vec<SigningKey> = (1..=3).map(|i| SigningKey::from_bytes(&[i; 32])).collect();
//! # let committee: Vec<NodeId> = keys.iter().map(|k| NodeId(k.verifying_key().to_bytes())).collect();
//! let wallet = "eip155:1:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
//! let person = IdentityId([7; 32]);
//! // The committee closes window 7 with the person active and their wallet linked.
//! let links = vec![(AccountId::parse(wallet).unwrap(), person)];
//! let (summary, set, linked) =
//!     WindowSummary::with_links(7, vec![(person, Class::Human)], links, Digest::ZERO);
//! # let digest = summary.signing_digest();
//! # let signatures = committee.iter().zip(&keys).map(|(n, k)| (*n, sign::sign(k, &digest))).collect();
//! # let certificate = WindowCertificate { summary, signatures };
//! // What the DAO checks: the wallet was linked to an identity active as a person.
//! let verifier = LightVerifier::new(committee, 2).unwrap();
//! let link = linked.proof(&AccountId::parse(wallet).unwrap()).unwrap();
//! let member = set.proof(&link.identity).unwrap();
//! let id = link.identity;
//! assert_eq!(verifier.verify_linked(&certificate, wallet, &id, &link, &member, Class::Human), Ok(()));
//! let refused = verifier.verify_linked(&certificate, wallet, &id, &link, &member, Class::Agent);
//! assert_eq!(refused.unwrap_err().code(), "wrong_class");
//! ```

#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod account;
mod bytes;
pub mod certificate;
mod class;
mod light;
pub mod link;
pub mod merkle;
pub mod sign;

pub use account::{AccountError, AccountId};
pub use bytes::{AccountSig, Digest, IdentityId, NodeId, Sig};
pub use certificate::{ActiveSet, MembershipProof, WindowCertificate, WindowSummary, member_leaf};
pub use class::Class;
pub use light::{CertError, LightVerifier};
pub use link::{AccountLink, LinkError, LinkProof, LinkSet, SignedLink, link_leaf};
pub use merkle::{MerkleProof, MerkleTree};

/// The message version this code speaks: every signed protocol message carries it, the window
/// summary among them.
pub const VERSION: u8 = 1;

// The README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
