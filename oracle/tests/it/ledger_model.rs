//! The ledger against a naive in-memory model, through random operations: registrations,
//! passkeys and their counters, issued challenges, acceptances, answered-markers, summaries,
//! certificates and reveals (first write wins: each put's outcome, stored, duplicate or
//! conflict with the record held, is checked), excluded members, pruning of windows and of idle identities, replays
//! of the previous operation and reopening the same directory.

mod checks;
mod records;

use std::collections::{BTreeMap, BTreeSet};

use hco_oracle::ledger::{AnsweredRecord, FirstWrite, IssuedRecord};
use hco_oracle::{Acceptance, Digest, Ledger, NodeId, Sig, seal_batch, testing};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use checks::{check_registry, check_window};
use records::{PARAMS, acceptance, id, node};

const WHO: u8 = 6;
const WINDOWS: u64 = 6;
const NODES: u8 = 3;

#[derive(Debug, Clone)]
enum Op {
    Register {
        who: u8,
        window: u64,
    },
    Enrol {
        who: u8,
        cred: u8,
        counter: u32,
    },
    RaiseCounter {
        who: u8,
        cred: u8,
        counter: u32,
    },
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
    Summary {
        t: u64,
        signer: u8,
        root: u8,
    },
    Certify {
        t: u64,
        root: u8,
    },
    Reveal {
        t: u64,
        by: u8,
        secret: u8,
    },
    Exclude {
        t: u64,
        members: Vec<u8>,
    },
    Prune(u64),
    PruneIdle(u64),
    /// The previous operation once more.
    Replay,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    let t = || 0..WINDOWS;
    prop_oneof![
        (0..WHO, t()).prop_map(|(who, window)| Op::Register { who, window }),
        (0..WHO, 0u8..4, 0u32..5).prop_map(|(who, cred, counter)| Op::Enrol { who, cred, counter }),
        (0..WHO, 0u8..4, 0u32..9).prop_map(|(who, cred, counter)| Op::RaiseCounter {
            who,
            cred,
            counter
        }),
        (t(), 0..WHO, 0u32..3, 0u64..1000).prop_map(|(t, who, j, at)| Op::Issue { t, who, j, at }),
        prop::collection::vec((t(), 0..WHO, 0u32..3), 1..6).prop_map(Op::Accept),
        (t(), 0..WHO, 0u32..3, 0u64..1000).prop_map(|(t, who, j, at)| Op::Answer { t, who, j, at }),
        (t(), 0..NODES, 0u8..3).prop_map(|(t, signer, root)| Op::Summary { t, signer, root }),
        (t(), 0u8..3).prop_map(|(t, root)| Op::Certify { t, root }),
        (t(), 0..NODES, 0u8..3).prop_map(|(t, by, secret)| Op::Reveal { t, by, secret }),
        (t(), prop::collection::vec(0..NODES, 0..3))
            .prop_map(|(t, members)| Op::Exclude { t, members }),
        (0..WINDOWS + 1).prop_map(Op::Prune),
        (0..WINDOWS + 1).prop_map(Op::PruneIdle),
        Just(Op::Replay),
        Just(Op::Reopen),
    ]
}

/// What the ledger should hold, in plain maps.
#[derive(Default)]
struct Model {
    /// Identity → the window it was recorded in (the first registration is kept).
    identities: BTreeMap<u8, u64>,
    /// Credential → (owner, counter): one identity per credential.
    passkeys: BTreeMap<u8, (u8, u32)>,
    issued: BTreeMap<(u64, u8, u32), u64>,
    accepted: BTreeSet<(u64, u8, u32)>,
    answered: BTreeMap<(u64, u8, u32), u64>,
    /// (t, signer) → root: the first summary a signer sent is kept.
    summaries: BTreeMap<(u64, u8), u8>,
    /// t → root: the first certificate stored is kept.
    certs: BTreeMap<u64, u8>,
    /// (t, node) → secret: the first reveal stored is kept.
    reveals: BTreeMap<(u64, u8), u8>,
    /// t → members left out: the first record is kept.
    excluded: BTreeMap<u64, Vec<u8>>,
}

impl Model {
    fn prune_before(&mut self, before: u64) {
        self.issued.retain(|(t, _, _), _| *t >= before);
        self.accepted.retain(|(t, _, _)| *t >= before);
        self.answered.retain(|(t, _, _), _| *t >= before);
        self.summaries.retain(|(t, _), _| *t >= before);
        self.certs.retain(|t, _| *t >= before);
        self.reveals.retain(|(t, _), _| *t >= before);
        self.excluded.retain(|t, _| *t >= before);
    }

    /// Identities recorded before `before` with no issued challenge, no acceptance and no
    /// passkey.
    fn idle_before(&self, before: u64) -> Vec<u8> {
        let active = |who: u8| {
            self.issued.keys().any(|(_, w, _)| *w == who)
                || self.accepted.iter().any(|(_, w, _)| *w == who)
                || self.passkeys.values().any(|(w, _)| *w == who)
        };
        self.identities
            .iter()
            .filter(|(who, window)| **window < before && !active(**who))
            .map(|(who, _)| *who)
            .collect()
    }
}

fn apply(l: &Ledger, model: &mut Model, op: &Op) -> Result<(), TestCaseError> {
    let key = testing::key(1);
    match op {
        Op::Register { who, window } => {
            let stored = l.put_identity(&records::identity(*who, *window)).unwrap();
            let expected = *model.identities.entry(*who).or_insert(*window);
            prop_assert_eq!(stored.window, expected);
        }
        Op::Enrol { who, cred, counter } => {
            let stored = l
                .put_passkey(&records::passkey(*who, *cred, *counter))
                .unwrap();
            prop_assert_eq!(stored, !model.passkeys.contains_key(cred));
            model.passkeys.entry(*cred).or_insert((*who, *counter));
        }
        Op::RaiseCounter { who, cred, counter } => {
            l.raise_counter(&id(*who), &[*cred], *counter).unwrap();
            if let Some((owner, stored)) = model.passkeys.get_mut(cred)
                && owner == who
            {
                *stored = (*stored).max(*counter);
            }
        }
        Op::Issue { t, who, j, at } => {
            let rec = IssuedRecord {
                issued_at: *at,
                deadline: at + 10,
                family: "f".into(),
                challenge_id: Digest::ZERO,
                sig: Sig([0; 64]),
                witness: None,
            };
            let kept = l.put_issued(*t, &id(*who), *j, &rec).unwrap();
            let expected = *model.issued.entry((*t, *who, *j)).or_insert(*at);
            prop_assert_eq!(kept.issued_at, expected);
        }
        Op::Accept(items) => {
            let mut by_t: BTreeMap<u64, Vec<Acceptance>> = BTreeMap::new();
            for (t, who, j) in items {
                by_t.entry(*t).or_default().push(acceptance(*t, *who, *j));
            }
            for (t, batch) in by_t {
                let keys: BTreeSet<_> = batch
                    .iter()
                    .map(|a| (t, a.response.answer[0], a.challenge().j))
                    .collect();
                let fresh_expected = keys.difference(&model.accepted).count();
                let fresh = l.insert_acceptances(&seal_batch(&key, t, batch)).unwrap();
                prop_assert_eq!(fresh, fresh_expected);
            }
            l.make_durable().unwrap();
            model.accepted.extend(items.iter().copied());
        }
        Op::Answer { t, who, j, at } => {
            let marker = AnsweredRecord {
                answered_at: *at,
                code: "answer_mismatch".into(),
            };
            let stored = l.mark_answered(*t, &id(*who), *j, &marker).unwrap();
            prop_assert_eq!(stored, !model.answered.contains_key(&(*t, *who, *j)));
            model.answered.entry((*t, *who, *j)).or_insert(*at);
        }
        Op::Summary { t, signer, root } => {
            l.put_summary(&records::summary(*t, *signer, *root))
                .unwrap();
            model.summaries.entry((*t, *signer)).or_insert(*root);
        }
        Op::Certify { t, root } => {
            let outcome = l.put_certificate(&records::certificate(*t, *root)).unwrap();
            let expected = match model.certs.get(t) {
                None => FirstWrite::Stored,
                Some(held) if held == root => FirstWrite::Duplicate,
                Some(held) => FirstWrite::Conflict {
                    held: records::certificate(*t, *held),
                },
            };
            prop_assert_eq!(outcome, expected);
            model.certs.entry(*t).or_insert(*root);
        }
        Op::Reveal { t, by, secret } => {
            let outcome = l.put_reveal(&records::reveal(*t, *by, *secret)).unwrap();
            let expected = match model.reveals.get(&(*t, *by)) {
                None => FirstWrite::Stored,
                Some(held) if held == secret => FirstWrite::Duplicate,
                Some(held) => FirstWrite::Conflict {
                    held: records::reveal(*t, *by, *held),
                },
            };
            prop_assert_eq!(outcome, expected);
            model.reveals.entry((*t, *by)).or_insert(*secret);
        }
        Op::Exclude { t, members } => {
            let nodes: Vec<NodeId> = members.iter().map(|n| node(*n)).collect();
            let kept = l.put_excluded(*t, &nodes).unwrap();
            let expected = model.excluded.entry(*t).or_insert(members.clone());
            prop_assert_eq!(kept, expected.iter().map(|n| node(*n)).collect::<Vec<_>>());
        }
        Op::Prune(before) => {
            l.prune_before(*before).unwrap();
            model.prune_before(*before);
        }
        Op::PruneIdle(before) => {
            let idle = model.idle_before(*before);
            let stats = l.prune_idle_identities(*before).unwrap();
            prop_assert_eq!(stats.removed, idle.len());
            for who in idle {
                model.identities.remove(&who);
            }
        }
        Op::Replay | Op::Reopen => unreachable!("handled by the driver"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn ledger_matches_model(ops in prop::collection::vec(op(), 1..48)) {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Some(Ledger::open(dir.path(), PARAMS).unwrap());
        let mut model = Model::default();
        let mut last: Option<Op> = None;
        for op in ops {
            let op = match op {
                Op::Replay => match last.clone() {
                    Some(previous) => previous,
                    None => continue,
                },
                op => op,
            };
            if let Op::Reopen = op {
                drop(ledger.take());
                ledger = Some(Ledger::open(dir.path(), PARAMS).unwrap());
            } else {
                apply(ledger.as_ref().unwrap(), &mut model, &op)?;
            }
            last = Some(op);
            let l = ledger.as_ref().unwrap();
            check_registry(l, &model)?;
            for t in 0..WINDOWS {
                check_window(l, &model, t)?;
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
