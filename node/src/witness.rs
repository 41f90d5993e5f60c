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
/// The longest the node sleeps between two looks: it wakes at the next beat's start (every
/// prompt on the beat waits for a witness of it), else at least this often, for repeats and a
/// new window's slot.
const IDLE: Duration = Duration::from_millis(250);

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
        let now = node.now();
        let wait = match node.oracle.next_beat_after(now) {
            Ok(Some(at)) => Duration::from_millis(at.saturating_sub(now)).min(IDLE),
            _ => IDLE,
        };
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(wait) => {}
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
