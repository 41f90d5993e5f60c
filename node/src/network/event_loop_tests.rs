//! The event loop over real swarms on 127.0.0.1: a request that arrives while the node's event
//! queue is full is answered `overloaded` at once instead of being held until it times out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hco_oracle::{SignedRequest, testing};
use libp2p::Multiaddr;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::super::protocol::{ChallengeReply, ChallengeRpc, ReconcileReply, ReconcileRpc};
use super::super::{NetworkClient, NetworkEvent};
use super::EventLoop;
use crate::config::P2pSection;
use crate::metrics::Metrics;

fn metrics() -> Arc<Metrics> {
    Arc::new(Metrics::new(
        &mut prometheus_client::registry::Registry::default(),
    ))
}

/// Waits (bounded) until `ok` holds.
async fn until(what: &str, mut ok: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while !ok().await {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what}: not in 20 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_beyond_a_full_event_queue_is_answered_overloaded() {
    let shutdown = CancellationToken::new();
    let digest = "test".to_string();
    // The busy node: an event queue of one place that nobody drains.
    let busy_key = crate::network::keypair(&testing::key(1)).unwrap();
    let busy_peer = busy_key.public().to_peer_id();
    let caller_key = crate::network::keypair(&testing::key(2)).unwrap();
    let members = vec![busy_peer, caller_key.public().to_peer_id()];
    let (busy_tx, busy_commands) = mpsc::channel(16);
    let (events_tx, mut busy_events) = mpsc::channel(1);
    let busy = EventLoop::new(
        busy_key,
        &P2pSection::default(),
        digest.clone(),
        members.clone(),
        busy_commands,
        events_tx,
        metrics(),
    )
    .unwrap();
    let _keep_busy_running = NetworkClient {
        tx: busy_tx,
        metrics: metrics(),
        runtime: tokio::runtime::Handle::current(),
    };
    tokio::spawn(busy.run(shutdown.clone()));
    let Some(NetworkEvent::Listening(addr)) = busy_events.recv().await else {
        panic!("the busy node reports its address first")
    };
    let addr: Multiaddr = addr;

    let caller_config = P2pSection {
        bootstrap: vec![addr.to_string()],
        ..P2pSection::default()
    };
    let (caller, _caller_events, caller_loop) =
        crate::network::new(caller_key, &caller_config, digest, members, metrics()).unwrap();
    tokio::spawn(caller_loop.run(shutdown.clone()));
    until("connected", async || {
        caller.peers().await.contains(&busy_peer)
    })
    .await;

    // The first request takes the queue's only place (and is never answered: the busy node
    // does not drain its queue).
    let first = caller.clone();
    tokio::spawn(async move { first.cert(busy_peer, 0).await });
    until("the queue is full", async || busy_events.len() == 1).await;

    // Every later one is answered at once with the stable code.
    let request = SignedRequest::new(&testing::key(3), 0, 0);
    match caller
        .challenge(busy_peer, ChallengeRpc::Issue(request))
        .await
    {
        Ok(ChallengeReply::Rejected(r)) => assert_eq!(r.code, "overloaded"),
        other => panic!("expected an overloaded rejection, got {other:?}"),
    }
    let keys = ReconcileRpc::Keys {
        t: 0,
        after: None,
        limit: 10,
    };
    match caller.reconcile(busy_peer, keys).await {
        Ok(ReconcileReply::Rejected(r)) => assert_eq!(r.code, "overloaded"),
        other => panic!("expected an overloaded rejection, got {other:?}"),
    }
    match caller.cert(busy_peer, 1).await {
        Ok(reply) => assert!(reply.0.is_none()),
        Err(e) => panic!("expected an empty certificate reply, got {e}"),
    }
    shutdown.cancel();
}
