//! Writing a run's outputs: `summary.json`, CSV tables and SVG plots.
//!
//! Every number is formatted deterministically (shortest round-trip form), so a fixed seed gives
//! byte-identical files.

mod plots;
mod svg;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::analysis::{Baseline, CostPoint, Fit, SweepPoint, baseline_cost};
use crate::engine::EngineKind;
use crate::error::SimError;
use crate::run::{DerivedSummary, RunOutput};
use crate::scenario::{EpsOverride, Scenario};

/// The file names a run writes, in order.
pub const FILES: [&str; 10] = [
    "summary.json",
    "windows.csv",
    "cost_curve.csv",
    "false_rejects.csv",
    "lemma1.svg",
    "cost.svg",
    "steady_state.svg",
    "profit.svg",
    "baselines.svg",
    "false_rejects.svg",
];

/// A cohort's false-reject share at the scenario's parameters.
#[derive(Debug, Clone, Serialize)]
pub struct CohortRejects {
    /// Cohort name.
    pub name: String,
    /// Share of the population.
    pub share: f64,
    /// Solve-time multiplier.
    pub speed: f64,
    /// Share of its participations that missed the window.
    pub false_reject: f64,
}

/// Baseline costs at the largest measured identity count.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineSummary {
    /// Identities `s` compared.
    pub identities: f64,
    /// HCO cost per window at `s` (fitted line).
    pub hco: f64,
    /// PoW cost per window at `s`.
    pub pow: f64,
    /// PoS cost per window at `s`.
    pub pos: f64,
}

/// `summary.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Seed of the run.
    pub seed: u64,
    /// Engine used.
    pub engine: EngineKind,
    /// The scenario, every default filled in.
    pub scenario: Scenario,
    /// ε_auto values replaced by measurements.
    pub eps_overrides: Vec<EpsOverride>,
    /// Derived quantities (τh and friends).
    pub derived: DerivedSummary,
    /// Windows simulated.
    pub windows: u32,
    /// Windows with more human-run identities than m·τh.
    pub lemma1_violations: u64,
    /// Windows whose running mean exceeded the running m̄·τh.
    pub theorem2_violations: u64,
    /// Mean humans m̄.
    pub mean_humans: f64,
    /// Mean human-run active identities.
    pub mean_human_active: f64,
    /// Mean bot-run active identities.
    pub mean_bot_active: f64,
    /// Theorem 2 bound m̄·τh.
    pub steady_state_bound: f64,
    /// Least-squares fit of C_A(s).
    pub fit: Fit,
    /// Reward per identity-window at which a puppeteer pool breaks even (the fit's slope).
    pub break_even_reward: f64,
    /// The scenario's reward per identity-window.
    pub reward_per_identity_window: f64,
    /// Identities maximising profit at that reward (human-run).
    pub profit_max_identities: f64,
    /// Whether bot-run identities pay at that reward (then their number is unbounded).
    pub automation_profitable: bool,
    /// What automation pays per active identity-window: attempts times their price over the
    /// policy's odds. Null when no script can pass the policy (a step where every family has
    /// ε = 0, such as presence without a hardware authenticator): then every identity costs a
    /// person, and the cost slope is the hired humans'.
    pub automation_cost_per_identity_window: Option<f64>,
    /// The attacker's marginal cost of one identity-window: the cheaper of hired humans (the
    /// fit's slope) and automation.
    pub cheapest_cost_per_identity_window: f64,
    /// Honest false-reject rate over the run.
    pub honest_false_reject_rate: f64,
    /// Per-cohort false-reject shares at the scenario's parameters.
    pub honest_false_reject_by_cohort: Vec<CohortRejects>,
    /// HCO against PoW and PoS at the largest identity count.
    pub baselines: BaselineSummary,
    /// Measured cost curve.
    pub cost_curve: Vec<CostPoint>,
    /// Accessibility sweep.
    pub false_reject_sweep: Vec<SweepPoint>,
    /// Files written.
    pub files: Vec<String>,
}

impl Summary {
    /// Build the summary of a run.
    pub fn new(out: &RunOutput) -> Self {
        let s = &out.scenario;
        let reward = s.adversary.reward_per_identity_window;
        let s_max = out
            .cost_points
            .iter()
            .map(|p| p.identities)
            .fold(0.0, f64::max);
        let window_s = s.window_len.as_secs_f64();
        let bot_cost = out
            .model
            .bot_cost_per_active(s.adversary.automation_cost_per_attempt);
        Self {
            seed: out.seed,
            engine: out.engine,
            scenario: s.clone(),
            eps_overrides: out.eps_overrides.clone(),
            derived: DerivedSummary::new(&out.model, s),
            windows: s.windows,
            lemma1_violations: out.lemma1_violations,
            theorem2_violations: out.steady.violations,
            mean_humans: out.steady.mean_humans,
            mean_human_active: out.steady.mean_human_active,
            mean_bot_active: out.steady.mean_bot_active,
            steady_state_bound: out.steady.bound,
            fit: out.fit,
            break_even_reward: out.fit.slope,
            reward_per_identity_window: reward,
            profit_max_identities: out.profit_max_identities,
            automation_profitable: out.model.bot_odds.active > 0.0 && reward > bot_cost,
            automation_cost_per_identity_window: bot_cost.is_finite().then_some(bot_cost),
            cheapest_cost_per_identity_window: out.fit.slope.min(bot_cost),
            honest_false_reject_rate: out.honest_false_reject_rate,
            honest_false_reject_by_cohort: out
                .model
                .cohorts
                .iter()
                .map(|c| CohortRejects {
                    name: c.name.clone(),
                    share: c.share,
                    speed: c.speed,
                    false_reject: 1.0 - c.active,
                })
                .collect(),
            baselines: BaselineSummary {
                identities: s_max,
                hco: out.fit.slope * s_max + out.fit.intercept,
                pow: baseline_cost(&s.baselines, Baseline::Pow, window_s, s_max),
                pos: baseline_cost(&s.baselines, Baseline::Pos, window_s, s_max),
            },
            cost_curve: out.cost_points.clone(),
            false_reject_sweep: out.sweep.clone(),
            files: FILES.iter().map(|f| (*f).to_owned()).collect(),
        }
    }
}

fn write(dir: &Path, name: &str, body: &str) -> Result<PathBuf, SimError> {
    let path = dir.join(name);
    std::fs::write(&path, body).map_err(|source| SimError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// The per-window CSV.
pub fn windows_csv(out: &RunOutput) -> String {
    let mut csv = String::from(
        "window,humans,bound,human_active,bot_active,sybil_active,human_attempts,bot_attempts,\
         attacker_cost,honest_participating,honest_active,honest_rejected,lemma1_violation\n",
    );
    for r in &out.records {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.window,
            r.humans,
            r.bound,
            r.human_active,
            r.bot_active,
            r.sybil_active(),
            r.human_attempts,
            r.bot_attempts,
            r.attacker_cost,
            r.honest_participating,
            r.honest_active,
            r.honest_rejected(),
            u8::from(r.violates_lemma1()),
        );
    }
    csv
}

/// Write every output file into `dir` (created if missing); returns the paths written.
pub fn write_all(out: &RunOutput, dir: &Path) -> Result<Vec<PathBuf>, SimError> {
    std::fs::create_dir_all(dir).map_err(|source| SimError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let summary = Summary::new(out);
    let json = serde_json::to_string_pretty(&summary).map_err(|e| SimError::Io {
        path: dir.join("summary.json"),
        source: e.into(),
    })?;
    let mut paths = vec![write(dir, "summary.json", &(json + "\n"))?];
    paths.push(write(dir, "windows.csv", &windows_csv(out))?);
    let mut cost = String::from("humans,identities,cost\n");
    for p in &out.cost_points {
        let _ = writeln!(cost, "{},{},{}", p.humans, p.identities, p.cost);
    }
    paths.push(write(dir, "cost_curve.csv", &cost)?);
    let mut fr = String::from("slot_s,deadline_scale,false_reject");
    for c in &out.model.cohorts {
        let _ = write!(fr, ",false_reject_{}", c.name);
    }
    fr.push('\n');
    for p in &out.sweep {
        let _ = write!(fr, "{},{},{}", p.slot_s, p.deadline_scale, p.false_reject);
        for c in &p.by_cohort {
            let _ = write!(fr, ",{c}");
        }
        fr.push('\n');
    }
    paths.push(write(dir, "false_rejects.csv", &fr)?);
    paths.extend(plots::draw_all(out, &summary, dir)?);
    Ok(paths)
}
