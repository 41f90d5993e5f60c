//! What the faulty member makes up: sybil keys, challenges it never issued, acceptances
//! signed with the wrong key or dated outside their bounds, summaries with invented roots.

use std::sync::atomic::{AtomicBool, Ordering};

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_oracle::{
    Acceptance, Challenge, Digest, IdentityId, Oracle, Response, SealedAcceptance, SignedChallenge,
    SignedRegister, SignedRequest, SignedSummary, VERSION, WindowSummary, codec, seal_batch,
};

use super::SYBILS;
use crate::network::protocol::Topic;
use crate::service::Node;

/// Seals one acceptance with the member's key.
pub(crate) fn seal_one(key: &SigningKey, acceptance: Acceptance) -> SealedAcceptance {
    let t = acceptance.challenge().t;
    seal_batch(key, t, vec![acceptance]).remove(0)
}

/// Stores acceptances in this node's ledger as an issuer would, and gossips each alone (so one
/// rejected by peers does not take the others with it).
pub(crate) async fn keep_and_gossip(node: &Node, sealed: Vec<SealedAcceptance>) {
    let oracle = node.oracle.clone();
    let kept = sealed.clone();
    let stored = tokio::task::spawn_blocking(move || {
        oracle.ledger().insert_acceptances(&kept)?;
        oracle.ledger().make_durable()
    })
    .await;
    if !matches!(stored, Ok(Ok(_))) {
        tracing::warn!("unsafe byzantine: could not store made-up acceptances here");
    }
    gossip(node, &sealed);
}

/// Gossips each acceptance as its own message.
pub(crate) fn gossip(node: &Node, sealed: &[SealedAcceptance]) {
    for s in sealed {
        node.publish_acceptances(vec![s.clone()]);
    }
}

/// Sybil `i` of the member with node key `key` (deterministic, so a restart keeps them).
pub(crate) fn sybil(key: &SigningKey, i: u64) -> SigningKey {
    let mut material = key.to_bytes().to_vec();
    material.extend_from_slice(&i.to_le_bytes());
    SigningKey::from_bytes(&blake3::derive_key(
        "hco unsafe byzantine sybil v1",
        &material,
    ))
}

/// The member's sybils and their registrations (signed at `now`).
pub(crate) fn sybils(key: &SigningKey, now: u64) -> Vec<(SigningKey, SignedRegister)> {
    (0..SYBILS)
        .map(|i| {
            let k = sybil(key, i);
            let reg = SignedRegister::new(&k, Class::Agent, now);
            (k, reg)
        })
        .collect()
}

/// A challenge of `family` for `id` in `t` that this member never issued: its prompt digest is
/// made up, its times are what the caller says.
pub(crate) fn made_up(
    o: &Oracle,
    id: IdentityId,
    t: u64,
    family: &str,
    issued_at: u64,
) -> Challenge {
    let deadline_ms = o.params().family(family).map_or(0, |f| f.deadline_ms);
    let mut material = id.0.to_vec();
    material.extend_from_slice(&t.to_le_bytes());
    material.extend_from_slice(&issued_at.to_le_bytes());
    Challenge {
        version: VERSION,
        issuer: o.node_id(),
        id,
        t,
        j: 0,
        family: family.into(),
        issued_at,
        deadline: issued_at.saturating_add(deadline_ms),
        prompt_digest: Digest(blake3::derive_key(
            "hco unsafe byzantine prompt v1",
            &material,
        )),
        witness: None,
    }
}

/// An acceptance of `challenge` answered with `answer`, signed by `signer` (the identity's own
/// key, or another one to impersonate it) and received at `at`.
pub(crate) fn acceptance(
    member: &SigningKey,
    signer: &SigningKey,
    challenge: Challenge,
    answer: &[u8],
    at: u64,
) -> Acceptance {
    Acceptance {
        version: VERSION,
        response: Response::new(
            signer,
            SignedChallenge::new(member, challenge),
            answer.to_vec(),
        ),
        accepted_at: at,
    }
}

/// A signed request for `(sybil, t, 0)`.
pub(crate) fn request(sybil: &SigningKey, t: u64) -> SignedRequest {
    SignedRequest::new(sybil, t, 0)
}

/// Two summaries of `t` with made-up roots, signed by the member.
pub(crate) fn equivocations(o: &Oracle, key: &SigningKey, t: u64) -> [SignedSummary; 2] {
    [1u8, 2].map(|b| {
        let (mut s, _) = WindowSummary::of(t, Vec::new(), o.params().digest());
        let mut material = t.to_le_bytes().to_vec();
        material.push(b);
        s.root = Digest(blake3::derive_key(
            "hco unsafe byzantine root v1",
            &material,
        ));
        SignedSummary::new(key, s)
    })
}

/// Whether the once-per-process kinds (rejected by honest members on receipt) were sent.
pub(crate) static SENT_REJECTED_KINDS: AtomicBool = AtomicBool::new(false);

/// Claims the once-per-process kinds; true the first time only.
pub(crate) fn claim_rejected_kinds() -> bool {
    !SENT_REJECTED_KINDS.swap(true, Ordering::SeqCst)
}

/// Gossips a summary.
pub(crate) fn gossip_summary(node: &Node, s: &SignedSummary) {
    node.net.publish(Topic::Summary, codec::encode(s));
}

/// Gossips a registration again (peers that have it ignore it).
pub(crate) fn gossip_registration(node: &Node, reg: &SignedRegister) {
    node.net.publish(Topic::Registry, codec::encode(reg));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sybils_are_deterministic_and_distinct() {
        let key = SigningKey::from_bytes(&[7; 32]);
        assert_eq!(sybil(&key, 3).to_bytes(), sybil(&key, 3).to_bytes());
        assert_ne!(sybil(&key, 3).to_bytes(), sybil(&key, 4).to_bytes());
        assert_ne!(sybil(&key, 3).to_bytes(), key.to_bytes());
    }
}
