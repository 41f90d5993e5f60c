//! The `hco sim` command line: `run` a scenario, `bench` the aggregate engine, `bound` a node
//! config's one-person bound (the `hco` binary loads the config; see [`bound_output`]).

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;

use crate::bench::{BenchConfig, bench};
use crate::bound::{
    Bound, CeremonyInputs, DEFAULT_TOUCH_MS, HumanModel, one_person_bound_with_touch,
};
use crate::engine::EngineKind;
use crate::report::write_all;
use crate::run::{RunConfig, run};
use crate::scenario::EpsPick;
use crate::scenario::{Scenario, SlotMode};

/// `hco sim …` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum SimCommand {
    /// How many identities one person can keep active per window under a node config's human
    /// policy (slot, phases, touch prompts, deadlines) with the paper's human solve times, and
    /// when a model answers every cognitive step and only the touches take the person.
    Bound {
        /// A node config (TOML, e.g. configs/prod.toml), loaded as the node loads it.
        #[arg(long)]
        config: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// A family's mean human solve time instead of the paper's, e.g. `attention=20s`
        /// (repeatable).
        #[arg(long = "solve-time", value_name = "FAMILY=DURATION", value_parser = parse_solve_time)]
        solve_time: Vec<(String, Duration)>,
        /// Milliseconds one touch of a hardware key takes the person in the model-solves
        /// figure.
        #[arg(long = "touch-ms", value_name = "N", default_value_t = DEFAULT_TOUCH_MS,
              value_parser = clap::value_parser!(u64).range(1..))]
        touch_ms: u64,
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
        /// JSON from `hco bench attack --json` (each family's best attacker's first-try rate
        /// replaces ε_auto) or `hco bench families --json` (its `baseline_success` does).
        #[arg(long)]
        eps_from: Option<PathBuf>,
        /// Which figure of an attack measurement to use: the rate, or the upper end of its
        /// 95 % interval.
        #[arg(long, value_enum, default_value_t = EpsPick::Point)]
        eps_pick: EpsPick,
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

fn parse_solve_time(s: &str) -> Result<(String, Duration), String> {
    let (family, time) = s
        .split_once('=')
        .ok_or_else(|| format!("expected FAMILY=DURATION, got `{s}`"))?;
    let time = humantime_serde::re::humantime::parse_duration(time.trim())
        .map_err(|e| format!("`{time}`: {e}"))?;
    Ok((family.trim().to_owned(), time))
}

/// What `hco sim bound` prints: the bound of a network's human ceremony as one JSON object
/// or a table, with solve-time overrides and the time a touch takes (`touch_ms`, in the
/// model-solves figure). The `hco` binary reads the node config (its format lives with the
/// node) and passes [`crate::bound::ceremony_of`] its parameters.
pub fn bound_output(
    inputs: &CeremonyInputs,
    json: bool,
    solve_time: &[(String, Duration)],
    touch_ms: u64,
) -> anyhow::Result<String> {
    let human = solve_time
        .iter()
        .fold(HumanModel::paper(), |h, (f, t)| h.with(f, t.as_secs_f64()));
    let bound = one_person_bound_with_touch(inputs, &human, touch_ms)
        .context("the network's human policy")?;
    Ok(if json {
        serde_json::to_string(&bound)?
    } else {
        bound_table(&bound)
    })
}

/// The one-person bound as a table.
pub fn bound_table(b: &Bound) -> String {
    let mut out = String::new();
    let mode = match b.slot_mode {
        SlotMode::Open => "open window",
        SlotMode::Global => "global slot",
        SlotMode::Staggered => "staggered slots",
    };
    let _ = writeln!(
        out,
        "one person keeps at most {} identities active per window ({} if every draw is the fastest family)",
        b.identities_per_person, b.identities_per_person_cheapest_draws
    );
    if let Some(mc) = &b.monte_carlo {
        let _ = writeln!(
            out,
            "Monte Carlo (earliest deadline first, random openings and draws): {} with ≥ 95 % of identity-windows complete ({:.1} %)",
            mc.identities_per_person,
            100.0 * mc.completion
        );
    }
    if b.bound_by == "touches" {
        let _ = writeln!(
            out,
            "bound by the touch prompts' beats at human speed ({:.1} identities; the work alone allows more)",
            b.capacity_touches.unwrap_or(f64::NAN)
        );
    }
    let m = &b.model_solves;
    match m.identities_per_person {
        Some(n) => {
            let mc = m.monte_carlo.as_ref().map_or(String::new(), |mc| {
                format!(
                    "; Monte Carlo {} with ≥ 95 % complete",
                    mc.identities_per_person
                )
            });
            let span = m.touch_span_s.unwrap_or(f64::NAN);
            let within = if m.basis == "beats" {
                format!(
                    "in {} beats of {} s",
                    m.beats,
                    span / f64::from(m.beats.max(1))
                )
            } else {
                format!(
                    "in the window plus the reaction window, {span} s: staggered slots, window-based"
                )
            };
            let _ = writeln!(
                out,
                "a model answering every cognitive step: at most {n} identities per person ({} touch(es) of {} s per identity-window {within}){mc}; a rig at {} s per touch: {} per key",
                m.touches_per_identity_window,
                m.touch_s,
                m.rig.touch_s,
                m.rig
                    .identities_per_key
                    .map_or("unbounded".to_owned(), |n| n.to_string()),
            );
        }
        None => {
            let _ = writeln!(out, "a model answering every cognitive step: {}", m.note);
        }
    }
    if let Some(member) = &m.one_malicious_member {
        let colluders: Vec<String> = member
            .with_colluders
            .iter()
            .map(|c| {
                format!(
                    "{} prompt(s) {}",
                    c.prompts_issued,
                    c.identities_per_person
                        .map_or("unbounded".to_owned(), |n| n.to_string())
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "one malicious member answering for its own sybils: at most {} identities per person (touches in the beats plus one relay round, {} s; {} if its clock runs a round ahead){}; coalitions issuing c' prompts of each identity-window: {}",
            member.identities_per_person,
            member.touch_span_s,
            member.identities_per_person_clocks_a_round_apart,
            member
                .monte_carlo
                .as_ref()
                .map_or(String::new(), |mc| format!(
                    "; Monte Carlo {} with ≥ 95 % complete",
                    mc.identities_per_person
                )),
            colluders.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "{mode} of {:.0} s, {} phases, longest deadline {:.0} s; {:.1} s of work per identity (cheapest {:.1} s); binding: step {} with {:.0} s",
        b.slot_s,
        b.phases,
        b.longest_deadline_s,
        b.work_per_identity_s,
        b.work_per_identity_cheapest_s,
        b.binding_step,
        b.available_s
    );
    let _ = writeln!(
        out,
        "{:<4} {:<24} {:>7} {:>9} {:>9}  pool (s)",
        "step", "", "mean s", "fastest s", "deadline"
    );
    for (i, s) in b.steps.iter().enumerate() {
        let pool: Vec<String> = s.pool.iter().map(|(f, t)| format!("{f} {t}")).collect();
        let _ = writeln!(
            out,
            "{i:<4} {:<24} {:>7.1} {:>9.1} {:>8.0}s  {}",
            s.step,
            s.mean_s,
            s.cheapest_s,
            s.longest_deadline_s,
            pool.join(", ")
        );
    }
    let _ = write!(out, "({})", b.model);
    out
}

/// Execute a `hco sim` subcommand.
pub fn execute(cmd: SimCommand) -> anyhow::Result<()> {
    let tty = std::io::stderr().is_terminal();
    match cmd {
        SimCommand::Bound { config, .. } => anyhow::bail!(
            "`sim bound` reads a node config, whose format the node owns: run `hco sim bound --config {}`",
            config.display()
        ),
        SimCommand::Run {
            scenario,
            out,
            seed,
            engine,
            eps_from,
            eps_pick,
            threads,
        } => {
            let sc = Scenario::load(&scenario)?;
            let mut cfg = RunConfig::new(sc);
            cfg.seed = seed;
            cfg.engine = engine;
            cfg.threads = threads;
            cfg.progress = tty;
            if let Some(path) = eps_from {
                cfg = cfg.with_eps_file(&path, eps_pick)?;
            }
            let result = run(&cfg)?;
            write_all(&result, &out)
                .with_context(|| format!("writing results to {}", out.display()))?;
            let m = &result.model;
            println!(
                "{}: seed {}, policy {:?} + {} spare(s), {} identities per human (capacity {:.1}, τh {:.2}), \
                 Lemma 1 violations {}, Theorem 2 violations {}, \
                 cost slope {:.5}/identity-window (R² {:.4}), honest false rejects {:.2}%",
                result.scenario.name,
                result.seed,
                result.scenario.steps,
                result.scenario.spares,
                m.per_human,
                m.capacity,
                m.tau_h,
                result.lemma1_violations,
                result.steady.violations,
                result.fit.slope,
                result.fit.r2,
                100.0 * result.honest_false_reject_rate,
            );
            let bot = m.bot_cost_per_active(result.scenario.adversary.automation_cost_per_attempt);
            if bot.is_finite() {
                println!(
                    "automation: {:.5}/identity-window (P(active) {:.4} per script-run identity)",
                    bot, m.bot_odds.active
                );
            } else {
                println!(
                    "automation: impossible — a script passes no try of some step (ε = 0, e.g. presence without an authenticator), so every identity costs a person"
                );
            }
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
