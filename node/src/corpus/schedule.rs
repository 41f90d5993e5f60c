//! Keeping the narrative set schedule honest on this node: at start, refuse a schedule that
//! would show a set again that an earlier window already used (recorded in the ledger's
//! `narrative_sets` tree), or that has no fresh set for the current window before any window
//! used one (a `start_window` left far behind the clock); then, as each window opens, record the slices of the windows
//! reached so far, publish how many windows of fresh sets remain
//! (`hco_narrative_windows_remaining`, and `agent_corpus.schedule` in `/v1/windows/current`),
//! warn when fewer than `[agent] warn_corpus_remaining` are left, and log an error once none are.
//!
//! A schedule with `reuse` (the public starter corpus only) is neither recorded nor checked,
//! and the gauge reads -1 (no limit).

use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use hco_challenges::narrative::SetSchedule;
use hco_oracle::{Ledger, LedgerError};
use tokio_util::sync::CancellationToken;

use crate::service::Node;

/// Most reused sets named in the refusal at start.
const NAMED: usize = 5;

/// The schedule this node follows, and when to warn.
#[derive(Debug, Clone)]
pub struct SetsWatch {
    schedule: SetSchedule,
    in_use: bool,
    warn_windows: u64,
}

impl SetsWatch {
    /// Watches `schedule` (of an agent class that runs when `in_use`), warning when fewer than
    /// `warn_before` of windows of `window_ms` remain (at least one window).
    pub fn new(schedule: SetSchedule, in_use: bool, warn_before: Duration, window_ms: u64) -> Self {
        let warn_windows = (warn_before.as_millis() as u64 / window_ms.max(1)).max(1);
        Self {
            schedule,
            in_use,
            warn_windows,
        }
    }

    /// Windows below which the node warns.
    pub fn warn_windows(&self) -> u64 {
        self.warn_windows
    }

    fn watched(&self) -> bool {
        self.in_use && !self.schedule.params().reuse
    }

    /// Refuses to start in window `t` when the schedule would give a set recorded as used by
    /// an earlier window to `t` or a later window.
    pub fn check(&self, ledger: &Ledger, t: u64) -> anyhow::Result<()> {
        if !self.watched() {
            return Ok(());
        }
        let used = ledger.sets_used()?;
        let reused = self.schedule.reused(&used, t);
        if reused.is_empty() {
            return self.check_not_spent_unused(used.is_empty(), t);
        }
        let named: Vec<String> = reused
            .iter()
            .take(NAMED)
            .map(|r| {
                format!(
                    "`{}` (used in window {}, now scheduled for {})",
                    r.set, r.used_in, r.scheduled_for
                )
            })
            .collect();
        bail!(
            "the narrative set schedule would show {} set(s) again that earlier windows already \
             used, leaking their answers: {}{}. The corpus, the retirement list or \
             `[network.narrative] start_window` changed. On every member: add the sets used so \
             far to the `[agent] retired_sets` file and set `start_window` to {t} or later (or \
             restore the previous corpus and schedule)",
            reused.len(),
            named.join(", "),
            if reused.len() > NAMED { ", …" } else { "" },
        )
    }

    /// Refuses to start in window `t` when the schedule has no fresh set left for it although
    /// no window ever used one (`none_used`): a new network whose `start_window` was left at 0
    /// while the clock is far past it, so the whole corpus counts as spent before its first
    /// window. A corpus that ran out after serving its windows is only logged (see [`Self::log`]):
    /// the human class keeps running.
    fn check_not_spent_unused(&self, none_used: bool, t: u64) -> anyhow::Result<()> {
        if !none_used || self.schedule.windows_left(t) != Some(0) {
            return Ok(());
        }
        let from = self.schedule.params().start_window;
        bail!(
            "the narrative corpus has no fresh set for the current window {t}: its schedule \
             covers windows {from}..{} (`[network.narrative] start_window = {from}`, {} \
             set(s) per window), so the agent class would refuse every challenge and session \
             with corpus_exhausted. On a new network set `start_window = {t}` (or later) on \
             every member. Otherwise generate more sets (`hco corpus generate`), add the used \
             ones to the `[agent] retired_sets` file and set `start_window` to {t} on every \
             member, or run without the agent class (`[agent] enabled = false`)",
            self.schedule.end_window(),
            self.schedule.params().sets_per_window,
        )
    }

    /// Records the slices of every scheduled window up to `t` as used; returns how many sets
    /// were recorded for the first time.
    pub fn record(&self, ledger: &Ledger, t: u64) -> Result<usize, LedgerError> {
        if !self.watched() {
            return Ok(0);
        }
        let from = self.schedule.params().start_window;
        let to = t.min(self.schedule.end_window().saturating_sub(1));
        let mut fresh = 0;
        for w in from..=to {
            if let Some(slice) = self.schedule.slice(w) {
                fresh += ledger.record_sets_used(w, slice)?;
            }
        }
        Ok(fresh)
    }

    /// The gauge's value in window `t`: windows of fresh sets left, -1 for no limit.
    pub fn gauge(&self, t: u64) -> i64 {
        self.schedule
            .windows_left(t)
            .map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX))
    }

    /// Logs how the schedule stands in window `t`.
    pub fn log(&self, t: u64) {
        if !self.watched() {
            return;
        }
        match self.schedule.windows_left(t) {
            Some(0) => tracing::error!(
                window = t,
                end_window = self.schedule.end_window(),
                "the narrative corpus has no fresh set for this window: agent-class challenges \
                 and admission sessions are refused with corpus_exhausted. Generate more sets \
                 (`hco corpus generate`), retire the used ones and move \
                 `[network.narrative] start_window` on every member"
            ),
            Some(left) if left < self.warn_windows() => tracing::warn!(
                window = t,
                windows_remaining = left,
                end_window = self.schedule.end_window(),
                "the narrative corpus runs out in {left} window(s): generate more sets \
                 (`hco corpus generate`) before then"
            ),
            _ => {}
        }
    }
}

/// At each new window until `shutdown`: records the sets used, sets the gauge and logs.
pub async fn run(node: Arc<Node>, watch: Arc<SetsWatch>, shutdown: CancellationToken) {
    let window_ms = node.oracle.params().window_ms.max(1);
    let mut tick = tokio::time::interval(Duration::from_millis(window_ms.min(10_000)));
    let mut last = None;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let Ok(t) = node.oracle.params().window_at(node.now()) else {
            continue;
        };
        if last == Some(t) {
            continue;
        }
        last = Some(t);
        let (oracle, w) = (node.oracle.clone(), watch.clone());
        match tokio::task::spawn_blocking(move || w.record(oracle.ledger(), t)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => node.supervisor.storage_failed("narrative set record", e),
            Err(e) => tracing::error!(error = %e, "narrative set record task failed"),
        }
        node.metrics.narrative_windows_remaining.set(watch.gauge(t));
        watch.log(t);
    }
}

#[cfg(test)]
mod tests;
