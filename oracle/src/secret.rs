//! The issuer's secrets and the pure derivations of §5: window secret, challenge seed, family
//! choice, step openings and issuer assignment. Issuance and audit both go through [`derive_challenge`], so an
//! auditor with the revealed secret regenerates exactly what the issuer generated.
//!
//! # Commitments to window secrets
//!
//! Each member commits to `w_t` before window `t` opens, so it cannot pick its secret once the
//! window's identities, beacon and slots are known (to hand chosen prompts to friends, or grind
//! for easy draws). The commitment is [`commitment`]`(w_t)`, carried by the member's signed
//! reveal of window `t − L` with `L =` [`commit_lead`]: that reveal is published when `t − L`
//! closes, which is before `t` starts. A reveal of `t` whose secret does not match the
//! commitment is evidence (the member's own two signed reveals). A member's acceptances of `t`
//! count only if it revealed `t` and the reveal matches its commitment, so withholding a reveal
//! costs the member the window it withholds, and every window after it up to `L` (those
//! commitments were in the withheld reveal).
//!
//! The genesis windows `t < L` have no earlier reveal to carry a commitment: their reveals are
//! checked by signature alone, like the predictable beacon of the first windows (see
//! [`crate::window`]). A deployment should not gate anything on its first `L` windows.

use ed25519_dalek::SigningKey;
use hco_challenges::{Generated, Registry, Seed};

use crate::{Digest, FamilyConfig, IdentityId, NetworkParams, NodeId, Profile, Reason, Step};

/// The node's long-term secret from which window secrets are derived; never published.
pub fn node_secret(key: &SigningKey) -> [u8; 32] {
    blake3::derive_key("hco node secret v1", key.as_bytes())
}

/// The per-window secret `w_t`, revealed after the window closes.
pub fn window_secret(node_secret: &[u8; 32], t: u64) -> Digest {
    let mut material = [0u8; 40];
    material[..32].copy_from_slice(node_secret);
    material[32..].copy_from_slice(&t.to_be_bytes());
    Digest(blake3::derive_key("hco window secret v1", &material))
}

/// How many windows ahead a reveal commits: the reveal of `t` is published once `t` closes
/// (its end plus grace), which must come before window `t + L` starts.
pub fn commit_lead(params: &NetworkParams) -> u64 {
    2 + params.grace_ms / params.window_ms.max(1)
}

/// The commitment to a window secret, published `L` windows ahead (see the module docs).
pub fn commitment(w_t: &Digest) -> Digest {
    Digest(blake3::derive_key(
        "hco window secret commitment v1",
        &w_t.0,
    ))
}

/// The seed of challenge `(id, t, j)` under window secret `w_t`.
pub fn challenge_seed(w_t: &Digest, id: &IdentityId, t: u64, j: u32) -> Seed {
    let mut hasher = blake3::Hasher::new_keyed(&w_t.0);
    hasher
        .update(b"hco challenge seed v1")
        .update(&id.0)
        .update(&t.to_be_bytes())
        .update(&j.to_be_bytes());
    Seed(*hasher.finalize().as_bytes())
}

/// The family challenge `(id, t, j)` serving `step` takes for `profile`: the step's own family,
/// or for a drawn step one from the class's pool, never the client's choice. The drawn
/// challenges of a window walk a permutation of the pool that the window secret fixes for the
/// identity (challenge `j` takes its entry `j mod n`), so they do not repeat a family before the
/// pool is used up: a script good at one family has to beat another one too.
#[allow(clippy::too_many_arguments)]
pub fn draw_family<'p>(
    params: &'p NetworkParams,
    registry: &Registry,
    profile: impl Into<Profile>,
    step: &Step,
    w_t: &Digest,
    id: &IdentityId,
    t: u64,
    j: u32,
) -> Result<&'p FamilyConfig, Reason> {
    let profile = profile.into();
    let families = params.step_families(step, profile, registry);
    if families.is_empty() {
        return Err(if profile.visual_opt_out {
            Reason::NoFamilyForProfile
        } else {
            Reason::NoFamilyForClass(profile.class)
        });
    }
    let mut order: Vec<usize> = (0..families.len()).collect();
    family_order_seed(w_t, id, t).stream().shuffle(&mut order);
    Ok(families[order[j as usize % order.len()]])
}

/// The seed of an identity's family order in window `t`.
fn family_order_seed(w_t: &Digest, id: &IdentityId, t: u64) -> Seed {
    let mut hasher = blake3::Hasher::new_keyed(&w_t.0);
    hasher
        .update(b"hco family order v1")
        .update(&id.0)
        .update(&t.to_be_bytes());
    Seed(*hasher.finalize().as_bytes())
}

/// When challenge `(id, t, j)` opens inside `slot`, drawn from its seed (see
/// [`NetworkParams::opens_at`]); `prompt` is the reaction window of a touch prompt.
pub fn opening(
    params: &NetworkParams,
    slot: &std::ops::Range<crate::Timestamp>,
    class: hco_challenges::Class,
    j: u32,
    prompt: Option<u64>,
    seed: &Seed,
) -> crate::Timestamp {
    params.opens_at(slot, class, j, prompt, &mut seed.derive("opening").stream())
}

/// The prompt and answer key of `(id, t, j)` issued as `family`, after checking that the
/// family is one the identity's policy could have drawn there: a fixed step's family, or the
/// seed's pick for a drawn step. Issuance, verification and audit all come through here, so an
/// auditor with the revealed secret regenerates exactly what the issuer generated.
#[allow(clippy::too_many_arguments)]
pub fn derive_challenge<'p>(
    params: &'p NetworkParams,
    registry: &Registry,
    w_t: &Digest,
    profile: impl Into<Profile>,
    id: &IdentityId,
    t: u64,
    j: u32,
    family: &str,
) -> Result<(&'p FamilyConfig, Generated), Reason> {
    let profile = profile.into();
    let seed = challenge_seed(w_t, id, t, j);
    let step = params
        .step_of_family(profile.class, family)
        .ok_or_else(|| Reason::UnknownFamily(family.into()))?;
    let config = draw_family(params, registry, profile, &step, w_t, id, t, j)?;
    if config.name != family {
        return Err(Reason::UnknownFamily(family.into()));
    }
    Ok((config, generate(registry, config, &seed, t)?))
}

/// Generates the challenge of `seed` in window `t` in the family of `config`;
/// `corpus_exhausted` when the family has nothing to issue in that window.
pub fn generate(
    registry: &Registry,
    config: &FamilyConfig,
    seed: &Seed,
    t: u64,
) -> Result<Generated, Reason> {
    let family = registry
        .get(&config.name)
        .ok_or_else(|| Reason::UnknownFamily(config.name.clone()))?;
    family
        .generate_in_window(seed, &config.family_params(), t)
        .ok_or_else(|| Reason::CorpusExhausted {
            family: config.name.clone(),
            t,
        })
}

/// The committee in the order issuers serve `(id, t)`: rendezvous (highest random weight)
/// hashing, so each identity has one assigned issuer per window and a fixed fallback order.
pub fn issuer_order(committee: &[NodeId], id: &IdentityId, t: u64) -> Vec<NodeId> {
    let score = |node: &NodeId| {
        let mut hasher = blake3::Hasher::new_derive_key("hco rendezvous v1");
        hasher
            .update(&node.0)
            .update(&id.0)
            .update(&t.to_be_bytes());
        *hasher.finalize().as_bytes()
    };
    let mut scored: Vec<_> = committee.iter().map(|n| (score(n), *n)).collect();
    scored.sort_unstable_by(|a, b| b.cmp(a));
    scored.into_iter().map(|(_, n)| n).collect()
}

/// The members that may issue try `j` of `(id, t)`, the assigned one first and then
/// `issuer_fallback` more: the rendezvous order from the start, or with
/// [`NetworkParams::rotate_issuers`] from its `j`-th member on (wrapping), so consecutive tries
/// go to consecutive members of the order.
pub fn issuers_of(params: &NetworkParams, id: &IdentityId, t: u64, j: u32) -> Vec<NodeId> {
    let order = issuer_order(&params.committee, id, t);
    let n = order.len();
    if n == 0 {
        return order;
    }
    let first = if params.rotate_issuers {
        j as usize % n
    } else {
        0
    };
    (0..=(params.issuer_fallback as usize).min(n - 1))
        .map(|f| order[(first + f) % n])
        .collect()
}

/// Checks that `node` may issue try `j` of `(id, t)`: it is the assigned issuer or within the
/// fallback ([`issuers_of`]).
pub fn check_issuer(
    params: &NetworkParams,
    node: &NodeId,
    id: &IdentityId,
    t: u64,
    j: u32,
) -> Result<(), Reason> {
    let allowed = issuers_of(params, id, t, j);
    if allowed.contains(node) {
        Ok(())
    } else {
        Err(Reason::NotAssignedIssuer {
            assigned: allowed.first().copied().unwrap_or(NodeId([0; 32])),
        })
    }
}

#[cfg(test)]
mod tests {
    use hco_challenges::Class;

    use super::*;

    #[test]
    fn a_window_past_the_set_schedule_gets_corpus_exhausted_not_a_reused_set() {
        use std::sync::Arc;

        use hco_challenges::NarrativeChain;
        use hco_challenges::narrative::{Corpus, RetiredSets, ScheduleParams};

        let schedule = ScheduleParams {
            start_window: 2,
            sets_per_window: 1,
            reuse: false,
        };
        let family = NarrativeChain::new(
            Arc::new(Corpus::embedded().clone()),
            RetiredSets::default(),
            schedule,
        );
        let end = family.schedule().end_window();
        let mut registry = Registry::builtin();
        registry.insert(family);
        let config = crate::FamilyConfig {
            name: "narrative_chain".into(),
            deadline_ms: 45_000,
            difficulty: 3,
            min_solve_ms: 0,
        };
        let seed = Seed([5; 32]);
        let mut prompts = std::collections::BTreeSet::new();
        for t in 2..end {
            let g = generate(&registry, &config, &seed, t).unwrap();
            assert!(prompts.insert(g.prompt.text), "window {t} repeats a set");
        }
        for t in [0, 1, end, end + 7] {
            let err = generate(&registry, &config, &seed, t).unwrap_err();
            assert_eq!(err.code(), "corpus_exhausted", "window {t}");
        }
        // Families without a schedule generate in any window.
        let pow = crate::FamilyConfig {
            name: "proof_of_work".into(),
            ..config
        };
        assert!(generate(&registry, &pow, &seed, end + 7).is_ok());
    }

    #[test]
    fn drawn_challenges_of_a_window_do_not_repeat_a_family() {
        let registry = Registry::builtin();
        let mut params = crate::testing::params_for(&[NodeId([1; 32])]);
        for name in ["visual_match", "interactive_reasoning", "attention"] {
            params.families.push(crate::FamilyConfig {
                name: name.into(),
                deadline_ms: 15_000,
                difficulty: 1,
                min_solve_ms: 0,
            });
        }
        let w_t = window_secret(&[9; 32], 4);
        let pool = params
            .step_families(&Step::Drawn, Class::Human, &registry)
            .len();
        assert_eq!(
            pool, 3,
            "arithmetic_reasoning, a baseline, is not drawn beside them"
        );
        let mut firsts = std::collections::BTreeSet::new();
        for i in 0..40u8 {
            let id = IdentityId([i; 32]);
            let drawn: Vec<&str> = (0..pool as u32)
                .map(|j| {
                    let f = draw_family(
                        &params,
                        &registry,
                        Class::Human,
                        &Step::Drawn,
                        &w_t,
                        &id,
                        4,
                        j,
                    );
                    f.unwrap().name.as_str()
                })
                .collect();
            let distinct: std::collections::BTreeSet<_> = drawn.iter().collect();
            assert_eq!(distinct.len(), pool, "{drawn:?}");
            // The walk starts over after the pool: challenge `pool` repeats challenge 0.
            let again = draw_family(
                &params,
                &registry,
                Class::Human,
                &Step::Drawn,
                &w_t,
                &id,
                4,
                pool as u32,
            );
            assert_eq!(again.unwrap().name, drawn[0]);
            firsts.insert(drawn[0]);
        }
        assert_eq!(
            firsts.len(),
            pool,
            "every family comes first for some identity"
        );
    }

    #[test]
    fn window_secrets_differ_per_window_and_node() {
        let a = [1u8; 32];
        let b = [2u8; 32];
        assert_ne!(window_secret(&a, 1), window_secret(&a, 2));
        assert_ne!(window_secret(&a, 1), window_secret(&b, 1));
    }

    #[test]
    fn commitments_bind_the_secret_and_lead_past_the_grace_period() {
        assert_ne!(commitment(&Digest([1; 32])), commitment(&Digest([2; 32])));
        assert_ne!(commitment(&Digest([1; 32])), Digest([1; 32]));
        let mut p = crate::testing::params_for(&[NodeId([1; 32])]);
        for grace in [0, 20_000, 59_999, 60_000, 150_000] {
            p.grace_ms = grace;
            let lead = commit_lead(&p);
            for t in [0u64, 5] {
                // The reveal of `t` goes out when `t` closes, before `t + lead` starts.
                assert!(p.closes_at(t) < p.window_start(t + lead), "grace {grace}");
            }
        }
    }

    #[test]
    fn seeds_bind_identity_window_and_index() {
        let w = Digest([3; 32]);
        let id = IdentityId([4; 32]);
        let base = challenge_seed(&w, &id, 5, 0);
        assert_ne!(base, challenge_seed(&w, &IdentityId([5; 32]), 5, 0));
        assert_ne!(base, challenge_seed(&w, &id, 6, 0));
        assert_ne!(base, challenge_seed(&w, &id, 5, 1));
        assert_ne!(base, challenge_seed(&Digest([9; 32]), &id, 5, 0));
    }

    #[test]
    fn rendezvous_spreads_load_and_is_stable() {
        let committee: Vec<_> = (0..4u8).map(|i| NodeId([i; 32])).collect();
        let mut counts = [0usize; 4];
        for i in 0..4000u32 {
            let mut id = [0u8; 32];
            id[..4].copy_from_slice(&i.to_le_bytes());
            let order = issuer_order(&committee, &IdentityId(id), 7);
            assert_eq!(order, issuer_order(&committee, &IdentityId(id), 7));
            counts[order[0].0[0] as usize] += 1;
        }
        for c in counts {
            assert!((800..1200).contains(&c), "uneven assignment {counts:?}");
        }
        // Removing a node only moves the identities it served.
        let id = IdentityId([7; 32]);
        let full = issuer_order(&committee, &id, 1);
        let without: Vec<_> = committee
            .iter()
            .copied()
            .filter(|n| *n != full[3])
            .collect();
        assert_eq!(issuer_order(&without, &id, 1)[0], full[0]);
    }
}
