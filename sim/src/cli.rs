//! The `hco sim` command line: `run` a scenario, `bench` the aggregate engine, `bound` a node
//! config's one-person bound (parsed by the `hco` binary, which owns the config format).

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;

use crate::bench::{BenchConfig, bench};
use crate::engine::EngineKind;
use crate::report::write_all;
use crate::run::{RunConfig, run};
use crate::scenario::Scenario;

/// `hco sim …` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum SimCommand {
    /// How many identities one person can keep active per window under a node config's human
    /// policy (slot, phases, deadlines) with the paper's human solve times.
    Bound {
        /// A node config (TOML, e.g. configs/prod.toml).
        #[arg(long)]
        config: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Run a scenario; write summary.json, CSV tables and SVG plots into --out.
    Run {
        /// Scenario TOML (see configs/sim/).
        scenario: PathBuf,
        /// Output directory (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// Seed; defaults to the scenario's `seed`.
        #[arg(long)]
        seed: Option<u64>,
        /// Engine: `aggregate` (bulk sampling) or `exact` (the real oracle core).
        #[arg(long, value_enum, default_value_t = EngineKind::Aggregate)]
        engine: EngineKind,
        /// JSON from `hco bench families --json`; its `baseline_success` replaces ε_auto.
        #[arg(long)]
        eps_from: Option<PathBuf>,
        /// Worker threads for the aggregate engine.
        #[arg(long, default_value_t = 2)]
        threads: usize,
    },
    /// Measure the aggregate engine (identity-windows per second, peak memory).
    Bench {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Identities per window.
        #[arg(long, default_value_t = 1_000_000)]
        identities: u64,
        /// Windows per pass.
        #[arg(long, default_value_t = 1000)]
        windows: u32,
        /// Worker threads.
        #[arg(long, default_value_t = 2)]
        threads: usize,
    },
}

/// Execute a `hco sim` subcommand.
pub fn execute(cmd: SimCommand) -> anyhow::Result<()> {
    let tty = std::io::stderr().is_terminal();
    match cmd {
        SimCommand::Bound { .. } => {
            anyhow::bail!(
                "`sim bound` reads a node config: run it as `hco sim bound --config FILE`"
            )
        }
        SimCommand::Run {
            scenario,
            out,
            seed,
            engine,
            eps_from,
            threads,
        } => {
            let sc = Scenario::load(&scenario)?;
            let mut cfg = RunConfig::new(sc);
            cfg.seed = seed;
            cfg.engine = engine;
            cfg.threads = threads;
            cfg.progress = tty;
            if let Some(path) = eps_from {
                cfg = cfg.with_eps_file(&path)?;
            }
            let result = run(&cfg)?;
            write_all(&result, &out)
                .with_context(|| format!("writing results to {}", out.display()))?;
            println!(
                "{}: seed {}, τh {:.2}, Lemma 1 violations {}, Theorem 2 violations {}, \
                 cost slope {:.5}/identity-window (R² {:.4}), honest false rejects {:.2}%",
                result.scenario.name,
                result.seed,
                result.model.tau_h,
                result.lemma1_violations,
                result.steady.violations,
                result.fit.slope,
                result.fit.r2,
                100.0 * result.honest_false_reject_rate,
            );
            println!("results in {}", out.display());
            Ok(())
        }
        SimCommand::Bench {
            json,
            identities,
            windows,
            threads,
        } => {
            let cfg = BenchConfig {
                identities,
                windows,
                threads,
                min_time: Duration::from_secs(2),
            };
            let report = bench(&cfg, tty && !json)?;
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                println!(
                    "aggregate engine: {:.3e} identity-windows/s ({} × {} × {} passes in {:.2} s), peak RSS {}",
                    report.identity_windows_per_s,
                    report.identities,
                    report.windows,
                    report.passes,
                    report.elapsed_s,
                    report
                        .peak_rss_mb
                        .map_or("unknown".to_owned(), |m| format!("{m:.1} MiB")),
                );
            }
            Ok(())
        }
    }
}
