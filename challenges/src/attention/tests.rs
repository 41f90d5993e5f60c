use super::*;

fn challenge(i: u64, difficulty: u32) -> Generated {
    let mut seed = [0x55u8; 32];
    seed[..8].copy_from_slice(&i.to_le_bytes());
    Attention.generate(&Seed(seed), &FamilyParams { difficulty })
}

fn schedule(g: &Generated) -> Schedule {
    Schedule::decode(&g.key.0).unwrap()
}

fn code(g: &Generated, events: &[Event]) -> &'static str {
    let answer = serde_json::to_vec(events).unwrap();
    match Attention.verify(&g.key, &answer) {
        Ok(()) => "ok",
        Err(r) => r.code(),
    }
}

/// A passable answer: varied reactions, small offsets.
fn human(g: &Generated) -> Vec<Event> {
    let reactions = [420, 380, 610, 350, 505, 470, 390, 560];
    clicks(&schedule(g), |i| (reactions[i % reactions.len()], 12, -9))
}

#[test]
fn schedules_are_deterministic_sized_and_round_trip() {
    for i in 0..40 {
        let d = 1 + (i % 5) as u32;
        let (a, b) = (challenge(i, d), challenge(i, d));
        assert_eq!(a.prompt, b.prompt);
        let s = schedule(&a);
        assert_eq!(s.targets.len(), 3 + d as usize);
        assert_eq!(s.distractors.len(), d as usize);
        assert_eq!(Schedule::decode(&s.encode()), Some(s.clone()));
        for pair in s.targets.windows(2) {
            assert!((1000..=2000).contains(&(pair[1].t_ms - pair[0].t_ms)));
        }
        for spot in s.targets.iter().chain(&s.distractors) {
            assert!(spot.x < ARENA && spot.y < ARENA);
            // Cell centres are within tolerance, for keyboard users.
            let cell = ARENA / GRID;
            let (cx, cy) = (
                spot.x / cell * cell + cell / 2,
                spot.y / cell * cell + cell / 2,
            );
            assert!(cx.abs_diff(spot.x).pow(2) + cy.abs_diff(spot.y).pow(2) < TOLERANCE.pow(2));
        }
        assert!(
            a.prompt
                .text
                .contains(&format!("{} green circles", s.targets.len()))
        );
    }
    assert!(Schedule::decode(&[1, 2, 0, 0]).is_none());
    assert!(Schedule::decode(&[]).is_none());
}

#[test]
fn reference_and_human_like_answers_verify() {
    for i in 0..40 {
        let g = challenge(i, 1 + (i % 5) as u32);
        let reference = Attention.reference_answer(&g.key).unwrap();
        assert_eq!(Attention.verify(&g.key, &reference), Ok(()));
        assert_eq!(code(&g, &human(&g)), "ok");
    }
}

#[test]
fn each_timing_and_position_rule_has_its_code() {
    let g = challenge(7, 2);
    let good = human(&g);
    let s = schedule(&g);

    // Superhuman: a click 90 ms after the target appears, or before it appears.
    let mut fast = good.clone();
    fast[2].t_ms = i64::from(s.targets[2].t_ms) + 90;
    assert_eq!(code(&g, &fast), "reaction_too_fast");
    // Too late: the target had gone.
    let mut slow = good.clone();
    slow[1].t_ms = i64::from(s.targets[1].t_ms + VISIBLE_MS) + 1;
    assert_eq!(code(&g, &slow), "reaction_too_slow");
    // Wrong position.
    let mut off = good.clone();
    off[3].x += 200.0;
    assert_eq!(code(&g, &off), "wrong_target_position");
    // Wrong order, and a target reported twice.
    let mut swapped = good.clone();
    swapped.swap(0, 1);
    assert_eq!(code(&g, &swapped), "wrong_target_order");
    let mut twice = good.clone();
    twice[1] = twice[0];
    assert_eq!(code(&g, &twice), "wrong_target_order");
    // Missing target.
    assert_eq!(code(&g, &good[..good.len() - 1]), "target_missed");
    assert_eq!(code(&g, &[]), "target_missed");
    // A distractor click.
    let mut distracted = good.clone();
    distracted.push(Event {
        target: None,
        distractor: Some(0),
        ..good[0]
    });
    assert_eq!(code(&g, &distracted), "distractor_clicked");
    // Too regular: constant reaction time, a constant step, or metronome clicks.
    let constant = clicks(&s, |_| (400, 5, 5));
    assert_eq!(code(&g, &constant), "timing_too_regular");
    let stepping = clicks(&s, |i| (300 + 40 * i as u32, 5, 5));
    assert_eq!(code(&g, &stepping), "timing_too_regular");
    // Metronome clicks: every 1000 ms, whatever the schedule's gaps.
    let spot = |t_ms| Spot {
        t_ms,
        x: 500,
        y: 500,
    };
    let uneven = Schedule {
        targets: vec![spot(1000), spot(2100), spot(3050), spot(4300)],
        distractors: Vec::new(),
    };
    let metronome = clicks(&uneven, |i| ([500, 400, 450, 200][i], 3, 3));
    assert_eq!(
        rules::check(&metronome, &uneven),
        Err(Reject::TimingTooRegular { spread_ms: 300 })
    );
    let varied = clicks(&uneven, |i| ([500, 400, 450, 260][i], 3, 3));
    assert_eq!(rules::check(&varied, &uneven), Ok(()));
}

#[test]
fn malformed_and_oversized_answers_are_format_errors() {
    let g = challenge(3, 2);
    let verify = |a: &[u8]| Attention.verify(&g.key, a).unwrap_err().code();
    assert_eq!(verify(b""), "missing_answer");
    assert_eq!(verify(b" \n"), "missing_answer");
    for bad in [
        &b"{}"[..],
        b"[1,2]",
        b"[{\"target\":0,\"t_ms\":1.5,\"x\":1,\"y\":1}]",
        b"[{\"target\":0,\"distractor\":0,\"t_ms\":1,\"x\":1,\"y\":1}]",
        b"[{\"t_ms\":1,\"x\":1,\"y\":1}]",
        b"[{\"target\":99,\"t_ms\":1,\"x\":1,\"y\":1}]",
        b"[{\"target\":0,\"t_ms\":1,\"x\":1,\"y\":1,\"bot\":true}]",
        b"[{\"target\":0,\"t_ms\":99999999999,\"x\":1,\"y\":1}]",
        b"\xff",
    ] {
        assert_eq!(
            verify(bad),
            "invalid_answer_format",
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    let many = vec![human(&g)[0]; rules::MAX_EVENTS + 1];
    assert_eq!(
        verify(&serde_json::to_vec(&many).unwrap()),
        "invalid_answer_format"
    );
    assert_eq!(
        verify(&vec![b' '; rules::MAX_ANSWER + 1]),
        "invalid_answer_format"
    );
    assert!(Attention.verify(&AnswerKey(vec![2, 0, 0]), b"[]").is_err());
}

/// The baseline bot is rejected every time; a jittering bot passes. Both recorded honestly.
#[test]
fn the_simple_bot_fails_and_a_jittering_bot_passes() {
    let trials = 100;
    let (mut simple, mut jitter) = (0, 0);
    for i in 0..trials {
        let g = challenge(9_000 + i, 2);
        let answer = Attention.solve(&g.prompt).unwrap();
        if Attention.verify(&g.key, &answer).is_ok() {
            simple += 1;
        }
        let s = Seed([i as u8; 32]).derive("bot");
        let mut rng = s.stream();
        let events = clicks(&schedule(&g), |_| {
            (
                280 + rng.below(300) as u32,
                rng.range(-20, 20),
                rng.range(-20, 20),
            )
        });
        if code(&g, &events) == "ok" {
            jitter += 1;
        }
    }
    eprintln!("attention: simple bot {simple}/{trials}, jittering bot {jitter}/{trials}");
    assert_eq!(simple, 0);
    assert!(jitter > 95, "{jitter}");
}
