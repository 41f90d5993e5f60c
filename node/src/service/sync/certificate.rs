//! Certificates between members: answering a peer's `/hco/cert/1` request from the ledger, and,
//! for a closed window still without a certificate here, re-gossiping this node's summary and
//! pulling a certificate from the peers (each is checked by the oracle's light verifier before
//! it is stored).

use std::sync::Arc;

use hco_oracle::codec;

use crate::network::protocol::{CertReply, Topic};
use crate::service::Node;

/// Answers a peer's certificate request: the certificate of `t` held here, if any.
pub(in crate::service) async fn serve_cert(node: &Node, t: u64) -> CertReply {
    let cert = node.blocking(move |o| o.ledger().certificate(t)).await;
    CertReply(cert.ok().and_then(Result::ok).flatten())
}

/// For a closed window without certificate: ask peers for theirs, and re-gossip our summary.
pub async fn complete_certificate(node: &Arc<Node>, t: u64) {
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
        if let Ok(CertReply(Some(cert))) = node.net.cert(peer, t).await {
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
