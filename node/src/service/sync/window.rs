//! Pulling a closed window from the committee before it is summarized: the acceptances of `t`
//! this node lacks (keys paged, then fetched in chunks and recorded as remote acceptances), and
//! the reveals of `t` it lacks.

use std::collections::HashSet;
use std::sync::Arc;

use hco_oracle::relay::Heard;
use hco_oracle::{IdentityId, codec};
use libp2p::PeerId;

use super::registry::pull_identities;
use crate::network::protocol::{MAX_FETCH, MAX_KEYS, ReconcileReply, ReconcileRpc, Topic};
use crate::service::Node;

/// Fetches from each connected committee member the acceptances of `t` this node lacks;
/// returns how many were fetched and how many members answered.
pub async fn pull_acceptances(node: &Arc<Node>, t: u64) -> (usize, usize) {
    let mut fetched = 0;
    let mut answered = 0;
    for peer in node.connected_members().await {
        if let Some(n) = pull_acceptances_from(node, peer, t).await {
            answered += 1;
            fetched += n;
        }
    }
    (fetched, answered)
}

/// Pages through `peer`'s accepted keys of `t` (each reply says whether more follow; at most
/// [`super::Limits::key_rounds`] replies) and fetches the acceptances missing here; `None` if
/// the peer did not answer at all.
async fn pull_acceptances_from(node: &Arc<Node>, peer: PeerId, t: u64) -> Option<usize> {
    let oracle = node.oracle.clone();
    let ours: HashSet<(IdentityId, u32)> =
        match tokio::task::spawn_blocking(move || oracle.ledger().accepted_keys(t)).await {
            Ok(Ok(keys)) => keys.into_iter().collect(),
            _ => return None,
        };
    let mut fetched = 0;
    let mut after = None;
    for _ in 0..node.sync_limits.key_rounds {
        let request = ReconcileRpc::Keys {
            t,
            after,
            limit: MAX_KEYS as u32,
        };
        let Ok(ReconcileReply::Keys { keys: page, more }) = node.net.reconcile(peer, request).await
        else {
            return after.map(|_| fetched);
        };
        let last = page.last().copied();
        let missing: Vec<_> = page.into_iter().filter(|k| !ours.contains(k)).collect();
        for chunk in missing.chunks(MAX_FETCH) {
            match fetch_chunk(node, peer, t, chunk).await {
                Some(n) => fetched += n,
                None => return Some(fetched),
            }
        }
        match last {
            // Continue after the last key; a peer that does not move forward is done.
            Some(last) if more && after.is_none_or(|a| a < last) => after = Some(last),
            _ => return Some(fetched),
        }
    }
    tracing::warn!(
        t,
        %peer,
        fetched,
        rounds = node.sync_limits.key_rounds,
        "the peer holds more keys of the window than one reconciliation pulls; the rest is left"
    );
    Some(fetched)
}

/// Fetches the acceptances of `chunk` from `peer` and records them; how many were new, or
/// `None` when the peer did not answer or storage failed.
async fn fetch_chunk(
    node: &Arc<Node>,
    peer: PeerId,
    t: u64,
    chunk: &[(IdentityId, u32)],
) -> Option<usize> {
    let request = ReconcileRpc::Fetch {
        t,
        keys: chunk.to_vec(),
    };
    let Ok(ReconcileReply::Acceptances(batch, receipts)) = node.net.reconcile(peer, request).await
    else {
        return None;
    };
    let receipts = Arc::new(receipts);
    let record = |batch: Vec<hco_oracle::SealedAcceptance>| {
        let (oracle, now, receipts) = (node.oracle.clone(), node.now(), receipts.clone());
        let net = node.net.clone();
        tokio::task::spawn_blocking(move || {
            let (fresh, refused, relay) =
                oracle.record_remote_each(&batch, &receipts, Heard::ByRequest, now)?;
            crate::service::relay_acceptances(&net, &batch, &receipts, relay);
            Ok::<_, hco_oracle::LedgerError>((fresh, refused))
        })
    };
    let mut result = record(batch.clone()).await;
    // Acceptances of identities whose registration missed this node (a cut link): copy the
    // peer's registry, then try once more.
    if let Ok(Ok((_, Some(hco_oracle::Reason::UnknownIdentity)))) = result {
        if let Err(e) = pull_identities(node, peer).await {
            tracing::debug!(error = %e, "registry sync failed");
        }
        result = record(batch).await;
    }
    match result {
        Ok(Ok((fresh, refused))) => {
            if let Some(reason) = refused {
                tracing::warn!(t, %peer, %reason, fresh, "peer sent acceptances that do not check");
            }
            Some(fresh)
        }
        Ok(Err(e)) => {
            node.supervisor
                .storage_failed("recording reconciled acceptances", e);
            None
        }
        Err(e) => {
            tracing::error!(t, error = %e, "recording reconciled acceptances failed");
            Some(0)
        }
    }
}

/// Whether every member's reveal of `t` counts here (false when the ledger cannot tell).
pub async fn all_reveals_count(node: &Node, t: u64) -> bool {
    let oracle = node.oracle.clone();
    tokio::task::spawn_blocking(move || oracle.all_reveals_count(t))
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or(false)
}

/// Asks each connected committee member for the reveals of `t` it holds, with their receipts,
/// and hears them as gossip would (`hco_oracle::relay`): one counts here if its receipts make
/// it still in time, and goes on with this node's receipt where the rule says so.
pub async fn pull_reveals(node: &Arc<Node>, t: u64) {
    let members = node.oracle.params().committee.len();
    for peer in node.connected_members().await {
        if all_reveals_count(node, t).await {
            return;
        }
        let Ok(ReconcileReply::Reveals(reveals)) =
            node.net.reconcile(peer, ReconcileRpc::Reveals { t }).await
        else {
            continue;
        };
        let oracle = node.oracle.clone();
        let now = node.now();
        let net = node.net.clone();
        let recorded = tokio::task::spawn_blocking(move || {
            for r in reveals.iter().take(2 * members) {
                match oracle.hear_reveal(r, now)? {
                    Ok(Some(relay)) => net.publish(Topic::Reveal, codec::encode(&relay)),
                    Ok(None) => {}
                    Err(reason) => {
                        tracing::warn!(t, %peer, %reason, "peer sent a reveal that does not check")
                    }
                }
            }
            Ok::<_, hco_oracle::LedgerError>(())
        })
        .await;
        if let Ok(Err(e)) = recorded {
            node.supervisor
                .storage_failed("recording reconciled reveals", e);
            return;
        }
    }
}
