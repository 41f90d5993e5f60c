//! What the node is told by its oracle as it happens, turned into logs and metrics: evidence
//! against committee members (whenever and however it is stored), and which parts of a wrong
//! multi-part answer were right — in the debug log only, for the operator: the client is told
//! the answer was wrong, never which part, and no metric says it either (metrics can leak).

use hco_oracle::Oracle;

use crate::metrics::Metrics;

/// Installs the oracle's observers, counting into `metrics`.
pub(super) fn install(oracle: &Oracle, metrics: &std::sync::Arc<Metrics>) {
    // Evidence is counted when it is stored, whenever it arrives (before or after its
    // window is summarized, by audit, reveal, summary, gossip or certificate).
    let counted = metrics.clone();
    let observed = oracle.observe_evidence(move |e| {
        tracing::warn!(t = e.window(), accused = %e.accused(), kind = e.kind(), "evidence against a committee member");
        counted.record_evidence(e);
    });
    if !observed {
        tracing::error!("the oracle's evidence is already observed: this node does not count it");
    }
    // Which parts of a wrong narrative answer were right: the debug log only.
    let observed = oracle.observe_part_verdicts(move |v| {
        let parts: Vec<&str> = v
            .parts
            .iter()
            .map(|&right| if right { "right" } else { "wrong" })
            .collect();
        tracing::debug!(
            family = v.family,
            t = v.t,
            identity = %v.id,
            j = v.j,
            parts = %parts.join(","),
            "wrong answer, part by part"
        );
    });
    if !observed {
        tracing::error!(
            "the oracle's part verdicts are already observed: this node does not log them"
        );
    }
}
