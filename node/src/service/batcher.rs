//! The verification batcher: [`Node::respond_local`] queues the responses this node verifies;
//! batches of them are checked on the blocking pool (one batched signature check, one seal,
//! one flush), the waiting callers answered, the verdicts counted and the acceptances gossiped.

use std::sync::Arc;
use std::time::Instant;

use hco_oracle::{Reason, Response, SealedAcceptance};

use super::queue::{self, BatchQueue, Batches, InFlight};
use super::{Node, gateway_error, rejected};
use crate::metrics::FamilyLabel;
use crate::network::protocol::ChallengeReply;

/// Most responses verified in one batch (one batched signature check, one seal, one flush).
/// Its acceptances are gossiped in as many messages as their encoded size needs.
pub const MAX_BATCH: usize = 512;
/// Batches verified at once: with a long queue, one is checked while another waits for its
/// flush. A batch of fewer than 64 responses waits for the one in flight instead: under
/// `hco bench http` (64 clients) three small batches side by side averaged 2.6 responses per
/// flush and cost the server 0.41 ms of CPU per acceptance; one at a time, 9 per flush and
/// 0.29 ms, with a lower p99.
const IN_FLIGHT: InFlight = InFlight {
    most: 3,
    beside_others_from: 64,
    gather: None,
};

/// Responses waiting for verification, with the time each was queued.
pub(super) type VerifyQueue = BatchQueue<(Response, Instant), Result<SealedAcceptance, Reason>>;
type VerifyBatches = Batches<(Response, Instant), Result<SealedAcceptance, Reason>>;

/// The verification queue and its receiving side (for [`run`]).
pub(super) fn channel() -> (VerifyQueue, VerifyBatches) {
    queue::channel(8 * MAX_BATCH)
}

impl Node {
    /// Verifies a response on this node (batched with concurrent ones); durable when it returns.
    pub async fn respond_local(&self, response: Response) -> anyhow::Result<ChallengeReply> {
        if let Some(reply) = self.faults().replace_verification(self, &response).await {
            return Ok(reply);
        }
        let family = response.challenge.challenge.family.clone();
        let closes_at = self
            .oracle
            .params()
            .closes_at(response.challenge.challenge.t);
        let Some(verdict) = self.verify_queue.submit((response, Instant::now())) else {
            self.metrics.drop_in("verify");
            return Ok(gateway_error(
                "overloaded",
                "the verification queue is full; retry after a short pause",
            ));
        };
        let verdict = verdict.await?;
        if let Some(reply) = self.withheld.mask(&family, &verdict, closes_at) {
            return Ok(reply);
        }
        Ok(match verdict {
            Ok(sealed) => ChallengeReply::Accepted(Box::new(sealed)),
            Err(reason) => rejected(&reason),
        })
    }
}

/// Verifies the queued responses in batches until the node stops.
pub(super) async fn run(node: Arc<Node>, batches: VerifyBatches) {
    queue::run(batches, MAX_BATCH, IN_FLIGHT, move |items| {
        verify_batch(node.clone(), items)
    })
    .await
}

async fn verify_batch(
    node: Arc<Node>,
    items: Vec<(Response, Instant)>,
) -> Option<Vec<Result<SealedAcceptance, Reason>>> {
    let (responses, queued): (Vec<Response>, Vec<Instant>) = items.into_iter().unzip();
    node.metrics
        .verify_batch_size
        .observe(responses.len() as f64);
    let now = node.now();
    let families: Vec<String> = responses
        .iter()
        .map(|r| r.challenge.challenge.family.clone())
        .collect();
    let verdicts = match node
        .blocking(move |o| o.verify_responses(&responses, now))
        .await
    {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            // Nothing was acknowledged: the waiting clients get an internal error.
            node.supervisor
                .storage_failed("the verification batcher", e);
            return None;
        }
        Err(e) => {
            tracing::error!(error = %e, "verification task failed");
            return None;
        }
    };
    let mut accepted = Vec::new();
    for ((verdict, at), family) in verdicts.iter().zip(queued).zip(families) {
        node.metrics
            .verify_latency
            .observe(at.elapsed().as_secs_f64());
        match verdict {
            Ok(sealed) => {
                node.metrics
                    .accepted
                    .get_or_create(&FamilyLabel { family })
                    .inc();
                accepted.push(sealed.clone());
            }
            Err(reason) => {
                if reason.is_final_answer() {
                    node.metrics
                        .answered_wrong
                        .get_or_create(&FamilyLabel {
                            family: family.clone(),
                        })
                        .inc();
                }
                node.metrics.reject(reason.code(), Some(&family));
            }
        }
    }
    // Those whose verdict is withheld are gossiped when their window closes (the driver).
    node.publish_acceptances(node.withheld.hold(accepted));
    Some(verdicts)
}
