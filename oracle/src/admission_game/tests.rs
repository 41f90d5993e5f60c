use hco_challenges::narrative::{RetiredSets, ScheduleParams, SetSchedule};

use super::*;

/// The starter corpus, `per_window` sets per hour-long window from window 0 (the game draws
/// the second half).
fn sets(reuse: bool, per_window: u32) -> WindowSets {
    let schedule = ScheduleParams {
        start_window: 0,
        sets_per_window: per_window,
        reuse,
    };
    WindowSets {
        schedule: SetSchedule::new(Corpus::embedded(), &RetiredSets::default(), schedule),
        genesis_ms: 0,
        window_ms: HOUR,
        share: Share::default(),
    }
}

const HOUR: u64 = 3_600_000;

fn game() -> AdmissionGame {
    AdmissionGame::new(
        GameParams::default(),
        crate::testing::key(1),
        Corpus::embedded().clone(),
        sets(true, 10),
    )
}

/// A start signed by an identity of its own for each distinct `nonce`, in the window of `now`.
fn begin_from(
    g: &AdmissionGame,
    client: Option<ClientKey>,
    nonce: &[u8],
    now: Timestamp,
) -> Result<RoundView, GameError> {
    let key = SigningKey::from_bytes(blake3::hash(nonce).as_bytes());
    let start = SessionStart::sign(&key, &g.node(), g.window_at(now), Digest([7; 32]));
    g.start(client, &start, now)
}

fn begin(g: &AdmissionGame, nonce: &[u8], now: Timestamp) -> Result<RoundView, GameError> {
    begin_from(g, None, nonce, now)
}

fn play_round(g: &AdmissionGame, v: &RoundView, now: Timestamp) -> Result<Step, GameError> {
    let key = g.answer_key(&v.session).unwrap();
    g.answer(&v.session, &v.token, key[0].as_bytes(), 0, now)
}

#[test]
fn a_full_session_admits_once() {
    let g = game();
    let r1 = begin(&g, b"n", 1_000).unwrap();
    let Step::Next(r2) = play_round(&g, &r1, 2_000).unwrap() else {
        panic!()
    };
    assert_eq!(r2.round, 2);
    assert_ne!(r2.token, r1.token);
    let Step::Next(r3) = play_round(&g, &r2, 3_000).unwrap() else {
        panic!()
    };
    let Step::Admitted(cred) = g
        .answer(
            &r3.session,
            &r3.token,
            g.answer_key(&r3.session).unwrap()[0].as_bytes(),
            0,
            4_000,
        )
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(cred.admission.round_ms, [1_000, 1_000, 1_000]);
    cred.verify(&crate::testing::node_id(&crate::testing::key(1)), 5_000)
        .unwrap();
    // Completed once: replaying the last round is refused.
    assert_eq!(
        g.answer(&r3.session, &r3.token, b"x", 0, 4_100)
            .unwrap_err()
            .code(),
        "session_closed"
    );
}

#[test]
fn one_client_cannot_fill_the_session_table() {
    let g = AdmissionGame::new(
        GameParams {
            max_sessions_per_client: 2,
            ..GameParams::default()
        },
        crate::testing::key(1),
        Corpus::embedded().clone(),
        sets(true, 10),
    );
    let (a, b) = ([1; 16], [2; 16]);
    let first = begin_from(&g, Some(a), b"1", 0).unwrap();
    begin_from(&g, Some(a), b"2", 0).unwrap();
    assert_eq!(
        begin_from(&g, Some(a), b"3", 0).unwrap_err(),
        GameError::TooManySessions { limit: 2 }
    );
    assert_eq!(
        GameError::TooManySessions { limit: 2 }.code(),
        "too_many_sessions"
    );
    // Another client is still served; a refused start left no session behind.
    begin_from(&g, Some(b), b"4", 0).unwrap();
    assert_eq!(g.state.lock().unwrap().sessions.len(), 3);
    // A session that ends (here: answered late) frees its place, and so does one that expires.
    assert_eq!(
        g.answer(&first.session, &first.token, b"x", 0, 16_000)
            .unwrap_err()
            .code(),
        "round_expired"
    );
    begin_from(&g, Some(a), b"5", 16_010).unwrap();
    assert!(begin_from(&g, Some(a), b"6", 16_020).is_err());
    begin_from(&g, Some(a), b"7", 200_000).unwrap();
}

#[test]
fn failures_end_the_session_with_codes() {
    let g = game();
    let r1 = begin(&g, b"a", 0).unwrap();
    // Late: beyond τ even after subtracting the RTT.
    assert_eq!(
        play_round(&g, &r1, 20_000).unwrap_err().code(),
        "round_expired"
    );
    assert_eq!(
        play_round(&g, &r1, 20_001).unwrap_err().code(),
        "session_closed"
    );
    // The RTT is subtracted.
    let r1 = begin(&g, b"b", 0).unwrap();
    let key = g.answer_key(&r1.session).unwrap();
    assert!(
        g.answer(&r1.session, &r1.token, key[0].as_bytes(), 6_000, 20_000)
            .is_ok()
    );
    // Skipped endpoint; a wrong answer in round 2, which is not said until the end; unknown
    // session; timeout; a malformed answer, also said only at the end.
    let r1 = begin(&g, b"c", 0).unwrap();
    let Step::Next(r2) = play_round(&g, &r1, 100).unwrap() else {
        panic!()
    };
    assert_eq!(
        g.answer(&r2.session, &r1.token, b"x", 0, 200)
            .unwrap_err()
            .code(),
        "wrong_endpoint"
    );
    let Step::Next(r3) = g
        .answer(&r2.session, &r2.token, b"surely wrong", 0, 200)
        .unwrap()
    else {
        panic!("a wrong answer must not end the session before its third round")
    };
    assert_eq!(play_round(&g, &r3, 300).unwrap_err().code(), "not_admitted");
    assert_eq!(
        g.answer(&Digest([1; 32]), &r2.token, b"x", 0, 200)
            .unwrap_err()
            .code(),
        "unknown_session"
    );
    let r1 = begin(&g, b"d", 0).unwrap();
    assert_eq!(
        play_round(&g, &r1, 130_000).unwrap_err().code(),
        "session_expired"
    );
    let r1 = begin(&g, b"e", 0).unwrap();
    let Step::Next(r2) = g
        .answer(&r1.session, &r1.token, &[0xff, 0xfe], 0, 10)
        .unwrap()
    else {
        panic!()
    };
    let Step::Next(r3) = play_round(&g, &r2, 20).unwrap() else {
        panic!()
    };
    assert_eq!(play_round(&g, &r3, 30).unwrap_err(), GameError::NotAdmitted);
}

/// The guessing oracle is gone: a script trying every candidate of round 1 sees the same reply
/// (round 2's view, in the same shape) whichever it sends, so nothing tells it the right one.
#[test]
fn a_round_reply_does_not_tell_a_right_answer_from_a_wrong_one() {
    let g = game();
    let v = begin(&g, b"probe", 0).unwrap();
    let right = g.answer_key(&v.session).unwrap()[0].clone();
    let mut replies = Vec::new();
    for (i, guess) in ["surely wrong", right.as_str()].into_iter().enumerate() {
        let v = begin(&g, format!("probe {i}").as_bytes(), 0).unwrap();
        let reply = g.answer(&v.session, &v.token, guess.as_bytes(), 0, 10);
        replies.push(matches!(reply, Ok(Step::Next(ref n)) if n.round == 2));
    }
    assert_eq!(replies, [true, true]);
}

#[test]
fn sessions_draw_from_the_games_half_of_their_windows_slice_and_stop_when_the_schedule_ends() {
    let g = AdmissionGame::new(
        GameParams::default(),
        crate::testing::key(1),
        Corpus::embedded().clone(),
        sets(false, 2),
    );
    let schedule = sets(false, 2).schedule;
    let narratives_of = |t: u64| -> Vec<String> {
        schedule
            .game_sets(t)
            .unwrap()
            .iter()
            .map(|id| {
                Corpus::embedded().get(id).unwrap().parts[0]
                    .narrative
                    .clone()
            })
            .collect()
    };
    for t in 0..schedule.windows() {
        let allowed = narratives_of(t);
        let challenges: Vec<&String> = schedule.challenge_sets(t).unwrap().iter().collect();
        // Three at once: one game set a window, three questions a part.
        for i in 0..3u8 {
            let now = t * HOUR + u64::from(i) * 1000;
            let v = begin(&g, &[i], now).unwrap();
            assert!(allowed.contains(&v.narrative), "window {t}");
            let shown = Corpus::embedded()
                .sets()
                .iter()
                .find(|set| set.parts[0].narrative == v.narrative)
                .map(|set| &set.id);
            assert!(
                shown.is_some_and(|id| !challenges.contains(&id)),
                "window {t}: the game showed one of the window's challenge sets"
            );
        }
    }
    let end = schedule.end_window();
    let err = begin(&g, b"late", end * HOUR).unwrap_err();
    assert_eq!(err, GameError::CorpusExhausted { t: end });
    assert_eq!(err.code(), "corpus_exhausted");
    assert!(GameError::CODES.contains(&err.code()));
}

#[test]
fn a_session_is_bound_to_an_identity_that_signed_its_start_for_this_window() {
    let g = game();
    let key = crate::testing::key(30);
    let now = 5 * HOUR + 10;
    let signed = |window, nonce| SessionStart::sign(&key, &g.node(), window, Digest([nonce; 32]));
    // Signed for another window, or for another node, or tampered: refused, nothing kept.
    assert_eq!(
        g.start(None, &signed(4, 1), now).unwrap_err(),
        GameError::WrongWindow {
            named: 4,
            current: 5
        }
    );
    let elsewhere = SessionStart::sign(&key, &NodeId([9; 32]), 5, Digest([1; 32]));
    assert_eq!(
        g.start(None, &elsewhere, now).unwrap_err().code(),
        "bad_identity_signature"
    );
    let mut tampered = signed(5, 1);
    tampered.nonce = Digest([2; 32]);
    assert_eq!(
        g.start(None, &tampered, now).unwrap_err().code(),
        "bad_identity_signature"
    );
    assert!(g.state.lock().unwrap().sessions.is_empty());
    // Two sessions a window per identity (the default), then refused until the next window.
    g.start(None, &signed(5, 1), now).unwrap();
    g.start(None, &signed(5, 2), now).unwrap();
    let err = g.start(None, &signed(5, 3), now).unwrap_err();
    assert_eq!(err, GameError::IdentityLimit { limit: 2 });
    assert_eq!(err.code(), "identity_session_limit");
    g.start(None, &signed(6, 3), 6 * HOUR).unwrap();
    // The credential names the identity and carries its signature over the start.
    let g = game();
    let mut view = g.start(None, &signed(5, 1), now).unwrap();
    let credential = loop {
        match play_round(&g, &view, now + 100).unwrap() {
            Step::Next(next) => view = next,
            Step::Admitted(c) => break c,
        }
    };
    assert_eq!(
        credential.admission.identity,
        crate::testing::identity_id(&key)
    );
    assert_eq!(credential.admission.window, 5);
    credential.verify(&g.node(), now + 200).unwrap();
}

/// Every way a session ends without admission retires the questions it showed for the rest of
/// the window: no second session, of any identity, sees them; an admitted session retires
/// nothing. Once every question is retired the game refuses until the next window.
#[test]
fn questions_shown_to_a_failed_session_are_never_shown_again_in_the_window() {
    // One game set a window: three questions per part.
    let g = AdmissionGame::new(
        GameParams::default(),
        crate::testing::key(1),
        Corpus::embedded().clone(),
        sets(true, 2),
    );
    let mut seen = std::collections::HashSet::new();
    let mut record = |v: &RoundView| assert!(seen.insert(v.question.clone()), "{}", v.question);
    // Admitted: nothing retired.
    let mut v = begin(&g, b"honest", 0).unwrap();
    while let Ok(Step::Next(next)) = play_round(&g, &v, 10) {
        v = next;
    }
    assert_eq!(g.retired_questions(), 0);
    // A question is shown to one open session at a time: three sessions hold every question
    // of a part, a fourth waits (`game_busy`) until one ends.
    let open: Vec<RoundView> = (0..3u8)
        .map(|i| begin(&g, &[b'o', i], 15).unwrap())
        .collect();
    let questions: std::collections::HashSet<&String> = open.iter().map(|v| &v.question).collect();
    assert_eq!(questions.len(), 3);
    let err = begin(&g, b"fourth", 15).unwrap_err();
    assert_eq!((err.code(), err.clone()), ("game_busy", GameError::Busy));
    for mut v in open {
        while let Ok(Step::Next(next)) = play_round(&g, &v, 16) {
            v = next;
        }
    }
    assert_eq!(g.retired_questions(), 0);
    // Wrong (said at the end), late, and abandoned (swept at the next start).
    let fail_wrong = |nonce: &[u8], record: &mut dyn FnMut(&RoundView)| {
        let mut v = begin(&g, nonce, 20).unwrap();
        for _ in 0..3 {
            record(&v);
            match g.answer(&v.session, &v.token, b"surely wrong", 0, 30) {
                Ok(Step::Next(next)) => v = next,
                Err(e) => assert_eq!(e, GameError::NotAdmitted),
                Ok(Step::Admitted(_)) => panic!("admitted a wrong answer"),
            }
        }
    };
    fail_wrong(b"wrong", &mut record);
    assert_eq!(g.retired_questions(), 3);
    let v = begin(&g, b"late", 40).unwrap();
    record(&v);
    assert_eq!(
        play_round(&g, &v, 40 + 16_000).unwrap_err().code(),
        "round_expired"
    );
    assert_eq!(g.retired_questions(), 6);
    let v = begin(&g, b"abandoned", 60_000).unwrap();
    record(&v);
    // The third failure's questions are the last of every part: the next start sweeps the
    // abandoned session, retires them and finds nothing unseen.
    let err = begin(&g, b"after", 200_000).unwrap_err();
    assert_eq!(err, GameError::SetsSpent { t: 0 });
    assert_eq!(err.code(), "game_sets_spent");
    assert_eq!(g.retired_questions(), 9);
    // A refused start does not count against the identity; the next window serves again.
    begin(&g, b"after", HOUR).unwrap();
    assert_eq!(g.retired_questions(), 0);
}
