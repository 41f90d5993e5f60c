//! What the model test compares after every operation: each lookup and listing of the ledger
//! against the model, for every identity, credential, node and window of the small domains.

use hco_oracle::{Digest, IdentityId, Ledger, NodeId, Sig};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::records::{id, node};
use super::{Model, NODES, WHO};

/// Pages of two through a keyed listing give the whole listing.
fn paged<T: Clone, K>(mut page: impl FnMut(Option<K>) -> Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
    let mut all = Vec::new();
    let mut after = None;
    loop {
        let got = page(after.take());
        let full = got.len() == 2;
        after = got.last().map(&key);
        all.extend(got);
        if !full {
            return all;
        }
    }
}

pub fn check_registry(l: &Ledger, model: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(l.identity_count(), model.identities.len());
    let mut ids: Vec<IdentityId> = model.identities.keys().map(|w| id(*w)).collect();
    ids.sort();
    let listed = paged(
        |after| l.identities_after(after.as_ref(), 2).unwrap(),
        |r| r.body.id,
    );
    prop_assert_eq!(listed.iter().map(|r| r.body.id).collect::<Vec<_>>(), ids);
    for who in 0..WHO {
        let window = l.identity(&id(who)).unwrap().map(|r| r.window);
        prop_assert_eq!(window, model.identities.get(&who).copied());
        let held: Vec<(Vec<u8>, u32)> = l
            .passkeys(&id(who))
            .unwrap()
            .into_iter()
            .map(|r| (r.credential_id, r.counter))
            .collect();
        let expected: Vec<(Vec<u8>, u32)> = model
            .passkeys
            .iter()
            .filter(|(_, (owner, _))| *owner == who)
            .map(|(cred, (_, counter))| (vec![*cred], *counter))
            .collect();
        prop_assert_eq!(held, expected);
    }
    for cred in 0u8..4 {
        let owner = l.credential_owner(&[cred]).unwrap();
        prop_assert_eq!(owner, model.passkeys.get(&cred).map(|(w, _)| id(*w)));
    }
    let all = paged(
        |after: Option<(IdentityId, Vec<u8>)>| {
            let after = after.as_ref().map(|(i, c)| (i, c.as_slice()));
            l.passkeys_after(after, 2).unwrap()
        },
        |r| (r.enrolment.body.id, r.credential_id.clone()),
    );
    prop_assert_eq!(all.len(), model.passkeys.len());
    Ok(())
}

pub fn check_window(l: &Ledger, model: &Model, t: u64) -> Result<(), TestCaseError> {
    for who in 0..WHO {
        // The identity's issues in the window, by index (answered from memory when the
        // ledger knows it issued nothing).
        let indices: Vec<u32> = l
            .issued_in(t, &id(who))
            .unwrap()
            .iter()
            .map(|(j, _)| *j)
            .collect();
        let expected: Vec<u32> = model
            .issued
            .keys()
            .filter(|(tt, w, _)| *tt == t && *w == who)
            .map(|(_, _, j)| *j)
            .collect();
        prop_assert_eq!(indices, expected);
        for j in 0..3 {
            let k = (t, who, j);
            let issued = l.issued(t, &id(who), j).unwrap().map(|r| r.issued_at);
            prop_assert_eq!(issued, model.issued.get(&k).copied());
            // Every issue in the model stores the same envelope (zero id and signature).
            let (envelope, other) = (Sig([0; 64]), Sig([1; 64]));
            prop_assert_eq!(
                l.issued_matches(t, &id(who), j, &Digest::ZERO, &envelope)
                    .unwrap(),
                model.issued.contains_key(&k)
            );
            prop_assert!(
                !l.issued_matches(t, &id(who), j, &Digest::ZERO, &other)
                    .unwrap()
            );
            prop_assert_eq!(
                l.is_accepted(t, &id(who), j).unwrap(),
                model.accepted.contains(&k)
            );
            // The first marker is kept; answered means accepted or marked.
            let marked = l.answered(t, &id(who), j).unwrap().map(|r| r.answered_at);
            prop_assert_eq!(marked, model.answered.get(&k).copied());
            prop_assert_eq!(
                l.is_answered(t, &id(who), j).unwrap(),
                model.accepted.contains(&k) || model.answered.contains_key(&k)
            );
        }
    }
    // Accepted challenges per identity (what the active set is derived from).
    let mut expected: Vec<(IdentityId, u32)> = (0..WHO)
        .map(|who| {
            let n = model
                .accepted
                .iter()
                .filter(|(tt, w, _)| *tt == t && *w == who);
            (id(who), n.count() as u32)
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    expected.sort();
    prop_assert_eq!(l.accepted_counts(t).unwrap(), expected);
    let marked = model.answered.keys().filter(|(tt, _, _)| *tt == t).count();
    prop_assert_eq!(l.answered_count(t), marked);
    let keys = paged(|after| l.accepted_keys_after(t, after, 2).unwrap(), |k| *k);
    prop_assert_eq!(keys, l.accepted_keys(t).unwrap());

    let mut summaries: Vec<(NodeId, Digest)> = l
        .summaries(t)
        .unwrap()
        .into_iter()
        .map(|s| (s.signer, s.summary.root))
        .collect();
    summaries.sort();
    let mut expected: Vec<(NodeId, Digest)> = model
        .summaries
        .iter()
        .filter(|((tt, _), _)| *tt == t)
        .map(|((_, signer), root)| (node(*signer), Digest([*root; 32])))
        .collect();
    expected.sort();
    prop_assert_eq!(summaries, expected);
    let cert = model.certs.get(&t).map(|r| Digest([*r; 32]));
    prop_assert_eq!(l.certificate(t).unwrap().map(|c| c.summary.root), cert);
    prop_assert_eq!(l.certified_root(t).unwrap(), cert.unwrap_or(Digest::ZERO));
    let mut reveals = Vec::new();
    for by in 0..NODES {
        let secret = model.reveals.get(&(t, by)).map(|s| Digest([*s; 32]));
        let held = l.reveal(t, &node(by)).unwrap();
        prop_assert_eq!(held.as_ref().map(|r| r.reveal.secret), secret);
        reveals.extend(held);
    }
    let mut listed = l.reveals(t).unwrap();
    listed.sort_by_key(|r| r.reveal.node);
    reveals.sort_by_key(|r| r.reveal.node);
    prop_assert_eq!(listed, reveals);
    let excluded = model
        .excluded
        .get(&t)
        .map(|m| m.iter().map(|n| node(*n)).collect::<Vec<_>>());
    prop_assert_eq!(l.excluded(t).unwrap(), excluded);
    Ok(())
}
