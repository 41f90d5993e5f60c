//! Slot witnesses (see `hco_oracle::witness`): once the current window's global slot has opened
//! by this node's clock, the node gossips its signed witness of it, and again every
//! [`REPEAT`] until the window ends, so members that start or reconnect late still get it (a
//! touch prompt can only be issued with another member's witness). Nothing is published in
//! other slot modes.

use std::sync::Arc;
use std::time::Duration;

use hco_oracle::codec;
use tokio_util::sync::CancellationToken;

use crate::network::protocol::{Topic, WitnessGossip};
use crate::service::Node;

/// How often the witness is published again while it is due.
pub const REPEAT: Duration = Duration::from_secs(5);
/// How often the node looks whether its witness is due.
const TICK: Duration = Duration::from_millis(250);

/// Publishes this node's witnesses until `shutdown`.
pub async fn run(node: Arc<Node>, shutdown: CancellationToken) {
    if node.oracle.params().slot_mode != hco_oracle::SlotMode::Global {
        shutdown.cancelled().await;
        return;
    }
    let mut last: Option<(u64, tokio::time::Instant)> = None;
    let mut sequence = 0u64;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(TICK) => {}
        }
        let due = match node.oracle.witness_due(node.now()) {
            Ok(due) => due,
            Err(e) => {
                tracing::warn!(error = %e, "slot witness");
                continue;
            }
        };
        let Some(witness) = due else {
            continue;
        };
        let fresh = last.is_none_or(|(t, at)| t != witness.t || at.elapsed() >= REPEAT);
        if fresh {
            if last.is_none_or(|(t, _)| t != witness.t) {
                tracing::debug!(
                    t = witness.t,
                    "slot opened: publishing this member's witness"
                );
            }
            sequence += 1;
            let gossip: WitnessGossip = (witness, sequence);
            node.net.publish(Topic::Witness, codec::encode(&gossip));
            last = Some((witness.t, tokio::time::Instant::now()));
        }
    }
}
