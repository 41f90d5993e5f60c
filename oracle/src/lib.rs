//! The protocol core of the Human Challenge Oracle.
//!
//! Every active identity must, in every window `t`, answer a fresh challenge bound to
//! `(identity, t, j)` before its deadline, so that keeping `s` identities alive costs `s`
//! people's real-time effort. This crate is the deterministic heart of a committee node:
//!
//! - **messages** ([`SignedRegister`], [`SignedRequest`], [`SignedChallenge`], [`Response`],
//!   [`Acceptance`]) with domain-separated ed25519 signatures and a size-limited [`codec`];
//! - **parameters and windows** ([`NetworkParams`]): window arithmetic, ceremony slots
//!   ([`SlotMode`]), lifecycle thresholds and the parameter digest peers compare;
//! - **issuance and verification** ([`Oracle`], with the `ledger` feature): the assigned issuer
//!   by rendezvous hashing, per-window secrets, seeded family choice, verification in a fixed
//!   order with a stable [`Reason`] code for every rejection, batch signature checks, acceptances
//!   sealed per batch and group-committed to sled before they are acknowledged;
//! - **certificates** ([`WindowSummary`], [`WindowCertificate`]): the Merkle root of each
//!   window's sorted active set signed by a quorum, with membership proofs checked by the
//!   [`LightVerifier`]. The verifier, the byte types, [`sign::digest`], the Merkle tree and
//!   [`Class`] are the `no_std` crate `hco-verify`'s, re-exported here: a chain or a contract
//!   links that crate alone;
//! - **reveal and audit** ([`audit::audit_window`]): after a window closes, issuers publish its
//!   secret and anyone re-derives every challenge to check every acceptance.
//!
//! Nothing in this crate reads the clock, touches the network or spawns tasks: `now` is a
//! parameter (see [`Clock`]), which is what lets tests and the simulator drive it step by step.
//!
//! ```
//! # #[cfg(feature = "ledger")] {
//! use hco_challenges::{Class, Registry};
//! use hco_oracle::{Oracle, Ledger, Response, SignedRegister, SignedRequest, testing};
//!
//! let node_key = testing::key(1);
//! let params = testing::params_for(&[testing::node_id(&node_key)]);
//! let ledger = Ledger::temporary(params.digest()).unwrap();
//! let oracle = Oracle::new(params.clone(), Registry::builtin(), node_key, ledger).unwrap();
//!
//! // An agent identity registers, asks for challenge j = 0 of the current window and solves it.
//! let agent = testing::key(100);
//! let now = params.genesis_ms + 5_000;
//! oracle.register(&SignedRegister::new(&agent, Class::Agent, now), now).unwrap().unwrap();
//! let t = params.window_at(now).unwrap();
//! let issued = oracle.issue(&SignedRequest::new(&agent, t, 0), now).unwrap().unwrap();
//! let family = oracle.registry().get(&issued.prompt.family).unwrap();
//! let answer = family.solve(&issued.prompt).unwrap();
//! let response = Response::new(&agent, issued.challenge.clone(), answer);
//! let sealed = oracle.verify_response(&response, now + 1_000).unwrap().unwrap();
//! assert_eq!(sealed.acceptance.challenge().t, t);
//!
//! // The same response again: the first answer is final.
//! let again = oracle.verify_response(&response, now + 2_000).unwrap().unwrap_err();
//! assert_eq!(again.code(), "already_answered");
//! # }
//! ```

pub mod admission;
pub mod admission_game;
pub mod audit;
mod bytes;
pub mod certificate;
mod clock;
pub mod codec;
pub mod evidence;
pub mod lifecycle;
pub mod merkle;
mod messages;
mod params;
pub mod policy;
mod reason;
pub mod register_pow;
pub mod relay;
mod reveal;
mod seal;
pub mod secret;
pub mod sign;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod try_status;
pub mod window;
pub mod witness;

#[cfg(feature = "ledger")]
mod key_cache;
#[cfg(feature = "ledger")]
pub mod ledger;
#[cfg(feature = "ledger")]
mod oracle;

pub use admission::{Admission, AdmissionCredential, CredentialError, SessionStart};
pub use audit::{AuditReport, Finding, SignedReveal, Violation};
pub use bytes::hex_bytes;
pub use certificate::{MembershipProof, SignedSummary, WindowCertificate, WindowSummary};
pub use clock::{Clock, ManualClock, SystemClock, Timestamp};
pub use evidence::{EVIDENCE_KINDS, Evidence};
pub use hco_challenges::Prompt;
pub use hco_verify::{
    AccountSig, CertError, Class, Digest, IdentityId, LightVerifier, NodeId, Sig, account, link,
};
pub use lifecycle::{IdentityStatus, Status};
pub use messages::{
    Acceptance, Challenge, ChallengeRequest, Enrolment, MAX_ENROLMENT_LEN, Profile, Register,
    Response, SignedChallenge, SignedEnrolment, SignedRegister, SignedRequest, VERSION,
};
pub use params::{
    FamilyConfig, LifecycleParams, NarrativeParams, NetworkParams, ParamsError, SlotMode,
};
pub use policy::{ClassPolicies, Step, WindowPolicy};
pub use reason::Reason;
pub use relay::{Receipt, RelayedLink, RelayedReveal, SealReceipt};
pub use seal::{BatchSeal, SealedAcceptance, seal_batch};
pub use secret::derive_challenge;
pub use try_status::TryStatus;

#[cfg(feature = "ledger")]
pub use ledger::{Ledger, LedgerError};
#[cfg(feature = "ledger")]
pub use oracle::{
    CheckedRequest, ENROLMENT_TTL_MS, EarlierTries, IssuedChallenge, LinkHeard, LinkedProof,
    MAX_LINK_LEAD, MAX_LINKED_CHAINS, Oracle, Outcome, PartVerdicts, Recorded, RegistrationOrigin,
    STAGE_PREFIX, STREAM_DOMAIN, blames_sender, parse_stage_answer, stream_digest,
};
