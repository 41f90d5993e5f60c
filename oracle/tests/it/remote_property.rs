//! `record_remote` against a simple model: a committee member seals acceptances of its own
//! making, some valid and some with one field wrong (the window, the slot, the deadline, the
//! receipt time, `j`, the registration, the family, the answer's size, the identity's
//! signature, the issuer's assignment; and one that is right although the recorder holds the
//! identity's other-class registration); another member records a batch exactly
//! when every acceptance in it is valid, refuses it with the first wrong one's reason
//! otherwise, and stores nothing of a rejected batch.

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_oracle::secret::issuer_order;
use hco_oracle::{
    Acceptance, Challenge, Digest, IdentityId, Ledger, Oracle, Response, SealedAcceptance,
    SignedChallenge, SignedRegister, SlotMode, VERSION, seal_batch, testing,
};
use proptest::prelude::*;

/// What is wrong with one made-up acceptance, and the reason code the model expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    AfterGrace,
    IssuedBeforeWindow,
    Late,
    ReceivedBeforeIssue,
    DeadlineStretched,
    IndexOutOfRange,
    Unregistered,
    /// Registered here with the other class (the identity registered twice): accepted, the
    /// class comes from the family.
    SplitClass,
    UnknownFamily,
    AnswerTooLarge,
    TooFast,
    ForgedIdentitySignature,
    NotAssignedIssuer,
}

impl Fault {
    const ALL: [Fault; 14] = [
        Fault::None,
        Fault::AfterGrace,
        Fault::IssuedBeforeWindow,
        Fault::Late,
        Fault::ReceivedBeforeIssue,
        Fault::DeadlineStretched,
        Fault::IndexOutOfRange,
        Fault::Unregistered,
        Fault::SplitClass,
        Fault::UnknownFamily,
        Fault::AnswerTooLarge,
        Fault::TooFast,
        Fault::ForgedIdentitySignature,
        Fault::NotAssignedIssuer,
    ];

    fn code(self) -> Option<&'static str> {
        Some(match self {
            Fault::None | Fault::SplitClass => return None,
            Fault::AfterGrace => "wrong_window",
            Fault::IssuedBeforeWindow => "outside_slot",
            Fault::Late => "challenge_expired",
            Fault::ReceivedBeforeIssue => "malformed",
            Fault::DeadlineStretched => "deadline_mismatch",
            Fault::IndexOutOfRange => "index_out_of_range",
            Fault::Unregistered => "unknown_identity",
            Fault::UnknownFamily => "unknown_family",
            Fault::AnswerTooLarge => "answer_too_large",
            Fault::TooFast => "too_fast",
            Fault::ForgedIdentitySignature => "bad_identity_signature",
            Fault::NotAssignedIssuer => "not_assigned_issuer",
        })
    }
}

/// Proof of work (the agents' family): its 10 s deadline and a 1 s floor, to test `too_fast`.
const MIN_SOLVE_MS: u64 = 1_000;
const DEADLINE_MS: u64 = 10_000;
const T: u64 = 2;

struct World {
    committee: Vec<SigningKey>,
    recorder: Oracle,
}

fn world() -> World {
    let committee: Vec<SigningKey> = (1..=3).map(testing::key).collect();
    let ids: Vec<_> = committee.iter().map(testing::node_id).collect();
    let mut params = testing::params_for(&ids);
    params.slot_mode = SlotMode::Open;
    params.families[0].min_solve_ms = MIN_SOLVE_MS;
    let ledger = Ledger::temporary(params.digest()).unwrap();
    let recorder = Oracle::new(
        params,
        hco_challenges::Registry::builtin(),
        committee[0].clone(),
        ledger,
    )
    .unwrap();
    World {
        committee,
        recorder,
    }
}

/// One acceptance by `identity` (numbered `n`, registered unless `fault` says otherwise),
/// made by its assigned issuer (or another member) with `fault` in it.
fn made_up(w: &World, n: u64, fault: Fault) -> SealedAcceptance {
    let params = w.recorder.params();
    let identity = testing::key(1_000 + n);
    let id = IdentityId(identity.verifying_key().to_bytes());
    let human = fault == Fault::SplitClass;
    if fault != Fault::Unregistered {
        let class = if human { Class::Human } else { Class::Agent };
        let reg = SignedRegister::new(&identity, class, params.window_start(T));
        w.recorder
            .register(&reg, params.window_start(T))
            .unwrap()
            .unwrap();
    }
    let order = issuer_order(&params.committee, &id, T);
    let issuer_id = if fault == Fault::NotAssignedIssuer {
        order[1]
    } else {
        order[0]
    };
    let issuer = w
        .committee
        .iter()
        .find(|k| testing::node_id(k) == issuer_id)
        .unwrap();
    let mut issued_at = params.window_start(T) + 5_000;
    if fault == Fault::IssuedBeforeWindow {
        issued_at = params.window_start(T) - 1;
    }
    let mut deadline = issued_at + DEADLINE_MS;
    if fault == Fault::DeadlineStretched {
        deadline += 1;
    }
    let mut accepted_at = issued_at + 2_000;
    match fault {
        Fault::Late => accepted_at = deadline + 1,
        Fault::ReceivedBeforeIssue => accepted_at = issued_at - 1,
        Fault::TooFast => accepted_at = issued_at + MIN_SOLVE_MS - 1,
        Fault::AfterGrace => {
            // Issued late in the window; received after the grace period (and the deadline
            // stretched to cover it, which the window check reports first).
            issued_at = params.window_end(T) - 1;
            accepted_at = params.closes_at(T);
            deadline = accepted_at + 1;
        }
        _ => {}
    }
    let challenge = Challenge {
        version: VERSION,
        issuer: issuer_id,
        id,
        t: T,
        j: if fault == Fault::IndexOutOfRange {
            params.policy(Class::Agent).tries()
        } else {
            0
        },
        family: match fault {
            Fault::UnknownFamily => "not_a_family".into(),
            _ => "proof_of_work".into(),
        },
        issued_at,
        deadline,
        prompt_digest: Digest([7; 32]),
        witness: None,
    };
    let signed = SignedChallenge::new(issuer, challenge);
    let answer = if fault == Fault::AnswerTooLarge {
        vec![b'0'; 1 << 16]
    } else {
        b"12345".to_vec()
    };
    let signer = if fault == Fault::ForgedIdentitySignature {
        testing::key(99_999)
    } else {
        identity
    };
    let response = Response::new(&signer, signed, answer);
    let acceptance = Acceptance {
        version: VERSION,
        response,
        accepted_at,
    };
    seal_batch(issuer, T, vec![acceptance]).remove(0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn record_remote_accepts_exactly_the_valid_batches(
        faults in prop::collection::vec(
            prop_oneof![3 => Just(Fault::None), 2 => prop::sample::select(Fault::ALL.to_vec())],
            1..6,
        ),
    ) {
        let w = world();
        let batch: Vec<SealedAcceptance> = faults
            .iter()
            .enumerate()
            .map(|(n, f)| made_up(&w, n as u64, *f))
            .collect();
        // Each acceptance's own checks run in order; the identities' signatures are verified
        // together after them.
        let expected = faults
            .iter()
            .filter(|f| **f != Fault::ForgedIdentitySignature)
            .find_map(|f| f.code())
            .or_else(|| faults.iter().find_map(|f| f.code()));
        let got = w.recorder.record_remote(&batch, crate::support::at_once(&batch)).unwrap();
        let stored = w.recorder.ledger().accepted_keys(T).unwrap().len();
        match expected {
            None => {
                prop_assert_eq!(got.map_err(|r| r.code()), Ok(batch.len()));
                prop_assert_eq!(stored, batch.len());
            }
            Some(code) => {
                prop_assert_eq!(got.map_err(|r| r.code()), Err(code));
                prop_assert_eq!(stored, 0, "a rejected batch leaves nothing behind");
            }
        }
    }
}

/// Every fault alone is refused with its reason, and nothing else (the model is not vacuous).
#[test]
fn each_fault_alone_gives_its_reason() {
    for fault in Fault::ALL {
        let w = world();
        let got = w
            .recorder
            .record_remote(
                &[made_up(&w, 0, fault)],
                crate::support::at_once(&[made_up(&w, 0, fault)]),
            )
            .unwrap()
            .map_err(|r| r.code());
        match fault.code() {
            None => assert_eq!(got, Ok(1)),
            Some(code) => assert_eq!(got, Err(code), "{fault:?}"),
        }
    }
}

/// With ceremony slots, a challenge issued inside the identity's slot but before its step's
/// phase opened is refused, and one issued outside the slot too; in its phase it is recorded.
#[test]
fn slotted_acceptances_respect_the_slot_and_the_step_phase() {
    let committee: Vec<SigningKey> = (1..=3).map(testing::key).collect();
    let ids: Vec<_> = committee.iter().map(testing::node_id).collect();
    let mut params = testing::params_for(&ids);
    params.slot_mode = SlotMode::Global;
    params.slot_ms = 30_000;
    let recorder = Oracle::new(
        params.clone(),
        hco_challenges::Registry::builtin(),
        committee[0].clone(),
        Ledger::temporary(params.digest()).unwrap(),
    )
    .unwrap();
    let identity = testing::key(4_242);
    let id = testing::identity_id(&identity);
    let reg = SignedRegister::new(&identity, Class::Agent, params.window_start(T));
    recorder
        .register(&reg, params.window_start(T))
        .unwrap()
        .unwrap();
    let issuer_id = issuer_order(&params.committee, &id, T)[0];
    let issuer = committee
        .iter()
        .find(|k| testing::node_id(k) == issuer_id)
        .unwrap();
    let slot = recorder.slot(T, &id).unwrap();
    let phase_1 = params.phase(&slot, Class::Agent, 1);
    assert!(phase_1.start > slot.start);
    let sealed = |j: u32, issued_at: u64| {
        let challenge = Challenge {
            version: VERSION,
            issuer: issuer_id,
            id,
            t: T,
            j,
            family: "proof_of_work".into(),
            issued_at,
            deadline: issued_at + DEADLINE_MS,
            prompt_digest: Digest([7; 32]),
            witness: None,
        };
        let response = Response::new(
            &identity,
            SignedChallenge::new(issuer, challenge),
            b"1".to_vec(),
        );
        let acceptance = Acceptance {
            version: VERSION,
            response,
            accepted_at: issued_at + 1_000,
        };
        seal_batch(issuer, T, vec![acceptance])
    };
    let code = |batch: Vec<SealedAcceptance>| {
        recorder
            .record_remote(&batch, crate::support::at_once(&batch))
            .unwrap()
            .map_err(|r| r.code())
    };
    assert_eq!(code(sealed(1, slot.start)), Err("step_not_open"));
    assert_eq!(code(sealed(0, slot.start - 1)), Err("outside_slot"));
    assert_eq!(code(sealed(1, phase_1.start)), Ok(1));
    assert_eq!(code(sealed(0, slot.start)), Ok(1));
}
