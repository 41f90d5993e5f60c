//! Pulling the account link statements whose first window is `t` from the committee, before
//! `t` is summarized: gossip is best effort, and a statement one honest member keeps must be
//! kept by all (hco_oracle::relay's link rule). Each comes with the replying member's receipt,
//! so it counts a round longer here; one kept here with few receipts is relayed on.

use std::sync::Arc;

use hco_oracle::{RelayedLink, codec};
use libp2p::PeerId;

use crate::network::protocol::{
    MAX_LINK_FETCH, MAX_LINK_ROUNDS, ReconcileReply, ReconcileRpc, Topic,
};
use crate::service::Node;

/// Pulls the statements of first window `t` from each connected member; returns how many were
/// new here.
pub async fn pull_links(node: &Arc<Node>, t: u64) -> usize {
    let mut fresh = 0;
    for peer in node.connected_members().await {
        fresh += pull_links_from(node, peer, t).await;
    }
    fresh
}

/// Pages through `peer`'s statements of `t` (at most [`MAX_LINK_ROUNDS`] replies).
async fn pull_links_from(node: &Arc<Node>, peer: PeerId, t: u64) -> usize {
    let mut fresh = 0;
    let mut after = None;
    for _ in 0..MAX_LINK_ROUNDS {
        let request = ReconcileRpc::Links {
            t,
            after: after.clone(),
            limit: MAX_LINK_FETCH as u32,
        };
        let Ok(ReconcileReply::Links(page)) = node.net.reconcile(peer, request).await else {
            break;
        };
        let full = page.len() >= MAX_LINK_FETCH;
        after = page.last().map(|l| {
            (
                l.link.link.identity,
                l.link.link.account.chain_id().to_owned(),
            )
        });
        match hear(node, peer, page).await {
            Some(n) => fresh += n,
            None => break,
        }
        if !full {
            break;
        }
    }
    fresh
}

/// Hears a page of statements and relays what this node keeps with few receipts; `None` on a
/// storage failure (reported to the supervisor).
async fn hear(node: &Arc<Node>, peer: PeerId, page: Vec<RelayedLink>) -> Option<usize> {
    let oracle = node.oracle.clone();
    let net = node.net.clone();
    let now = node.now();
    let heard = tokio::task::spawn_blocking(move || {
        let mut fresh = 0;
        for relayed in page.iter().take(MAX_LINK_FETCH) {
            match oracle.hear_link(relayed, now)? {
                Ok(heard) => {
                    fresh += usize::from(heard.fresh);
                    if let Some(relay) = heard.relay {
                        net.publish(Topic::Link, codec::encode(&relay));
                    }
                }
                Err(reason) => {
                    tracing::debug!(%peer, %reason, "a pulled link statement is not kept here")
                }
            }
        }
        Ok::<_, hco_oracle::LedgerError>(fresh)
    })
    .await;
    match heard {
        Ok(Ok(n)) => Some(n),
        Ok(Err(e)) => {
            node.supervisor
                .storage_failed("recording pulled link statements", e);
            None
        }
        Err(_) => None,
    }
}
