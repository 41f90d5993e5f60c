//! The presence family through the oracle: a passkey enrolled by the identity, assertions bound
//! to the challenge id, the counter moving under the commit lock, replays (the first answer to a
//! challenge is final), the audit; and the visual opt-out.

use ed25519_dalek::SigningKey;
use hco_challenges::presence::{MAX_PASSKEYS, SoftAuthenticator};
use hco_challenges::{Class, Registry};
use hco_oracle::{
    FamilyConfig, IssuedChallenge, NetworkParams, Oracle, Profile, Response, SignedEnrolment,
    SignedRegister, SignedRequest, Step, WindowPolicy, testing,
};

use crate::support::Net;

const ORIGIN: &str = "http://localhost:8080";

/// Presence as the only family: people run `spares + 1` tries of one presence step per window,
/// agents have nothing to run.
pub(crate) fn presence_only(p: &mut NetworkParams, spares: u32) {
    p.families = vec![FamilyConfig {
        name: "presence".into(),
        deadline_ms: 20_000,
        difficulty: 1,
        min_solve_ms: 0,
    }];
    p.policies.human = WindowPolicy {
        steps: vec![Step::Family("presence".into())],
        spares,
    };
    p.policies.agent = WindowPolicy {
        steps: Vec::new(),
        spares: 0,
    };
}

fn presence_net() -> Net {
    Net::with(1, |p| presence_only(p, 3))
}

pub(crate) fn enrol(
    o: &Oracle,
    key: &SigningKey,
    soft: &mut SoftAuthenticator,
    at: u64,
) -> Result<(), String> {
    let presence = hco_challenges::presence::Presence::new(o.params().presence.clone())?;
    let id = testing::identity_id(key).0;
    let credential = soft.enrol(&presence, &id, at)?;
    let enrolment = SignedEnrolment::new(key, at, String::from_utf8(credential).unwrap());
    o.enrol_passkey(&enrolment, at)
        .unwrap()
        .map(|_| ())
        .map_err(|r| r.code().to_owned())
}

fn issue(o: &Oracle, key: &SigningKey, j: u32, now: u64) -> IssuedChallenge {
    issue_in(o, key, 0, j, now)
}

fn issue_in(o: &Oracle, key: &SigningKey, t: u64, j: u32, now: u64) -> IssuedChallenge {
    o.issue(&SignedRequest::new(key, t, j), now)
        .unwrap()
        .unwrap()
}

pub(crate) fn assertion(
    o: &Oracle,
    soft: &mut SoftAuthenticator,
    key: &SigningKey,
    issued: &IssuedChallenge,
) -> Vec<u8> {
    let presence = hco_challenges::presence::Presence::new(o.params().presence.clone()).unwrap();
    let passkeys: Vec<_> = o
        .passkeys(&testing::identity_id(key))
        .unwrap()
        .iter()
        .map(|r| hco_challenges::presence::Passkey::decode(&r.passkey).unwrap())
        .collect();
    soft.assert(
        &presence,
        &issued.challenge.challenge.challenge_id().0,
        &passkeys,
    )
    .unwrap()
}

fn verdict(
    o: &Oracle,
    key: &SigningKey,
    issued: &IssuedChallenge,
    answer: Vec<u8>,
    now: u64,
) -> String {
    let response = Response::new(key, issued.challenge.clone(), answer);
    match o.verify_response(&response, now).unwrap() {
        Ok(_) => "accepted".into(),
        Err(reason) => reason.code().into(),
    }
}

#[test]
fn presence_end_to_end_with_replays_counters_and_audit() {
    let net = presence_net();
    let o = &net.oracles[0];
    let now = net.start(0) + 1_000;
    let person = testing::key(20);
    let id = testing::identity_id(&person);
    net.register(&person, Class::Human, now);
    let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();

    // Before enrolment nothing can pass, and that first answer is final.
    let first = issue(o, &person, 0, now);
    assert_eq!(first.prompt.family, "presence");
    assert_eq!(
        verdict(o, &person, &first, b"{}".to_vec(), now),
        "no_passkey_enrolled"
    );
    assert_eq!(
        o.ledger().answered(0, &id, 0).unwrap().unwrap().code,
        "no_passkey_enrolled"
    );
    enrol(o, &person, &mut soft, now).unwrap();
    let a0 = assertion(o, &mut soft, &person, &first);
    assert_eq!(
        verdict(o, &person, &first, a0.clone(), now + 10),
        "already_answered"
    );

    // j=0's assertion answers only j=0: on j=1 it is a wrong (and final) answer.
    let second = issue(o, &person, 1, now + 20);
    assert_eq!(
        verdict(o, &person, &second, a0, now + 30),
        "assertion_challenge_mismatch"
    );
    let a1 = assertion(o, &mut soft, &person, &second);
    assert_eq!(
        verdict(o, &person, &second, a1, now + 40),
        "already_answered"
    );

    // Late: refused before it is judged, nothing stored; the expiry uses a try.
    let third = issue(o, &person, 2, now + 50);
    let late = assertion(o, &mut soft, &person, &third);
    let expired = third.challenge.challenge.deadline + 1;
    assert_eq!(
        verdict(o, &person, &third, late, expired),
        "challenge_expired"
    );
    assert!(!o.ledger().is_answered(0, &id, 2).unwrap());

    // The last try: accepted, then replays of the same assertion or a new one are refused.
    let fourth = issue(o, &person, 3, expired);
    let a3 = assertion(o, &mut soft, &person, &fourth);
    assert_eq!(
        verdict(o, &person, &fourth, a3.clone(), expired + 10),
        "accepted"
    );
    assert_eq!(
        verdict(o, &person, &fourth, a3, expired + 20),
        "already_answered"
    );
    let again = assertion(o, &mut soft, &person, &fourth);
    assert_eq!(
        verdict(o, &person, &fourth, again, expired + 20),
        "already_answered"
    );
    assert_eq!(o.active_set(0).unwrap(), vec![(id, Class::Human)]);

    // A counter that went back: an assertion made for window 1's challenge, held back while a
    // newer one is accepted in window 2, then sent (window 1 is still in its grace period).
    let w1 = issue_in(o, &person, 1, 0, net.start(2) - 5_000);
    let held = assertion(o, &mut soft, &person, &w1);
    let w2 = issue_in(o, &person, 2, 0, net.start(2));
    let newer = assertion(o, &mut soft, &person, &w2);
    assert_eq!(
        verdict(o, &person, &w2, newer, net.start(2) + 10),
        "accepted"
    );
    let stored = o.passkeys(&id).unwrap()[0].counter;
    assert_eq!(
        verdict(o, &person, &w1, held, net.start(2) + 20),
        "counter_not_increased"
    );
    // The counter is unchanged; the rejection was a judged answer, so it is final.
    assert_eq!(o.passkeys(&id).unwrap()[0].counter, stored);
    let fresh = assertion(o, &mut soft, &person, &w1);
    assert_eq!(
        verdict(o, &person, &w1, fresh, net.start(2) + 30),
        "already_answered"
    );

    // After the window, the audit re-checks every assertion against the enrolled passkey.
    for t in [0, 2] {
        let closed = net.params.closes_at(t);
        let reveal = o.reveal(t, closed).unwrap().unwrap().reveal;
        o.add_reveal(&reveal, closed).unwrap().unwrap();
        let report = o.audit(t).unwrap();
        assert_eq!(
            (report.checked, report.findings.len()),
            (1, 0),
            "{report:?}"
        );
    }
}

#[test]
fn enrolment_is_checked_and_bounded() {
    let net = presence_net();
    let o = &net.oracles[0];
    let now = net.start(0) + 1_000;
    let person = testing::key(21);
    let agent = testing::key(22);
    let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();

    assert_eq!(
        enrol(o, &person, &mut soft, now).unwrap_err(),
        "unknown_identity"
    );
    net.register(&person, Class::Human, now);
    net.register(&agent, Class::Agent, now);
    assert_eq!(enrol(o, &agent, &mut soft, now).unwrap_err(), "wrong_class");

    // A ceremony started long ago, or signed by someone else, or made for another time.
    let presence = hco_challenges::presence::Presence::new(o.params().presence.clone()).unwrap();
    let id = testing::identity_id(&person).0;
    let old = now - hco_oracle::ENROLMENT_TTL_MS - 60_000;
    let credential = String::from_utf8(soft.enrol(&presence, &id, old).unwrap()).unwrap();
    let stale = SignedEnrolment::new(&person, old, credential.clone());
    assert_eq!(
        o.enrol_passkey(&stale, now).unwrap().unwrap_err().code(),
        "enrolment_stale"
    );
    let mut forged = SignedEnrolment::new(&person, old, credential.clone());
    forged.sig.0[3] ^= 1;
    assert_eq!(
        o.record_enrolment(&forged).unwrap().unwrap_err().code(),
        "bad_identity_signature"
    );
    let retimed = SignedEnrolment::new(&person, old + 1, credential);
    assert_eq!(
        o.record_enrolment(&retimed).unwrap().unwrap_err().code(),
        "invalid_enrolment"
    );
    assert!(
        o.passkeys(&testing::identity_id(&person))
            .unwrap()
            .is_empty()
    );

    // Up to the limit, each authenticator once; the same enrolment again is idempotent.
    for i in 0..MAX_PASSKEYS as u64 {
        let mut other = SoftAuthenticator::new(ORIGIN).unwrap();
        enrol(o, &person, &mut other, now + i).unwrap();
    }
    let mut extra = SoftAuthenticator::new(ORIGIN).unwrap();
    assert_eq!(
        enrol(o, &person, &mut extra, now).unwrap_err(),
        "too_many_passkeys"
    );
    let first = o.passkeys(&testing::identity_id(&person)).unwrap()[0].clone();
    assert!(o.record_enrolment(&first.enrolment).unwrap().is_ok());
    assert_eq!(
        o.passkeys(&testing::identity_id(&person)).unwrap().len(),
        MAX_PASSKEYS
    );
}

#[test]
fn a_visual_opt_out_draws_only_non_visual_families() {
    // One drawn step with 15 spares: sixteen draws per window, each after the previous one was
    // answered (wrong, to move on).
    let both = Net::with(1, |p| {
        p.policies.human = WindowPolicy {
            steps: vec![Step::Drawn],
            spares: 15,
        };
        p.families = [
            "visual_match",
            "attention",
            "interactive_reasoning",
            "arithmetic_reasoning",
        ]
        .into_iter()
        .map(|name| FamilyConfig {
            name: name.into(),
            deadline_ms: 20_000,
            difficulty: Registry::builtin()
                .get(name)
                .unwrap()
                .default_params()
                .difficulty,
            min_solve_ms: 0,
        })
        .collect();
    });
    let o = &both.oracles[0];
    let now = both.start(0) + 1_000;
    let sighted = testing::key(30);
    let opted = testing::key(31);
    let profile = Profile {
        class: Class::Human,
        visual_opt_out: true,
    };
    o.register(&SignedRegister::new(&sighted, Class::Human, now), now)
        .unwrap()
        .unwrap();
    o.register(&SignedRegister::with_profile(&opted, profile, now), now)
        .unwrap()
        .unwrap();
    let drawn = |key: &SigningKey| -> Vec<String> {
        (0..16)
            .map(|j| {
                let issued = issue(o, key, j, now);
                let wrong = Response::new(key, issued.challenge.clone(), b"?".to_vec());
                let reason = o.verify_response(&wrong, now).unwrap().unwrap_err();
                assert!(reason.is_final_answer(), "{reason}");
                issued.prompt.family
            })
            .collect()
    };
    // The three picture families are visual: the opt-out draws only arithmetic_reasoning.
    assert!(drawn(&opted).iter().all(|f| f == "arithmetic_reasoning"));
    let sighted_draws = drawn(&sighted);
    assert!(
        sighted_draws.iter().any(|f| f != "arithmetic_reasoning"),
        "{sighted_draws:?}"
    );
    // The opt-out keeps the policy: the same steps and tries per window.
    assert!(
        !Registry::builtin()
            .get("arithmetic_reasoning")
            .unwrap()
            .is_visual()
    );

    let visual_only = Net::with(1, |p| {
        p.families = vec![FamilyConfig {
            name: "visual_match".into(),
            deadline_ms: 20_000,
            difficulty: Registry::builtin()
                .get("visual_match")
                .unwrap()
                .default_params()
                .difficulty,
            min_solve_ms: 0,
        }];
    });
    let o = &visual_only.oracles[0];
    let reg = SignedRegister::with_profile(&opted, profile, now);
    assert_eq!(
        o.register(&reg, now).unwrap().unwrap_err().code(),
        "no_family_for_profile"
    );
}

#[test]
fn counters_move_on_every_node_that_records_the_acceptance() {
    let net = Net::with(2, |p| presence_only(p, 1));
    let now = net.start(0) + 1_000;
    let person = testing::key(23);
    net.register(&person, Class::Human, now);
    let issuer = net.issuer_for(&person, 0);
    let other = net
        .oracles
        .iter()
        .find(|o| o.node_id() != issuer.node_id())
        .unwrap();
    let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();
    enrol(issuer, &person, &mut soft, now).unwrap();
    let enrolment = issuer.passkeys(&testing::identity_id(&person)).unwrap()[0]
        .enrolment
        .clone();
    other.record_enrolment(&enrolment).unwrap().unwrap();

    let issued = issue(issuer, &person, 0, now);
    let answer = assertion(issuer, &mut soft, &person, &issued);
    let response = Response::new(&person, issued.challenge.clone(), answer);
    let sealed = issuer.verify_response(&response, now).unwrap().unwrap();
    let counter = |o: &Oracle| o.passkeys(&testing::identity_id(&person)).unwrap()[0].counter;
    assert!(counter(issuer) > 0);
    assert_eq!(counter(other), 0);
    other
        .record_remote(
            std::slice::from_ref(&sealed),
            crate::support::at_once(std::slice::from_ref(&sealed)),
        )
        .unwrap()
        .unwrap();
    assert_eq!(counter(other), counter(issuer));
}

#[test]
fn touch_prompts_open_on_their_beats_and_keep_their_reaction_window() {
    // Three presence prompts and a spare in a global slot: prompt j opens on beat j (the beats
    // are the slot's last 4 × 6 s), is issued at its opening whenever it is fetched, and is due
    // 5 s later.
    const REACTION: u64 = 5_000;
    const JITTER: u64 = 1_000;
    let net = Net::with(1, |p| {
        presence_only(p, 1);
        p.families[0].deadline_ms = REACTION;
        p.policies.human.steps = vec![Step::Family("presence".into()); 3];
        p.slot_mode = hco_oracle::SlotMode::Global;
        p.slot_ms = 40_000;
        p.prompt_jitter_ms = JITTER;
    });
    let o = &net.oracles[0];
    let person = testing::key(21);
    let id = testing::identity_id(&person);
    net.register(&person, Class::Human, net.start(0));
    let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();
    enrol(o, &person, &mut soft, net.start(0)).unwrap();
    let slot = o.slot(0, &id).unwrap();
    let opening = |j: u32, at: u64| match o.issue(&SignedRequest::new(&person, 0, j), at).unwrap() {
        Err(hco_oracle::Reason::StepNotOpen { opens_at }) => opens_at,
        other => panic!("prompt {j} asked at {at}: {other:?}"),
    };
    let beat = |j: u32| net.params.beat(&slot, Class::Human, j, REACTION);

    // Prompt 0: asked before its beat, told when; asked 3 s after it opened, it is issued at
    // the opening, so only 2 s of its reaction window are left.
    let opens0 = opening(0, slot.start);
    assert!(beat(0).contains(&opens0), "{opens0} not in {:?}", beat(0));
    assert_eq!(beat(0).start, slot.end - 4 * (REACTION + JITTER));
    let p0 = issue(o, &person, 0, opens0 + 3_000);
    assert_eq!(p0.challenge.challenge.issued_at, opens0);
    assert_eq!(p0.challenge.challenge.deadline, opens0 + REACTION);
    let a0 = assertion(o, &mut soft, &person, &p0);
    assert_eq!(verdict(o, &person, &p0, a0, opens0 + 4_000), "accepted");

    // Prompt 1: fetched after its reaction window ended, it comes already expired (a missed
    // prompt uses the spare); answering it is `challenge_expired`.
    let opens1 = opening(1, opens0 + 4_000);
    assert!(beat(1).contains(&opens1));
    assert_eq!(beat(1).start, beat(0).start + REACTION + JITTER);
    let p1 = issue(o, &person, 1, opens1 + REACTION + 500);
    assert_eq!(p1.challenge.challenge.issued_at, opens1);
    let a1 = assertion(o, &mut soft, &person, &p1);
    assert_eq!(
        verdict(o, &person, &p1, a1, opens1 + REACTION + 600),
        "challenge_expired"
    );

    // Prompts 2 and 3 (the spare) on their beats: the identity is active.
    let mut at = opens1 + REACTION + 600;
    for j in 2..4 {
        let opens = opening(j, at);
        assert!(beat(j).contains(&opens));
        let p = issue(o, &person, j, opens + 1_200);
        let a = assertion(o, &mut soft, &person, &p);
        assert_eq!(verdict(o, &person, &p, a, opens + 1_500), "accepted");
        at = opens + 1_500;
    }
    assert_eq!(o.active_set(0).unwrap(), vec![(id, Class::Human)]);

    // The audit regenerates every opening: every prompt was issued exactly on it.
    let closed = net.params.closes_at(0);
    let reveal = o.reveal(0, closed).unwrap().unwrap().reveal;
    o.add_reveal(&reveal, closed).unwrap().unwrap();
    let report = o.audit(0).unwrap();
    assert_eq!(
        (report.checked, report.findings.len()),
        (3, 0),
        "{report:?}"
    );
}

#[test]
fn beats_must_fit_in_the_slot() {
    let registry = Registry::builtin();
    let mut p = testing::params_for(&[hco_oracle::NodeId([1; 32])]);
    presence_only(&mut p, 1);
    p.families[0].deadline_ms = 5_000;
    p.policies.human.steps = vec![Step::Family("presence".into()); 3];
    p.slot_mode = hco_oracle::SlotMode::Global;
    p.window_ms = 3_600_000;
    // Four beats of 6 s at the slot's end need 24 s.
    p.slot_ms = 24_000;
    p.validate(&registry).unwrap();
    p.slot_ms = 23_999;
    let err = p.validate(&registry).unwrap_err().to_string();
    assert!(err.contains("need 4 beats"), "{err}");
    // A cognitive step first leaves its try out of the beats; without the spare three fit.
    p.families.push(FamilyConfig {
        name: "arithmetic_reasoning".into(),
        deadline_ms: 10_000,
        difficulty: 3,
        min_solve_ms: 0,
    });
    p.policies.human.steps.insert(0, Step::Drawn);
    assert!(p.validate(&registry).is_err());
    p.policies.human.spares = 0;
    p.validate(&registry).unwrap();
    // An open slot has no beats.
    p.slot_mode = hco_oracle::SlotMode::Open;
    p.validate(&registry).unwrap();
}

/// A passkey split: a person enrols four passkeys at one member and a fifth at another at the
/// same time (each member keeps the first four it sees). The issuer holding the fifth accepts an
/// assertion made with it; the member that never kept it records the acceptance and audits it
/// without finding anything against the issuer (it cannot check a credential it does not hold,
/// and holding the most a member keeps it cannot tell a split from a forgery).
#[test]
fn a_passkey_split_is_no_evidence_against_the_issuer() {
    let net = Net::with(2, |p| presence_only(p, 1));
    let now = net.start(0) + 1_000;
    let person = testing::key(24);
    net.register(&person, Class::Human, now);
    let issuer = net.issuer_for(&person, 0);
    let other = net
        .oracles
        .iter()
        .find(|o| o.node_id() != issuer.node_id())
        .unwrap();
    let mut four = SoftAuthenticator::new(ORIGIN).unwrap();
    for i in 0..4 {
        enrol(other, &person, &mut four, now + i).unwrap();
    }
    let mut fifth = SoftAuthenticator::new(ORIGIN).unwrap();
    enrol(issuer, &person, &mut fifth, now).unwrap();
    let id = testing::identity_id(&person);
    assert_eq!(other.passkeys(&id).unwrap().len(), 4);
    assert_eq!(issuer.passkeys(&id).unwrap().len(), 1);

    let issued = issue(issuer, &person, 0, now + 10);
    let answer = assertion(issuer, &mut fifth, &person, &issued);
    let response = Response::new(&person, issued.challenge.clone(), answer);
    let sealed = issuer
        .verify_response(&response, now + 20)
        .unwrap()
        .unwrap();
    assert_eq!(
        other
            .record_remote(
                std::slice::from_ref(&sealed),
                crate::support::at_once(std::slice::from_ref(&sealed))
            )
            .unwrap(),
        Ok(1)
    );

    let closed = net.params.closes_at(0);
    let reveal = issuer.reveal(0, closed).unwrap().unwrap().reveal;
    other.add_reveal(&reveal, closed).unwrap().unwrap();
    let report = other.audit(0).unwrap();
    assert_eq!(report.findings.len(), 0, "{report:?}");
    assert!(other.ledger().evidence(0).unwrap().is_empty());
}
