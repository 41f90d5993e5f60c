//! Multi-stage challenges (`interactive_reasoning`) through `Oracle::answer_stage`: a right
//! partial answer unlocks the next stage's prompt (re-derived from the seed, nothing stored),
//! a wrong one is final like a wrong answer, and every malformed or foreign request gets its
//! code and leaves the window's trees as they were.

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_oracle::secret::{challenge_seed, node_secret, window_secret};
use hco_oracle::{
    FamilyConfig, IssuedChallenge, Oracle, Reason, Response, Step, WindowPolicy, testing,
};

use crate::support::{Net, footprint, reference, register_and_issue};

/// One node whose human identities draw `interactive_reasoning` alone, 20 s to answer.
fn net() -> Net {
    Net::with(1, |p| {
        p.policies.human = WindowPolicy {
            steps: vec![Step::Family("interactive_reasoning".into())],
            spares: 0,
        };
        p.families.push(FamilyConfig {
            name: "interactive_reasoning".into(),
            deadline_ms: 20_000,
            difficulty: 2,
            min_solve_ms: 0,
        });
    })
}

/// A registered person and its issued challenge of window 0, at the window's start + 1 s.
fn issued(net: &Net, n: u64) -> (SigningKey, IssuedChallenge, u64) {
    let o = &net.oracles[0];
    let key = testing::key(100 + n);
    let now = net.start(0) + 1_000;
    let issued = register_and_issue(o, &key, Class::Human, now);
    assert_eq!(issued.prompt.family, "interactive_reasoning");
    (key, issued, now)
}

fn stage(o: &Oracle, key: &SigningKey, c: &IssuedChallenge, answer: &[u8], now: u64) -> Reason {
    let r = Response::new(key, c.challenge.clone(), answer.to_vec());
    match o.answer_stage(&r, now).unwrap() {
        Ok((k, _)) => panic!(
            "stage {k} unlocked by {:?}",
            String::from_utf8_lossy(answer)
        ),
        Err(reason) => reason,
    }
}

/// The reference answer `x,y|x,y;…` as the stage-1 request and the final answer.
fn split(right: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let text = std::str::from_utf8(right).unwrap();
    let (first, _) = text.split_once('|').unwrap();
    (format!("stage 1:{first}").into_bytes(), right.to_vec())
}

#[test]
fn a_right_first_answer_unlocks_the_second_picture_and_the_final_answer_is_accepted() {
    let net = net();
    let o = &net.oracles[0];
    let (key, issued, now) = issued(&net, 1);
    let (stage_one, last) = split(&reference(o, &testing::key(1), &issued));

    let r = Response::new(&key, issued.challenge.clone(), stage_one);
    let (k, prompt) = o.answer_stage(&r, now + 3_000).unwrap().unwrap();
    assert_eq!(k, 2);
    // The second picture is the seed's, re-derived: asking again shows the same one.
    let c = &issued.challenge.challenge;
    let seed = challenge_seed(
        &window_secret(&node_secret(&testing::key(1)), 0),
        &c.id,
        0,
        0,
    );
    let family = o.registry().get("interactive_reasoning").unwrap();
    let params = o.params().family("interactive_reasoning").unwrap();
    assert_eq!(
        Some(prompt.clone()),
        family.stage_prompt(&seed, &params.family_params(), 2)
    );
    assert_ne!(prompt, issued.prompt, "stage 2 shows another picture");
    assert_eq!(
        o.answer_stage(&r, now + 4_000).unwrap().unwrap(),
        (2, prompt)
    );
    assert_eq!(footprint(o, 0, &c.id), (1, 0, 0), "a stage stores nothing");

    let response = Response::new(&key, issued.challenge.clone(), last);
    o.verify_response(&response, now + 7_000).unwrap().unwrap();
    assert_eq!(footprint(o, 0, &c.id), (1, 0, 1));
    // Answered: no stage is shown any more.
    let again = Response::new(&key, issued.challenge.clone(), r.answer.clone());
    assert_eq!(
        o.answer_stage(&again, now + 9_000).unwrap().unwrap_err(),
        Reason::AlreadyAnswered
    );
}

#[test]
fn a_wrong_first_answer_is_final() {
    let net = net();
    let o = &net.oracles[0];
    let (key, issued, now) = issued(&net, 2);
    let (stage_one, last) = split(&reference(o, &testing::key(1), &issued));
    let c = &issued.challenge.challenge;

    // A click in the picture's far corner from the right shape (360 × 270 pixels).
    let text = String::from_utf8(stage_one.clone()).unwrap();
    let (x, y) = text["stage 1:".len()..].split_once(',').unwrap();
    let far = |v: &str, side: u32| {
        if v.parse::<u32>().unwrap() < side / 2 {
            side - 3
        } else {
            2
        }
    };
    let wrong = format!("stage 1:{},{}", far(x, 360), far(y, 270));
    let wrong = stage(o, &key, &issued, wrong.as_bytes(), now + 3_000);
    assert_eq!(wrong.code(), "answer_mismatch", "{wrong}");
    assert_eq!(
        footprint(o, 0, &c.id),
        (1, 1, 0),
        "the wrong answer is recorded"
    );
    assert_eq!(
        stage(o, &key, &issued, &stage_one, now + 4_000),
        Reason::AlreadyAnswered
    );
    let response = Response::new(&key, issued.challenge.clone(), last);
    assert_eq!(
        o.verify_response(&response, now + 5_000)
            .unwrap()
            .unwrap_err(),
        Reason::AlreadyAnswered
    );
    assert_eq!(footprint(o, 0, &c.id), (1, 1, 0));
}

#[test]
fn bad_stage_requests_get_their_code_and_leave_nothing() {
    let net = net();
    let o = &net.oracles[0];
    let (key, issued, now) = issued(&net, 3);
    let (stage_one, last) = split(&reference(o, &testing::key(1), &issued));
    let c = issued.challenge.challenge.clone();
    let before = footprint(o, 0, &c.id);

    let oversized = [b"stage 1:".as_slice(), &vec![b'1'; 5_000]].concat();
    for (answer, code) in [
        (&b"10,20"[..], "malformed"),
        (b"stage :10,20", "malformed"),
        (b"stage 0:10,20", "no_such_stage"),
        (b"stage 2:10,20", "no_such_stage"),
        (b"stage 7:10,20", "no_such_stage"),
        (&oversized, "answer_too_large"),
    ] {
        let reason = stage(o, &key, &issued, answer, now + 2_000);
        assert_eq!(reason.code(), code, "{reason}");
        assert_eq!(footprint(o, 0, &c.id), before);
    }

    // Signed by another identity.
    let other = testing::key(999);
    let r = Response::new(&other, issued.challenge.clone(), stage_one.clone());
    assert_eq!(
        o.answer_stage(&r, now + 2_000).unwrap().unwrap_err(),
        Reason::BadIdentitySignature
    );
    // A challenge the issuer never signed (its deadline moved).
    let mut forged = issued.challenge.clone();
    forged.challenge.deadline += 60_000;
    let r = Response::new(&key, forged, stage_one.clone());
    assert_eq!(
        o.answer_stage(&r, now + 2_000).unwrap().unwrap_err().code(),
        "bad_issuer_signature"
    );
    // Past the deadline.
    let r = Response::new(&key, issued.challenge.clone(), stage_one.clone());
    let late = o.answer_stage(&r, c.deadline + 1).unwrap().unwrap_err();
    assert_eq!(late.code(), "challenge_expired", "{late}");
    assert_eq!(footprint(o, 0, &c.id), before);

    // None of that used the challenge up.
    o.answer_stage(&r, now + 3_000).unwrap().unwrap();
    let response = Response::new(&key, issued.challenge.clone(), last);
    o.verify_response(&response, now + 6_000).unwrap().unwrap();
}
