//! Why a message was rejected: one table of stable snake_case codes, used alike in HTTP bodies,
//! gossip validation, logs and metric labels.
//!
//! A rejection is data, not an error: verification returns `Err(Reason)` as a normal outcome,
//! while a disk failure is a [`crate::LedgerError`].

use hco_challenges::{Class, Reject};

use crate::{NodeId, Timestamp};

/// A stable reason for rejecting a request, response or message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Reason {
    /// Bytes that do not decode as the expected message.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// A message above its size limit.
    #[error("message of {len} bytes exceeds the limit of {limit}")]
    MessageTooLarge {
        /// Bytes received.
        len: usize,
        /// Limit.
        limit: usize,
    },
    /// A message version this node does not speak.
    #[error("message version {got} is not supported (this node speaks version {supported})")]
    UnknownVersion {
        /// Version received.
        got: u8,
        /// Version supported.
        supported: u8,
    },
    /// A family name not configured on this network.
    #[error("family `{0}` is not enabled on this network")]
    UnknownFamily(String),
    /// No family is enabled for the identity's class.
    #[error("no challenge family is enabled for class {0:?}")]
    NoFamilyForClass(Class),
    /// The time is before the network's genesis.
    #[error("the network has not started yet (genesis {genesis})")]
    BeforeGenesis {
        /// Genesis time.
        genesis: Timestamp,
    },
    /// The challenge envelope's signature is not the issuer's.
    #[error("the challenge is not signed by its issuer")]
    BadIssuerSignature,
    /// This node is not the issuer the request or challenge must go to.
    #[error("this node is not the assigned issuer; send it to {assigned}")]
    NotAssignedIssuer {
        /// The node that is.
        assigned: NodeId,
    },
    /// A challenge this issuer has no record of issuing.
    #[error("this issuer has no record of that challenge; request it first")]
    UnknownChallenge,
    /// Not the current window (or past its grace period).
    #[error("window {t} is not open (current window: {current})")]
    WrongWindow {
        /// Window of the message.
        t: u64,
        /// The window now.
        current: u64,
    },
    /// The challenge index `j` is not below `k`.
    #[error("challenge index {j} is out of range: each window has {k} challenges")]
    IndexOutOfRange {
        /// Index asked for.
        j: u32,
        /// Challenges per window.
        k: u32,
    },
    /// Outside the identity's ceremony slot.
    #[error("outside the ceremony slot [{slot_start}, {slot_end}) (at {at})")]
    OutsideSlot {
        /// When the request happened.
        at: Timestamp,
        /// Slot start.
        slot_start: Timestamp,
        /// Slot end.
        slot_end: Timestamp,
    },
    /// The response came after the deadline.
    #[error("the response arrived at {now}, after the deadline {deadline}")]
    ChallengeExpired {
        /// Receipt time.
        now: Timestamp,
        /// Deadline.
        deadline: Timestamp,
    },
    /// The identity is not registered.
    #[error("the identity is not registered; register it first")]
    UnknownIdentity,
    /// The identity's class does not match the family's.
    #[error("the identity is registered as {registered:?} but the challenge is for {required:?}")]
    WrongClass {
        /// The identity's class.
        registered: Class,
        /// The class the challenge is for.
        required: Class,
    },
    /// The identity key is not a valid or safe ed25519 key.
    #[error("the identity key is not a valid ed25519 public key")]
    BadIdentityKey,
    /// The identity's signature does not verify.
    #[error("the identity's signature does not verify")]
    BadIdentitySignature,
    /// `(id, t, j)` was already accepted.
    #[error("this challenge was already answered and accepted")]
    AlreadyAccepted,
    /// The answer is larger than the family allows.
    #[error("answer of {len} bytes exceeds the family's limit of {max}")]
    AnswerTooLarge {
        /// Bytes received.
        len: usize,
        /// Limit.
        max: usize,
    },
    /// The family rejected the answer.
    #[error("{0}")]
    Answer(Reject),
    /// A registration dated in the future.
    #[error("the registration is dated {created_at}, later than now ({now}); check the clock")]
    RegistrationFromFuture {
        /// Claimed time.
        created_at: Timestamp,
        /// Now.
        now: Timestamp,
    },
    /// The identity is registered with the other class.
    #[error("the identity is already registered as {0:?}")]
    ClassConflict(Class),
    /// A window that has not closed yet (for reveals and summaries).
    #[error("window {t} is still open until {closes_at}")]
    WindowNotClosed {
        /// The window.
        t: u64,
        /// When it closes (end plus grace).
        closes_at: Timestamp,
    },
    /// A message made under other network parameters.
    #[error("the message was made under other network parameters")]
    ParamsMismatch,
    /// The signer is not a member of the committee.
    #[error("{0} is not a member of the committee")]
    NotInCommittee(NodeId),
    /// A visual opt-out on a network that enables no non-visual family for the class.
    #[error(
        "this network enables no non-visual family for the identity's class, so an opt-out from visual families cannot be served"
    )]
    NoFamilyForProfile,
    /// A passkey enrolment whose ceremony started too long ago.
    #[error(
        "the passkey ceremony started at {created_at}, too long before now ({now}); start again"
    )]
    EnrolmentStale {
        /// When the ceremony started.
        created_at: Timestamp,
        /// Now.
        now: Timestamp,
    },
    /// The identity has enrolled as many passkeys as allowed.
    #[error("the identity already has {max} passkeys enrolled, the most allowed")]
    TooManyPasskeys {
        /// The limit.
        max: usize,
    },
}

impl Reason {
    /// The stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Reason::Malformed(_) => "malformed",
            Reason::MessageTooLarge { .. } => "message_too_large",
            Reason::UnknownVersion { .. } => "unknown_version",
            Reason::UnknownFamily(_) => "unknown_family",
            Reason::NoFamilyForClass(_) => "no_family_for_class",
            Reason::BeforeGenesis { .. } => "before_genesis",
            Reason::BadIssuerSignature => "bad_issuer_signature",
            Reason::NotAssignedIssuer { .. } => "not_assigned_issuer",
            Reason::UnknownChallenge => "unknown_challenge",
            Reason::WrongWindow { .. } => "wrong_window",
            Reason::IndexOutOfRange { .. } => "index_out_of_range",
            Reason::OutsideSlot { .. } => "outside_slot",
            Reason::ChallengeExpired { .. } => "challenge_expired",
            Reason::UnknownIdentity => "unknown_identity",
            Reason::WrongClass { .. } => "wrong_class",
            Reason::BadIdentityKey => "bad_identity_key",
            Reason::BadIdentitySignature => "bad_identity_signature",
            Reason::AlreadyAccepted => "already_accepted",
            Reason::AnswerTooLarge { .. } => "answer_too_large",
            Reason::Answer(reject) => reject.code(),
            Reason::RegistrationFromFuture { .. } => "registration_from_future",
            Reason::ClassConflict(_) => "class_conflict",
            Reason::WindowNotClosed { .. } => "window_not_closed",
            Reason::ParamsMismatch => "params_mismatch",
            Reason::NotInCommittee(_) => "not_in_committee",
            Reason::NoFamilyForProfile => "no_family_for_profile",
            Reason::EnrolmentStale { .. } => "enrolment_stale",
            Reason::TooManyPasskeys { .. } => "too_many_passkeys",
        }
    }

    /// Every code a rejection can carry, the family codes included.
    pub fn all_codes() -> impl Iterator<Item = &'static str> {
        OWN_CODES.iter().chain(Reject::CODES).copied()
    }
}

const OWN_CODES: &[&str] = &[
    "malformed",
    "message_too_large",
    "unknown_version",
    "unknown_family",
    "no_family_for_class",
    "before_genesis",
    "bad_issuer_signature",
    "not_assigned_issuer",
    "unknown_challenge",
    "wrong_window",
    "index_out_of_range",
    "outside_slot",
    "challenge_expired",
    "unknown_identity",
    "wrong_class",
    "bad_identity_key",
    "bad_identity_signature",
    "already_accepted",
    "answer_too_large",
    "registration_from_future",
    "class_conflict",
    "window_not_closed",
    "params_mismatch",
    "not_in_committee",
    "no_family_for_profile",
    "enrolment_stale",
    "too_many_passkeys",
];

impl From<crate::codec::DecodeError> for Reason {
    fn from(e: crate::codec::DecodeError) -> Self {
        match e {
            crate::codec::DecodeError::TooLarge { len, limit } => {
                Reason::MessageTooLarge { len, limit }
            }
            other => Reason::Malformed(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case() {
        let codes: Vec<_> = Reason::all_codes().collect();
        let mut sorted = codes.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), codes.len(), "duplicate code");
        for code in codes {
            assert!(
                code.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{code}"
            );
        }
    }

    #[test]
    fn every_variant_code_is_listed() {
        let samples = [
            Reason::Malformed(String::new()),
            Reason::BadIssuerSignature,
            Reason::AlreadyAccepted,
            Reason::Answer(Reject::HashMismatch),
            Reason::NotInCommittee(NodeId([0; 32])),
            Reason::WindowNotClosed { t: 1, closes_at: 2 },
        ];
        let all: Vec<_> = Reason::all_codes().collect();
        for s in samples {
            assert!(
                all.contains(&s.code()),
                "{} missing from the table",
                s.code()
            );
        }
    }
}
