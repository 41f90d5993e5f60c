//! The `Family` trait and the values that cross it.

use serde::{Deserialize, Serialize};

use crate::Seed;

/// Largest answer any family accepts, in bytes. Families may set a smaller limit.
pub const MAX_ANSWER_LEN: usize = 4096;

/// Which kind of identity a family is meant for: defined in `hco-verify`, whose certified
/// leaves commit to it.
pub use hco_verify::Class;

/// What the solver sees. `data` is the family's machine-readable payload (JSON for the text
/// families, PNG for image families); `text` is what a person or an agent reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    /// The family that generated the prompt.
    pub family: String,
    /// Instructions to show.
    pub text: String,
    /// Family-specific payload.
    pub data: Vec<u8>,
}

impl Prompt {
    /// The digest the issuer signs in the challenge envelope, so a revealed window can be audited.
    pub fn digest(&self) -> [u8; 32] {
        let mut hasher = blake3::Hasher::new_derive_key("hco prompt digest v1");
        for part in [self.family.as_bytes(), self.text.as_bytes(), &self.data] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        *hasher.finalize().as_bytes()
    }
}

/// The private part of a generated challenge: what `verify` compares the answer against.
/// Never sent to the solver; never stored (it is re-derived from the seed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerKey(pub Vec<u8>);

/// A generated challenge: the prompt to send and the key to keep.
#[derive(Debug, Clone)]
pub struct Generated {
    /// Sent to the solver.
    pub prompt: Prompt,
    /// Kept (implicitly, through the seed) by the issuer.
    pub key: AnswerKey,
}

/// Per-family network parameters. They are part of the network parameter digest, so every node
/// generates the same challenge from the same seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilyParams {
    /// Family-defined hardness: bits of work for `proof_of_work`, steps for `arithmetic_reasoning`;
    /// each family's module documents its meaning.
    pub difficulty: u32,
}

/// Checks that `params.difficulty` lies in a family's allowed `range`; `what` names what the
/// difficulty counts (steps, passes, distortion strength…), for the error message.
pub fn check_difficulty(
    params: &FamilyParams,
    range: std::ops::RangeInclusive<u32>,
    what: &str,
) -> Result<(), String> {
    if range.contains(&params.difficulty) {
        Ok(())
    } else {
        Err(format!(
            "difficulty {} ({what}) is outside {}..={}",
            params.difficulty,
            range.start(),
            range.end()
        ))
    }
}

/// Why a family rejected an answer. Codes are stable and shared with the oracle's reason table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Reject {
    /// The answer was empty.
    #[error("the answer is empty")]
    MissingAnswer,
    /// The answer is not in the family's format.
    #[error("the answer is not in the expected format: {0}")]
    InvalidAnswerFormat(&'static str),
    /// A well-formed answer that is wrong.
    #[error("the answer is wrong")]
    AnswerMismatch,
    /// A proof of work whose hash does not recompute.
    #[error("the submitted hash does not match the nonce")]
    HashMismatch,
    /// A proof of work that does not meet the difficulty.
    #[error("the hash has fewer leading zero bits than required")]
    InsufficientDifficulty,
    /// A constrained text with the wrong number of words.
    #[error("the text has {got} words, {want} are required")]
    WrongWordCount {
        /// Words required.
        want: usize,
        /// Words found.
        got: usize,
    },
    /// A constrained text that uses a word outside the allowed list, or a word twice.
    #[error("the text uses a word that is not allowed, or uses a word twice")]
    WordNotAllowed,
    /// A required word is missing or appears more than once.
    #[error("a required word is missing or appears more than once")]
    RequiredWordConstraintFailed,
    /// The ASCII codes of the words' initial letters do not add up to the target.
    #[error("the initial letters add up to {got}, the target is {want}")]
    InitialSumMismatch {
        /// The target sum.
        want: u32,
        /// The sum of the answer.
        got: u32,
    },
    /// An attention answer whose events are not in the order of the schedule, or repeat one.
    #[error("event {event} is out of order: report each target once, in the order they appeared")]
    WrongTargetOrder {
        /// Position of the offending event in the answer.
        event: u32,
    },
    /// An attention answer with no event for a scheduled target.
    #[error("target {target} was not clicked")]
    TargetMissed {
        /// The target index in the schedule.
        target: u32,
    },
    /// An attention click too far from its target.
    #[error("the click on target {target} is {distance} units away, at most {tolerance} allowed")]
    WrongTargetPosition {
        /// The target index.
        target: u32,
        /// Distance from the target's centre, in arena units (rounded down).
        distance: u32,
        /// The largest distance accepted.
        tolerance: u32,
    },
    /// An attention click sooner after its target appeared than a person can react.
    #[error(
        "target {target} was clicked {reaction_ms} ms after it appeared, sooner than a person reacts"
    )]
    ReactionTooFast {
        /// The target index.
        target: u32,
        /// Click time minus appearance time (negative: before it appeared).
        reaction_ms: i64,
    },
    /// An attention click after its target had gone.
    #[error("target {target} was clicked {reaction_ms} ms after it appeared, after it had gone")]
    ReactionTooSlow {
        /// The target index.
        target: u32,
        /// Click time minus appearance time.
        reaction_ms: i64,
    },
    /// Attention reaction times too uniform to come from a person.
    #[error("the reaction times vary by only {spread_ms} ms across targets, a scripted pattern")]
    TimingTooRegular {
        /// Largest minus smallest reaction time.
        spread_ms: i64,
    },
    /// An attention answer that clicked a distractor.
    #[error("distractor {distractor} was clicked")]
    DistractorClicked {
        /// The distractor index in the schedule.
        distractor: u32,
    },
    /// An attention log whose MAC does not verify: not the log the stream endpoint sealed.
    #[error("the stream log's MAC does not verify: answer with the log the stream sent")]
    LogMacMismatch,
    /// A presence answer from an identity without an enrolled passkey.
    #[error("the identity has no enrolled passkey: enrol one before answering presence challenges")]
    NoPasskeyEnrolled,
    /// An assertion made with a credential the identity did not enrol.
    #[error("the assertion was made with a passkey this identity did not enrol")]
    UnknownCredential,
    /// An assertion whose WebAuthn challenge is not this challenge's id.
    #[error("the assertion was made for another challenge")]
    AssertionChallengeMismatch,
    /// An assertion (or attestation) made for another origin or relying party.
    #[error("the assertion was made for another origin or relying party")]
    WrongOrigin,
    /// The authenticator did not report user presence (the UP flag is clear).
    #[error("the authenticator did not report user presence")]
    UserPresenceMissing,
    /// The policy requires user verification and the authenticator did not report it.
    #[error(
        "the authenticator did not verify the user (PIN or biometric), which the policy requires"
    )]
    UserVerificationMissing,
    /// The signature counter did not increase: the authenticator may have been cloned.
    #[error("the signature counter is {got}, it must be above {stored}")]
    CounterNotIncreased {
        /// The counter stored for the credential.
        stored: u32,
        /// The counter in the assertion.
        got: u32,
    },
    /// The assertion's signature does not verify with the enrolled public key.
    #[error("the assertion signature does not verify")]
    BadAssertionSignature,
    /// In `strict` attestation mode: the authenticator's attestation does not chain to a
    /// configured CA.
    #[error("the authenticator's attestation is not trusted by this network's policy")]
    AttestationUntrusted,
    /// An enrolment whose authenticator model (its attested AAGUID) is not on the network's
    /// allow-list.
    #[error("the authenticator model {aaguid} is not on this network's allow-list")]
    AaguidNotAllowed {
        /// The AAGUID the authenticator reported (lower-case UUID text).
        aaguid: String,
    },
    /// An enrolment under an AAGUID allow-list whose attestation format does not sign the
    /// AAGUID (`fido-u2f`, `android-key`, self attestation, `none`): the model is only a claim.
    #[error(
        "the authenticator's {format} attestation does not vouch for its model (AAGUID), which \
         this network's allow-list requires"
    )]
    AaguidNotAttested {
        /// The attestation format.
        format: String,
    },
    /// A passkey enrolment that is not a valid WebAuthn registration.
    #[error("the passkey enrolment is invalid: {0}")]
    InvalidEnrolment(String),
}

impl Reject {
    /// The stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Reject::MissingAnswer => "missing_answer",
            Reject::InvalidAnswerFormat(_) => "invalid_answer_format",
            Reject::AnswerMismatch => "answer_mismatch",
            Reject::HashMismatch => "hash_mismatch",
            Reject::InsufficientDifficulty => "insufficient_difficulty",
            Reject::WrongWordCount { .. } => "wrong_word_count",
            Reject::WordNotAllowed => "word_not_allowed",
            Reject::RequiredWordConstraintFailed => "required_word_constraint_failed",
            Reject::InitialSumMismatch { .. } => "initial_sum_mismatch",
            Reject::WrongTargetOrder { .. } => "wrong_target_order",
            Reject::TargetMissed { .. } => "target_missed",
            Reject::WrongTargetPosition { .. } => "wrong_target_position",
            Reject::ReactionTooFast { .. } => "reaction_too_fast",
            Reject::ReactionTooSlow { .. } => "reaction_too_slow",
            Reject::TimingTooRegular { .. } => "timing_too_regular",
            Reject::DistractorClicked { .. } => "distractor_clicked",
            Reject::LogMacMismatch => "log_mac_mismatch",
            Reject::NoPasskeyEnrolled => "no_passkey_enrolled",
            Reject::UnknownCredential => "unknown_credential",
            Reject::AssertionChallengeMismatch => "assertion_challenge_mismatch",
            Reject::WrongOrigin => "wrong_origin",
            Reject::UserPresenceMissing => "user_presence_missing",
            Reject::UserVerificationMissing => "user_verification_missing",
            Reject::CounterNotIncreased { .. } => "counter_not_increased",
            Reject::BadAssertionSignature => "bad_assertion_signature",
            Reject::AttestationUntrusted => "attestation_untrusted",
            Reject::AaguidNotAllowed { .. } => "aaguid_not_allowed",
            Reject::AaguidNotAttested { .. } => "aaguid_not_attested",
            Reject::InvalidEnrolment(_) => "invalid_enrolment",
        }
    }

    /// Every code this type can produce, for documentation and metric pre-registration.
    pub const CODES: &'static [&'static str] = &[
        "missing_answer",
        "invalid_answer_format",
        "answer_mismatch",
        "hash_mismatch",
        "insufficient_difficulty",
        "wrong_word_count",
        "word_not_allowed",
        "required_word_constraint_failed",
        "initial_sum_mismatch",
        "wrong_target_order",
        "target_missed",
        "wrong_target_position",
        "reaction_too_fast",
        "reaction_too_slow",
        "timing_too_regular",
        "distractor_clicked",
        "log_mac_mismatch",
        "no_passkey_enrolled",
        "unknown_credential",
        "assertion_challenge_mismatch",
        "wrong_origin",
        "user_presence_missing",
        "user_verification_missing",
        "counter_not_increased",
        "bad_assertion_signature",
        "attestation_untrusted",
        "aaguid_not_allowed",
        "aaguid_not_attested",
        "invalid_enrolment",
    ];
}

/// What the oracle knows beyond the seed when it checks an answer: the challenge's id (what a
/// WebAuthn assertion must be bound to) and the identity's enrolled passkeys (loaded only for
/// families whose [`Family::uses_passkeys`] is true).
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The id of the challenge answered (the digest of its signed envelope).
    pub challenge_id: &'a [u8; 32],
    /// The identity's enrolled passkeys, with their last seen signature counters.
    pub passkeys: &'a [crate::passkey::Passkey],
}

/// A state change that a verified answer makes: the credential's new signature counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterUpdate {
    /// The credential used.
    pub credential_id: Vec<u8>,
    /// Its counter in the verified assertion.
    pub counter: u32,
}

/// A challenge family: deterministic from the seed, stateless to verify.
///
/// `generate` must be a pure function of `(seed, params)`: the issuer never stores prompts, and
/// auditors re-derive them after the window secret is revealed.
pub trait Family: Send + Sync + 'static {
    /// The stable name used in configs, envelopes and metrics.
    fn name(&self) -> &'static str;

    /// The identity class this family admits.
    fn class(&self) -> Class;

    /// Largest answer accepted, in bytes (at most [`MAX_ANSWER_LEN`]).
    fn max_answer_len(&self) -> usize {
        MAX_ANSWER_LEN
    }

    /// The parameters a network uses when its configuration names the family without them, and
    /// the ones benchmarks measure.
    fn default_params(&self) -> FamilyParams {
        FamilyParams { difficulty: 1 }
    }

    /// Checks the parameters before a network starts with them.
    fn check_params(&self, params: &FamilyParams) -> Result<(), String>;

    /// Generates a prompt and its answer key from a seed.
    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated;

    /// Generates the challenge of `seed` for window `t`: what the oracle's issue, verify and
    /// audit paths call. A family whose material is rationed per window (`narrative_chain`
    /// draws from the window's slice of its set schedule) overrides it and returns `None` when
    /// it has nothing to issue in that window; the others generate as [`Family::generate`].
    fn generate_in_window(&self, seed: &Seed, params: &FamilyParams, t: u64) -> Option<Generated> {
        let _ = t;
        Some(self.generate(seed, params))
    }

    /// Checks an answer against the key. Must not panic on any input.
    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject>;

    /// For the operator's logs and metrics only, never for the client: whether each part of a
    /// multi-part answer was right (`narrative_chain`'s parts). `None` for a family of one
    /// part, or an answer that cannot be judged part by part (malformed, wrong count). Must
    /// not panic on any input.
    fn part_verdicts(&self, key: &AnswerKey, answer: &[u8]) -> Option<Vec<bool>> {
        let _ = (key, answer);
        None
    }

    /// Whether answers are checked against the identity's enrolled passkeys (`presence`).
    fn uses_passkeys(&self) -> bool {
        false
    }

    /// Whether the family's challenges are touch prompts in a `global` or `staggered` slot: on
    /// a beat, with the family's deadline as a reaction window (see the oracle's policy).
    /// `presence` by default, through [`Family::uses_passkeys`]; a simulator's stand-in of it
    /// says so itself.
    fn touch_prompt(&self) -> bool {
        self.uses_passkeys()
    }

    /// Whether the family needs sight (an identity that opted out of visual families never
    /// draws it).
    fn is_visual(&self) -> bool {
        false
    }

    /// Whether a script written with the source passes it (a labelled baseline: proof of work,
    /// the template-built lock families, templated arithmetic). Such a family never counts as
    /// proof of its class on its own: a drawn step takes it only for a profile with nothing
    /// else enabled, and a policy must keep a step that no script passes whenever its class has
    /// such a family (see `NetworkParams::step_families`).
    fn script_solvable(&self) -> bool {
        false
    }

    /// The least time from issue to receipt in which a person answers, in milliseconds: the
    /// default floor under which an answer is rejected as `too_fast` (a network may configure
    /// another). 0 for agent families, whose budget is the deadline alone.
    fn min_human_solve_ms(&self) -> u64 {
        0
    }

    /// Checks an answer with what the oracle knows beyond the seed; what the oracle calls.
    /// Families bound to enrolled credentials override it; the rest check against the key alone.
    fn verify_in(
        &self,
        key: &AnswerKey,
        answer: &[u8],
        context: &Context<'_>,
    ) -> Result<Option<CounterUpdate>, Reject> {
        let _ = context;
        self.verify(key, answer).map(|()| None)
    }

    /// The built-in solver, where the family has one (a baseline for ε_auto, or the intended
    /// solver for work-based families). `None` when it cannot produce an answer.
    fn solve(&self, prompt: &Prompt) -> Option<Vec<u8>>;

    /// Questions in one challenge, asked one after another (1 for most families). Stage 1 is
    /// the issued prompt; stage `k + 1` is shown only after a right answer to stages `1..=k`
    /// (`POST /v1/challenges/stage`), and the final answer covers every stage.
    fn stages(&self) -> usize {
        1
    }

    /// The prompt of stage `stage` (2..=[`Family::stages`]), re-derived from the seed; `None`
    /// for any other stage.
    fn stage_prompt(&self, seed: &Seed, params: &FamilyParams, stage: usize) -> Option<Prompt> {
        let _ = (seed, params, stage);
        None
    }

    /// Checks the partial answer to stages `1..=stage` (`stage` below [`Family::stages`])
    /// against the key, before stage `stage + 1` is shown. Must not panic on any input.
    fn check_stage(&self, key: &AnswerKey, stage: usize, answer: &[u8]) -> Result<(), Reject> {
        let _ = (key, stage, answer);
        Err(Reject::InvalidAnswerFormat(
            "this family has a single stage",
        ))
    }

    /// An answer that `verify` accepts, derived from the key alone, for tests, benchmarks and
    /// scripted clients given the answer key. `None` where the key does not determine one cheaply
    /// (proof of work).
    fn reference_answer(&self, key: &AnswerKey) -> Option<Vec<u8>> {
        let _ = key;
        None
    }
}
