//! The rules against their promise: a member that keeps what [`keep`] says, hearing the same
//! statements in any order (each decided before `settled` passes its first window), ends with
//! the same links in force in every window from `settled` on as one that kept everything.

use hco_verify::link::{AccountLink, SignedLink};
use proptest::prelude::*;

use super::*;
use crate::{AccountSig, Sig};

fn statement(identity: u8, chain: u64, address: u8, from: u64, variant: u8) -> SignedLink {
    let account = format!("eip155:{chain}:0x{}", hex::encode([address; 20]));
    SignedLink {
        link: AccountLink::new(Digest::ZERO, IdentityId([identity; 32]), &account, from).unwrap(),
        identity_sig: Sig([variant; 64]),
        account_sig: AccountSig([0; 65]),
    }
}

fn id(n: u8) -> IdentityId {
    IdentityId([n; 32])
}

#[test]
fn later_choices_replace_earlier_ones_and_an_account_taken_leaves_no_fallback() {
    let all = [
        statement(1, 1, 0xa1, 1, 0),
        statement(1, 1, 0xa2, 3, 0),
        statement(2, 1, 0xa2, 5, 0),
    ];
    let ids = [id(1), id(2)];
    let at = |t| in_force(&all, t, &ids);
    assert_eq!(at(0), vec![]);
    assert_eq!(at(1), vec![(all[0].link.account.clone(), id(1))]);
    assert_eq!(at(3), vec![(all[1].link.account.clone(), id(1))]);
    // a2's holder moved it to identity 2; identity 1 does not fall back to a1.
    assert_eq!(at(5), vec![(all[1].link.account.clone(), id(2))]);
    // Only active identities.
    assert_eq!(in_force(&all, 5, &[id(1)]), vec![]);
}

#[test]
fn two_statements_for_one_chain_and_window_rank_by_subject_and_chains_are_capped() {
    let (a, b) = (statement(1, 1, 0xa1, 2, 0), statement(1, 1, 0xa2, 2, 0));
    let first = if link_subject(&a) < link_subject(&b) {
        &a
    } else {
        &b
    };
    let both = [a.clone(), b.clone()];
    assert_eq!(
        in_force(&both, 2, &[id(1)]),
        vec![(first.link.account.clone(), id(1))]
    );
    let verdicts = keep(&both, None);
    assert_eq!(verdicts.iter().filter(|v| v.is_ok()).count(), 1);
    assert!(verdicts.contains(&Err(Dropped::Outranked)));

    let many: Vec<SignedLink> = (1..=MAX_LINKED_CHAINS as u64 + 2)
        .map(|chain| statement(1, chain, 0xb0, 4, 0))
        .collect();
    assert_eq!(in_force(&many, 4, &[id(1)]).len(), MAX_LINKED_CHAINS);
    let verdicts = keep(&many, None);
    assert_eq!(
        verdicts
            .iter()
            .filter(|v| **v == Err(Dropped::TooManyChains))
            .count(),
        2
    );
}

#[test]
fn statements_superseded_before_a_settled_window_are_dropped() {
    let all = [
        statement(1, 1, 0xa1, 1, 0),
        statement(1, 1, 0xa2, 3, 0),
        statement(1, 1, 0xa3, 6, 0),
    ];
    assert_eq!(keep(&all, Some(2)), vec![Ok(()), Ok(()), Ok(())]);
    assert_eq!(
        keep(&all, Some(4)),
        vec![Err(Dropped::Superseded), Ok(()), Ok(())]
    );
}

/// One statement of a small universe: few identities, chains, addresses, windows and
/// spellings, so that they collide.
fn any_statement() -> impl Strategy<Value = SignedLink> {
    (1u8..=3, 1u64..=10, 1u8..=4, 0u64..=6, 0u8..=1)
        .prop_map(|(i, c, a, f, v)| statement(i, c, a, f, v))
}

/// A member hearing `order` (indices into `all`), keeping what [`keep`] says each time with the
/// largest `settled` the order allows, less `lag` (every statement with first window ≤
/// `settled` already heard: the most it may drop). After each statement, every window `t ≥ settled` whose
/// statements were all heard must have the links in force that all the statements give it.
fn check_member(all: &[SignedLink], order: &[usize], lag: u64) -> Result<(), TestCaseError> {
    let ids = [id(1), id(2), id(3)];
    let mut held: Vec<SignedLink> = Vec::new();
    let mut settled = None;
    for (k, &i) in order.iter().enumerate() {
        let pending = order[k + 1..]
            .iter()
            .map(|&j| all[j].link.from_window)
            .min();
        settled = pending
            .map_or(Some(7), |p| p.checked_sub(1))
            .and_then(|s| s.checked_sub(lag))
            .max(settled);
        if !held.contains(&all[i]) {
            held.push(all[i].clone());
            let verdicts = keep(&held, settled);
            held = held
                .into_iter()
                .zip(verdicts)
                .filter_map(|(s, v)| v.ok().map(|()| s))
                .collect();
        }
        let all_heard = pending.unwrap_or(u64::MAX);
        for t in settled.unwrap_or(0)..all_heard.min(8) {
            prop_assert_eq!(
                in_force(&held, t, &ids),
                in_force(all, t, &ids),
                "window {} after {} statements, settled {:?}",
                t,
                k + 1,
                settled
            );
        }
        // What is held stays bounded: per identity, the chain cap for each window held.
        for identity in ids {
            let n = held.iter().filter(|s| s.link.identity == identity).count();
            prop_assert!(n <= MAX_LINKED_CHAINS * 8, "{} statements", n);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn members_keeping_in_any_order_agree_on_every_window_from_settled_on(
        all in prop::collection::vec(any_statement(), 1..40),
        seed in any::<u64>(),
    ) {
        let mut order: Vec<usize> = (0..all.len()).collect();
        // A deterministic shuffle from the seed.
        let mut x = seed | 1;
        for i in (1..order.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
        for lag in 0..3 {
            check_member(&all, &order, lag)?;
            check_member(&all, &(0..all.len()).collect::<Vec<_>>(), lag)?;
        }
    }
}
