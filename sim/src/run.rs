//! One run: scenario in, every result out.

use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::analysis::{self, CostPoint, Fit, SteadyState, SweepPoint};
use crate::engine::aggregate::Aggregate;
use crate::engine::{EngineKind, WindowRecord, exact};
pub use crate::error::SimError;
use crate::model::{LoadPoint, Model, StepModel};
use crate::scenario::{EpsOverride, EpsPick, Scenario, ScenarioError, apply_eps_json};

/// What to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The scenario.
    pub scenario: Scenario,
    /// Seed; `None` uses the scenario's.
    pub seed: Option<u64>,
    /// Engine.
    pub engine: EngineKind,
    /// Worker threads for the aggregate engine.
    pub threads: usize,
    /// Show a progress bar on stderr (hidden anyway when stderr is not a terminal).
    pub progress: bool,
    /// ε_auto overrides applied from a measurements file.
    pub eps_overrides: Vec<EpsOverride>,
}

impl RunConfig {
    /// A config for `scenario` with its own seed, the aggregate engine and two threads.
    pub fn new(scenario: Scenario) -> Self {
        Self {
            scenario,
            seed: None,
            engine: EngineKind::Aggregate,
            threads: 2,
            progress: false,
            eps_overrides: Vec::new(),
        }
    }

    /// Apply an eps JSON file (`hco bench families --json`) to the scenario.
    pub fn with_eps_file(mut self, path: &Path, pick: EpsPick) -> Result<Self, SimError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::Eps {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let applied = apply_eps_json(&mut self.scenario, &text, path, pick)?;
        self.scenario.validate()?;
        self.eps_overrides.extend(applied);
        Ok(self)
    }
}

/// Everything a run produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// Seed used.
    pub seed: u64,
    /// Engine used.
    pub engine: EngineKind,
    /// The scenario (after eps overrides).
    pub scenario: Scenario,
    /// ε_auto overrides that were applied.
    pub eps_overrides: Vec<EpsOverride>,
    /// The derived model.
    pub model: Model,
    /// One record per window.
    pub records: Vec<WindowRecord>,
    /// Lemma 1 violations.
    pub lemma1_violations: u64,
    /// Theorem 2 summary.
    pub steady: SteadyState,
    /// Measured HCO cost curve.
    pub cost_points: Vec<CostPoint>,
    /// Least-squares fit of the cost curve.
    pub fit: Fit,
    /// Identities that maximise the attacker's profit at the scenario's reward.
    pub profit_max_identities: f64,
    /// Honest false-reject rate over the run.
    pub honest_false_reject_rate: f64,
    /// Accessibility sweep.
    pub sweep: Vec<SweepPoint>,
}

/// A progress bar on stderr for `len` steps, hidden when unwanted or not on a terminal.
pub fn progress_bar(len: u64, wanted: bool) -> ProgressBar {
    if !wanted {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} windows ({eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Run a scenario end to end (no files written; see [`crate::report::write_all`]).
pub fn run(cfg: &RunConfig) -> Result<RunOutput, SimError> {
    let s = &cfg.scenario;
    s.validate()?;
    let seed = cfg.seed.unwrap_or(s.seed);
    let model = Model::new(s, seed)?;
    let bar = progress_bar(u64::from(s.windows), cfg.progress);
    bar.set_message(format!("{} ({:?})", s.name, cfg.engine));
    let records = match cfg.engine {
        EngineKind::Aggregate => Aggregate::new(s, &model, seed).run(cfg.threads, &bar),
        EngineKind::Exact => exact::run(s, &model, seed, &bar)?,
    };
    bar.finish_and_clear();
    let cost_points = analysis::cost_curve(s, &model, seed);
    let pts: Vec<(f64, f64)> = cost_points.iter().map(|p| (p.identities, p.cost)).collect();
    Ok(RunOutput {
        seed,
        engine: cfg.engine,
        lemma1_violations: analysis::lemma1_violations(&records),
        steady: analysis::steady_state(&records, model.tau_h),
        fit: analysis::least_squares(&pts),
        profit_max_identities: analysis::profit_max(
            &cost_points,
            s.adversary.reward_per_identity_window,
        ),
        honest_false_reject_rate: analysis::false_reject_rate(&records),
        sweep: analysis::false_reject_sweep(s, &model, seed),
        cost_points,
        records,
        model,
        scenario: s.clone(),
        eps_overrides: cfg.eps_overrides.clone(),
    })
}

/// Serialisable snapshot of the derived model for `summary.json`.
#[derive(Debug, Clone, Serialize)]
pub struct DerivedSummary {
    /// The policy's steps with their pools, work and per-try odds.
    pub steps: Vec<StepModel>,
    /// Spare tries.
    pub spares: u32,
    /// One person's capacity N̄: identities per window (see `hco_sim::model`).
    pub capacity: f64,
    /// The step whose phase binds the capacity.
    pub binding_step: usize,
    /// τh, identities per human per window (Lemma 1 bound).
    pub tau_h: f64,
    /// Identities each hired human takes on.
    pub identities_per_human: u32,
    /// Mean identities one hired human keeps active at that load.
    pub active_per_human: f64,
    /// Time a hired human works (and is paid) per window, seconds.
    pub human_budget_s: f64,
    /// Mean work of one identity's steps, seconds.
    pub identity_work_s: f64,
    /// Coefficient of variation of that work.
    pub identity_work_cv: f64,
    /// P(a human-run identity is active | time enough).
    pub human_identity_active: f64,
    /// P(a bot-run identity is active): 0 under a policy with a step no script passes.
    pub bot_identity_active: f64,
    /// Cost of one human for one window.
    pub cost_per_human_window: f64,
    /// Automation cost per active identity-window (null when no script can pass the policy).
    pub bot_cost_per_active_identity: Option<f64>,
    /// The load table: mean active identities and attempts of one human per load.
    pub load: Vec<LoadPoint>,
}

impl DerivedSummary {
    /// Snapshot of `model` for a scenario.
    pub fn new(model: &Model, s: &Scenario) -> Self {
        let bot = model.bot_cost_per_active(s.adversary.automation_cost_per_attempt);
        Self {
            steps: model.steps.clone(),
            spares: model.spares,
            capacity: model.capacity,
            binding_step: model.binding_step,
            tau_h: model.tau_h,
            identities_per_human: model.per_human,
            active_per_human: model.load_at(f64::from(model.per_human)).active_mean,
            human_budget_s: model.human_budget_s,
            identity_work_s: model.identity_work_s,
            identity_work_cv: model.identity_work_cv,
            human_identity_active: model.human_odds.active,
            bot_identity_active: model.bot_odds.active,
            cost_per_human_window: model.cost_per_human_window,
            bot_cost_per_active_identity: bot.is_finite().then_some(bot),
            load: model.load.clone(),
        }
    }
}
