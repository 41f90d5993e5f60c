//! A window's active set: the identities whose accepted challenges pass every step of their
//! class's policy, with that class, from the acceptances of the members not left out.

use hco_challenges::Class;

use crate::ledger::LedgerError;
use crate::{IdentityId, NodeId, SealedAcceptance};

use super::Oracle;

/// What the active set needs of one acceptance.
pub(super) struct Counted {
    id: IdentityId,
    j: u32,
    issuer: NodeId,
    family: String,
}

impl Counted {
    pub(super) fn of(sealed: &SealedAcceptance) -> Self {
        let c = sealed.acceptance.challenge();
        Self {
            id: c.id,
            j: c.j,
            issuer: c.issuer,
            family: c.family.clone(),
        }
    }

    /// The acceptance's `(identity, j)`.
    pub(super) fn key(&self) -> (IdentityId, u32) {
        (self.id, self.j)
    }
}

impl Oracle {
    /// The active set of window `t`: every identity whose accepted challenges pass every step
    /// of its class's policy, with that class (the class of the families it answered), sorted
    /// by identity. Once `t` is summarized, acceptances of the members left out of it
    /// ([`Oracle::excluded_members`]) no longer count.
    pub fn active_set(&self, t: u64) -> Result<Vec<(IdentityId, Class)>, LedgerError> {
        let excluded = self.ledger.excluded(t)?.unwrap_or_default();
        self.active_of(
            self.ledger
                .acceptances(t)
                .map(|s| s.map(|s| Counted::of(&s))),
            &excluded,
        )
    }

    /// The active set from a window's acceptances in key order (identity first), leaving out
    /// those issued by `excluded`.
    pub(super) fn active_of(
        &self,
        acceptances: impl Iterator<Item = Result<Counted, LedgerError>>,
        excluded: &[NodeId],
    ) -> Result<Vec<(IdentityId, Class)>, LedgerError> {
        let mut out = Vec::new();
        let mut current: Option<(IdentityId, Vec<String>)> = None;
        for counted in acceptances {
            let Counted {
                id, issuer, family, ..
            } = counted?;
            if excluded.contains(&issuer) {
                continue;
            }
            match &mut current {
                Some((current_id, families)) if *current_id == id => families.push(family),
                _ => {
                    self.close_identity(current.take(), &mut out);
                    current = Some((id, vec![family]));
                }
            }
        }
        self.close_identity(current, &mut out);
        Ok(out)
    }

    /// Adds `entry` to `out` if its families pass its class's policy.
    fn close_identity(
        &self,
        entry: Option<(IdentityId, Vec<String>)>,
        out: &mut Vec<(IdentityId, Class)>,
    ) {
        let Some((id, families)) = entry else {
            return;
        };
        // The class comes from the families answered (each family admits one class; the
        // issuer checked the registration), so a member that missed a registration's gossip
        // still computes the same set.
        let mut classes = families
            .iter()
            .map(|f| self.registry.get(f).map(|family| family.class()));
        let Some(Some(class)) = classes.next() else {
            return;
        };
        if classes.all(|c| c == Some(class))
            && self
                .params
                .policy(class)
                .covered_by(families.iter().map(String::as_str))
        {
            out.push((id, class));
        }
    }
}
