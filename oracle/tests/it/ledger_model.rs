//! The ledger against a naive in-memory model, through random operations including reopen.

use std::collections::{BTreeMap, BTreeSet};

use hco_challenges::Class;
use hco_oracle::ledger::{AnsweredRecord, IdentityRecord, IssuedRecord};
use hco_oracle::{
    Acceptance, Challenge, Digest, IdentityId, Ledger, NodeId, Response, Sig, SignedChallenge,
    SignedRegister, VERSION, seal_batch, testing,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Register(u8),
    Issue {
        t: u64,
        who: u8,
        j: u32,
        at: u64,
    },
    Accept(Vec<(u64, u8, u32)>),
    /// A wrong answer's marker (the first answer is final).
    Answer {
        t: u64,
        who: u8,
        j: u32,
        at: u64,
    },
    Prune(u64),
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..6).prop_map(Op::Register),
        (0u64..6, 0u8..6, 0u32..3, 0u64..1000).prop_map(|(t, who, j, at)| Op::Issue {
            t,
            who,
            j,
            at
        }),
        prop::collection::vec((0u64..6, 0u8..6, 0u32..3), 1..6).prop_map(Op::Accept),
        (0u64..6, 0u8..6, 0u32..3, 0u64..1000).prop_map(|(t, who, j, at)| Op::Answer {
            t,
            who,
            j,
            at
        }),
        (0u64..7).prop_map(Op::Prune),
        Just(Op::Reopen),
    ]
}

fn id(who: u8) -> IdentityId {
    testing::identity_id(&testing::key(u64::from(who) + 7000))
}

fn acceptance(t: u64, who: u8, j: u32) -> Acceptance {
    let challenge = Challenge {
        version: VERSION,
        issuer: NodeId([1; 32]),
        id: id(who),
        t,
        j,
        family: "proof_of_work".into(),
        issued_at: 1,
        deadline: 2,
        prompt_digest: Digest::ZERO,
    };
    let signed = SignedChallenge {
        challenge,
        sig: Sig([0; 64]),
    };
    Acceptance {
        version: VERSION,
        response: Response::new(&testing::key(u64::from(who) + 7000), signed, vec![who]),
        accepted_at: 2,
    }
}

#[derive(Default)]
struct Model {
    identities: BTreeSet<u8>,
    issued: BTreeMap<(u64, u8, u32), u64>,
    accepted: BTreeSet<(u64, u8, u32)>,
    answered: BTreeMap<(u64, u8, u32), u64>,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn ledger_matches_model(ops in prop::collection::vec(op(), 1..40)) {
        let dir = tempfile::tempdir().unwrap();
        let params = Digest([9; 32]);
        let mut ledger = Some(Ledger::open(dir.path(), params).unwrap());
        let mut model = Model::default();
        let key = testing::key(1);
        for op in ops {
            let l = ledger.as_ref().unwrap();
            match op {
                Op::Register(who) => {
                    let reg = SignedRegister::new(&testing::key(u64::from(who) + 7000), Class::Agent, 5);
                    l.put_identity(&IdentityRecord { register: reg, window: 0 }).unwrap();
                    model.identities.insert(who);
                }
                Op::Issue { t, who, j, at } => {
                    let rec = IssuedRecord { issued_at: at, deadline: at + 10, family: "f".into(), challenge_id: Digest::ZERO, sig: Sig([0; 64]) };
                    let kept = l.put_issued(t, &id(who), j, &rec).unwrap();
                    let expected = *model.issued.entry((t, who, j)).or_insert(at);
                    prop_assert_eq!(kept.issued_at, expected);
                }
                Op::Accept(items) => {
                    let mut by_t: BTreeMap<u64, Vec<Acceptance>> = BTreeMap::new();
                    for (t, who, j) in &items {
                        by_t.entry(*t).or_default().push(acceptance(*t, *who, *j));
                    }
                    for (t, batch) in by_t {
                        let fresh_expected = batch.iter().map(|a| (t, a.response.answer[0], a.challenge().j)).collect::<BTreeSet<_>>()
                            .difference(&model.accepted).count();
                        let fresh = l.insert_acceptances(&seal_batch(&key, t, batch)).unwrap();
                        prop_assert_eq!(fresh, fresh_expected);
                    }
                    l.make_durable().unwrap();
                    model.accepted.extend(items);
                }
                Op::Answer { t, who, j, at } => {
                    let marker = AnsweredRecord { answered_at: at, code: "answer_mismatch".into() };
                    let stored = l.mark_answered(t, &id(who), j, &marker).unwrap();
                    prop_assert_eq!(stored, !model.answered.contains_key(&(t, who, j)));
                    model.answered.entry((t, who, j)).or_insert(at);
                }
                Op::Prune(before) => {
                    l.prune_before(before).unwrap();
                    model.issued.retain(|(t, _, _), _| *t >= before);
                    model.accepted.retain(|(t, _, _)| *t >= before);
                    model.answered.retain(|(t, _, _), _| *t >= before);
                }
                Op::Reopen => {
                    drop(ledger.take());
                    ledger = Some(Ledger::open(dir.path(), params).unwrap());
                }
            }
            let l = ledger.as_ref().unwrap();
            for who in 0u8..6 {
                prop_assert_eq!(l.identity(&id(who)).unwrap().is_some(), model.identities.contains(&who));
                for t in 0..6 {
                    for j in 0..3 {
                        prop_assert_eq!(l.issued(t, &id(who), j).unwrap().map(|r| r.issued_at), model.issued.get(&(t, who, j)).copied());
                        prop_assert_eq!(l.is_accepted(t, &id(who), j).unwrap(), model.accepted.contains(&(t, who, j)));
                        // The first marker is kept; answered means accepted or marked.
                        prop_assert_eq!(l.answered(t, &id(who), j).unwrap().map(|r| r.answered_at), model.answered.get(&(t, who, j)).copied());
                        prop_assert_eq!(
                            l.is_answered(t, &id(who), j).unwrap(),
                            model.accepted.contains(&(t, who, j)) || model.answered.contains_key(&(t, who, j))
                        );
                    }
                }
            }
            for t in 0..6 {
                // Accepted challenges per identity (what the active set is derived from).
                let mut expected: Vec<(IdentityId, u32)> = (0u8..6)
                    .map(|who| (id(who), model.accepted.iter().filter(|(tt, w, _)| *tt == t && *w == who).count() as u32))
                    .filter(|(_, n)| *n > 0)
                    .collect();
                expected.sort();
                prop_assert_eq!(l.accepted_counts(t).unwrap(), expected);
                prop_assert_eq!(l.answered_count(t), model.answered.keys().filter(|(tt, _, _)| *tt == t).count());
                // Paging through a window's keys, two at a time, gives the whole window.
                let mut paged = Vec::new();
                let mut after = None;
                loop {
                    let page = l.accepted_keys_after(t, after, 2).unwrap();
                    let full = page.len() == 2;
                    after = page.last().copied();
                    paged.extend(page);
                    if !full {
                        break;
                    }
                }
                prop_assert_eq!(paged, l.accepted_keys(t).unwrap());
            }
        }
    }
}

#[test]
fn a_ledger_refuses_other_network_parameters() {
    let dir = tempfile::tempdir().unwrap();
    drop(Ledger::open(dir.path(), Digest([1; 32])).unwrap());
    let err = Ledger::open(dir.path(), Digest([2; 32])).unwrap_err();
    assert!(err.to_string().contains("another data directory"), "{err}");
}
