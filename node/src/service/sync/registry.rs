//! Pulling the registry from a committee member: every registration this node lacks, then every
//! passkey enrolment, page by page until an empty page (whatever a page's length). Used at start (a node that was down missed their gossip) and
//! when a window's acceptances name identities unknown here.

use std::sync::Arc;

use hco_oracle::IdentityId;
use libp2p::PeerId;

use crate::network::protocol::{MAX_FETCH, MAX_PASSKEY_FETCH, ReconcileReply, ReconcileRpc};
use crate::service::Node;

/// Copies the registry from the first connected committee member that answers; `true` once
/// done (or when this node is alone in the committee), `false` to try again later.
pub async fn pull_registry(node: &Arc<Node>) -> bool {
    for peer in node.connected_members().await {
        match pull_identities(node, peer).await {
            Ok(n) => {
                let passkeys = pull_passkeys(node, peer).await.unwrap_or_else(|e| {
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

/// Copies from `peer` every registration this node lacks (used at start).
pub(super) async fn pull_identities(node: &Node, peer: PeerId) -> anyhow::Result<usize> {
    let mut after: Option<IdentityId> = None;
    let mut added = 0;
    loop {
        let reply = node
            .net
            .reconcile(
                peer,
                ReconcileRpc::Identities {
                    after,
                    limit: MAX_FETCH as u32,
                },
            )
            .await?;
        let ReconcileReply::Identities(page) = reply else {
            break;
        };
        // Pages end with an empty one (a shorter page may only mean the server caps lower),
        // and each must move past the last: a peer cannot keep this loop going in place.
        let Some(last) = page.last().map(|r| r.body.id) else {
            break;
        };
        if after.is_some_and(|a| last <= a) {
            break;
        }
        let now = node.now();
        added += node
            .blocking(move |o| {
                page.iter()
                    .filter(|r| matches!(o.register(r, now), Ok(Ok(_))))
                    .count()
            })
            .await?;
        after = Some(last);
    }
    Ok(added)
}

/// Copies from `peer` every passkey enrolment this node lacks (used at start, after the
/// registrations). Each is re-verified here.
async fn pull_passkeys(node: &Node, peer: PeerId) -> anyhow::Result<usize> {
    let mut after: Option<(IdentityId, Vec<u8>)> = None;
    let mut added = 0;
    loop {
        let request = ReconcileRpc::Passkeys {
            after: after.clone(),
            limit: MAX_PASSKEY_FETCH as u32,
        };
        let ReconcileReply::Passkeys(page) = node.net.reconcile(peer, request).await? else {
            break;
        };
        let Some((last, credential)) = page.last() else {
            break;
        };
        let next = (last.body.id, credential.clone());
        if after.as_ref().is_some_and(|a| next <= *a) {
            break;
        }
        added += node
            .blocking(move |o| {
                page.iter()
                    .filter(|(e, credential)| {
                        let known = o
                            .passkeys(&e.body.id)
                            .is_ok_and(|all| all.iter().any(|r| &r.credential_id == credential));
                        !known && matches!(o.record_enrolment(e), Ok(Ok(_)))
                    })
                    .count()
            })
            .await?;
        after = Some(next);
    }
    Ok(added)
}
