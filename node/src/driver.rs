//! The window driver: after each window closes it reconciles with the committee, signs and
//! gossips this node's summary, reveals the window secret, fetches missing certificates, audits
//! revealed windows and prunes old ones. A restarted node catches up on recent windows the same
//! way.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use hco_oracle::{IdentityId, codec};
use tokio_util::sync::CancellationToken;

use crate::network::protocol::{MAX_FETCH, MAX_KEYS, ReconcileReply, ReconcileRpc, Topic};
use crate::service::{Node, SETTLE};

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
            synced_registry = sync_registry(&node).await;
        }
        while params.closes_at(next) + SETTLE.as_millis() as u64 <= now {
            close_window(&node, next, options.retention_windows, &shutdown).await;
            next += 1;
        }
        // Windows whose certificate has not formed yet: ask peers, re-gossip our summary.
        for t in next.saturating_sub(3)..next {
            complete_certificate(&node, t).await;
        }
        let wake = params.closes_at(next) + SETTLE.as_millis() as u64;
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
    let members: HashSet<_> = node.other_members().into_iter().map(|(_, p)| p).collect();
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let connected = node
            .net
            .peers()
            .await
            .into_iter()
            .filter(|p| members.contains(p))
            .count();
        if connected + 1 >= quorum.min(members.len() + 1) {
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

async fn sync_registry(node: &Arc<Node>) -> bool {
    let connected: HashSet<_> = node.net.peers().await.into_iter().collect();
    for (_, peer) in node.other_members() {
        if !connected.contains(&peer) {
            continue;
        }
        match node.sync_identities(peer).await {
            Ok(n) => {
                let passkeys = node.sync_passkeys(peer).await.unwrap_or_else(|e| {
                    tracing::debug!(error = %e, "passkey sync failed");
                    0
                });
                if n > 0 || passkeys > 0 {
                    tracing::info!(added = n, passkeys, "registry synchronised from a peer");
                }
                return true;
            }
            Err(e) => tracing::debug!(error = %e, "registry sync failed"),
        }
    }
    // Alone (single node or no peer yet): nothing to copy now, try again next round.
    node.other_members().is_empty()
}

/// Reconciles window `t` with every reachable committee member, then summarizes and reveals.
/// When no member answers although some are connected (a node that just started), it retries a
/// few times first: a summary signed from a partial view cannot be taken back.
async fn close_window(node: &Arc<Node>, t: u64, retention: u64, shutdown: &CancellationToken) {
    let (mut fetched, mut answered) = reconcile(node, t).await;
    for _ in 0..RECONCILE_RETRIES {
        if answered > 0 || node.other_members().is_empty() || shutdown.is_cancelled() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        (fetched, answered) = reconcile(node, t).await;
    }
    let now = node.now();
    // Reveal first, and give the committee's reveals a bounded time to arrive: the summary
    // leaves out the acceptances of members that did not reveal or fail the audit.
    let oracle = node.oracle.clone();
    if crate::byzantine::withholds_reveal(t) {
        tracing::warn!(t, "unsafe byzantine: withholding this window's reveal");
    } else if let Ok(Ok(Ok(reveal))) =
        tokio::task::spawn_blocking(move || oracle.reveal(t, now)).await
    {
        node.net.publish(Topic::Reveal, codec::encode(&reveal));
    }
    wait_for_reveals(node, t, shutdown).await;
    // Reveals gossiped while this node was away (this window's, and the commitments made
    // `L` windows before) come by request.
    let lead = hco_oracle::secret::commit_lead(node.oracle.params());
    for window in [Some(t), t.checked_sub(lead)].into_iter().flatten() {
        fetch_reveals(node, window).await;
    }
    let summary = {
        let oracle = node.oracle.clone();
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
        Ok(Err(e)) => tracing::error!(t, error = %e, "ledger failure while summarizing"),
        Err(e) => tracing::error!(t, error = %e, "summary task failed"),
    }
    prune(node, t, retention).await;
}

/// How long a closing window waits for the committee's reveals before it is summarized.
const REVEAL_WAIT: Duration = Duration::from_secs(3);

/// Waits until every committee member's reveal of `t` is held, [`REVEAL_WAIT`] passes, or
/// shutdown.
async fn wait_for_reveals(node: &Arc<Node>, t: u64, shutdown: &CancellationToken) {
    let members = node.oracle.params().committee.len();
    let deadline = tokio::time::Instant::now() + REVEAL_WAIT;
    loop {
        let oracle = node.oracle.clone();
        let held = tokio::task::spawn_blocking(move || oracle.ledger().reveals(t))
            .await
            .ok()
            .and_then(Result::ok)
            .map_or(0, |r| r.len());
        if held >= members || tokio::time::Instant::now() >= deadline {
            return;
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}

/// Asks each connected committee member for the reveals of `t` this node lacks.
async fn fetch_reveals(node: &Arc<Node>, t: u64) {
    let members = node.oracle.params().committee.len();
    let connected: HashSet<_> = node.net.peers().await.into_iter().collect();
    for (_, peer) in node.other_members() {
        let oracle = node.oracle.clone();
        let held = tokio::task::spawn_blocking(move || oracle.ledger().reveals(t))
            .await
            .ok()
            .and_then(Result::ok)
            .map_or(0, |r| r.len());
        if held >= members {
            return;
        }
        if !connected.contains(&peer) {
            continue;
        }
        let Ok(ReconcileReply::Reveals(reveals)) =
            node.net.reconcile(peer, ReconcileRpc::Reveals { t }).await
        else {
            continue;
        };
        let oracle = node.oracle.clone();
        let now = node.now();
        let recorded = tokio::task::spawn_blocking(move || {
            for r in reveals.iter().take(members) {
                if let Err(reason) = oracle.add_reveal(r, now)? {
                    tracing::warn!(t, %peer, %reason, "peer sent a reveal that does not check");
                }
            }
            Ok::<_, hco_oracle::LedgerError>(())
        })
        .await;
        if let Ok(Err(e)) = recorded {
            tracing::error!(t, error = %e, "ledger failure while recording reveals");
        }
    }
}

/// After `t` was summarized (and audited with it): logs the evidence concerning `t` and the
/// members left out of it, counts the evidence, and gossips it.
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
                tracing::warn!(t, accused = %e.accused(), kind = e.kind(), "evidence against a committee member");
                node.metrics.record_evidence(e);
                node.net.publish(Topic::Evidence, codec::encode(e));
            }
            for member in excluded.unwrap_or_default() {
                tracing::warn!(t, %member, "acceptances of a member left out of the window (no reveal, no commitment, or evidence)");
            }
        }
        Ok(Err(e)) => tracing::error!(t, error = %e, "ledger failure while reading evidence"),
        Err(e) => tracing::error!(t, error = %e, "evidence task failed"),
    }
}

/// Times a closing window's reconciliation is retried when no member answered.
const RECONCILE_RETRIES: usize = 4;

/// Fetches from each connected committee member the acceptances of `t` this node lacks;
/// returns how many were fetched and how many members answered.
async fn reconcile(node: &Arc<Node>, t: u64) -> (usize, usize) {
    let connected: HashSet<_> = node.net.peers().await.into_iter().collect();
    let mut fetched = 0;
    let mut answered = 0;
    for (_, peer) in node.other_members() {
        if !connected.contains(&peer) {
            continue;
        }
        if let Some(n) = reconcile_with(node, peer, t).await {
            answered += 1;
            fetched += n;
        }
    }
    (fetched, answered)
}

/// Pages through `peer`'s accepted keys of `t` and fetches the acceptances missing here;
/// `None` if the peer did not answer at all.
async fn reconcile_with(node: &Arc<Node>, peer: libp2p::PeerId, t: u64) -> Option<usize> {
    let oracle = node.oracle.clone();
    let ours: HashSet<(IdentityId, u32)> =
        match tokio::task::spawn_blocking(move || oracle.ledger().accepted_keys(t)).await {
            Ok(Ok(keys)) => keys.into_iter().collect(),
            _ => return None,
        };
    let mut fetched = 0;
    let mut after = None;
    loop {
        let request = ReconcileRpc::Keys {
            t,
            after,
            limit: MAX_KEYS as u32,
        };
        let Ok(ReconcileReply::Keys(page)) = node.net.reconcile(peer, request).await else {
            return after.map(|_| fetched);
        };
        let last = page.last().copied();
        let full = page.len() >= MAX_KEYS;
        let missing: Vec<_> = page.into_iter().filter(|k| !ours.contains(k)).collect();
        for chunk in missing.chunks(MAX_FETCH) {
            let request = ReconcileRpc::Fetch {
                t,
                keys: chunk.to_vec(),
            };
            let Ok(ReconcileReply::Acceptances(batch)) = node.net.reconcile(peer, request).await
            else {
                return Some(fetched);
            };
            let record = |batch: Vec<hco_oracle::SealedAcceptance>| {
                let oracle = node.oracle.clone();
                tokio::task::spawn_blocking(move || oracle.record_remote(&batch))
            };
            let mut result = record(batch.clone()).await;
            // Acceptances of identities whose registration missed this node (a cut link):
            // copy the peer's registry, then try once more.
            if let Ok(Ok(Err(hco_oracle::Reason::UnknownIdentity))) = result {
                if let Err(e) = node.sync_identities(peer).await {
                    tracing::debug!(error = %e, "registry sync failed");
                }
                result = record(batch).await;
            }
            match result {
                Ok(Ok(Ok(n))) => fetched += n,
                Ok(Ok(Err(reason))) => {
                    tracing::warn!(t, %peer, %reason, "peer sent acceptances that do not check")
                }
                other => tracing::error!(t, ?other, "recording reconciled acceptances failed"),
            }
        }
        match last {
            Some(last) if full => after = Some(last),
            _ => return Some(fetched),
        }
    }
}

/// For a closed window without certificate: ask peers for theirs, and re-gossip our summary.
async fn complete_certificate(node: &Arc<Node>, t: u64) {
    let oracle = node.oracle.clone();
    let state = tokio::task::spawn_blocking(move || {
        let ledger = oracle.ledger();
        let cert = ledger.certificate(t).ok().flatten();
        let mine = ledger
            .summaries(t)
            .ok()
            .and_then(|all| all.into_iter().find(|s| s.signer == oracle.node_id()));
        (cert, mine)
    })
    .await;
    let Ok((cert, mine)) = state else { return };
    if let Some(cert) = cert {
        node.metrics
            .last_certified_window
            .set(cert.summary.t as i64);
        return;
    }
    if let Some(mine) = mine {
        node.net.publish(Topic::Summary, codec::encode(&mine));
    }
    for peer in node.net.peers().await {
        if let Ok(crate::network::protocol::CertReply(Some(cert))) = node.net.cert(peer, t).await {
            let oracle = node.oracle.clone();
            if let Ok(Ok(Ok(()))) =
                tokio::task::spawn_blocking(move || oracle.add_certificate(&cert)).await
            {
                node.metrics.last_certified_window.set(t as i64);
                return;
            }
        }
    }
}

async fn prune(node: &Arc<Node>, closed: u64, retention: u64) {
    if closed < retention {
        return;
    }
    let before = closed - retention;
    let oracle = node.oracle.clone();
    if let Ok(Err(e)) =
        tokio::task::spawn_blocking(move || oracle.ledger().prune_before(before)).await
    {
        tracing::error!(error = %e, "pruning failed");
    }
}
