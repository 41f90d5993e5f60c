//! The registrar: registrations from clients ([`Node::register`]) and from peers' gossip
//! ([`Node::register_relayed`]) are checked and written in batches on the blocking pool, with
//! one flush per batch, rather than one blocking-pool hop and one flush each. A client's
//! accepted registration is then gossiped to the committee (coalesced, on the members' batch
//! topic).

use std::sync::Arc;

use hco_oracle::ledger::IdentityRecord;
use hco_oracle::{Reason, RegistrationOrigin, SignedRegister};

use super::Node;
use super::queue::{self, BatchQueue, Batches, InFlight};

/// Most registrations written under one flush.
const MAX_BATCH: usize = 256;
/// Batches in flight: with a long queue, one is checked while another waits for its flush; a
/// small batch waits for the one in flight (see the verification batcher's `IN_FLIGHT`).
const IN_FLIGHT: InFlight = InFlight {
    most: 2,
    beside_others_from: 32,
    gather: None,
};
/// Longest a registration relayed by a peer waits for room in a full queue.
const RELAYED_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

type Outcome = Result<IdentityRecord, Reason>;
/// Registrations waiting to be written, with their origin.
pub(super) type RegistrationQueue = BatchQueue<(SignedRegister, RegistrationOrigin), Outcome>;
type RegistrationBatches = Batches<(SignedRegister, RegistrationOrigin), Outcome>;

/// The registration queue and its receiving side (for [`run`]).
pub(super) fn channel() -> (RegistrationQueue, RegistrationBatches) {
    queue::channel(8 * MAX_BATCH)
}

/// Why a registration got no verdict.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    /// The queue was full: the caller should answer `overloaded`.
    #[error("the registration queue is full; retry after a short pause")]
    Overloaded,
    /// The batch failed (storage): nothing was acknowledged.
    #[error("the registration could not be stored")]
    Failed,
}

impl Node {
    /// Registers an identity sent by a client (batched with concurrent ones; durable when it
    /// returns) and gossips it when accepted.
    pub async fn register(&self, reg: SignedRegister) -> Result<Outcome, RegisterError> {
        self.submit_registration(reg, RegistrationOrigin::Client)
            .await
    }

    /// Registers an identity relayed by a peer on gossip, its age checked as a client's
    /// (batched; durable when it returns).
    pub async fn register_relayed(&self, reg: SignedRegister) -> Result<Outcome, RegisterError> {
        self.submit_registration(reg, RegistrationOrigin::Relayed)
            .await
    }

    async fn submit_registration(
        &self,
        reg: SignedRegister,
        origin: RegistrationOrigin,
    ) -> Result<Outcome, RegisterError> {
        // A client is told `overloaded` at once and retries; a member's relayed registration
        // waits a little for room, so a burst of peers' batches is written rather than left
        // to the registry sync at window close (the gossip validation waits meanwhile).
        let queued = match origin {
            RegistrationOrigin::Client => self.register_queue.submit((reg, origin)),
            _ => {
                self.register_queue
                    .submit_within((reg, origin), RELAYED_WAIT)
                    .await
            }
        };
        let Some(outcome) = queued else {
            self.metrics.drop_in("register");
            return Err(RegisterError::Overloaded);
        };
        outcome.await.map_err(|_| RegisterError::Failed)
    }
}

/// Writes the queued registrations in batches until the node stops.
pub(super) async fn run(node: Arc<Node>, batches: RegistrationBatches) {
    queue::run(batches, MAX_BATCH, IN_FLIGHT, move |items| {
        register_batch(node.clone(), items)
    })
    .await
}

async fn register_batch(
    node: Arc<Node>,
    items: Vec<(SignedRegister, RegistrationOrigin)>,
) -> Option<Vec<Outcome>> {
    let now = node.now();
    let (outcomes, items) = match tokio::task::spawn_blocking({
        let oracle = node.oracle.clone();
        move || (oracle.register_all(&items, now), items)
    })
    .await
    {
        Ok((Ok(outcomes), items)) => (outcomes, items),
        Ok((Err(e), _)) => {
            node.supervisor.storage_failed("the registrar", e);
            return None;
        }
        Err(e) => {
            tracing::error!(error = %e, "registration task failed");
            return None;
        }
    };
    let written = outcomes.iter().filter(|o| o.is_ok()).count();
    node.metrics.registrations.inc_by(written as u64);
    let mut accepted = Vec::new();
    for ((reg, origin), outcome) in items.iter().zip(&outcomes) {
        if *origin != RegistrationOrigin::Client {
            continue;
        }
        match outcome {
            Ok(_) => accepted.push(reg.clone()),
            Err(reason) => node.metrics.reject(reason.code(), None),
        }
    }
    node.publish_registrations(accepted);
    Some(outcomes)
}
