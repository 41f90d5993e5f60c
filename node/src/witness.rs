//! Beat witnesses (see `hco_oracle::witness`): as each beat of the current window's global slot
//! begins by this node's clock, the node gossips its signed witness of it, and again every
//! [`REPEAT`] while a prompt on that beat may still be issued, so members that start or
//! reconnect late still get it (a touch prompt can only be issued with another member's
//! witness of its beat). Nothing is published in other slot modes.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use hco_oracle::codec;
use tokio_util::sync::CancellationToken;

use crate::network::protocol::{Topic, WitnessGossip};
use crate::service::Node;

/// How often a due witness is published again.
pub const REPEAT: Duration = Duration::from_secs(5);
/// How often the node looks whether a witness fell due: a beat's witness goes out at most
/// this long after the beat begins, and every prompt on the beat waits for it.
const TICK: Duration = Duration::from_millis(20);

/// Publishes this node's witnesses until `shutdown`.
pub async fn run(node: Arc<Node>, shutdown: CancellationToken) {
    if node.oracle.params().slot_mode != hco_oracle::SlotMode::Global {
        shutdown.cancelled().await;
        return;
    }
    // When each witness (by its beat) was last published.
    let mut last: HashMap<(u64, u64), tokio::time::Instant> = HashMap::new();
    let mut sequence = 0u64;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(TICK) => {}
        }
        let due = match node.oracle.witnesses_due(node.now()) {
            Ok(due) => due,
            Err(e) => {
                tracing::warn!(error = %e, "beat witness");
                continue;
            }
        };
        if let Some(t) = due.first().map(|w| w.t) {
            last.retain(|(window, _), _| *window == t);
        }
        for witness in due {
            let key = (witness.t, witness.at);
            if last.get(&key).is_some_and(|at| at.elapsed() < REPEAT) {
                continue;
            }
            if !last.contains_key(&key) {
                tracing::debug!(
                    t = witness.t,
                    at = witness.at,
                    "beat began: publishing this member's witness"
                );
            }
            sequence += 1;
            let gossip: WitnessGossip = (witness, sequence);
            node.net.publish(Topic::Witness, codec::encode(&gossip));
            last.insert(key, tokio::time::Instant::now());
        }
    }
}
