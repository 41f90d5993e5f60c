use super::*;

fn challenge(i: u64, difficulty: u32) -> Generated {
    let mut seed = [0x55u8; 32];
    seed[..8].copy_from_slice(&i.to_le_bytes());
    Attention.generate(&Seed(seed), &FamilyParams { difficulty })
}

fn live(g: &Generated) -> Live {
    Live::from_key(&g.key).unwrap()
}

/// A person's log: each cue clicked at the given reactions, `off` pixels from its centre.
fn person(l: &Live, reactions: &[u32], off: i64) -> Log {
    let clicks = l
        .plan
        .events
        .iter()
        .enumerate()
        .filter_map(|(k, e)| {
            let g = e.glyphs[e.target?];
            Some(Click {
                at: e.at_ms + reactions[k % reactions.len()],
                rtt: 2,
                x: (i64::from(g.x) + off) as u32,
                y: (i64::from(g.y) - off) as u32,
            })
        })
        .collect();
    Log {
        releases: l.plan.events.iter().map(|e| e.at_ms + 3).collect(),
        clicks,
        end: l.plan.end_ms + 5,
        mac: String::new(),
    }
}

fn code(g: &Generated, log: Log) -> &'static str {
    let answer = log.seal(&live(g).mac_key).to_answer();
    match Attention.verify(&g.key, &answer) {
        Ok(()) => "ok",
        Err(r) => r.code(),
    }
}

const HUMAN: [u32; 8] = [620, 540, 810, 700, 580, 905, 660, 750];

#[test]
fn plans_are_deterministic_sized_and_hidden_from_the_prompt() {
    for i in 0..60 {
        let d = 1 + (i % 5) as u32;
        let (a, b) = (challenge(i, d), challenge(i, d));
        assert_eq!(a.prompt, b.prompt);
        assert_eq!(a.key, b.key);
        let l = live(&a);
        let n = event_count(d);
        assert_eq!(l.plan.events.len(), n);
        let targets = l.plan.target_count();
        assert!(target_range(n).contains(&targets), "{targets} of {n}");
        assert!(targets * 2 >= n && targets < n, "{targets} of {n}");
        let cue = char::from(l.plan.cue);
        assert!(a.prompt.text.contains(&format!("the letter {cue} ")));
        let data: AttentionData = serde_json::from_slice(&a.prompt.data).unwrap();
        assert_eq!(data.cue, cue.to_string());
        for pair in l.plan.events.windows(2) {
            assert!(pair[1].at_ms - pair[0].at_ms > VISIBLE_MS);
        }
        for e in &l.plan.events {
            assert_eq!(e.glyphs.len(), LETTERS);
            let cues = e.glyphs.iter().filter(|g| g.letter == l.plan.cue).count();
            assert_eq!(cues, usize::from(e.target.is_some()));
            for g in &e.glyphs {
                // A keyboard user's cell centre is within tolerance.
                let c = |i: u32| i * CELL + CELL / 2;
                let (cx, cy) = (c(g.cell % GRID), c(g.cell / GRID));
                assert!(cx.abs_diff(g.x).pow(2) + cy.abs_diff(g.y).pow(2) < TOLERANCE.pow(2));
            }
        }
        // Nothing about the events is in the prompt: two seeds with the same cue and level
        // have identical prompts.
        assert!(!String::from_utf8_lossy(&a.prompt.data).contains("\"x\""));
    }
    assert!(Live::from_key(&AnswerKey(vec![2, 2])).is_none());
    assert!(Live::from_key(&AnswerKey(vec![1, 2, 0])).is_none());
    assert!(Live::from_key(&AnswerKey([vec![2, 9], vec![0; 32]].concat())).is_none());
}

#[test]
fn reference_and_person_logs_verify() {
    for i in 0..2000 {
        let g = challenge(i, 1 + (i % 5) as u32);
        let reference = Attention.reference_answer(&g.key).unwrap();
        assert_eq!(Attention.verify(&g.key, &reference), Ok(()), "seed {i}");
        assert_eq!(code(&g, person(&live(&g), &HUMAN, 20)), "ok");
        let blind = Attention.solve(&g.prompt).unwrap();
        assert_eq!(
            Attention.verify(&g.key, &blind).unwrap_err().code(),
            "log_mac_mismatch"
        );
    }
}

#[test]
fn the_mac_binds_the_log_to_its_challenge() {
    let (g, other) = (challenge(1, 2), challenge(2, 2));
    let log = person(&live(&g), &HUMAN, 0);
    // Sealed under another challenge's key, or edited after sealing.
    let foreign = log.clone().seal(&live(&other).mac_key).to_answer();
    assert_eq!(
        Attention.verify(&g.key, &foreign).unwrap_err().code(),
        "log_mac_mismatch"
    );
    let mut edited = log.seal(&live(&g).mac_key);
    edited.clicks[0].at += 40;
    assert_eq!(
        Attention
            .verify(&g.key, &edited.to_answer())
            .unwrap_err()
            .code(),
        "log_mac_mismatch"
    );
    edited.mac = "zz".into();
    assert_eq!(
        Attention
            .verify(&g.key, &edited.to_answer())
            .unwrap_err()
            .code(),
        "invalid_answer_format"
    );
}

#[test]
fn each_rule_has_its_code() {
    let g = challenge(7, 2);
    let l = live(&g);
    let good = person(&l, &HUMAN, 10);
    assert_eq!(code(&g, good.clone()), "ok");
    let with = |f: &dyn Fn(&mut Log)| {
        let mut log = good.clone();
        f(&mut log);
        code(&g, log)
    };
    let first_target = l
        .plan
        .events
        .iter()
        .position(|e| e.target.is_some())
        .unwrap();
    let first_blank = l
        .plan
        .events
        .iter()
        .position(|e| e.target.is_none())
        .unwrap();
    let release = |k: usize| good.releases[k];
    let g0 = l.plan.events[first_target].glyphs[l.plan.events[first_target].target.unwrap()];

    assert_eq!(
        with(&|log| log.clicks[0].at = release(first_target) + 120),
        "reaction_too_fast"
    );
    // The RTT is subtracted, capped.
    assert_eq!(
        with(&|log| {
            log.clicks[0].at = release(first_target) + 420;
            log.clicks[0].rtt = 300;
        }),
        "reaction_too_fast"
    );
    assert_eq!(
        with(&|log| log.clicks[0].at = release(first_target) + VISIBLE_MS + 20),
        "reaction_too_slow"
    );
    assert_eq!(
        with(&|log| log.clicks[0].x = g0.x + 100),
        "wrong_target_position"
    );
    assert_eq!(
        with(&|log| {
            let mut twice = log.clicks[0];
            twice.at += 30;
            log.clicks.insert(1, twice);
        }),
        "wrong_target_order"
    );
    assert_eq!(
        with(&|log| {
            log.clicks.remove(0);
        }),
        "target_missed"
    );
    assert_eq!(
        with(&|log| {
            let c = Click {
                at: release(first_blank) + 500,
                rtt: 1,
                x: 60,
                y: 60,
            };
            log.clicks.push(c);
            log.clicks.sort_by_key(|c| c.at);
        }),
        "distractor_clicked"
    );
    assert_eq!(
        with(&|log| log.clicks.insert(
            0,
            Click {
                at: 1,
                rtt: 1,
                x: 60,
                y: 60
            }
        )),
        "reaction_too_fast"
    );
    // Constant or stepping reactions.
    assert_eq!(code(&g, person(&l, &[500], 5)), "timing_too_regular");
    let stepping: Vec<u32> = (0..8).map(|k| 400 + 30 * k).collect();
    let targets = l.plan.target_count();
    if targets >= 4 {
        let mut log = person(&l, &[0], 5);
        for (c, step) in log.clicks.iter_mut().zip(&stepping) {
            c.at += step;
        }
        assert_eq!(code(&g, log), "timing_too_regular");
    }
    // A log that does not follow the plan.
    assert_eq!(
        with(&|log| {
            log.releases.pop();
        }),
        "invalid_answer_format"
    );
    assert_eq!(with(&|log| log.releases[0] = 0), "invalid_answer_format");
    assert_eq!(with(&|log| log.end = 10), "invalid_answer_format");
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
        b"{\"releases\":[],\"clicks\":[],\"end\":1,\"mac\":\"00\",\"bot\":1}",
        b"{\"releases\":[-1],\"clicks\":[],\"end\":1,\"mac\":\"00\"}",
        b"\xff",
    ] {
        assert_eq!(
            verify(bad),
            "invalid_answer_format",
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    let many = Log {
        releases: vec![1; 17],
        clicks: vec![],
        end: 1,
        mac: "00".repeat(32),
    };
    assert_eq!(verify(&many.to_answer()), "invalid_answer_format");
    assert_eq!(verify(&vec![b' '; MAX_LOG + 1]), "invalid_answer_format");
    assert!(Attention.verify(&AnswerKey(vec![2, 0, 0]), b"{}").is_err());
}

#[test]
fn frames_render_as_pngs_of_the_frame_size() {
    let g = challenge(11, 2);
    let l = live(&g);
    let frames = l.frames();
    assert_eq!(frames.len(), 1 + 2 * l.plan.events.len());
    assert!(frames.windows(2).all(|w| w[0].at_ms < w[1].at_ms));
    for i in [0, 1, 2] {
        let png = l.render(i);
        let img = image::load_from_memory(&png).unwrap().to_luma8();
        assert_eq!((img.width(), img.height()), (FRAME, FRAME));
        assert!(png.len() < 96 * 1024, "{}", png.len());
    }
    // Deterministic.
    assert_eq!(l.render(1), l.render(1));
    assert_ne!(l.render(1), l.render(3));
}

/// Writes a few frames to the temporary directory, to look at: `cargo test -p hco-challenges
/// attention::tests::dump_frames -- --ignored`.
#[test]
#[ignore]
fn dump_frames() {
    let dir = std::env::temp_dir();
    for i in 0..3 {
        let l = live(&challenge(100 + i, 2));
        for f in [1, 2, 3] {
            let path = dir.join(format!("attention-{i}-{f}.png"));
            std::fs::write(&path, l.render(f)).unwrap();
            if let Some(k) = l.frames()[f].event {
                let e = &l.plan.events[k];
                let letters: String = e.glyphs.iter().map(|g| char::from(g.letter)).collect();
                eprintln!(
                    "{} cue {} letters {letters} target {:?}",
                    path.display(),
                    char::from(l.plan.cue),
                    e.target
                );
            }
        }
    }
}
