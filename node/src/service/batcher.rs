//! The verification batcher: [`Node::respond_local`] queues the responses this node verifies;
//! the batcher collects them into batches, checks each batch on the blocking pool (one batched
//! signature check, one seal, one flush), answers the waiting callers, counts the verdicts and
//! gossips the acceptances.

use std::sync::Arc;
use std::time::Instant;

use hco_oracle::{Reason, Response, SealedAcceptance};
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::{Node, gateway_error, rejected};
use crate::metrics::FamilyLabel;
use crate::network::protocol::ChallengeReply;

/// Most responses verified in one batch (one batched signature check, one seal, one flush).
/// Its acceptances are gossiped in as many messages as their encoded size needs.
pub const MAX_BATCH: usize = 512;
/// Batches verified at once: one is checked while another waits for its flush.
const CONCURRENT_BATCHES: usize = 3;

/// Where the verdict on one queued response is sent back to its caller.
pub(super) type VerdictTx = oneshot::Sender<Result<SealedAcceptance, Reason>>;

impl Node {
    /// Verifies a response on this node (batched with concurrent ones); durable when it returns.
    pub async fn respond_local(&self, response: Response) -> anyhow::Result<ChallengeReply> {
        if let Some(reply) = crate::byzantine::accept_unchecked(self, &response).await {
            return Ok(reply);
        }
        let (tx, rx) = oneshot::channel();
        if self
            .verify_tx
            .try_send((response, Instant::now(), tx))
            .is_err()
        {
            self.metrics.drop_in("verify");
            return Ok(gateway_error(
                "overloaded",
                "the verification queue is full; retry after a short pause",
            ));
        }
        Ok(match rx.await? {
            Ok(sealed) => ChallengeReply::Accepted(Box::new(sealed)),
            Err(reason) => rejected(&reason),
        })
    }
}

/// Collects responses into batches and verifies them on the blocking pool.
pub(super) async fn run(node: Arc<Node>, mut rx: mpsc::Receiver<(Response, Instant, VerdictTx)>) {
    let permits = Arc::new(Semaphore::new(CONCURRENT_BATCHES));
    while let Some(first) = rx.recv().await {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            break;
        };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(item) => batch.push(item),
                Err(_) => break,
            }
        }
        let node = node.clone();
        tokio::spawn(async move {
            let (responses, meta): (Vec<Response>, Vec<(Instant, VerdictTx)>) =
                batch.into_iter().map(|(r, at, tx)| (r, (at, tx))).unzip();
            let now = node.now();
            let families: Vec<String> = responses
                .iter()
                .map(|r| r.challenge.challenge.family.clone())
                .collect();
            let result = node
                .blocking(move |o| o.verify_responses(&responses, now))
                .await;
            let verdicts = match result {
                Ok(Ok(v)) => v,
                Ok(Err(e)) => {
                    // Nothing was acknowledged: the waiting clients get an internal error.
                    node.supervisor
                        .storage_failed("the verification batcher", e);
                    return;
                }
                Err(e) => {
                    tracing::error!(error = %e, "verification task failed");
                    return;
                }
            };
            let mut accepted = Vec::new();
            for ((verdict, (at, tx)), family) in verdicts.into_iter().zip(meta).zip(families) {
                node.metrics
                    .verify_latency
                    .observe(at.elapsed().as_secs_f64());
                match &verdict {
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
                let _ = tx.send(verdict);
            }
            node.publish_acceptances(&accepted);
            drop(permit);
        });
    }
}
