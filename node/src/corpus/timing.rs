//! `hco corpus timing`: the aCAPTCHA human timing model over a corpus, beside the budgets of a
//! node configuration — the numbers behind "a person cannot answer within τ".

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use hco_challenges::narrative::Corpus;
use hco_challenges::narrative::timing::{self, TimingReport};

use crate::config::Config;

/// The report for `config`'s budgets (defaults when none) over the corpus in `dir`, else the
/// config's `corpus_dir`, else the starter corpus.
pub fn report(config: Option<&Path>, dir: Option<&Path>) -> anyhow::Result<TimingReport> {
    let config = match config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let dir = dir.or(config.agent.corpus_dir.as_deref());
    let corpus = match dir {
        Some(dir) => Corpus::load_dir(dir).with_context(|| format!("corpus {}", dir.display()))?,
        None => Corpus::embedded().clone(),
    };
    let chain_deadline = config
        .network
        .families
        .iter()
        .find(|f| f.name == "narrative_chain")
        .map_or(Duration::from_secs(45), |f| f.deadline);
    timing::report(
        &corpus,
        config.agent.round_budget.as_secs_f64(),
        chain_deadline.as_secs_f64(),
    )
    .context("the corpus has no sets")
}

/// The report as a short table.
pub fn table(r: &TimingReport) -> String {
    let s = |x: &timing::Spread| format!("{:>7.1} {:>7.1} {:>7.1}", x.min, x.median, x.max);
    format!(
        "human lower bound (Eq. 6: read at {} tokens/s, decide {} s, type at {} tokens/s) over \
         {} sets, {} rounds\n\
         {:<34} {:>7} {:>7} {:>7}\n\
         {:<34} {}\n\
         {:<34} {}   budget τ {:.0} s, shortest round {:.1}× τ\n\
         {:<34} {}   deadline {:.0} s, shortest chain {:.1}× the deadline\n",
        timing::READ_TOKENS_PER_S,
        timing::DECIDE_S,
        timing::TYPE_TOKENS_PER_S,
        r.sets,
        r.rounds,
        "",
        "min",
        "median",
        "max",
        "narrative tokens per round",
        s(&r.narrative_tokens),
        "person, one admission round (s)",
        s(&r.human_round_s),
        r.round_budget_s,
        r.round_separation,
        "person, one narrative_chain (s)",
        s(&r.human_chain_s),
        r.chain_deadline_s,
        r.chain_separation,
    )
}
