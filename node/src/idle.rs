//! Pruning of identities that were never active (`ledger.idle_identity_windows`): once a
//! window, identities registered that many windows ago with no challenge issued, no acceptance
//! and no passkey are removed from the ledger (see `Oracle::prune_idle_identities`), so junk
//! registrations do not stay on every member for good.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::service::Node;

/// Prunes once now and then once a window until `shutdown`; `idle_windows` 0 never prunes.
pub async fn run(node: Arc<Node>, idle_windows: u64, shutdown: CancellationToken) {
    if idle_windows == 0 {
        shutdown.cancelled().await;
        return;
    }
    let window = Duration::from_millis(node.oracle.params().window_ms.max(1));
    let mut tick = tokio::time::interval(window);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        prune_once(&node, idle_windows).await;
    }
}

/// Prunes the identities idle since `idle_windows` windows before the current one; returns
/// how many were removed.
pub async fn prune_once(node: &Arc<Node>, idle_windows: u64) -> usize {
    let Ok(current) = node.oracle.params().window_at(node.now()) else {
        return 0;
    };
    let Some(before) = current.checked_sub(idle_windows) else {
        return 0;
    };
    let oracle = node.oracle.clone();
    match tokio::task::spawn_blocking(move || oracle.prune_idle_identities(before)).await {
        Ok(Ok(stats)) => {
            if stats.removed > 0 {
                tracing::info!(
                    removed = stats.removed,
                    registered_before = before,
                    "pruned identities that were never active"
                );
                node.metrics.identities_pruned.inc_by(stats.removed as u64);
            }
            stats.removed
        }
        Ok(Err(e)) => {
            node.supervisor.storage_failed("identity pruning", e);
            0
        }
        Err(e) => {
            tracing::error!(error = %e, "identity pruning task failed");
            0
        }
    }
}
