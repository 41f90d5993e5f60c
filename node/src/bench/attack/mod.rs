//! `hco bench attack`: every in-tree attacker against its family over HTTP, on a local node
//! with the network's real deadlines and minimum solve times, then script-held identities end
//! to end under `configs/single.toml` and `configs/prod.toml`.
//!
//! Output (`--json`): `{"families": {"<family>": {"tries", "successes", "wilson_low",
//! "wilson_high", "median_ms", "attacker", "config", "class", "baseline", "difficulty",
//! "attackers": {…}, "by_difficulty": {"<d>": {…}}}}, "end_to_end": {"single":
//! {"identity_windows", "active", …}, "prod": {…}}}`. A family's headline figures are those of
//! its most successful attacker at the configured difficulty; every attacker's are under
//! `attackers`, and under `by_difficulty` for the families measured at every level. Each try
//! is a fresh identity's first (and only) answer to its challenge. Presence is measured under
//! the production policy (strict attestation), `narrative_chain` under it too (on the corpus
//! given with `--agent-corpus`, else the public starter one), the other families under the
//! development one, whose deadlines they share. The labelled baselines (`baseline: true`: the
//! lock families, `proof_of_work`) are measured to show why no policy counts them as proof.
//!
//! With `--trained DIR` the trained attacker ([`crate::attack::trained`]: a model trained on
//! labelled challenges of our own generator, see `scripts/train-attacker/`) is measured beside
//! the others on `visual_match`, `interactive_reasoning` and `attention`, and is the headline
//! where it is the most successful. `hco bench attack dataset` ([`dataset`]) renders those labelled
//! challenges.
//!
//! With `--one-person` the bench runs only the one-person attacker ([`one_person`]): one
//! person, one hardware key with a credential per identity, and a model answering every
//! cognitive step, holding `--identities` identities for `--windows` windows of production's
//! ceremony; it prints `{"one_person": {…}}`.
//!
//! With `--oracle` (and `--families narrative_chain`) the bench runs only the admission-game
//! oracle attacker ([`oracle`], [`crate::attack::oracle`]): no model, no key, a reader's ranked
//! candidates and whatever the node's replies reveal. Per window of the set schedule (up to
//! `--oracle-windows`, 5 by default, the starter corpus's whole schedule under
//! `configs/prod.toml`; a fresh node each, window length `--oracle-window`) it learns from up
//! to `--oracle-sessions` game sessions (800 by default), then plays `--oracle-admissions` fresh
//! sessions with what it learnt beside as many with its reader's first choices (the control),
//! then its share of `--tries` per-window `narrative_chain` challenges, each a fresh agent
//! identity's first answer, from what it learnt where the question matches — and learning from
//! each challenge's verdict as from a session's (a script holding many agent identities gets
//! one joint verdict per identity a window, and no question is retired). It prints
//! `{"narrative_chain": {"oracle": {"sessions", "admissions", "wilson_low", "wilson_high",
//! "learning", "after_learning", "one_shot", "challenges": {"tries", "successes",
//! "wilson_low", "wilson_high", "learnt_parts", "confirmed_by_verdicts", "last_half", …},
//! "learned_answers", "per_round_signals", "corpus", "by_window": […], …}, "per_question":
//! {…}}}`; `per_round_signals` counts replies that judged one round's answer (0 while the game
//! judges a session once, after its third round).
//!
//! `narrative_chain`'s report (with or without `--oracle`) carries `per_question`
//! ([`questions`]): each script reader over every question of the corpus once, offline, since
//! the tries above draw the corpus's few dozen sets again and again and are not independent;
//! and `challenge_oracle`: the oracle learner replayed offline over 1,000 joint verdicts of each
//! set, the sets it is taught (what a script holding that many agent identities learns in a
//! window whose challenge set it is).

pub mod dataset;
mod device;
mod end_to_end;
mod family;
mod local;
pub mod one_person;
mod oracle;
mod questions;

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;
use hco_challenges::narrative::Corpus;
use serde::Serialize;

use crate::attack::{self, Attack};
use crate::config::Config;
use end_to_end::EndToEnd;
use family::AttackerRate;

/// The families the bench measures by default: the human ones, the agent class's per-window
/// step, and the labelled baselines (measured to show why they never prove a class alone).
pub const FAMILIES: [&str; 9] = [
    "visual_match",
    "interactive_reasoning",
    "attention",
    "presence",
    "narrative_chain",
    "obfuscated_text_lock",
    "multi_pass_lock",
    "semantic_math_lock",
    "proof_of_work",
];

/// The families measured at every difficulty they accept by default (besides their headline
/// difficulty): the agent families, whose levels the issue tables compare.
pub const EACH_DIFFICULTY: [&str; 4] = [
    "narrative_chain",
    "obfuscated_text_lock",
    "multi_pass_lock",
    "semantic_math_lock",
];

/// Options of `hco bench attack`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AttackArgs {
    /// `dataset`: render labelled challenges instead of measuring.
    #[command(subcommand)]
    pub command: Option<AttackCommand>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Families to measure (comma-separated); by default every human family and
    /// `narrative_chain`.
    #[arg(long, value_delimiter = ',')]
    pub families: Vec<String>,
    /// Families also measured at every difficulty they accept (comma-separated; `none` for
    /// none); the headline stays at the configured difficulty.
    #[arg(long, value_delimiter = ',', default_values_t = EACH_DIFFICULTY.map(str::to_owned))]
    pub each_difficulty: Vec<String>,
    /// First tries per attacker (per difficulty).
    #[arg(long, default_value_t = 500)]
    pub tries: u64,
    /// Script-held identity-windows per configuration in the end-to-end runs (0: skip them).
    #[arg(long, default_value_t = 400)]
    pub identity_windows: u64,
    /// The configurations played end to end (`single`, `prod`).
    #[arg(long, value_delimiter = ',', default_values_t = ["single".to_owned(), "prod".to_owned()])]
    pub end_to_end: Vec<String>,
    /// Identities playing the same window at once in the end-to-end runs.
    #[arg(long, default_value_t = 80)]
    pub per_window: u64,
    /// The development configuration.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/single.toml"))]
    pub single: PathBuf,
    /// The production configuration.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/prod.toml"))]
    pub prod: PathBuf,
    /// A private narrative corpus to measure `narrative_chain` on (the production policy's
    /// agent step); without it the family runs on the public starter corpus, which
    /// `configs/prod.toml` itself would refuse.
    #[arg(long)]
    pub agent_corpus: Option<PathBuf>,
    /// Run only the one-person attacker: one person with one hardware key (a credential per
    /// identity) and a model answering every cognitive step, against a node running `--prod`'s
    /// network with a short window (`--window-length`, `--grace`, optionally `--slot`).
    #[arg(long)]
    pub one_person: bool,
    /// One touch of the key, in milliseconds (`--one-person`).
    #[arg(long, default_value_t = 1000)]
    pub touch_ms: u64,
    /// Identities the person holds (`--one-person`).
    #[arg(long, default_value_t = 20)]
    pub identities: u64,
    /// Windows played (`--one-person`).
    #[arg(long, default_value_t = 1)]
    pub windows: u64,
    /// The bench network's window length (`--one-person`); production's hour is not waited out.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "180s")]
    pub window_length: std::time::Duration,
    /// The bench network's grace (`--one-person`); must cover the longest family deadline.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "60s")]
    pub grace: std::time::Duration,
    /// The slot length (`--one-person`), if not the configuration's: a shorter slot keeps the
    /// beats and the prompt rules and shortens the cognitive phases.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub slot: Option<std::time::Duration>,
    /// How the person chooses among open prompts (`--one-person`): `triage` (earliest deadline
    /// first, letting go of the most expendable prompt when not all fit) or plain `edf`.
    #[arg(long, value_enum, default_value_t = one_person::Schedule::Triage)]
    pub schedule: one_person::Schedule,
    /// The person touches the prompts of this many of the identities only and lets the rest
    /// lapse (`--one-person`; the simulator's `served`); by default all of them.
    #[arg(long)]
    pub serve: Option<u64>,
    /// Members of the bench's committee (`--one-person`): 1 runs the node alone; more start a
    /// committee of node processes, the person talking to the first.
    #[arg(long, default_value_t = 1)]
    pub committee: usize,
    /// The last member colludes with the person (`--one-person`, `--committee` ≥ 2): it serves
    /// its touch prompts from their beat's start and accepts them up to a relay round late
    /// (`--unsafe-byzantine stretch-prompts`; a build with the `unsafe-byzantine` feature).
    #[arg(long)]
    pub malicious_member: bool,
    /// Run only the admission-game oracle attacker against `narrative_chain` (`--families
    /// narrative_chain`): it learns answers from game sessions' verdicts, then plays fresh
    /// admissions and `--tries` per-window challenges with what it learnt.
    #[arg(long)]
    pub oracle: bool,
    /// Most game sessions the oracle attacker learns from (`--oracle`).
    #[arg(long, default_value_t = 800)]
    pub oracle_sessions: u64,
    /// Fresh game sessions played with what was learnt, and as many one-shot control sessions
    /// (`--oracle`).
    #[arg(long, default_value_t = 100)]
    pub oracle_admissions: u64,
    /// Windows the oracle attacker plays (`--oracle`), each against a fresh node whose current
    /// window is the next of the set schedule, so each with its own sets (the starter corpus
    /// has 5 under `configs/prod.toml`); `--oracle-sessions` and `--oracle-admissions` are per
    /// window, `--tries` spread over them.
    #[arg(long, default_value_t = 5)]
    pub oracle_windows: u64,
    /// The bench network's window (`--oracle`): a window's run must fit in it, since the game
    /// and the challenges draw a new window's sets each window.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "240s")]
    pub oracle_window: std::time::Duration,
    /// Also measure the trained attacker (`trained`) of `visual_match`,
    /// `interactive_reasoning` and `attention`, with the weights in this directory
    /// (`scripts/train-attacker/`).
    #[arg(long)]
    pub trained: Option<PathBuf>,
    /// The trained attacker's solver command (`sh -c`; the weights directory in
    /// `HCO_TRAINED_DIR`).
    #[arg(
        long,
        default_value = concat!("python3 ", env!("CARGO_MANIFEST_DIR"), "/../scripts/train-attacker/solve.py")
    )]
    pub trained_cmd: String,
}

/// Subcommands of `hco bench attack`.
#[derive(Debug, clap::Subcommand)]
pub enum AttackCommand {
    /// Render labelled challenges of an image family (or `attention`'s event frames) with the
    /// issuer's generator (images and `labels.jsonl`), to train an attacker on.
    Dataset(dataset::DatasetArgs),
}

/// One family's figures.
#[derive(Debug, Serialize)]
struct FamilyReport {
    /// The headline: the most successful attacker's figures at the configured difficulty.
    #[serde(flatten)]
    best: AttackerRate,
    /// Its name.
    attacker: String,
    /// `single` or `prod`: whose policy the family ran under (for `narrative_chain`, also
    /// which corpus).
    config: String,
    /// `human` or `agent`.
    class: &'static str,
    /// A labelled baseline (`script_solvable`): a script with the source passes it, and no
    /// policy lets it prove its class on its own. Its figures are not the class's.
    baseline: bool,
    /// The difficulty of the headline figures.
    difficulty: u32,
    /// Every attacker's figures at that difficulty.
    attackers: BTreeMap<String, AttackerRate>,
    /// Every attacker's figures at each difficulty the family accepts, where measured.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    by_difficulty: BTreeMap<u32, BTreeMap<String, AttackerRate>>,
    /// `narrative_chain` only: each reader over every question of the corpus, offline
    /// ([`questions`]); the tries above repeat the corpus's questions, these count each once.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    per_question: BTreeMap<&'static str, questions::ReaderQuestions>,
    /// `narrative_chain` only: the per-window challenges as an answer oracle, per set, offline.
    #[serde(skip_serializing_if = "Option::is_none")]
    challenge_oracle: Option<questions::ChallengeOracle>,
}

#[derive(Debug, Serialize)]
struct Report {
    families: BTreeMap<String, FamilyReport>,
    end_to_end: BTreeMap<&'static str, EndToEnd>,
    tesseract: bool,
}

/// Runs the bench.
pub fn run(args: AttackArgs) -> anyhow::Result<()> {
    if let Some(AttackCommand::Dataset(d)) = &args.command {
        return dataset::run(d);
    }
    if args.one_person {
        return run_one_person(&args);
    }
    if args.oracle {
        return run_oracle(&args);
    }
    let single = Config::load(&args.single)?;
    let prod = Config::load(&args.prod)?;
    let families: Vec<String> = if args.families.is_empty() {
        FAMILIES.iter().map(|s| s.to_string()).collect()
    } else {
        args.families.clone()
    };
    let tesseract = attack::ocr::available();
    if !tesseract {
        tracing::warn!("tesseract is not installed: the OCR attackers will fail every try");
    }
    let mut report = Report {
        families: BTreeMap::new(),
        end_to_end: BTreeMap::new(),
        tesseract,
    };
    // The attacker each family is played with end to end: the most successful one measured.
    let mut best: BTreeMap<String, Box<dyn Attack>> = BTreeMap::new();
    for name in &families {
        let (base, config) = match (name.as_str(), &args.agent_corpus) {
            ("presence", _) => (&prod, "prod".to_owned()),
            ("narrative_chain", None) => (&prod, "prod, public starter corpus".to_owned()),
            ("narrative_chain", Some(dir)) => (&prod, format!("prod, corpus {}", dir.display())),
            _ => (&single, "single".to_owned()),
        };
        let family = hco_challenges::Registry::builtin()
            .get(name)
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("unknown family `{name}`"))?;
        let difficulty = base
            .network
            .families
            .iter()
            .find(|f| f.name == *name)
            .map_or(family.default_params().difficulty, |f| f.difficulty);
        let (attackers, top) = measure_attackers(&args, base, name, difficulty)?;
        let mut by_difficulty = BTreeMap::new();
        if args.each_difficulty.iter().any(|f| f == name) {
            for level in (1..=8).filter(|&d| {
                d != difficulty
                    && family
                        .check_params(&hco_challenges::FamilyParams { difficulty: d })
                        .is_ok()
            }) {
                by_difficulty.insert(level, measure_attackers(&args, base, name, level)?.0);
            }
            by_difficulty.insert(difficulty, attackers.clone());
        }
        report.families.insert(
            name.clone(),
            FamilyReport {
                best: attackers[top.name()].clone(),
                attacker: top.name().to_owned(),
                config,
                class: family.class().as_str(),
                baseline: family.script_solvable(),
                difficulty,
                attackers,
                by_difficulty,
                per_question: if name == "narrative_chain" {
                    narrative_questions(args.agent_corpus.as_deref(), difficulty)?
                } else {
                    BTreeMap::new()
                },
                challenge_oracle: if name == "narrative_chain" {
                    Some(questions::challenge_oracle(
                        corpus_of(args.agent_corpus.as_deref())?.as_ref(),
                    ))
                } else {
                    None
                },
            },
        );
        best.insert(name.clone(), top);
    }
    // Families not measured still get their first attacker end to end.
    for attacker in attack::all() {
        if !best.contains_key(attacker.family()) {
            best.insert(attacker.family().to_owned(), attacker);
        }
    }
    if args.identity_windows > 0 {
        // Production windows last an hour: all its identities play the same window, in its slot.
        let n = args.identity_windows;
        for (label, config, per_window, probe) in [
            ("single", &single, args.per_window, false),
            ("prod", &prod, n, true),
        ] {
            if !args.end_to_end.iter().any(|c| c == label) {
                continue;
            }
            eprintln!("attack: end to end under {label} ({n} identity-windows)");
            let e2e = end_to_end::run(config, &best, n, per_window, probe)?;
            report.end_to_end.insert(label, e2e);
        }
    }
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

/// `--one-person`: the one-person attacker alone.
fn run_one_person(args: &AttackArgs) -> anyhow::Result<()> {
    let prod = Config::load(&args.prod)?;
    let opts = one_person::Options {
        identities: args.identities,
        windows: args.windows,
        touch_ms: args.touch_ms,
        window: args.window_length,
        grace: args.grace,
        slot: args.slot,
        schedule: args.schedule,
        serve: args.serve,
        committee: args.committee,
        malicious_member: args.malicious_member,
    };
    let report = serde_json::json!({ "one_person": one_person::run(&prod, &opts)? });
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

/// `--oracle`: the admission-game oracle attacker alone.
fn run_oracle(args: &AttackArgs) -> anyhow::Result<()> {
    if args.families.iter().any(|f| f != "narrative_chain") {
        anyhow::bail!("--oracle attacks narrative_chain only (--families narrative_chain)");
    }
    let prod = Config::load(&args.prod)?;
    let opts = oracle::Options {
        sessions: args.oracle_sessions,
        admissions: args.oracle_admissions,
        tries: args.tries,
        windows: args.oracle_windows,
        window: args.oracle_window,
        corpus: args.agent_corpus.clone(),
    };
    let difficulty = prod
        .network
        .families
        .iter()
        .find(|f| f.name == "narrative_chain")
        .map_or(3, |f| f.difficulty);
    let report = serde_json::json!({
        "narrative_chain": {
            "oracle": oracle::run(&prod, &opts)?,
            "per_question": narrative_questions(args.agent_corpus.as_deref(), difficulty)?,
            "challenge_oracle": questions::challenge_oracle(corpus_of(args.agent_corpus.as_deref())?.as_ref()),
        }
    });
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

/// The corpus at `dir`, else the starter one.
fn corpus_of(dir: Option<&std::path::Path>) -> anyhow::Result<std::borrow::Cow<'static, Corpus>> {
    Ok(match dir {
        Some(dir) => std::borrow::Cow::Owned(Corpus::load_dir(dir)?),
        None => std::borrow::Cow::Borrowed(Corpus::embedded()),
    })
}

/// Every narrative reader over every question of the corpus at `dir` (else the starter one).
fn narrative_questions(
    dir: Option<&std::path::Path>,
    difficulty: u32,
) -> anyhow::Result<BTreeMap<&'static str, questions::ReaderQuestions>> {
    Ok(questions::per_question(
        corpus_of(dir)?.as_ref(),
        difficulty,
    ))
}

/// Every attacker of `name` against a node running `base` with the family at `difficulty`;
/// their figures and the most successful one.
fn measure_attackers(
    args: &AttackArgs,
    base: &Config,
    name: &str,
    difficulty: u32,
) -> anyhow::Result<(BTreeMap<String, AttackerRate>, Box<dyn Attack>)> {
    let mut rates = BTreeMap::new();
    let mut top: Option<(u64, Box<dyn Attack>)> = None;
    let mut attackers = attack::of_family(name);
    if let Some(dir) = &args.trained {
        let trained = attack::trained::Trained::of(name, &args.trained_cmd, dir.clone());
        attackers.extend(trained.map(|t| Box::new(t) as Box<dyn Attack>));
    }
    for attacker in attackers {
        eprintln!(
            "attack: {name} (difficulty {difficulty}) ← {} ({} tries)",
            attacker.name(),
            args.tries
        );
        let rate = family::measure(base, name, attacker.as_ref(), args.tries, |c| {
            family::set_difficulty(c, name, difficulty);
            // One reading each: the verdict is shown to count it (withholding changes what a
            // script learns across tries, which `--oracle` measures, not what one reading gets).
            c.agent.withhold_verdicts = false;
            if let Some(dir) = &args.agent_corpus {
                c.agent.corpus_dir = Some(dir.clone());
                c.agent.allow_starter_corpus = false;
            }
        })?;
        let successes = rate.rate.successes;
        rates.insert(attacker.name().to_owned(), rate);
        if top.as_ref().is_none_or(|(s, _)| successes > *s) {
            top = Some((successes, attacker));
        }
    }
    let Some((_, top)) = top else {
        anyhow::bail!("family `{name}` has no attacker in the tree");
    };
    Ok((rates, top))
}
