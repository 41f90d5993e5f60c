//! Pulling account link statements from the committee: those of a window before it is
//! summarized (gossip is best effort, and a statement one honest member keeps must be kept by
//! all: hco_oracle::relay's link rule), and all of them at start. Each comes with the replying
//! member's receipt; receipts for one statement from several members are merged, so that one
//! this node missed past its deadline still counts here once `f + 1` members vouch for it. One
//! kept here with few receipts is relayed on.

use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::sync::Arc;

use hco_oracle::relay::link_subject;
use hco_oracle::{Digest, IdentityId, RelayedLink, codec};
use libp2p::PeerId;

use crate::network::protocol::{
    MAX_LINK_FETCH, MAX_LINK_ROUNDS, ReconcileReply, ReconcileRpc, Topic,
};
use crate::service::Node;

/// Pulls the statements whose first window is in `windows` from each connected member, merges
/// their receipts and hears them; returns how many were new here.
pub async fn pull_links(node: &Arc<Node>, windows: RangeInclusive<u64>) -> usize {
    let mut merged: HashMap<Digest, RelayedLink> = HashMap::new();
    for peer in node.connected_members().await {
        for relayed in pull_from(node, peer, &windows).await {
            match merged.entry(link_subject(&relayed.link)) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(relayed);
                }
                std::collections::hash_map::Entry::Occupied(mut held) => {
                    let receipts = &mut held.get_mut().receipts;
                    for r in relayed.receipts {
                        if !receipts.iter().any(|h| h.node == r.node) {
                            receipts.push(r);
                        }
                    }
                }
            }
        }
    }
    hear(node, merged.into_values().collect()).await
}

/// Pages through `peer`'s statements of `windows` (at most [`MAX_LINK_ROUNDS`] replies).
async fn pull_from(
    node: &Arc<Node>,
    peer: PeerId,
    windows: &RangeInclusive<u64>,
) -> Vec<RelayedLink> {
    let mut out = Vec::new();
    let mut after: Option<(IdentityId, String, u64)> = None;
    for _ in 0..MAX_LINK_ROUNDS {
        let request = ReconcileRpc::Links {
            from: *windows.start(),
            to: *windows.end(),
            after: after.clone(),
            limit: MAX_LINK_FETCH as u32,
        };
        let Ok(ReconcileReply::Links(page)) = node.net.reconcile(peer, request).await else {
            break;
        };
        let full = page.len() >= MAX_LINK_FETCH;
        after = page.last().map(|r| {
            let l = &r.link.link;
            (l.identity, l.account.chain_id().to_owned(), l.from_window)
        });
        out.extend(page.into_iter().take(MAX_LINK_FETCH));
        if !full {
            break;
        }
    }
    out
}

/// Hears statements and relays what this node keeps with few receipts; how many were new.
async fn hear(node: &Arc<Node>, statements: Vec<RelayedLink>) -> usize {
    if statements.is_empty() {
        return 0;
    }
    let oracle = node.oracle.clone();
    let net = node.net.clone();
    let now = node.now();
    let heard = tokio::task::spawn_blocking(move || {
        let mut fresh = 0;
        for relayed in &statements {
            match oracle.hear_link(relayed, now)? {
                Ok(heard) => {
                    fresh += usize::from(heard.fresh);
                    if let Some(relay) = heard.relay {
                        net.publish(Topic::Link, codec::encode(&relay));
                    }
                }
                Err(reason) => {
                    tracing::debug!(%reason, "a pulled link statement is not kept here")
                }
            }
        }
        Ok::<_, hco_oracle::LedgerError>(fresh)
    })
    .await;
    match heard {
        Ok(Ok(n)) => n,
        Ok(Err(e)) => {
            node.supervisor
                .storage_failed("recording pulled link statements", e);
            0
        }
        Err(_) => 0,
    }
}
