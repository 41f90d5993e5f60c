//! Tries issued by other members. With [`crate::NetworkParams::rotate_issuers`] each try `j`
//! of an identity-window has its own issuer ([`crate::secret::issuers_of`]), so the issuer of
//! `j` learns how the earlier tries went from theirs: a pass from the acceptance (gossiped, or
//! carried by the status reply and recorded like gossip), anything else from the status its
//! issuer reports ([`Oracle::try_status`]). The caller (the node) asks; this module only says
//! what to ask and what the answers mean, so issuance stays free of I/O.
//!
//! A member's word about its own try is taken as it is, except a pass, which needs the sealed
//! acceptance: a member that lies about its try could equally have refused to issue it (the
//! identity loses that try), but a made-up pass would cost the identity the step it still has
//! to take. An earlier try nobody reports (its issuer is unreachable, or never issued it)
//! counts as a try used and failed: a client skipping a try only loses it, and an unreachable
//! member does not stall the identities it was to serve.

use std::collections::BTreeMap;

use crate::ledger::LedgerError;
use crate::policy::Outcome as StepOutcome;
use crate::secret::issuers_of;
use crate::{IdentityId, NodeId, Timestamp, TryStatus};

use super::Oracle;

/// The statuses other members reported of an identity-window's earlier tries, by index.
pub type EarlierTries = BTreeMap<u32, TryStatus>;

impl Oracle {
    /// What this member reports of try `(id, t, j)` (for another member about to issue a later
    /// try). A pass is reported only once sealed; until then the try is open.
    pub fn try_status(
        &self,
        id: &IdentityId,
        t: u64,
        j: u32,
        now: Timestamp,
    ) -> Result<TryStatus, LedgerError> {
        if let Some(sealed) = self.ledger.accepted(t, id, j)?
            && sealed.acceptance.challenge().issuer == self.node
        {
            return Ok(TryStatus::Passed(Box::new(sealed)));
        }
        let Some(record) = self.ledger.issued(t, id, j)? else {
            return Ok(TryStatus::NotIssued);
        };
        Ok(
            if self.ledger.answered(t, id, j)?.is_some() || now > record.deadline {
                TryStatus::Failed
            } else {
                TryStatus::Open {
                    deadline: record.deadline,
                }
            },
        )
    }

    /// The earlier tries (before `j`) of `(id, t)` whose outcome this member does not hold,
    /// each with the other members that may have issued it: ask them before issuing `j`.
    /// Empty unless tries rotate.
    pub fn earlier_tries_to_ask(
        &self,
        id: &IdentityId,
        t: u64,
        j: u32,
    ) -> Result<Vec<(u32, Vec<NodeId>)>, LedgerError> {
        if !self.params.rotate_issuers || j == 0 {
            return Ok(Vec::new());
        }
        let accepted = self.ledger.accepted_indices(t, id)?;
        let mut out = Vec::new();
        for k in 0..j {
            if accepted.contains(&k) || self.ledger.issued(t, id, k)?.is_some() {
                continue;
            }
            let others: Vec<NodeId> = issuers_of(&self.params, id, t, k)
                .into_iter()
                .filter(|n| *n != self.node)
                .collect();
            if !others.is_empty() {
                out.push((k, others));
            }
        }
        Ok(out)
    }

    /// The outcome of earlier try `k` that another member issued (or nobody did), from the
    /// acceptances held and the statuses reported.
    pub(super) fn earlier_outcome(
        &self,
        id: &IdentityId,
        t: u64,
        k: u32,
        earlier: &EarlierTries,
    ) -> Result<StepOutcome, LedgerError> {
        if self.ledger.is_accepted(t, id, k)? {
            return Ok(StepOutcome::Passed);
        }
        Ok(match earlier.get(&k) {
            Some(TryStatus::Open { .. }) => StepOutcome::Open,
            // A pass whose acceptance could not be recorded counts for nothing here.
            _ => StepOutcome::Failed,
        })
    }
}
