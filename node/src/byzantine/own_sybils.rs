//! The `own-sybils` fault: the member answers for its own sybils with their keys, as a member
//! running modified issuing code would. It knows its window secret, so it derives each sybil's
//! challenge of every try `j` of the window exactly as an issuer would (so the audit finds
//! nothing wrong with the answer), answers it with the family's solver, signs the response with
//! the sybil's key and seals it. The acceptances of tries it may issue
//! ([`hco_oracle::secret::issuers_of`]) are genuine and gossiped together; in even windows
//! those of tries it may not issue are gossiped too, one by one, to be refused and kept as
//! evidence (odd windows show what the genuine ones alone achieve, the member not left out). With
//! `network.rotate_issuers` the member issues at most one try of each sybil's window, so no
//! sybil passes every step.

use ed25519_dalek::SigningKey;
use hco_oracle::secret::{check_issuer, derive_challenge, draw_family, node_secret, window_secret};
use hco_oracle::{
    Acceptance, Challenge, Digest, Oracle, Response, SealedAcceptance, SignedChallenge,
    SignedRegister, VERSION, seal_batch,
};

use super::forge::keep_and_gossip;
use crate::service::Node;

/// Makes up and gossips every try of every sybil in window `t`.
pub(super) async fn act(
    node: &Node,
    key: &SigningKey,
    sybils: &[(SigningKey, SignedRegister)],
    t: u64,
) {
    let now = node.now();
    let (mine, foreign) = forge_all(&node.oracle, key, sybils, t, now);
    tracing::warn!(
        t,
        assigned = mine.len(),
        not_assigned = foreign.len(),
        "unsafe byzantine: answering for own sybils"
    );
    keep_and_gossip(node, mine).await;
    if t.is_multiple_of(2) {
        node.publish_acceptances(foreign);
    }
}

/// Every try of every sybil in `t`, answered right: those this member may issue and the others,
/// each sealed in one batch (so the refused batch costs the member one strike, not one each).
fn forge_all(
    o: &Oracle,
    key: &SigningKey,
    sybils: &[(SigningKey, SignedRegister)],
    t: u64,
    now: u64,
) -> (Vec<SealedAcceptance>, Vec<SealedAcceptance>) {
    let params = o.params();
    let w_t = window_secret(&node_secret(key), t);
    let issued_at = now.saturating_sub(1_000).max(params.window_start(t));
    let (mut mine, mut foreign) = (Vec::new(), Vec::new());
    for (sybil, reg) in sybils {
        let id = reg.body.id;
        let policy = params.policy(reg.body.class);
        for j in 0..policy.tries() {
            let step = &policy.steps[(j as usize).min(policy.steps.len() - 1)];
            let Ok(config) =
                draw_family(params, o.registry(), reg.body.class, step, &w_t, &id, t, j)
            else {
                continue;
            };
            let family = config.name.clone();
            let Ok((config, generated)) = derive_challenge(
                params,
                o.registry(),
                &w_t,
                reg.body.class,
                &id,
                t,
                j,
                &family,
            ) else {
                continue;
            };
            let answer = o
                .registry()
                .get(&family)
                .and_then(|f| f.solve(&generated.prompt))
                .unwrap_or_else(|| generated.key.0.clone());
            let challenge = Challenge {
                version: VERSION,
                issuer: o.node_id(),
                id,
                t,
                j,
                family,
                issued_at,
                deadline: issued_at.saturating_add(config.deadline_ms),
                prompt_digest: Digest(generated.prompt.digest()),
                // Agent families are no touch prompts: no beat witness.
                witness: None,
            };
            let acceptance = Acceptance {
                version: VERSION,
                response: Response::new(sybil, SignedChallenge::new(key, challenge), answer),
                accepted_at: now,
            };
            if check_issuer(params, &o.node_id(), &id, t, j).is_ok() {
                mine.push(acceptance);
            } else {
                foreign.push(acceptance);
            }
        }
    }
    let seal = |batch: Vec<Acceptance>| {
        if batch.is_empty() {
            Vec::new()
        } else {
            seal_batch(key, t, batch)
        }
    };
    (seal(mine), seal(foreign))
}
