//! Why a message was rejected: one table of stable snake_case codes, used alike in HTTP bodies,
//! gossip validation, logs and metric labels.
//!
//! A rejection is data, not an error: verification returns `Err(Reason)` as a normal outcome,
//! while a disk failure is a [`crate::LedgerError`].

use hco_challenges::{Class, Reject};

use crate::{Digest, NodeId, Timestamp};

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
    /// `(id, t, j)` was already answered: the first answer, right or wrong, is final.
    #[error("this challenge was already answered; the first answer is final")]
    AlreadyAnswered,
    /// A challenge index asked for out of the window's sequence.
    #[error("challenge {j} is out of sequence: the next challenge of this window is {next}")]
    OutOfSequence {
        /// Index asked for.
        j: u32,
        /// The index that comes next.
        next: u32,
    },
    /// The previous challenge of the sequence is neither answered nor expired.
    #[error("challenge {previous} of this window must be answered (or expire) before the next one")]
    PreviousStepUnanswered {
        /// Its index.
        previous: u32,
    },
    /// The challenge opens later in the ceremony slot.
    #[error("this challenge opens at {opens_at}; ask again then")]
    StepNotOpen {
        /// When it opens.
        opens_at: Timestamp,
    },
    /// Every step of the window's policy passed: there is nothing more to answer.
    #[error("every step of this window passed; the identity is active in it")]
    StepsComplete,
    /// The window's tries (steps plus spares) are used up.
    #[error("the {tries} tries of this window are used up; the identity is not active in it")]
    NoTriesLeft {
        /// Tries the policy allows.
        tries: u32,
    },
    /// An answer faster than a person can give one.
    #[error(
        "answered {elapsed_ms} ms after issue, faster than the family's human minimum of {min_ms} ms"
    )]
    TooFast {
        /// Time from issue to receipt.
        elapsed_ms: u64,
        /// The family's minimum human solve time.
        min_ms: u64,
    },
    /// A passkey credential already enrolled by another identity.
    #[error("this authenticator credential is already enrolled by another identity")]
    CredentialInUse,
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
    /// A registration without the proof of work the network requires.
    #[error(
        "the network requires a registration proof of work of {required} leading zero bits (pow_nonce)"
    )]
    RegistrationProofMissing {
        /// Leading zero bits required.
        required: u32,
    },
    /// A registration whose proof of work has too few leading zero bits.
    #[error("the registration proof of work has {got} leading zero bits; {required} are required")]
    RegistrationProofInsufficient {
        /// Leading zero bits required.
        required: u32,
        /// Leading zero bits of the proof's hash.
        got: u32,
    },
    /// A registration with a proof of work dated too long ago (its `created_at` anchors it).
    #[error(
        "the registration is dated {created_at}, before {oldest}: its proof of work is stale; register again with a fresh time"
    )]
    RegistrationProofStale {
        /// Claimed time.
        created_at: Timestamp,
        /// The oldest time accepted now (start of the previous window).
        oldest: Timestamp,
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
    /// An acceptance of a window this node has already summarized (and whose certificate, if
    /// held, has this node's root): its active set can no longer change.
    #[error("window {t} is summarized here; its active set can no longer change")]
    WindowSummarized {
        /// The window.
        t: u64,
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
    /// A stage request for a stage the challenge's family does not have (or, for the last
    /// stage, that is answered with the final answer instead).
    #[error(
        "stage {stage} cannot be answered alone: the family has {stages} stage(s), the last one answered with the final answer"
    )]
    NoSuchStage {
        /// The stage answered.
        stage: usize,
        /// The family's stages.
        stages: usize,
    },
    /// A touch prompt whose issue time is not on its beat (the reaction window moved).
    #[error(
        "the touch prompt was issued at {issued_at}, after its beat (which ends at {beat_end})"
    )]
    OffBeat {
        /// The signed issue time.
        issued_at: Timestamp,
        /// The end (exclusive) of the moments the prompt may open at.
        beat_end: Timestamp,
    },
    /// A challenge whose deadline is not its issue time plus the family's response time.
    #[error(
        "the challenge's deadline {deadline} is not its issue time plus the family's response time ({expected})"
    )]
    DeadlineMismatch {
        /// The signed deadline.
        deadline: Timestamp,
        /// What the family's configuration gives.
        expected: Timestamp,
    },
    /// A family with nothing left to issue in the window: `narrative_chain` past the end of
    /// its set schedule (every set of the corpus served an earlier window) or before its start.
    #[error(
        "`{family}` has no fresh narrative set for window {t}: the corpus schedule has run out (or not begun); the operators must extend the corpus (`hco corpus generate`)"
    )]
    CorpusExhausted {
        /// The family.
        family: String,
        /// The window.
        t: u64,
    },
    /// A certificate of a window whose certificate held here certifies another summary. Both
    /// carry a quorum's signatures, so some members signed two summaries of the window (kept
    /// as evidence); the first certificate is kept.
    #[error(
        "window {t} already has a certificate of another summary (root {held}); the first is kept"
    )]
    CertificateConflict {
        /// The window.
        t: u64,
        /// The root of the certificate held.
        held: Digest,
    },
    /// An account link statement that does not hold: a signature, the network, the account,
    /// or its first window (the message names which, with the link's own code first).
    #[error("the account link is refused: {0}")]
    BadLink(String),
    /// The identity links as many chains as allowed, each ranking before this statement's.
    #[error("the identity links {max} chains that rank before this statement's, the most allowed")]
    TooManyLinks {
        /// The limit.
        max: usize,
    },
    /// Another statement of the identity for the same chain and first window ranks before this
    /// one (the smallest receipt digest stands, whatever order members heard them in).
    #[error("another statement of this identity for this chain and first window ranks before it")]
    LinkOutranked,
    /// The identity has enrolled as many passkeys as allowed.
    #[error("the identity already has {max} passkeys enrolled, the most allowed")]
    TooManyPasskeys {
        /// The limit.
        max: usize,
    },
    /// A touch prompt of a global slot without a valid witness of another member (see
    /// [`crate::witness`]), or another challenge with one.
    #[error("the challenge's beat witness is not acceptable: {0}")]
    BadWitness(String),
    /// The issuer holds no other member's witness of the prompt's beat yet, so it cannot issue
    /// the touch prompt: ask again in a moment (members publish theirs when each beat begins).
    #[error("no other member's witness of this beat has arrived yet; ask again shortly")]
    NoSlotWitness,
    /// A relayed reveal whose receipts do not check (see [`crate::relay`]).
    #[error("a receipt of the relayed reveal does not check: {0}")]
    BadReceipt(String),
    /// A prompt acceptance that reached this member later than its slot's end plus the
    /// family's deadline, the clock skew and the gossip allowance (see [`crate::witness`]).
    #[error(
        "a prompt acceptance arrived at {at}, after the latest moment {latest} its slot allows"
    )]
    LateAcceptance {
        /// When it arrived here.
        at: Timestamp,
        /// The latest arrival its slot allows.
        latest: Timestamp,
    },
}

/// The one table of the core's codes: each variant's stable code and its HTTP status. `code`,
/// `http_status` and the list of codes are generated from it; a family's rejection
/// ([`Reason::Answer`]) carries the family's own code with status 422.
macro_rules! reason_table {
    ($($pattern:pat => $code:literal, $status:literal;)*) => {
        impl Reason {
            /// The stable snake_case code.
            pub fn code(&self) -> &'static str {
                match self {
                    Reason::Answer(reject) => reject.code(),
                    $($pattern => $code,)*
                }
            }

            /// The HTTP status a gateway answers with.
            pub fn http_status(&self) -> u16 {
                match self {
                    Reason::Answer(_) => ANSWER_STATUS,
                    $($pattern => $status,)*
                }
            }
        }

        /// The core's own codes with their HTTP status, in table order.
        const OWN_CODES: &[(&str, u16)] = &[$(($code, $status)),*];
    };
}

/// The HTTP status of a family's rejection of an answer.
const ANSWER_STATUS: u16 = 422;

reason_table! {
    Reason::Malformed(_) => "malformed", 400;
    Reason::MessageTooLarge { .. } => "message_too_large", 400;
    Reason::UnknownVersion { .. } => "unknown_version", 400;
    Reason::UnknownFamily(_) => "unknown_family", 422;
    Reason::NoFamilyForClass(_) => "no_family_for_class", 422;
    Reason::BeforeGenesis { .. } => "before_genesis", 422;
    Reason::BadIssuerSignature => "bad_issuer_signature", 400;
    Reason::NotAssignedIssuer { .. } => "not_assigned_issuer", 409;
    Reason::UnknownChallenge => "unknown_challenge", 404;
    Reason::WrongWindow { .. } => "wrong_window", 422;
    Reason::IndexOutOfRange { .. } => "index_out_of_range", 400;
    Reason::OutsideSlot { .. } => "outside_slot", 422;
    Reason::ChallengeExpired { .. } => "challenge_expired", 422;
    Reason::UnknownIdentity => "unknown_identity", 404;
    Reason::WrongClass { .. } => "wrong_class", 422;
    Reason::BadIdentityKey => "bad_identity_key", 400;
    Reason::BadIdentitySignature => "bad_identity_signature", 400;
    Reason::AlreadyAnswered => "already_answered", 409;
    Reason::OutOfSequence { .. } => "out_of_sequence", 409;
    Reason::PreviousStepUnanswered { .. } => "previous_step_unanswered", 409;
    Reason::StepNotOpen { .. } => "step_not_open", 425;
    Reason::StepsComplete => "steps_complete", 409;
    Reason::NoTriesLeft { .. } => "no_tries_left", 409;
    Reason::TooFast { .. } => "too_fast", 422;
    Reason::AnswerTooLarge { .. } => "answer_too_large", 400;
    Reason::RegistrationFromFuture { .. } => "registration_from_future", 422;
    Reason::RegistrationProofMissing { .. } => "registration_proof_missing", 422;
    Reason::RegistrationProofInsufficient { .. } => "registration_proof_insufficient", 422;
    Reason::RegistrationProofStale { .. } => "registration_proof_stale", 422;
    Reason::ClassConflict(_) => "class_conflict", 409;
    Reason::WindowNotClosed { .. } => "window_not_closed", 422;
    Reason::WindowSummarized { .. } => "window_summarized", 409;
    Reason::ParamsMismatch => "params_mismatch", 422;
    Reason::NotInCommittee(_) => "not_in_committee", 422;
    Reason::NoFamilyForProfile => "no_family_for_profile", 422;
    Reason::EnrolmentStale { .. } => "enrolment_stale", 422;
    Reason::TooManyPasskeys { .. } => "too_many_passkeys", 409;
    Reason::CredentialInUse => "credential_in_use", 409;
    Reason::NoSuchStage { .. } => "no_such_stage", 400;
    Reason::DeadlineMismatch { .. } => "deadline_mismatch", 422;
    Reason::OffBeat { .. } => "off_beat", 422;
    Reason::CorpusExhausted { .. } => "corpus_exhausted", 422;
    Reason::CertificateConflict { .. } => "certificate_conflict", 409;
    Reason::BadWitness(_) => "bad_witness", 422;
    Reason::NoSlotWitness => "no_slot_witness", 425;
    Reason::LateAcceptance { .. } => "late_acceptance", 422;
    Reason::BadReceipt(_) => "bad_receipt", 422;
    Reason::BadLink(_) => "bad_link", 422;
    Reason::TooManyLinks { .. } => "too_many_links", 409;
    Reason::LinkOutranked => "link_outranked", 409;
}

impl Reason {
    /// Every code a rejection can carry, the family codes included.
    pub fn all_codes() -> impl Iterator<Item = &'static str> {
        OWN_CODES
            .iter()
            .map(|(code, _)| *code)
            .chain(Reject::CODES.iter().copied())
    }

    /// The HTTP status of a code from [`Reason::all_codes`]; `None` for any other string.
    pub fn http_status_of(code: &str) -> Option<u16> {
        OWN_CODES
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, status)| *status)
            .or_else(|| Reject::CODES.contains(&code).then_some(ANSWER_STATUS))
    }

    /// Whether the rejection is of the answer itself (wrong, too fast, or refused by the
    /// family): such an identity-signed answer is final and is recorded as answered.
    pub fn is_final_answer(&self) -> bool {
        matches!(self, Reason::Answer(_) | Reason::TooFast { .. })
    }
}

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

    /// One value of every variant: a variant added to the enum without a row in the table
    /// does not compile (the match in `code` is exhaustive); this checks the rows agree with
    /// the list.
    fn one_of_each() -> Vec<Reason> {
        let node = NodeId([0; 32]);
        vec![
            Reason::Malformed(String::new()),
            Reason::MessageTooLarge { len: 2, limit: 1 },
            Reason::UnknownVersion {
                got: 9,
                supported: 1,
            },
            Reason::UnknownFamily("x".into()),
            Reason::NoFamilyForClass(Class::Human),
            Reason::BeforeGenesis { genesis: 1 },
            Reason::BadIssuerSignature,
            Reason::NotAssignedIssuer { assigned: node },
            Reason::UnknownChallenge,
            Reason::WrongWindow { t: 1, current: 2 },
            Reason::IndexOutOfRange { j: 9, k: 3 },
            Reason::OutsideSlot {
                at: 1,
                slot_start: 2,
                slot_end: 3,
            },
            Reason::ChallengeExpired {
                now: 2,
                deadline: 1,
            },
            Reason::UnknownIdentity,
            Reason::WrongClass {
                registered: Class::Agent,
                required: Class::Human,
            },
            Reason::BadIdentityKey,
            Reason::BadIdentitySignature,
            Reason::AlreadyAnswered,
            Reason::OutOfSequence { j: 2, next: 1 },
            Reason::PreviousStepUnanswered { previous: 0 },
            Reason::StepNotOpen { opens_at: 5 },
            Reason::StepsComplete,
            Reason::NoTriesLeft { tries: 4 },
            Reason::TooFast {
                elapsed_ms: 1,
                min_ms: 2,
            },
            Reason::AnswerTooLarge { len: 2, max: 1 },
            Reason::Answer(Reject::HashMismatch),
            Reason::RegistrationFromFuture {
                created_at: 2,
                now: 1,
            },
            Reason::RegistrationProofMissing { required: 8 },
            Reason::RegistrationProofInsufficient {
                required: 8,
                got: 3,
            },
            Reason::RegistrationProofStale {
                created_at: 1,
                oldest: 2,
            },
            Reason::ClassConflict(Class::Agent),
            Reason::WindowNotClosed { t: 1, closes_at: 2 },
            Reason::WindowSummarized { t: 1 },
            Reason::ParamsMismatch,
            Reason::NotInCommittee(node),
            Reason::NoFamilyForProfile,
            Reason::NoSuchStage {
                stage: 3,
                stages: 2,
            },
            Reason::EnrolmentStale {
                created_at: 1,
                now: 2,
            },
            Reason::TooManyPasskeys { max: 4 },
            Reason::CredentialInUse,
            Reason::DeadlineMismatch {
                deadline: 1,
                expected: 2,
            },
            Reason::OffBeat {
                issued_at: 3,
                beat_end: 2,
            },
            Reason::CorpusExhausted {
                family: "narrative_chain".into(),
                t: 3,
            },
            Reason::CertificateConflict {
                t: 1,
                held: Digest::ZERO,
            },
            Reason::BadWitness(String::new()),
            Reason::NoSlotWitness,
            Reason::LateAcceptance { at: 2, latest: 1 },
            Reason::BadReceipt(String::new()),
            Reason::BadLink(String::new()),
            Reason::TooManyLinks { max: 8 },
            Reason::LinkOutranked,
        ]
    }

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
    fn every_variant_is_in_the_table_with_its_status() {
        let all: Vec<_> = Reason::all_codes().collect();
        let samples = one_of_each();
        assert_eq!(samples.len() - 1, OWN_CODES.len(), "a row without a sample");
        for s in samples {
            assert!(
                all.contains(&s.code()),
                "{} missing from the list",
                s.code()
            );
            assert_eq!(Reason::http_status_of(s.code()), Some(s.http_status()));
            assert!((400..500).contains(&s.http_status()), "{}", s.code());
            assert!(!s.to_string().is_empty());
        }
        assert_eq!(Reason::http_status_of("nope"), None);
    }
}
