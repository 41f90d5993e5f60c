//! The challenge requests' signature batcher: the gateway has each request's identity signature
//! checked here ([`Node::check_request`]) before it charges the identity's rate limit and
//! issues. Requests arriving together are checked with one batched verification, on the
//! calling runtime (a batch of [`MAX_BATCH`] is about a millisecond of work).

use hco_oracle::{CheckedRequest, Reason, SignedRequest};

use super::Node;
use super::queue::{self, BatchQueue, Batches, InFlight};
use crate::network::protocol::Rejection;

/// Most requests checked in one batch.
const MAX_BATCH: usize = 64;
/// Under load, how long a batch of fewer than 16 requests gathers more before it is checked.
/// A batch is checked in well under a millisecond, so without this requests would arrive one by
/// one between batches (as they did under `hco bench http`). Measured on one core of the 2-core
/// build machine, one signature alone costs 37–44 µs, and 17–18 µs each in a batch of 8 (see
/// "Serving load" in docs/benchmarks.md). Requests wait up to 1 ms more (2 at the timer's
/// granularity) for their challenge; a lone request on a quiet node does not wait.
const GATHER: std::time::Duration = std::time::Duration::from_millis(1);
/// A batch of fewer than 16 requests waits for the one in flight, gathering more (see
/// [`InFlight`]); two large ones may run at once, one on each core.
const IN_FLIGHT: InFlight = InFlight {
    most: 2,
    beside_others_from: 16,
    gather: Some(GATHER),
};

type Checked = Result<CheckedRequest, Reason>;
/// Requests waiting for their signature check.
pub(super) type CheckQueue = BatchQueue<SignedRequest, Checked>;
type CheckBatches = Batches<SignedRequest, Checked>;

/// The check queue and its receiving side (for [`run`]).
pub(super) fn channel() -> (CheckQueue, CheckBatches) {
    queue::channel(8 * MAX_BATCH)
}

impl Node {
    /// Checks a challenge request's identity signature (batched with concurrent ones); the
    /// refusal to send the client otherwise.
    pub async fn check_request(
        &self,
        req: SignedRequest,
    ) -> anyhow::Result<Result<CheckedRequest, Rejection>> {
        let Some(checked) = self.request_checks.submit(req) else {
            self.metrics.drop_in("request_checks");
            return Ok(Err(Rejection {
                code: "overloaded".into(),
                message: "the request queue is full; retry after a short pause".into(),
                opens_at: None,
            }));
        };
        Ok(checked.await?.map_err(|reason| {
            self.metrics.reject(reason.code(), None);
            Rejection::from(&reason)
        }))
    }
}

/// Checks the queued requests in batches until the node stops.
pub(super) async fn run(node: std::sync::Arc<Node>, batches: CheckBatches) {
    queue::run(batches, MAX_BATCH, IN_FLIGHT, move |reqs| {
        let checked = node.oracle.check_request_signatures(reqs);
        async move { Some(checked) }
    })
    .await
}
