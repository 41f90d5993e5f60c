//! Withheld verdicts (`[agent] withhold_verdicts`): the verdict on an answer to a per-window
//! `narrative_chain` challenge is not told to anyone outside the committee before the window
//! closes.
//!
//! Why: a failed challenge retires nothing, so a script holding many agent identities got one
//! joint verdict per identity a window on the window's challenge set, and learnt from them the
//! answers of a set whose answers a ranked reader nearly holds (measured: 124 of 1,500
//! identities accepted in one window, none by a first reading). The window's sets are never
//! shown again once it closes, so a verdict told after the close teaches nothing usable.
//!
//! What changes, for those answers only (every other family and check is as before):
//! - the issuer answers a right and a wrong answer alike, `verdict_withheld` (HTTP 202) with
//!   the window's close as `opens_at`; a refusal that does not depend on whether the answer is
//!   right (late, too fast, replayed, not a JSON array of one answer per part…) is told as
//!   before;
//! - the acceptance is durable at once but kept out of gossip until the window closes
//!   (non-prompt acceptances are taken from a member up to two relay rounds after the close), so
//!   no observer of the gossip sees it earlier;
//! - a try's status is not told for an open window, an agent identity's status is given as of
//!   the last closed window, and a window's local active count only once it has closed.
//!
//! The agent learns its verdict from the window's certificate and its membership proof.
//! [`run`] gossips the held acceptances as their window closes (within half a second).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use hco_challenges::{Class, Reject};
use hco_oracle::{IdentityId, Oracle, Reason, SealedAcceptance};

use crate::network::protocol::{ChallengeReply, Rejection};

/// The family whose verdicts are withheld.
pub const WITHHELD_FAMILY: &str = "narrative_chain";

/// The code of the reply to a withheld answer.
pub const VERDICT_WITHHELD: &str = "verdict_withheld";

/// Whether verdicts are withheld, and the acceptances held back from gossip, by window.
#[derive(Default)]
pub struct Withheld {
    on: AtomicBool,
    held: Mutex<BTreeMap<u64, Vec<SealedAcceptance>>>,
}

impl Withheld {
    /// Turns withholding on or off (set once at start).
    pub fn set(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
    }

    /// Whether answers to `family` have their verdict withheld.
    pub fn applies(&self, family: &str) -> bool {
        self.on.load(Ordering::Relaxed) && family == WITHHELD_FAMILY
    }

    /// Whether withholding is on.
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Whether `id`'s verdicts are withheld: withholding is on and it is an agent identity
    /// here (one ledger read).
    pub fn covers(&self, oracle: &Oracle, id: &IdentityId) -> bool {
        self.is_on()
            && matches!(
                oracle.ledger().identity(id),
                Ok(Some(r)) if r.register.body.class == Class::Agent
            )
    }

    /// Keeps the acceptances whose verdict is withheld until their window closes; returns the
    /// others, to be gossiped now.
    pub fn hold(&self, accepted: Vec<SealedAcceptance>) -> Vec<SealedAcceptance> {
        if !self.is_on() {
            return accepted;
        }
        let (held, now): (Vec<_>, Vec<_>) = accepted
            .into_iter()
            .partition(|s| self.applies(&s.acceptance.challenge().family));
        if !held.is_empty()
            && let Ok(mut map) = self.held.lock()
        {
            for s in held {
                map.entry(s.acceptance.challenge().t).or_default().push(s);
            }
        }
        now
    }

    /// The acceptances held for windows that have closed by `now` (`closes_at` of each),
    /// taken out.
    pub fn release_closed(
        &self,
        now: u64,
        closes_at: impl Fn(u64) -> u64,
    ) -> Vec<SealedAcceptance> {
        let last_closed = match self.held.lock() {
            Ok(map) => map
                .keys()
                .take_while(|t| closes_at(**t) <= now)
                .last()
                .copied(),
            Err(_) => None,
        };
        last_closed.map_or_else(Vec::new, |t| self.release(t))
    }

    /// The acceptances held for windows up to `t` (closed), taken out.
    pub fn release(&self, t: u64) -> Vec<SealedAcceptance> {
        let Ok(mut map) = self.held.lock() else {
            return Vec::new();
        };
        let later = t
            .checked_add(1)
            .map_or_else(BTreeMap::new, |next| map.split_off(&next));
        let released = std::mem::replace(&mut *map, later);
        released.into_values().flatten().collect()
    }

    /// The reply to an answer to `family` whose verdict is `verdict`, for a window that closes
    /// at `closes_at`: `verdict_withheld` where the verdict depends on the answer, else `None`
    /// (the usual reply).
    pub fn mask(
        &self,
        family: &str,
        verdict: &Result<SealedAcceptance, Reason>,
        closes_at: u64,
    ) -> Option<ChallengeReply> {
        if !self.applies(family) {
            return None;
        }
        match verdict {
            Ok(_) | Err(Reason::Answer(Reject::AnswerMismatch)) => Some(withheld_reply(closes_at)),
            Err(_) => None,
        }
    }
}

/// Gossips the acceptances held back as their window closes, until `shutdown`: every half
/// second, on its own task, so that a window's close procedure running long (the driver's
/// reconciliation and reveals) never delays them past what the other members take.
pub async fn run(node: std::sync::Arc<super::Node>, shutdown: tokio_util::sync::CancellationToken) {
    let params = node.oracle.params().clone();
    loop {
        let released = node
            .withheld
            .release_closed(node.now(), |t| params.closes_at(t));
        if !released.is_empty() {
            tracing::debug!(
                count = released.len(),
                "gossiping acceptances withheld until the close"
            );
            node.publish_acceptances(released);
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(std::time::Duration::from_millis(500)) => {}
        }
    }
}

/// `verdict_withheld`, the verdict out at `closes_at`.
pub fn withheld_reply(closes_at: u64) -> ChallengeReply {
    ChallengeReply::Rejected(Rejection {
        code: VERDICT_WITHHELD.into(),
        message: "answer recorded; the verdict on this family's answers is withheld until the \
                  window closes: read the window's certificate and your membership proof then"
            .into(),
        opens_at: Some(closes_at),
    })
}

#[cfg(test)]
#[path = "withheld_tests.rs"]
mod tests;
