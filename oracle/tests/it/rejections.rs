//! Every rejection of §5.4 has its stable code. A rejected request, and a response refused before
//! its answer is judged, write nothing; a judged wrong answer is final and leaves only its
//! answered-marker.

use hco_challenges::Class;
use hco_oracle::{
    IdentityId, Response, SignedChallenge, SignedRegister, SignedRequest, SlotMode, codec, testing,
};

use crate::support::{Net, solve};

/// Records in every window tree of every node, to show that rejections leave no state.
fn footprint(net: &Net) -> Vec<(usize, usize, usize)> {
    net.oracles
        .iter()
        .map(|o| {
            (
                o.ledger().identity_count(),
                o.ledger().accepted_keys(0).unwrap().len(),
                o.ledger().answered_count(0),
            )
        })
        .collect()
}

#[test]
fn requests_are_rejected_with_codes_and_leave_no_state() {
    let net = Net::new(3);
    let now = net.start(0) + 1_000;
    let human = testing::key(10);
    let stranger = testing::key(11);
    net.register(&human, Class::Human, now);
    let issuer = net.issuer_for(&human, 0);
    let other = net
        .oracles
        .iter()
        .find(|o| o.node_id() != issuer.node_id())
        .unwrap();

    let mut forged = SignedRequest::new(&human, 0, 0);
    forged.sig.0[0] ^= 1;
    let cases = [
        (issuer, forged, now, "bad_identity_signature"),
        (
            net.issuer_for(&stranger, 0),
            SignedRequest::new(&stranger, 0, 0),
            now,
            "unknown_identity",
        ),
        (
            issuer,
            SignedRequest::new(&human, 1, 0),
            now,
            "wrong_window",
        ),
        (
            issuer,
            SignedRequest::new(&human, 0, 2),
            now,
            "index_out_of_range",
        ),
        (
            other,
            SignedRequest::new(&human, 0, 0),
            now,
            "not_assigned_issuer",
        ),
        (
            issuer,
            SignedRequest::new(&human, 0, 0),
            net.params.genesis_ms - 1,
            "before_genesis",
        ),
    ];
    let before = footprint(&net);
    for (node, req, at, code) in cases {
        let reason = node.issue(&req, at).unwrap().unwrap_err();
        assert_eq!(reason.code(), code, "{reason}");
        // A gateway's two steps (check the signature, then issue) refuse it alike.
        let reason = match node.check_request_signature(req.clone()) {
            Ok(checked) => node.issue_checked(&checked, at).unwrap().unwrap_err(),
            Err(reason) => reason,
        };
        assert_eq!(reason.code(), code, "{reason}");
        assert!(
            node.ledger()
                .issued(0, &req.body.id, req.body.j)
                .unwrap()
                .is_none()
        );
    }
    assert_eq!(footprint(&net), before);
}

#[test]
fn re_requests_return_the_same_challenge_and_deadline() {
    let net = Net::new(1);
    let o = &net.oracles[0];
    let now = net.start(0) + 1_000;
    let agent = testing::key(12);
    net.register(&agent, Class::Agent, now);
    let first = o
        .issue(&SignedRequest::new(&agent, 0, 0), now)
        .unwrap()
        .unwrap();
    let again = o
        .issue(&SignedRequest::new(&agent, 0, 0), now + 9_000)
        .unwrap()
        .unwrap();
    assert_eq!(first, again);
    assert_eq!(again.challenge.challenge.issued_at, now);
    let checked = o
        .check_request_signature(SignedRequest::new(&agent, 0, 0))
        .unwrap();
    assert_eq!(
        o.issue_checked(&checked, now + 9_500).unwrap().unwrap(),
        first
    );
    // The next index is issued once the first expired (it is a try used), and differs.
    let expired = first.challenge.challenge.deadline + 1;
    let other_j = o
        .issue(&SignedRequest::new(&agent, 0, 1), expired)
        .unwrap()
        .unwrap();
    assert_ne!(
        first.challenge.challenge.challenge_id(),
        other_j.challenge.challenge.challenge_id()
    );
    // The first is still returned as it was issued.
    let later = o
        .issue(&SignedRequest::new(&agent, 0, 0), expired)
        .unwrap()
        .unwrap();
    assert_eq!(first, later);
}

#[test]
fn responses_are_rejected_in_order_with_codes_and_leave_no_state() {
    let net = Net::new(1);
    let o = &net.oracles[0];
    let now = net.start(0) + 1_000;
    let human = testing::key(20);
    let agent = testing::key(21);
    net.register(&human, Class::Human, now);
    net.register(&agent, Class::Agent, now);
    let issued = o
        .issue(&SignedRequest::new(&human, 0, 0), now)
        .unwrap()
        .unwrap();
    let answer = solve(o, &issued);
    let good = Response::new(&human, issued.challenge.clone(), answer.clone());
    let deadline = issued.challenge.challenge.deadline;

    let mut bad_issuer_sig = good.clone();
    bad_issuer_sig.challenge.sig.0[10] ^= 1;
    let mut altered_deadline = issued.challenge.clone();
    altered_deadline.challenge.deadline += 60_000;
    let mut bad_identity_sig = good.clone();
    bad_identity_sig.sig.0[0] ^= 1;
    // Another identity presenting the human's challenge and answer under its own key.
    let stolen = Response::new(&agent, issued.challenge.clone(), answer.clone());
    let unsigned_stranger = {
        let mut c = issued.challenge.challenge.clone();
        c.id = IdentityId([0x42; 32]);
        Response::new(
            &testing::key(99),
            SignedChallenge::new(&testing::key(1), c),
            answer.clone(),
        )
    };
    let wrong = Response::new(&human, issued.challenge.clone(), b"-99999".to_vec());
    let huge = Response::new(&human, issued.challenge.clone(), vec![b'1'; 5000]);
    let mut version = good.clone();
    version.version = 9;

    let before = footprint(&net);
    // Refused before the answer is judged: nothing is stored, the challenge stays open.
    let cases = [
        (bad_issuer_sig, now + 10, "bad_issuer_signature"),
        (
            Response::new(&human, altered_deadline, answer.clone()),
            now + 10,
            "bad_issuer_signature",
        ),
        (good.clone(), net.params.closes_at(0), "wrong_window"),
        (good.clone(), deadline + 1, "challenge_expired"),
        (bad_identity_sig, now + 10, "bad_identity_signature"),
        (stolen, now + 10, "bad_identity_signature"),
        (unsigned_stranger, now + 10, "unknown_challenge"),
        (huge, now + 10, "answer_too_large"),
        (version, now + 10, "unknown_version"),
    ];
    for (response, at, code) in cases {
        let reason = o.verify_response(&response, at).unwrap().unwrap_err();
        assert_eq!(reason.code(), code, "{reason}");
    }
    assert_eq!(footprint(&net), before, "a rejection wrote state");
    let id = testing::identity_id(&human);
    assert!(!o.ledger().is_answered(0, &id, 0).unwrap());

    // A wrong answer is judged: it is final, and only its answered-marker is stored. The right
    // answer afterwards is `already_answered`; the size check still comes first.
    assert_eq!(
        o.verify_response(&wrong, now + 10)
            .unwrap()
            .unwrap_err()
            .code(),
        "answer_mismatch"
    );
    let marker = o.ledger().answered(0, &id, 0).unwrap().unwrap();
    assert_eq!(
        (marker.answered_at, marker.code.as_str()),
        (now + 10, "answer_mismatch")
    );
    assert_eq!(
        o.verify_response(&good, now + 20)
            .unwrap()
            .unwrap_err()
            .code(),
        "already_answered"
    );
    let huge_again = Response::new(&human, issued.challenge.clone(), vec![b'1'; 5000]);
    assert_eq!(
        o.verify_response(&huge_again, now + 20)
            .unwrap()
            .unwrap_err()
            .code(),
        "answer_too_large"
    );
    let (identities, accepted, _) = before[0];
    assert_eq!(footprint(&net), vec![(identities, accepted, 1)]);

    // The spare try: the right answer in time is accepted once; the second time, and any
    // other answer after it, is `already_answered`.
    let spare = o
        .issue(&SignedRequest::new(&human, 0, 1), now + 30)
        .unwrap()
        .unwrap();
    let good = Response::new(&human, spare.challenge.clone(), solve(o, &spare));
    let deadline = spare.challenge.challenge.deadline;
    o.verify_response(&good, deadline).unwrap().unwrap();
    assert_eq!(
        o.verify_response(&good, deadline)
            .unwrap()
            .unwrap_err()
            .code(),
        "already_answered"
    );
    let wrong_replay = Response::new(&human, spare.challenge.clone(), b"0".to_vec());
    assert_eq!(
        o.verify_response(&wrong_replay, deadline)
            .unwrap()
            .unwrap_err()
            .code(),
        "already_answered"
    );
    // An acceptance leaves no marker: the acceptance itself answers the challenge.
    assert!(o.ledger().answered(0, &id, 1).unwrap().is_none());
    assert!(o.ledger().is_answered(0, &id, 1).unwrap());
}

#[test]
fn wrong_class_and_duplicates_within_a_batch() {
    let net = Net::new(1);
    let o = &net.oracles[0];
    let now = net.start(0) + 1_000;
    let agent = testing::key(30);
    net.register(&agent, Class::Agent, now);
    // The agent registers again as human on a fresh key-alike: a class conflict.
    let conflict = o
        .register(&SignedRegister::new(&agent, Class::Human, now), now)
        .unwrap();
    assert_eq!(conflict.unwrap_err().code(), "class_conflict");
    let future = o
        .register(
            &SignedRegister::new(&testing::key(31), Class::Human, now + 3_600_000),
            now,
        )
        .unwrap();
    assert_eq!(future.unwrap_err().code(), "registration_from_future");

    // The identity signed both registrations: it is issued nothing more.
    let refused = o.issue(&SignedRequest::new(&agent, 0, 0), now).unwrap();
    assert_eq!(refused.unwrap_err().code(), "class_conflict");
    assert!(
        o.ledger()
            .conflict(&testing::identity_id(&agent))
            .unwrap()
            .is_some()
    );

    let agent = testing::key(32);
    net.register(&agent, Class::Agent, now);
    let issued = o
        .issue(&SignedRequest::new(&agent, 0, 0), now)
        .unwrap()
        .unwrap();
    let response = Response::new(&agent, issued.challenge.clone(), solve(o, &issued));
    let results = o
        .verify_responses(&[response.clone(), response.clone()], now + 5)
        .unwrap();
    assert!(results[0].is_ok());
    assert_eq!(results[1].as_ref().unwrap_err().code(), "already_answered");

    // A challenge of the human family issued to the agent cannot exist; simulate the issuer
    // signing one and show the verifier refuses the class.
    let human_family = {
        let mut c = issued.challenge.challenge.clone();
        c.family = "arithmetic_reasoning".into();
        c.j = 1;
        c
    };
    let signed = SignedChallenge::new(&testing::key(1), human_family);
    let r = Response::new(&agent, signed, b"1".to_vec());
    // Not in the issuer's record: the issuer never issued it.
    assert_eq!(
        o.verify_response(&r, now + 5).unwrap().unwrap_err().code(),
        "unknown_challenge"
    );
}

#[test]
fn slots_gate_requests_and_responses() {
    let net = Net::with(1, |p| {
        p.slot_mode = SlotMode::Global;
        p.slot_ms = 10_000;
    });
    let o = &net.oracles[0];
    let agent = testing::key(40);
    let id = testing::identity_id(&agent);
    // The slot is placed by the window's beacon, which the oracle computes.
    let slot = o.slot(0, &id).unwrap();
    assert_eq!(slot, net.params.slot(0, &id, &o.beacon(0).unwrap()));
    net.register(&agent, Class::Agent, net.start(0));
    let before = o
        .issue(&SignedRequest::new(&agent, 0, 0), slot.start - 1)
        .unwrap();
    assert_eq!(before.unwrap_err().code(), "outside_slot");
    let after = o
        .issue(&SignedRequest::new(&agent, 0, 0), slot.end)
        .unwrap();
    assert_eq!(after.unwrap_err().code(), "outside_slot");
    // Challenge 0 opens at a secret moment in the first of the slot's two phases (one per try).
    let phase = (slot.end - slot.start) / 2;
    match o
        .issue(&SignedRequest::new(&agent, 0, 0), slot.start)
        .unwrap()
    {
        Err(hco_oracle::Reason::StepNotOpen { opens_at }) => {
            assert!(slot.start < opens_at && opens_at < slot.start + phase);
        }
        Ok(issued) => assert_eq!(issued.challenge.challenge.issued_at, slot.start),
        Err(other) => panic!("{other}"),
    }
    let issued = o
        .issue(&SignedRequest::new(&agent, 0, 0), slot.end - 1)
        .unwrap()
        .unwrap();
    // Answering after the slot but before the deadline is fine.
    let response = Response::new(&agent, issued.challenge.clone(), solve(o, &issued));
    o.verify_response(&response, slot.end + 500)
        .unwrap()
        .unwrap();
}

#[test]
fn decoders_reject_garbage_without_panicking() {
    assert_eq!(Response::decode(&[]).unwrap_err().code(), "malformed");
    assert_eq!(
        Response::decode(&vec![0u8; 70_000]).unwrap_err().code(),
        "message_too_large"
    );
    // A forged length prefix claiming a huge vector.
    let huge_len = [1u8, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
    assert!(Response::decode(&huge_len).is_err());
    let net = Net::new(1);
    let now = net.start(0) + 1;
    let agent = testing::key(50);
    net.register(&agent, Class::Agent, now);
    let issued = net.oracles[0]
        .issue(&SignedRequest::new(&agent, 0, 0), now)
        .unwrap()
        .unwrap();
    let bytes = codec::encode(&Response::new(&agent, issued.challenge, b"x".to_vec()));
    assert!(Response::decode(&bytes).is_ok());
    let mut trailing = bytes.clone();
    trailing.push(0);
    assert_eq!(Response::decode(&trailing).unwrap_err().code(), "malformed");
    for cut in 0..bytes.len() {
        assert!(Response::decode(&bytes[..cut]).is_err());
    }
}

#[test]
fn a_pruned_identity_is_unknown_to_issuance_even_after_its_profile_was_cached() {
    let net = Net::with(1, |p| {
        p.slot_mode = SlotMode::Global;
        p.slot_ms = 10_000;
    });
    let o = &net.oracles[0];
    let agent = testing::key(41);
    let id = testing::identity_id(&agent);
    net.register(&agent, Class::Agent, net.start(0));
    let slot = o.slot(1, &id).unwrap();
    // A refused request in window 1 stores nothing but caches the registered profile.
    let early = o
        .issue(&SignedRequest::new(&agent, 1, 0), slot.start - 1)
        .unwrap();
    assert_eq!(early.unwrap_err().code(), "outside_slot");
    // Never active, registered in window 0: pruned.
    assert_eq!(o.prune_idle_identities(1).unwrap().removed, 1);
    let after = o
        .issue(&SignedRequest::new(&agent, 1, 0), slot.end - 1)
        .unwrap();
    assert_eq!(after.unwrap_err().code(), "unknown_identity");
}

#[test]
fn a_wrong_narrative_answer_tells_the_client_only_that_it_is_wrong_and_the_operator_which_part() {
    use hco_oracle::policy::{Step, WindowPolicy};
    use std::sync::{Arc, Mutex};
    let net = Net::with(1, |p| {
        p.families.push(hco_oracle::FamilyConfig {
            name: "narrative_chain".into(),
            deadline_ms: 15_000,
            difficulty: 3,
            min_solve_ms: 0,
        });
        p.policies.agent = WindowPolicy {
            steps: vec![Step::Family("narrative_chain".into())],
            spares: 0,
        };
    });
    let oracle = &net.oracles[0];
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    assert!(oracle.observe_part_verdicts(move |v| {
        sink.lock()
            .unwrap()
            .push((v.family.to_owned(), v.t, v.j, v.parts.to_vec()));
    }));
    let now = net.start(0) + 1_000;
    let agent = testing::key(40);
    net.register(&agent, Class::Agent, now);
    let issued = oracle
        .issue(&SignedRequest::new(&agent, 0, 0), now)
        .unwrap()
        .unwrap();
    assert_eq!(issued.prompt.family, "narrative_chain");
    let right: Vec<String> = serde_json::from_slice(&crate::support::reference(
        oracle,
        &testing::key(1),
        &issued,
    ))
    .unwrap();
    assert_eq!(right.len(), 3);
    let mut wrong = right.clone();
    wrong[1] = "certainly not this".into();
    let wrong = serde_json::to_vec(&wrong).unwrap();

    // A forged answer (bad identity signature) is not judged, and not observed.
    let mut forged = Response::new(&agent, issued.challenge.clone(), wrong.clone());
    forged.sig.0[0] ^= 1;
    let refused = oracle.verify_response(&forged, now + 2_000).unwrap();
    assert_eq!(refused.unwrap_err().code(), "bad_identity_signature");
    assert!(seen.lock().unwrap().is_empty());

    // The identity's wrong answer: the client hears `answer_mismatch`, nothing about parts.
    let response = Response::new(&agent, issued.challenge.clone(), wrong);
    let refused = oracle.verify_response(&response, now + 2_000).unwrap();
    let reason = refused.unwrap_err();
    assert_eq!(reason.code(), "answer_mismatch");
    assert!(!reason.to_string().contains("part"), "{reason}");
    // The operator's observer is told which part was wrong, once.
    assert_eq!(
        *seen.lock().unwrap(),
        [("narrative_chain".to_owned(), 0, 0, vec![true, false, true])]
    );
    let again = oracle.verify_response(&response, now + 3_000).unwrap();
    assert_eq!(again.unwrap_err().code(), "already_answered");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn a_batch_of_request_signatures_is_judged_request_by_request() {
    let net = Net::new(1);
    let o = &net.oracles[0];
    let now = net.start(0) + 1_000;
    let keys: Vec<_> = (30..38).map(testing::key).collect();
    let mut reqs: Vec<_> = keys.iter().map(|k| SignedRequest::new(k, 0, 0)).collect();
    reqs[2].sig.0[0] ^= 1;
    reqs[5].body.version += 1;
    let codes: Vec<_> = o
        .check_request_signatures(reqs.clone())
        .into_iter()
        .map(|r| r.map(|c| c.request().clone()).map_err(|e| e.code()))
        .collect();
    for (i, (code, req)) in codes.iter().zip(&reqs).enumerate() {
        match i {
            2 => assert_eq!(code, &Err("bad_identity_signature")),
            5 => assert_eq!(
                code,
                &Err(o.check_request_signature(req.clone()).unwrap_err().code())
            ),
            _ => assert_eq!(code, &Ok(req.clone())),
        }
    }
    // The same as one by one, and a checked request is issued like an unchecked one.
    for (req, code) in reqs.iter().zip(&codes) {
        let single = o.check_request_signature(req.clone()).map_err(|e| e.code());
        assert_eq!(single.map(|c| c.request().clone()), *code);
    }
    net.register(&keys[0], Class::Agent, now);
    let checked = o
        .check_request_signatures(vec![reqs[0].clone()])
        .pop()
        .unwrap()
        .unwrap();
    let issued = o.issue_checked(&checked, now).unwrap().unwrap();
    assert_eq!(o.issue(&reqs[0], now).unwrap().unwrap(), issued);
}

/// Slot placement is the same on every member from the moment the window starts: the beacon
/// of `t` reads certificates of windows before `t − 1` only, so `t − 1`'s certificate arriving
/// during `t` (at a different moment on each member) does not move `t`'s slot, while one of
/// `t − 2` (held by every member before `t` starts) does place it.
#[test]
fn a_late_certificate_of_the_previous_window_does_not_move_the_slot() {
    use hco_oracle::{WindowCertificate, WindowSummary};
    let net = Net::with(1, |p| {
        p.slot_mode = SlotMode::Global;
        p.slot_ms = 10_000;
    });
    let o = &net.oracles[0];
    let id = testing::identity_id(&testing::key(41));
    let cert = |t: u64, b: u8| WindowCertificate {
        summary: WindowSummary {
            root: hco_oracle::Digest([b; 32]),
            ..WindowSummary::of(t, Vec::new(), net.params.digest()).0
        },
        signatures: Vec::new(),
    };
    let t = 5;
    let before = o.slot(t, &id).unwrap();
    let _ = o.ledger().put_certificate(&cert(t - 1, 7)).unwrap();
    assert_eq!(
        o.slot(t, &id).unwrap(),
        before,
        "t − 1's certificate moved the slot"
    );
    let (t2, slot2) = (t + 1, o.slot(t + 1, &id).unwrap());
    // For t + 1, t − 1 is two windows back: it counts, and was held before t + 1 started.
    let unplaced = net.params.slot(
        t2,
        &id,
        &hco_oracle::window::slot_beacon(t2, &net.params.digest(), &[]),
    );
    assert_ne!(
        slot2, unplaced,
        "t − 1's certificate does not place t + 1's slot"
    );
}
