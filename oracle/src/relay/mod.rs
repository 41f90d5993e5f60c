//! Whose reveal of a window counts, decided the same way on every honest member.
//!
//! A member's acceptances of window `t` count only if its reveal of `t` does (without the
//! secret nobody can audit them). Deciding that by "held when I summarized" lets one member
//! split the committee: it reveals to one honest member just before that member summarizes and
//! to nobody else, so honest members leave out different members, sign different roots, and no
//! root reaches a quorum — everyone's work in the window goes uncertified, and nothing signed
//! shows who did it.
//!
//! The rule here is Dolev–Strong's authenticated broadcast, one instance per reveal. With `f =`
//! committee size − quorum (the members the quorum can do without) and a relay round `Δ`
//! ([`NetworkParams::relay_round_ms`]), a reveal carrying `r` signatures from distinct members
//! — its member's own and `r − 1` [`Receipt`]s of others — counts at a member that hears it by
//! [`NetworkParams::reveal_deadline`]`(t, r)` = `closes_at(t) + (1 + r) · Δ` (for `r ≤ f + 1`).
//! A member that counts a reveal with `r ≤ f` adds its own receipt and relays it at once. So if
//! one honest member counts a reveal, every honest member counts it one round later, and a
//! reveal counted with `f + 1` signatures has an honest signer that relayed it in time: every
//! honest member holds the same set of counted reveals at
//! [`NetworkParams::reveals_decided_at`], whatever the faulty members send to whom and when.
//!
//! What it assumes: a relayed message reaches every honest member within `Δ`, clock
//! differences included (the same synchrony the witness rule assumes, [`crate::witness`]).
//! When that fails, honest members may still leave out different members and a window may go
//! uncertified — never certified twice: each member signs one summary per window.

mod link;
mod receipt;

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

pub use link::{RelayedLink, link_subject};
pub use receipt::Receipt;

use crate::{BatchSeal, Digest, NetworkParams, Reason, SignedReveal, Timestamp, codec, sign};
use receipt::check_receipts;

/// How a member heard another's acceptances, which decides when it must relay them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// By gossip, which every member forwards as it accepts: only what it counts in the last
    /// relay round before the deadline needs its receipt to count at the others.
    ByGossip,
    /// In answer to a request (reconciliation), which nobody forwards: everything it counts
    /// with at most `f` signers is relayed.
    ByRequest,
}

/// A receipt for the acceptances under one batch seal, named by [`seal_subject`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SealReceipt {
    /// [`seal_subject`] of the seal.
    pub seal: Digest,
    /// The relaying member's receipt over it.
    pub receipt: Receipt,
}

/// What a receipt for acceptances under `seal` signs: the whole seal.
pub fn seal_subject(seal: &BatchSeal) -> Digest {
    sign::digest("hco seal receipt v1", &[&codec::encode(seal)])
}

/// Signers of each seal among `seals` — its issuer and the valid receipts for it in
/// `receipts` — keyed by [`seal_subject`]; `bad_receipt` if any receipt for one of them does
/// not check (receipts for other seals are ignored).
pub fn seal_signers<'a>(
    params: &NetworkParams,
    seals: impl IntoIterator<Item = &'a BatchSeal>,
    receipts: &[SealReceipt],
) -> Result<std::collections::HashMap<Digest, usize>, Reason> {
    let mut out = std::collections::HashMap::new();
    for seal in seals {
        let subject = seal_subject(seal);
        if out.contains_key(&subject) {
            continue;
        }
        let mine = receipts
            .iter()
            .filter(|r| r.seal == subject)
            .map(|r| &r.receipt);
        out.insert(
            subject,
            check_receipts(params, Some(&seal.issuer), &subject, mine)?,
        );
    }
    Ok(out)
}

/// A reveal with its member's reveal of `t − L` (the commitment it opens, [`crate::secret`])
/// and the receipts of the members that relayed the two, in the order they did. Carrying the
/// commitment makes whether the reveal opens it a fact of the message every honest member
/// counts alike, not of what each happened to hold from `L` windows before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelayedReveal {
    /// The member's signed reveal.
    pub reveal: SignedReveal,
    /// Its reveal of `t − L` (none in the genesis windows `t < L`).
    pub earlier: Option<SignedReveal>,
    /// Receipts of other members, each from a distinct member of the committee.
    pub receipts: Vec<Receipt>,
}

impl RelayedReveal {
    /// A reveal as its member sends it, with its reveal of `t − L`: no receipt.
    pub fn new(reveal: SignedReveal, earlier: Option<SignedReveal>) -> Self {
        Self {
            reveal,
            earlier,
            receipts: Vec::new(),
        }
    }

    /// A reveal without the earlier one (which it then does not prove to open).
    pub fn direct(reveal: SignedReveal) -> Self {
        Self::new(reveal, None)
    }

    /// Whether the reveal opens the commitment its earlier reveal made.
    pub fn opens_commitment(&self) -> bool {
        self.earlier
            .as_ref()
            .is_some_and(|e| e.reveal.next == crate::secret::commitment(&self.reveal.reveal.secret))
    }

    /// The digest naming the message that receipts sign: the reveal and the earlier one.
    pub fn subject(&self) -> Digest {
        Self::receipt_digest(&self.reveal, self.earlier.as_ref())
    }

    /// Distinct members that signed it: the revealer and each receipt's member.
    pub fn signers(&self) -> usize {
        1 + self.receipts.len()
    }

    /// What a receipt signs: the signed reveal and the earlier one.
    fn receipt_digest(reveal: &SignedReveal, earlier: Option<&SignedReveal>) -> Digest {
        sign::digest(
            "hco reveal receipt v2",
            &[&codec::encode(reveal), &codec::encode(&earlier)],
        )
    }

    /// This reveal with `key`'s receipt added.
    pub fn with_receipt(mut self, key: &SigningKey) -> Self {
        let subject = self.subject();
        self.receipts.push(Receipt::new(key, &subject));
        self
    }

    /// Checks the reveal and every receipt: from a committee member other than the revealer,
    /// no member twice, each signature good (`bad_receipt` otherwise).
    pub fn check(&self, params: &NetworkParams) -> Result<(), Reason> {
        self.reveal.check(params)?;
        if let Some(earlier) = &self.earlier {
            earlier.check(params)?;
            let (r, e) = (&self.reveal.reveal, &earlier.reveal);
            if e.node != r.node || e.t.checked_add(crate::secret::commit_lead(params)) != Some(r.t)
            {
                return Err(Reason::Malformed(
                    "the earlier reveal is not the member's of t − L".into(),
                ));
            }
        }
        if self.receipts.len() >= params.committee.len() {
            return Err(Reason::BadReceipt(
                "more receipts than other members".into(),
            ));
        }
        check_receipts(
            params,
            Some(&self.reveal.reveal.node),
            &self.subject(),
            &self.receipts,
        )
        .map(|_| ())
    }
}

impl NetworkParams {
    /// Faulty members the quorum can do without: committee size − quorum.
    pub fn faults_tolerated(&self) -> usize {
        self.committee.len().saturating_sub(self.quorum as usize)
    }

    /// The latest moment a reveal of `t` carrying `signers` signatures counts when heard:
    /// `closes_at(t) + (1 + signers) · Δ`, no later than [`Self::reveals_decided_at`]. The
    /// first two rounds leave an honest member time to reveal after the window closes.
    pub fn reveal_deadline(&self, t: u64, signers: usize) -> Timestamp {
        let rounds = 1 + signers.clamp(1, self.faults_tolerated() + 1) as u64;
        self.closes_at(t)
            .saturating_add(rounds.saturating_mul(self.relay_round_ms))
    }

    /// When every honest member holds the same counted reveals of `t` (see the module): the
    /// moment a window is summarized at the latest, unless every member's reveal counts sooner.
    pub fn reveals_decided_at(&self, t: u64) -> Timestamp {
        self.reveal_deadline(t, self.faults_tolerated() + 1)
    }

    /// The latest moment another member's acceptance with arrival deadline `base` (for `signers
    /// = 1`) counts when heard with `signers` signatures on its seal: one relay round later per
    /// signer past the first, up to `f + 1`. The same rule as for reveals, so a member cannot
    /// split honest views by delivering acceptances to some members at the last moment.
    pub fn arrival_deadline(&self, base: Timestamp, signers: usize) -> Timestamp {
        let extra = signers.clamp(1, self.faults_tolerated() + 1) as u64 - 1;
        base.saturating_add(extra.saturating_mul(self.relay_round_ms))
    }

    /// The arrival deadline of another member's acceptance of `t` that is not a touch prompt
    /// (those have their slot's, [`crate::witness`]): two relay rounds after the window closes
    /// (when no issuer accepts answers any more), as for reveals: a member cut off during the
    /// window and back by its close has its acceptances pulled in time.
    pub fn acceptance_base_deadline(&self, t: u64) -> Timestamp {
        self.closes_at(t)
            .saturating_add(2u64.saturating_mul(self.relay_round_ms))
    }

    /// When every honest member holds the same acceptances of `t`: no window is summarized
    /// before.
    pub fn acceptances_decided_at(&self, t: u64) -> Timestamp {
        self.arrival_deadline(
            self.acceptance_base_deadline(t),
            self.faults_tolerated() + 1,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NodeId, testing};

    fn setup() -> (NetworkParams, Vec<SigningKey>) {
        let keys: Vec<SigningKey> = (1..=4).map(testing::key).collect();
        let ids: Vec<NodeId> = keys.iter().map(testing::node_id).collect();
        (testing::params_for(&ids), keys)
    }

    #[test]
    fn receipts_check_and_extend_the_deadline_by_one_round_each_up_to_f_plus_one() {
        let (params, keys) = setup();
        assert_eq!(params.faults_tolerated(), 1);
        let t = 3;
        let reveal = SignedReveal::new(&keys[0], t, Digest([1; 32]), Digest([2; 32]));
        let relayed = RelayedReveal::direct(reveal).with_receipt(&keys[1]);
        relayed.check(&params).unwrap();
        assert_eq!(relayed.signers(), 2);
        let round = params.relay_round_ms;
        assert_eq!(
            params.reveal_deadline(t, 1),
            params.closes_at(t) + 2 * round
        );
        assert_eq!(
            params.reveal_deadline(t, 2),
            params.closes_at(t) + 3 * round
        );
        assert_eq!(params.reveal_deadline(t, 3), params.reveal_deadline(t, 2));
        assert_eq!(params.reveals_decided_at(t), params.reveal_deadline(t, 2));

        let code = |r: &RelayedReveal| r.check(&params).unwrap_err().code();
        // The revealer's own receipt, a member twice, an outsider, a receipt for another reveal.
        assert_eq!(code(&relayed.clone().with_receipt(&keys[0])), "bad_receipt");
        assert_eq!(code(&relayed.clone().with_receipt(&keys[1])), "bad_receipt");
        assert_eq!(
            code(&relayed.clone().with_receipt(&testing::key(99))),
            "bad_receipt"
        );
        let mut moved = relayed.clone();
        moved.reveal = SignedReveal::new(&keys[0], t + 1, Digest([1; 32]), Digest([2; 32]));
        assert_eq!(code(&moved), "bad_receipt");
    }
}
