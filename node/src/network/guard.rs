//! The event loop's bookkeeping of peers: who is a committee member, strikes and bans (which
//! expire), and the rate limits of peers that are not members.
//!
//! Only committee members publish acceptances, summaries and reveals, and only they may ask for
//! reconciliation. Observers may publish registrations and passkey enrolments, and use the
//! challenge and certificate protocols, within their per-peer rate limits. A message or request
//! over the limit is dropped without penalty; one on a members-only topic from anyone else is
//! invalid.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use libp2p::PeerId;

use super::Validation;
use super::protocol::Topic;
use super::rate::Buckets;
use crate::config::P2pSection;

/// Rejected gossip messages after which a peer is disconnected and blocked.
pub const MAX_STRIKES: u32 = 5;

/// What the guard says about an inbound gossip message before the oracle sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GossipGate {
    /// Hand it to the node for validation.
    Pass,
    /// Settle it here with this verdict; the label names why (for metrics and logs).
    Settle(Validation, &'static str),
}

/// Why an inbound request is refused here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcRefusal {
    /// Reconciliation is for committee members.
    NotAMember,
    /// Over the peer's rate limit.
    RateLimited,
}

impl RpcRefusal {
    /// The stable code sent back.
    pub fn code(self) -> &'static str {
        match self {
            RpcRefusal::NotAMember => "not_a_member",
            RpcRefusal::RateLimited => "rate_limited",
        }
    }
}

/// Members, strikes, bans and rate limits.
#[derive(Debug)]
pub struct Guard {
    members: HashSet<PeerId>,
    strikes: HashMap<PeerId, u32>,
    bans: HashMap<PeerId, Instant>,
    ban_duration: Duration,
    gossip: Buckets<PeerId>,
    rpc: Buckets<PeerId>,
}

impl Guard {
    /// A guard for the committee `members` with the limits of `config`.
    pub fn new(members: impl IntoIterator<Item = PeerId>, config: &P2pSection) -> Self {
        Self {
            members: members.into_iter().collect(),
            strikes: HashMap::new(),
            bans: HashMap::new(),
            ban_duration: config.ban_duration,
            gossip: Buckets::new(
                config.observer_gossip_per_second,
                config.observer_gossip_burst,
            ),
            rpc: Buckets::new(config.observer_rpc_per_second, config.observer_rpc_burst),
        }
    }

    /// Whether `peer` is a committee member.
    pub fn is_member(&self, peer: &PeerId) -> bool {
        self.members.contains(peer)
    }

    /// Screens a gossip message forwarded by `source` and signed by `author`.
    pub fn gossip(
        &mut self,
        topic: Topic,
        source: PeerId,
        author: Option<PeerId>,
        now: Instant,
    ) -> GossipGate {
        let members_only = matches!(
            topic,
            Topic::Acceptance
                | Topic::RegistryBatch
                | Topic::Summary
                | Topic::Reveal
                | Topic::Witness
        );
        if members_only && !author.is_some_and(|a| self.is_member(&a)) {
            return GossipGate::Settle(Validation::Reject, "not_a_member");
        }
        if !self.is_member(&source) && !self.gossip.allow(source, now) {
            return GossipGate::Settle(Validation::Ignore, "rate_limited");
        }
        GossipGate::Pass
    }

    /// Screens a request from `peer`; `members_only` for reconciliation.
    pub fn rpc(
        &mut self,
        peer: PeerId,
        members_only: bool,
        now: Instant,
    ) -> Result<(), RpcRefusal> {
        if self.is_member(&peer) {
            return Ok(());
        }
        if members_only {
            return Err(RpcRefusal::NotAMember);
        }
        if !self.rpc.allow(peer, now) {
            return Err(RpcRefusal::RateLimited);
        }
        Ok(())
    }

    /// Counts an invalid message from `peer`; true when it has reached [`MAX_STRIKES`].
    pub fn strike(&mut self, peer: PeerId) -> bool {
        let strikes = self.strikes.entry(peer).or_default();
        *strikes += 1;
        *strikes >= MAX_STRIKES
    }

    /// Records a ban of `peer` from `now` (its strikes start over when it ends).
    pub fn ban(&mut self, peer: PeerId, now: Instant) {
        self.strikes.remove(&peer);
        self.bans.insert(peer, now + self.ban_duration);
    }

    /// The bans that have ended at `now` (removed from the guard); also drops refilled rate
    /// buckets.
    pub fn expire(&mut self, now: Instant) -> Vec<PeerId> {
        let ended: Vec<PeerId> = self
            .bans
            .iter()
            .filter(|(_, until)| **until <= now)
            .map(|(p, _)| *p)
            .collect();
        for peer in &ended {
            self.bans.remove(peer);
        }
        self.gossip.prune(now);
        self.rpc.prune(now);
        ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(member: PeerId) -> Guard {
        let config = P2pSection {
            observer_gossip_per_second: 1,
            observer_gossip_burst: 2,
            observer_rpc_per_second: 1,
            observer_rpc_burst: 1,
            ban_duration: Duration::from_secs(60),
            ..Default::default()
        };
        Guard::new([member], &config)
    }

    #[test]
    fn members_only_topics_need_a_member_author_whoever_forwards() {
        let (member, other) = (PeerId::random(), PeerId::random());
        let mut g = guard(member);
        let now = Instant::now();
        for topic in [
            Topic::Acceptance,
            Topic::RegistryBatch,
            Topic::Summary,
            Topic::Reveal,
            Topic::Witness,
        ] {
            assert_eq!(
                g.gossip(topic, other, Some(other), now),
                GossipGate::Settle(Validation::Reject, "not_a_member")
            );
            assert_eq!(g.gossip(topic, member, Some(member), now), GossipGate::Pass);
        }
        // An observer relaying a member's summary is fine (within its limit).
        assert_eq!(
            g.gossip(Topic::Summary, other, Some(member), now),
            GossipGate::Pass
        );
    }

    #[test]
    fn observers_publish_registrations_within_their_limit_members_without() {
        let (member, other) = (PeerId::random(), PeerId::random());
        let mut g = guard(member);
        let now = Instant::now();
        let passed = (0..10)
            .filter(|_| g.gossip(Topic::Registry, other, Some(other), now) == GossipGate::Pass)
            .count();
        assert_eq!(passed, 2);
        assert_eq!(
            g.gossip(Topic::Passkey, other, Some(other), now),
            GossipGate::Settle(Validation::Ignore, "rate_limited")
        );
        assert!(
            (0..100)
                .all(|_| g.gossip(Topic::Registry, member, Some(other), now) == GossipGate::Pass)
        );
    }

    #[test]
    fn reconciliation_is_for_members_and_other_requests_are_limited() {
        let (member, other) = (PeerId::random(), PeerId::random());
        let mut g = guard(member);
        let now = Instant::now();
        assert_eq!(g.rpc(other, true, now), Err(RpcRefusal::NotAMember));
        assert_eq!(g.rpc(member, true, now), Ok(()));
        assert_eq!(g.rpc(other, false, now), Ok(()));
        assert_eq!(g.rpc(other, false, now), Err(RpcRefusal::RateLimited));
        assert!((0..100).all(|_| g.rpc(member, false, now).is_ok()));
    }

    #[test]
    fn strikes_lead_to_a_ban_that_expires() {
        let peer = PeerId::random();
        let mut g = guard(PeerId::random());
        let now = Instant::now();
        assert!(!(1..MAX_STRIKES).any(|_| g.strike(peer)));
        assert!(g.strike(peer));
        g.ban(peer, now);
        assert!(g.expire(now + Duration::from_secs(59)).is_empty());
        assert_eq!(g.expire(now + Duration::from_secs(60)), vec![peer]);
        assert!(g.expire(now + Duration::from_secs(61)).is_empty());
        // Strikes start over after a ban.
        assert!(!g.strike(peer));
    }
}
