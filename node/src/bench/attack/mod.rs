//! `hco bench attack`: every in-tree attacker against its family over HTTP, on a local node
//! with the network's real deadlines and minimum solve times, then script-held identities end
//! to end under `configs/single.toml` and `configs/prod.toml`.
//!
//! Output (`--json`): `{"families": {"<family>": {"tries", "successes", "wilson_low",
//! "wilson_high", "median_ms", "attacker", "config", "attackers": {…}}}, "end_to_end":
//! {"single": {"identity_windows", "active", …}, "prod": {…}}}`. A family's headline figures
//! are those of its most successful attacker; every attacker's are under `attackers`. Each try
//! is a fresh identity's first (and only) answer to its challenge. Presence is measured under
//! the production policy (strict attestation), the cognitive families under the development
//! one, whose deadlines they share.

mod end_to_end;
mod family;
mod local;

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::attack::{self, Attack};
use crate::config::Config;
use end_to_end::EndToEnd;
use family::AttackerRate;

/// The families the bench measures by default: the human ones, and the agent class's
/// per-window step.
pub const FAMILIES: [&str; 5] = [
    "visual_match",
    "interactive_reasoning",
    "attention",
    "presence",
    "narrative_chain",
];

/// Options of `hco bench attack`.
#[derive(Debug, Args)]
pub struct AttackArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Families to measure (comma-separated); by default every human family and
    /// `narrative_chain`.
    #[arg(long, value_delimiter = ',')]
    pub families: Vec<String>,
    /// First tries per attacker.
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
}

/// One family's figures.
#[derive(Debug, Serialize)]
struct FamilyReport {
    /// The headline: the most successful attacker's figures.
    #[serde(flatten)]
    best: AttackerRate,
    /// Its name.
    attacker: String,
    /// `single` or `prod`: whose policy the family ran under (for `narrative_chain`, also
    /// which corpus).
    config: String,
    /// Every attacker's figures.
    attackers: BTreeMap<String, AttackerRate>,
}

#[derive(Debug, Serialize)]
struct Report {
    families: BTreeMap<String, FamilyReport>,
    end_to_end: BTreeMap<&'static str, EndToEnd>,
    tesseract: bool,
}

/// Runs the bench.
pub fn run(args: AttackArgs) -> anyhow::Result<()> {
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
        let agent_corpus = args.agent_corpus.clone();
        let (base, config) = match (name.as_str(), &agent_corpus) {
            ("presence", _) => (&prod, "prod".to_owned()),
            ("narrative_chain", None) => (&prod, "prod, public starter corpus".to_owned()),
            ("narrative_chain", Some(dir)) => (&prod, format!("prod, corpus {}", dir.display())),
            _ => (&single, "single".to_owned()),
        };
        let mut rates = BTreeMap::new();
        let mut top: Option<(u64, Box<dyn Attack>)> = None;
        for attacker in attack::of_family(name) {
            eprintln!(
                "attack: {name} ← {} ({} tries)",
                attacker.name(),
                args.tries
            );
            let rate = family::measure(base, name, attacker.as_ref(), args.tries, |c| {
                if let Some(dir) = &agent_corpus {
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
        let Some((_, attacker)) = top else {
            anyhow::bail!("family `{name}` has no attacker in the tree");
        };
        let headline = rates[attacker.name()].clone();
        report.families.insert(
            name.clone(),
            FamilyReport {
                best: headline,
                attacker: attacker.name().to_owned(),
                config: config.clone(),
                attackers: rates,
            },
        );
        best.insert(name.clone(), attacker);
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
