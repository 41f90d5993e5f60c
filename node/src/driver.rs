//! The window driver: the clock of the protocol. After each window closes it has the committee
//! reconciled ([`crate::service::sync`] does the pulling), reveals the window secret, signs and
//! gossips this node's summary, has missing certificates completed, gossips the evidence of the
//! window and prunes old ones. A restarted node catches up on recent windows the same way.

use std::sync::Arc;
use std::time::Duration;

use hco_oracle::codec;
use tokio_util::sync::CancellationToken;

use crate::network::protocol::Topic;
use crate::service::Node;
use crate::service::sync::{self, SETTLE};

/// Options of the driver.
#[derive(Debug, Clone, Copy)]
pub struct DriverOptions {
    /// Windows of records kept.
    pub retention_windows: u64,
    /// Closed windows caught up on at start.
    pub catch_up_windows: u64,
}

/// Runs until shutdown.
pub async fn run(node: Arc<Node>, options: DriverOptions, shutdown: CancellationToken) {
    let params = node.oracle.params().clone();
    // Start from the windows closed recently: a restarted node catches up on them.
    let first_open = params.window_at(node.now()).unwrap_or(0);
    let mut next = first_open.saturating_sub(options.catch_up_windows);
    // A window that closed while this node was down must not be summarized from the node's own
    // partial view: once signed, the node cannot sign the certified root any more. Give the
    // committee a bounded time to connect so registry sync and reconciliation come first.
    if params.closes_at(next) + SETTLE.as_millis() as u64 <= node.now() {
        wait_for_quorum(&node, CATCH_UP_WAIT, &shutdown).await;
    }
    let mut synced_registry = false;
    loop {
        let now = node.now();
        if !synced_registry {
            synced_registry = sync::pull_registry(&node).await;
            // Every link statement the committee holds: one in force for good may have been
            // made while this node was down.
            if synced_registry {
                let last = first_open.saturating_add(hco_oracle::MAX_LINK_LEAD + 1);
                let caught = sync::pull_links(&node, 0..=last).await;
                if caught > 0 {
                    tracing::info!(caught, "link statements caught up from the committee");
                }
            }
        }
        while params.closes_at(next) <= now {
            close_window(&node, next, options.retention_windows, &shutdown).await;
            next += 1;
        }
        // Windows whose certificate has not formed yet: ask peers, re-gossip our summary.
        for t in next.saturating_sub(3)..next {
            sync::complete_certificate(&node, t).await;
        }
        let wake = params.closes_at(next);
        let sleep = Duration::from_millis(wake.saturating_sub(node.now()).clamp(200, 2_000));
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(sleep) => {}
        }
    }
}

/// How long a starting node waits for a quorum of the committee before catching up alone.
const CATCH_UP_WAIT: Duration = Duration::from_secs(10);

/// Waits until this node and the committee members it is connected to make a quorum, `limit`
/// passes, or shutdown.
async fn wait_for_quorum(node: &Arc<Node>, limit: Duration, shutdown: &CancellationToken) {
    let quorum = node.oracle.params().quorum as usize;
    let others = node.other_members().len();
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let connected = node.connected_members().await.len();
        if connected + 1 >= quorum.min(others + 1) {
            return;
        }
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!(
                connected,
                quorum,
                "catching up on missed windows without a quorum of the committee connected"
            );
            return;
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    }
}

/// Reveals window `t`, reconciles it with every reachable committee member, waits until the
/// committee's reveals are decided (hco_oracle::relay), then summarizes. When no member answers
/// although some are connected (a node that just started), reconciliation is retried a few
/// times first: a summary signed from a partial view cannot be taken back.
async fn close_window(node: &Arc<Node>, t: u64, retention: u64, shutdown: &CancellationToken) {
    // The reveal first, as the window closes: it must be heard by the first deadline, two relay
    // rounds after the close, and reconciliation can take a while.
    let oracle = node.oracle.clone();
    let now = node.now();
    if let Ok(Ok(Ok(reveal))) = tokio::task::spawn_blocking(move || oracle.reveal(t, now)).await {
        if node.faults().withholds_reveal(t) {
            tracing::warn!(
                t,
                "unsafe byzantine: keeping this window's reveal out of gossip"
            );
        } else {
            node.net.publish(Topic::Reveal, codec::encode(&reveal));
        }
    }
    // Reconciliation waits a moment for the last acceptances in flight to land.
    let settled = node.oracle.params().closes_at(t) + SETTLE.as_millis() as u64;
    let wait = Duration::from_millis(settled.saturating_sub(node.now()));
    tokio::select! {
        _ = shutdown.cancelled() => return,
        _ = tokio::time::sleep(wait) => {}
    }
    let (mut fetched, mut answered) = sync::pull_acceptances(node, t).await;
    for _ in 0..RECONCILE_RETRIES {
        if answered > 0 || node.other_members().is_empty() || shutdown.is_cancelled() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        (fetched, answered) = sync::pull_acceptances(node, t).await;
    }
    sync::pull_links(node, t.saturating_sub(2)..=t).await;
    wait_for_reveals(node, t, shutdown).await;
    // Reveals still missing count no more, but a node catching up on a window it was not
    // running for summarizes from those it holds (hco_oracle's `decide_excluded`).
    if !sync::all_reveals_count(node, t).await {
        sync::pull_reveals(node, t).await;
    }
    // The commitments made `L` windows before, for a node that was away then.
    let lead = hco_oracle::secret::commit_lead(node.oracle.params());
    if let Some(before) = t.checked_sub(lead) {
        sync::pull_reveals(node, before).await;
    }
    let summary = {
        let oracle = node.oracle.clone();
        let now = node.now();
        tokio::task::spawn_blocking(move || oracle.summarize(t, now)).await
    };
    audited(node, t).await;
    match summary {
        Ok(Ok(Ok(signed))) => {
            tracing::info!(t, count = signed.summary.count, root = %signed.summary.root, fetched, "window summarized");
            node.metrics.last_summarized_window.set(t as i64);
            node.metrics
                .active_identities
                .set(signed.summary.count as i64);
            node.net.publish(Topic::Summary, codec::encode(&signed));
        }
        Ok(Ok(Err(reason))) => tracing::warn!(t, %reason, "window not summarized"),
        Ok(Err(e)) => node.supervisor.storage_failed("summarizing a window", e),
        Err(e) => tracing::error!(t, error = %e, "summary task failed"),
    }
    prune(node, t, retention).await;
}

/// Waits until the acceptances and link statements of `t` are decided and every member's
/// reveal counts here, or the reveals are decided (`reveals_decided_at`, by this node's clock),
/// or shutdown (hco_oracle::relay: no honest member summarizes what another may still count).
/// Acceptances and link statements this node missed it pulls once more as their arrival
/// deadline nears (the replying member's receipt extends it by a round); reveals, with their
/// receipts, once the first deadline is near and again each relay round while some are missing.
async fn wait_for_reveals(node: &Arc<Node>, t: u64, shutdown: &CancellationToken) {
    let params = node.oracle.params().clone();
    let decided_at = params.reveals_decided_at(t);
    let acceptances_decided = params
        .acceptances_decided_at(t)
        .max(params.links_decided_at(t));
    let mut pull_acceptances_at = Some(params.acceptance_base_deadline(t));
    let mut next_pull = params
        .reveal_deadline(t, 1)
        .saturating_sub(params.relay_round_ms);
    loop {
        let now = node.now();
        if now >= decided_at
            || (now >= acceptances_decided && sync::all_reveals_count(node, t).await)
        {
            return;
        }
        if pull_acceptances_at.is_some_and(|at| now >= at.saturating_sub(params.relay_round_ms / 2))
        {
            pull_acceptances_at = None;
            sync::pull_acceptances(node, t).await;
            sync::pull_links(node, t.saturating_sub(2)..=t).await;
            continue;
        }
        if node.now() >= next_pull {
            sync::pull_reveals(node, t).await;
            next_pull = node.now() + params.relay_round_ms;
            continue;
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}

/// After `t` was summarized (and audited with it): gossips the evidence concerning `t` and
/// logs the members left out of it. (Evidence is logged and counted when it is stored, by the
/// observer [`Node::start`] sets, whenever it arrives.)
async fn audited(node: &Arc<Node>, t: u64) {
    let oracle = node.oracle.clone();
    let found = tokio::task::spawn_blocking(move || {
        let ledger = oracle.ledger();
        Ok::<_, hco_oracle::LedgerError>((ledger.evidence(t)?, ledger.excluded(t)?))
    })
    .await;
    match found {
        Ok(Ok((evidence, excluded))) => {
            for e in &evidence {
                node.net.publish(Topic::Evidence, codec::encode(e));
            }
            for member in excluded.unwrap_or_default() {
                tracing::warn!(t, %member, "acceptances of a member left out of the window (no reveal, no commitment, or evidence)");
            }
        }
        Ok(Err(e)) => node
            .supervisor
            .storage_failed("reading a window's evidence", e),
        Err(e) => tracing::error!(t, error = %e, "evidence task failed"),
    }
}

/// Times a closing window's reconciliation is retried when no member answered.
const RECONCILE_RETRIES: usize = 4;

async fn prune(node: &Arc<Node>, closed: u64, retention: u64) {
    if closed < retention {
        return;
    }
    let before = closed - retention;
    let oracle = node.oracle.clone();
    if let Ok(Err(e)) =
        tokio::task::spawn_blocking(move || oracle.ledger().prune_before(before)).await
    {
        node.supervisor.storage_failed("pruning closed windows", e);
    }
}
