//! The relay rule for account link statements, whose sender is a client, not a member.
//!
//! A client can race the members with a statement: deliver it to one member just before a
//! deadline, before that member holds its identity's registration, or while another statement
//! outranks it there. If whether a member keeps it depended on that, honest members would
//! commit to different links for a window, sign different summaries, and nobody's work in it
//! would be certified. So a statement is decided like a reveal ([`super`]), with the client as
//! an author whose signature counts for nothing: carrying `k` receipts of distinct members, it
//! counts at a member that hears it by [`NetworkParams::link_deadline`]`(from, k)` =
//! `closes_at(from) + (1 + min(k, f + 1)) · Δ`; a member that keeps it with `k ≤ f` adds its
//! receipt and relays it; members pull each other's statements of a window before its
//! deadline ([`NetworkParams::links_decided_at`]). What a member keeps of what counts is a pure
//! function of the statements (`Oracle::hear_link`), so every honest member keeps the same.
//!
//! A member relays (and serves in pulls) a statement with its identity's registration, so a
//! member that has not heard the registration yet needs nothing else to keep the statement; and
//! a statement with at most `f` receipts is kept only for an identity registered at the member
//! or with a registration that checks (its proof of work included). So one faulty member
//! cannot make honest members store statements of identities nobody registered: each costs it
//! a registration's proof of work, like a registration does.

use ed25519_dalek::SigningKey;
use hco_verify::link::SignedLink;
use serde::{Deserialize, Serialize};

use super::receipt::{Receipt, check_receipts};
use crate::{Digest, NetworkParams, Reason, SignedRegister, Timestamp, codec, sign};

/// What a receipt for a statement signs, and the order among statements of one identity, chain
/// and first window (the smallest is kept): the whole signed statement.
pub fn link_subject(signed: &SignedLink) -> Digest {
    sign::digest("hco link receipt v1", &[&codec::encode(signed)])
}

/// A statement with the receipts of the members that relayed it, in the order they did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelayedLink {
    /// The statement, signed by its identity and account.
    pub link: SignedLink,
    /// Receipts of members, each from a distinct member of the committee.
    pub receipts: Vec<Receipt>,
    /// The identity's registration, as the relaying member holds it (none from a client).
    pub registration: Option<SignedRegister>,
}

impl RelayedLink {
    /// A statement as a client sends it: no receipt.
    pub fn new(link: SignedLink) -> Self {
        Self {
            link,
            receipts: Vec::new(),
            registration: None,
        }
    }

    /// This statement with its identity's registration, as a member relays it.
    pub fn with_registration(mut self, registration: Option<SignedRegister>) -> Self {
        self.registration = registration;
        self
    }

    /// This statement with `key`'s receipt added.
    pub fn with_receipt(mut self, key: &SigningKey) -> Self {
        let subject = link_subject(&self.link);
        self.receipts.push(Receipt::new(key, &subject));
        self
    }

    /// Checks the receipts (not the statement's own signatures): each from a committee member,
    /// no member twice, each signature good (`bad_receipt` otherwise). Returns how many.
    pub fn check_receipts(&self, params: &NetworkParams) -> Result<usize, Reason> {
        if self.receipts.len() > params.committee.len() {
            return Err(Reason::BadReceipt("more receipts than members".into()));
        }
        check_receipts(params, None, &link_subject(&self.link), &self.receipts)
    }
}

impl NetworkParams {
    /// The latest moment a statement whose first window is `from` counts when heard with
    /// `receipts` members' receipts: one relay round after `from` closes, one round more per
    /// receipt up to `f + 1`. A statement is in force from its first window on, so it may be
    /// made while that window runs.
    pub fn link_deadline(&self, from: u64, receipts: usize) -> Timestamp {
        let rounds = 1 + receipts.min(self.faults_tolerated() + 1) as u64;
        self.closes_at(from)
            .saturating_add(rounds.saturating_mul(self.relay_round_ms))
    }

    /// When every honest member holds the same statements whose first window is `t`: no
    /// window is summarized before (it is the moment acceptances are decided, too).
    pub fn links_decided_at(&self, t: u64) -> Timestamp {
        self.link_deadline(t, self.faults_tolerated() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;
    use hco_verify::link::AccountLink;

    #[test]
    fn receipts_check_and_extend_the_deadline_by_one_round_each_up_to_f_plus_one() {
        let keys: Vec<SigningKey> = (1..=4).map(testing::key).collect();
        let ids: Vec<_> = keys.iter().map(testing::node_id).collect();
        let params = testing::params_for(&ids);
        let identity = testing::key(50);
        let link = AccountLink::new(
            params.digest(),
            testing::identity_id(&identity),
            "eip155:1:0x00000000000000000000000000000000000000aa",
            2,
        )
        .unwrap();
        let signed = SignedLink {
            identity_sig: link.sign_identity(&identity),
            link,
            account_sig: crate::AccountSig([0; 65]),
        };
        let relayed = RelayedLink::new(signed).with_receipt(&keys[1]);
        assert_eq!(relayed.check_receipts(&params), Ok(1));
        let twice = relayed.clone().with_receipt(&keys[1]);
        assert_eq!(
            twice.check_receipts(&params).unwrap_err().code(),
            "bad_receipt"
        );
        let outsider = relayed.clone().with_receipt(&testing::key(99));
        assert_eq!(
            outsider.check_receipts(&params).unwrap_err().code(),
            "bad_receipt"
        );
        let round = params.relay_round_ms;
        let close = params.closes_at(2);
        assert_eq!(params.link_deadline(2, 0), close + round);
        assert_eq!(params.link_deadline(2, 1), close + 2 * round);
        assert_eq!(params.link_deadline(2, 2), close + 3 * round);
        assert_eq!(params.link_deadline(2, 3), params.link_deadline(2, 2));
        assert_eq!(params.links_decided_at(2), params.acceptances_decided_at(2));
    }
}
