//! The agent-admission narrative chain (aCAPTCHA): corpus, sessions, commitment and linter.
//!
//! - [`Corpus`] holds narrative sets in the JSON format of the aCAPTCHA generation prompt,
//!   loaded from a directory ([`Corpus::load_dir`]) or compiled in ([`Corpus::embedded`]).
//! - [`Corpus::sample_session`] draws a set and one question per part from a seed, skipping
//!   [`RetiredSets`]; [`Corpus::sample_from`] draws among a window's slice of the
//!   [`SetSchedule`] (sets drawn without replacement, one window each); [`Corpus::round`] gives what a round shows and [`Round::check`] checks its
//!   answer (NFKC, case folding, trimming).
//! - [`Corpus::merkle_root`] commits to every part; [`Corpus::merkle_proof`] proves one part.
//! - [`lint`] and [`lint_dir`] check schema, lengths, generation rules and script resistance.
//! - [`NarrativeChain`] is the single-round family over a corpus.
//! - [`timing`] is the paper's human timing model over a corpus, beside τ.

pub mod baselines;
mod corpus;
mod embedded;
mod family;
mod lint;
mod merkle;
mod schedule;
mod session;
pub mod timing;

pub use corpus::{
    AnswerType, Corpus, CorpusError, MAX_SET_FILE_LEN, NarrativeSet, Part, Question, ReasoningType,
    parse_set,
};
pub use family::{MAX_CHAIN_ANSWER_LEN, NarrativeChain};
pub use lint::{
    LintConfig, LintIssue, LintReport, QuestionResult, estimate_tokens, lint, lint_dir,
};
pub use merkle::{MerkleProof, part_leaf};
pub use schedule::{MAX_SETS_PER_WINDOW, Reused, ScheduleParams, SetSchedule};
pub use session::{MAX_ROUND_ANSWER_LEN, RetiredSets, Round, SessionPlan, check_answer};
