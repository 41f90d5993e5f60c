//! Rotating issuers (`network.rotate_issuers`): before issuing try `j`, the member asks the
//! issuers of the earlier tries it does not hold how they went ([`ChallengeRpc::Status`]), and
//! answers the same question for its own tries. A pass comes with its sealed acceptance,
//! recorded like gossip before issuing; a failure is remembered (it is final), so a client
//! polling for a later try's opening does not cost a status request each time; the protocol core
//! ([`hco_oracle::EarlierTries`]) says what each answer means.

use std::collections::HashSet;
use std::sync::Mutex;

use futures::future::join_all;
use hco_oracle::{ChallengeRequest, EarlierTries, IdentityId, NodeId, TryStatus};

use super::{Node, gateway_error};
use crate::network::protocol::{ChallengeReply, ChallengeRpc};

/// Most failed tries remembered; past it the memory starts over (a repeated request then asks
/// again, nothing worse).
const MAX_FAILED_TRIES: usize = 100_000;

/// Tries other members reported failed: final, so not asked about again.
#[derive(Default)]
pub(super) struct FailedTries(Mutex<HashSet<(IdentityId, u64, u32)>>);

impl FailedTries {
    fn contains(&self, key: &(IdentityId, u64, u32)) -> bool {
        self.0.lock().is_ok_and(|set| set.contains(key))
    }

    fn insert(&self, key: (IdentityId, u64, u32)) {
        if let Ok(mut set) = self.0.lock() {
            if set.len() >= MAX_FAILED_TRIES {
                set.clear();
            }
            set.insert(key);
        }
    }
}

impl Node {
    /// The statuses of the earlier tries of the request's identity-window that other members
    /// issued and this one does not hold, asked of them at once. A member that cannot be
    /// reached, or answers with something else, reports nothing (the try counts as failed).
    pub(super) async fn earlier_tries(
        &self,
        body: &ChallengeRequest,
    ) -> anyhow::Result<EarlierTries> {
        let (id, t, j) = (body.id, body.t, body.j);
        let to_ask = self
            .blocking(move |o| o.earlier_tries_to_ask(&id, t, j))
            .await??;
        let asked = to_ask.into_iter().map(|(k, issuers)| async move {
            if self.failed_tries.contains(&(id, t, k)) {
                return (k, TryStatus::Failed);
            }
            for issuer in issuers {
                if let Some(status) = self.ask_status(issuer, id, t, k).await
                    && status != TryStatus::NotIssued
                {
                    return (k, status);
                }
            }
            (k, TryStatus::NotIssued)
        });
        let mut earlier = EarlierTries::new();
        let mut passes = Vec::new();
        for (k, status) in join_all(asked).await {
            match &status {
                TryStatus::Passed(sealed) => passes.push((**sealed).clone()),
                TryStatus::Failed => self.failed_tries.insert((id, t, k)),
                _ => {}
            }
            earlier.insert(k, status);
        }
        if !passes.is_empty() {
            // Checked and stored as gossip would be; one that fails counts for nothing.
            for sealed in passes {
                let (batch, now) = (vec![sealed], self.now());
                let _ = self.blocking(move |o| o.record_remote(&batch, now)).await?;
            }
        }
        Ok(earlier)
    }

    /// Asks `issuer` what became of try `(id, t, j)`; `None` when it cannot say.
    async fn ask_status(
        &self,
        issuer: NodeId,
        id: IdentityId,
        t: u64,
        j: u32,
    ) -> Option<TryStatus> {
        let peer = self.peer_of(&issuer)?;
        match self
            .net
            .challenge(peer, ChallengeRpc::Status { id, t, j })
            .await
        {
            Ok(ChallengeReply::Status(status)) => Some(status),
            _ => None,
        }
    }

    /// This member's answer to [`ChallengeRpc::Status`].
    pub async fn try_status_local(
        &self,
        id: IdentityId,
        t: u64,
        j: u32,
    ) -> anyhow::Result<ChallengeReply> {
        let now = self.now();
        let closes_at = self.oracle.params().closes_at(t);
        // An agent's try in an open window: its verdict is withheld (`withheld`); no policy
        // that withholds has an earlier try to ask about.
        if now < closes_at && self.withheld.covers(&self.oracle, &id) {
            return Ok(super::withheld::withheld_reply(closes_at));
        }
        Ok(
            match self.blocking(move |o| o.try_status(&id, t, j, now)).await? {
                Ok(status) => ChallengeReply::Status(status),
                Err(e) => gateway_error("internal", e.to_string()),
            },
        )
    }
}
