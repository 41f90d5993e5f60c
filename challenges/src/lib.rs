//! Challenge families for the Human Challenge Oracle.
//!
//! A [`Family`] turns a 32-byte [`Seed`] into a [`Prompt`] and an [`AnswerKey`], and checks an
//! answer against the key. Generation is a pure function of the seed and the family's
//! [`FamilyParams`], so an issuer stores nothing per challenge and an auditor who later learns
//! the window secret can re-derive every prompt. Each family also carries a built-in solver: the
//! intended solver for work families, a baseline script for the others (its success rate is the
//! family's measured ε_auto, reported by [`bench_families`]).
//!
//! Agent families: `narrative_chain` (the aCAPTCHA narrative chain over a committed corpus, see
//! [`narrative`]), `obfuscated_text_lock`, `multi_pass_lock`, `semantic_math_lock` (rules over
//! a vocabulary of about six hundred words, stated in varied and noisy language; labelled
//! baselines, whose built-in solvers invert the closed templates and pass every level) and
//! `proof_of_work`. Text answers are compared after [`normalize`] (NFKC, case folding,
//! trimming).
//!
//! Human families: [`VisualMatch`] (`visual_match`: the PIX and MATCHA image CAPTCHAs over
//! distorted words rendered to PNG with a bundled font), [`InteractiveReasoning`]
//! (`interactive_reasoning`: short ordering, seating, calendar and odd-one-out puzzles with four
//! options, text only, the non-visual family), [`Attention`] (`attention`: distorted letters
//! flashed by the node over a live stream; clicks timed by the node, checked from its sealed log) and
//! the simple `arithmetic_reasoning`; [`presence`] (a WebAuthn assertion bound to the challenge
//! id, checked against the identity's enrolled passkeys through [`Family::verify_in`]).
//!
//! ```
//! use hco_challenges::{FamilyParams, Registry, Seed};
//!
//! let registry = Registry::builtin();
//! let pow = registry.get("proof_of_work").unwrap();
//! let generated = pow.generate(&Seed([42; 32]), &FamilyParams { difficulty: 8 });
//! let answer = pow.solve(&generated.prompt).unwrap();
//! assert!(pow.verify(&generated.key, &answer).is_ok());
//! assert_eq!(pow.verify(&generated.key, b"{}").unwrap_err().code(), "invalid_answer_format");
//! ```

mod arithmetic_reasoning;
pub mod attention;
pub mod bench;
mod family;
pub mod interactive;
mod lock;
mod multi_pass_lock;
pub mod narrative;
pub mod normalize;
mod obfuscated_text_lock;
mod passkey;
pub mod presence;
mod proof_of_work;
mod registry;
mod seed;
mod semantic_math_lock;
pub mod visual;
pub mod vocab;

pub use arithmetic_reasoning::ArithmeticReasoning;
pub use attention::Attention;
pub use bench::{FamilyBench, bench_families};
pub use family::{
    AnswerKey, Class, Context, CounterUpdate, Family, FamilyParams, Generated, MAX_ANSWER_LEN,
    Prompt, Reject, check_difficulty,
};
pub use interactive::InteractiveReasoning;
pub use lock::MAX_LOCK_ANSWER_LEN;
pub use multi_pass_lock::MultiPassLock;
pub use narrative::NarrativeChain;
pub use obfuscated_text_lock::ObfuscatedTextLock;
pub use proof_of_work::{ProofOfWork, leading_zero_bits, pow_hash};
pub use registry::Registry;
pub use seed::{Seed, SeedStream};
pub use semantic_math_lock::SemanticMathLock;
pub use visual::VisualMatch;
