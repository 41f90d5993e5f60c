//! Reveals at window close: this node's own, and the committee's as they are heard, counted
//! by the relay rule ([`crate::relay`]) so that every honest member leaves out the same members.

use crate::ledger::LedgerError;
use crate::{RelayedReveal, SignedReveal, Timestamp};

use super::{Oracle, Outcome};

impl Oracle {
    /// This node's reveal of closed window `t`, stored and counted here: gossip it at once.
    pub fn reveal(&self, t: u64, now: Timestamp) -> Outcome<RelayedReveal> {
        if let Err(reason) = self.check_closed(t, now) {
            return Ok(Err(reason));
        }
        let own = self.count_own_reveal(t)?;
        self.ledger.make_durable()?;
        Ok(Ok(own))
    }

    /// Stores this node's reveal of `t` and counts it here.
    pub(super) fn count_own_reveal(&self, t: u64) -> Result<RelayedReveal, LedgerError> {
        let earlier = t
            .checked_sub(crate::secret::commit_lead(&self.params))
            .map(|before| self.own_reveal(before));
        let own = RelayedReveal::new(self.own_reveal(t), earlier);
        self.record_reveal(&own.reveal)?;
        self.ledger.put_counted_reveal(&own)?;
        Ok(own)
    }

    /// Hears a relayed reveal (gossip or reconciliation) at `now`, refusing one for a window not
    /// yet closed or whose receipts do not check. The reveal is stored as [`Oracle::add_reveal`]
    /// stores it, and counts if heard by [`crate::NetworkParams::reveal_deadline`] for its
    /// signers (each distinct reveal counts once). When it counts here with at most `f`
    /// signers, this node adds its receipt: the returned relay is to be gossiped at once.
    pub fn hear_reveal(
        &self,
        relayed: &RelayedReveal,
        now: Timestamp,
    ) -> Outcome<Option<RelayedReveal>> {
        let t = relayed.reveal.reveal.t;
        if let Err(reason) = relayed
            .check(&self.params)
            .and_then(|()| self.check_closed(t, now))
        {
            return Ok(Err(reason));
        }
        self.record_reveal(&relayed.reveal)?;
        if let Some(earlier) = &relayed.earlier {
            self.record_reveal(earlier)?;
        }
        let member = relayed.reveal.reveal.node;
        let signers = relayed.signers();
        if now > self.params.reveal_deadline(t, signers) {
            return Ok(Ok(None));
        }
        let relays = signers <= self.params.faults_tolerated() && member != self.node;
        let held = if relays {
            relayed.clone().with_receipt(&self.key)
        } else {
            relayed.clone()
        };
        // Each distinct reveal counts once (a second one of a member is relayed as well: two
        // that count are its equivocation, which every honest member must see alike).
        if !self.ledger.put_counted_reveal(&held)? {
            return Ok(Ok(None));
        }
        self.ledger.make_durable()?;
        Ok(Ok(relays.then_some(held)))
    }

    /// Hears `reveal` from its member directly (no receipt), with the member's reveal of
    /// `t − L` this node holds; see [`Oracle::hear_reveal`].
    pub fn add_reveal(&self, reveal: &SignedReveal, now: Timestamp) -> Outcome<()> {
        let r = &reveal.reveal;
        let earlier = match r.t.checked_sub(crate::secret::commit_lead(&self.params)) {
            Some(before) => self.ledger.reveal(before, &r.node)?,
            None => None,
        };
        Ok(self
            .hear_reveal(&RelayedReveal::new(reveal.clone(), earlier), now)?
            .map(|_| ()))
    }

    /// The relayed reveals of `t` that count here, as this node holds them (what it answers a
    /// member reconciling reveals with).
    pub fn counted_reveals(&self, t: u64) -> Result<Vec<RelayedReveal>, LedgerError> {
        self.ledger.counted_reveals(t)
    }

    /// Whether every member's reveal of `t` counts here: nothing is left to decide, so `t` can
    /// be summarized before [`crate::NetworkParams::reveals_decided_at`].
    pub fn all_reveals_count(&self, t: u64) -> Result<bool, LedgerError> {
        let mut members: Vec<_> = self
            .ledger
            .counted_reveals(t)?
            .into_iter()
            .map(|r| r.reveal.reveal.node)
            .collect();
        members.dedup();
        Ok(members.len() >= self.params.committee.len())
    }
}
