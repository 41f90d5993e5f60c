//! The service's fault hook: the few places where a test-only cheating member (the
//! `unsafe-byzantine` cargo feature's `byzantine` module) changes what this node does. The
//! service owns the hook and calls it; a node without one installed — every node of a build
//! without the feature — runs [`Honest`], whose every answer is "do what the protocol says".

use std::future::Future;
use std::pin::Pin;

use hco_oracle::Response;
use libp2p::PeerId;

use super::Node;
use crate::network::protocol::ChallengeReply;

/// A reply the hook gives in place of this node's own verification.
pub type Replaced<'a> = Pin<Box<dyn Future<Output = Option<ChallengeReply>> + Send + 'a>>;

/// What a faulty member changes. Every method's default is the honest behaviour.
pub trait FaultHook: Send + Sync + 'static {
    /// A reply to `response` that replaces this node's verification of it; `None` verifies.
    fn replace_verification<'a>(
        &'a self,
        _node: &'a Node,
        _response: &'a Response,
    ) -> Replaced<'a> {
        Box::pin(async { None })
    }

    /// The moment to issue a challenge at, instead of `now`, when the step opens only at
    /// `opens_at`; `None`: `step_not_open`.
    fn serve_early(&self, _node: &Node, _opens_at: u64, _now: u64) -> Option<u64> {
        None
    }

    /// Whether this node keeps its reveal of window `t` out of gossip.
    fn withholds_reveal(&self, _t: u64) -> bool {
        false
    }

    /// Whether this node puts its reveal of `t` in its answer to `peer`'s reconciliation.
    fn serves_reveal_to(&self, t: u64, _peer: &PeerId) -> bool {
        !self.withholds_reveal(t)
    }

    /// The faults on, for `/healthz` (`None`: an honest node).
    fn describe(&self) -> Option<Vec<&'static str>> {
        None
    }
}

/// The protocol as written.
pub struct Honest;

impl FaultHook for Honest {}
