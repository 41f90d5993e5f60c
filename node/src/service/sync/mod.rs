//! Reconciliation with the committee, all of it: the registry (identities, then passkey
//! enrolments), the acceptances of a closed window, the reveals of a window and its
//! certificate. Gossip carries
//! each of these as it happens; reconciliation copies what a node missed (a cut link, a restart)
//! over the reconciliation request-response protocol.
//!
//! - this file: the reply side, [`serve`], answering a peer's [`ReconcileRpc`] from the ledger
//!   within the protocol's page limits (a page of keys says whether more follow);
//! - [`registry`]: pulling identities and passkeys from a peer (at start);
//! - [`window`]: pulling a closed window's acceptances and reveals (before it is summarized);
//! - [`links`]: pulling the account link statements of a window before it is summarized, and
//!   all of them at start;
//! - [`certificate`]: answering `/hco/cert/1`, and completing a window's certificate from peers.
//!
//! The window driver decides when to pull; whatever is pulled is checked by the oracle again.

mod certificate;
mod links;
mod registry;
mod window;

use std::time::Duration;

use hco_oracle::RelayedReveal;
use libp2p::PeerId;

use super::Node;
use crate::network::protocol::{
    MAX_FETCH, MAX_KEY_ROUNDS, MAX_KEYS, MAX_LINK_FETCH, MAX_PASSKEY_FETCH, ReconcileReply,
    ReconcileRpc,
};

pub use certificate::complete_certificate;
pub(super) use certificate::serve_cert;
pub use links::pull_links;
pub use registry::pull_registry;
pub use window::{all_reveals_count, pull_acceptances, pull_reveals};

/// How much a node puts in one reply and asks of one peer: the protocol's limits unless a test
/// sets smaller ones (to cross the page boundaries with a few records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most accepted keys this node puts in one reply ([`MAX_KEYS`]).
    pub keys_per_reply: usize,
    /// Most key replies this node asks one peer for about one window ([`MAX_KEY_ROUNDS`]).
    pub key_rounds: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            keys_per_reply: MAX_KEYS,
            key_rounds: MAX_KEY_ROUNDS,
        }
    }
}

/// How long a node waits after a window closes before reconciling, so in-flight gossip lands.
pub const SETTLE: Duration = Duration::from_millis(1500);

/// Answers a peer's reconciliation request from this node's ledger.
pub(super) async fn serve(
    node: &Node,
    peer: PeerId,
    request: ReconcileRpc,
) -> anyhow::Result<ReconcileReply> {
    let keys_per_reply = node.sync_limits.keys_per_reply;
    // A test-only faulty member keeps a withheld reveal out of its answers too.
    let withheld = match &request {
        ReconcileRpc::Reveals { t } => !node.faults().serves_reveal_to(*t, &peer),
        _ => false,
    };
    node.blocking(move |o| -> anyhow::Result<ReconcileReply> {
        let ledger = o.ledger();
        Ok(match request {
            ReconcileRpc::Keys { t, after, limit } => {
                let limit = (limit as usize).min(keys_per_reply);
                // One key past the page tells whether the window holds more.
                let mut keys = ledger.accepted_keys_after(t, after, limit.saturating_add(1))?;
                let more = keys.len() > limit;
                keys.truncate(limit);
                ReconcileReply::Keys { keys, more }
            }
            ReconcileRpc::Fetch { t, keys } => {
                let mut out = Vec::new();
                for (id, j) in keys.into_iter().take(MAX_FETCH) {
                    if let Some(a) = ledger.accepted(t, &id, j)? {
                        out.push(a);
                    }
                }
                let receipts = o.receipts_for(&out);
                ReconcileReply::Acceptances(out, receipts)
            }
            ReconcileRpc::Identities { after, limit } => {
                let limit = (limit as usize).min(MAX_FETCH);
                ReconcileReply::Identities(ledger.identities_after(after.as_ref(), limit)?)
            }
            ReconcileRpc::Reveals { t } => {
                let mut reveals = o.counted_reveals(t)?;
                let lead = hco_oracle::secret::commit_lead(o.params());
                for held in ledger.reveals(t)? {
                    let node = held.reveal.node;
                    if !reveals.iter().any(|r| r.reveal.reveal.node == node) {
                        let earlier = match t.checked_sub(lead) {
                            Some(before) => ledger.reveal(before, &node)?,
                            None => None,
                        };
                        reveals.push(RelayedReveal::new(held, earlier));
                    }
                }
                if withheld {
                    reveals.retain(|r| r.reveal.reveal.node != o.node_id());
                }
                // A member's second reveal is its equivocation: both are sent.
                reveals.truncate(2 * o.params().committee.len());
                ReconcileReply::Reveals(reveals)
            }
            ReconcileRpc::Links {
                from,
                to,
                after,
                limit,
            } => {
                let limit = (limit as usize).min(MAX_LINK_FETCH);
                ReconcileReply::Links(o.links_between(from..=to, after.as_ref(), limit)?)
            }
            ReconcileRpc::Passkeys { after, limit } => {
                let limit = (limit as usize).min(MAX_PASSKEY_FETCH);
                let after = after.as_ref().map(|(id, c)| (id, c.as_slice()));
                ReconcileReply::Passkeys(
                    ledger
                        .passkeys_after(after, limit)?
                        .into_iter()
                        .map(|r| (r.enrolment, r.credential_id))
                        .collect(),
                )
            }
        })
    })
    .await?
}

#[cfg(test)]
mod tests;
