use super::*;
use crate::narrative::NarrativeSet;

fn seed(i: u32) -> Seed {
    let mut s = [3u8; 32];
    s[..4].copy_from_slice(&i.to_le_bytes());
    Seed(s)
}

#[test]
fn prompts_are_deterministic_and_reference_answers_verify() {
    let family = NarrativeChain::embedded();
    for i in 0..100 {
        for rounds in 1..=3 {
            let p = FamilyParams { difficulty: rounds };
            let g = family.generate(&seed(i), &p);
            assert_eq!(g.prompt, family.generate(&seed(i), &p).prompt);
            assert_eq!(g.prompt.text.matches("=== Part ").count(), rounds as usize);
            let answer = family.reference_answer(&g.key).unwrap();
            assert_eq!(family.verify(&g.key, &answer), Ok(()));
        }
    }
}

#[test]
fn answers_are_a_json_array_matched_per_part() {
    let family = NarrativeChain::embedded();
    let g = family.generate(&seed(5), &family.default_params());
    let answers: Vec<String> =
        serde_json::from_slice(&family.reference_answer(&g.key).unwrap()).unwrap();
    // Full-width, upper-case and padded forms of the right answers pass.
    let shouted: Vec<String> = answers
        .iter()
        .map(|a| {
            let wide: String = a
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        char::from_u32(c.to_ascii_uppercase() as u32 + 0xFEE0).unwrap()
                    } else {
                        c
                    }
                })
                .collect();
            format!("  {wide} ")
        })
        .collect();
    assert_eq!(
        family.verify(&g.key, &serde_json::to_vec(&shouted).unwrap()),
        Ok(())
    );
    let mut wrong = answers.clone();
    wrong[1] = "certainly not this".into();
    assert_eq!(
        family.verify(&g.key, &serde_json::to_vec(&wrong).unwrap()),
        Err(Reject::AnswerMismatch)
    );
    // Which part was wrong is for the operator only (logs and metrics).
    assert_eq!(
        family.part_verdicts(&g.key, &serde_json::to_vec(&wrong).unwrap()),
        Some(vec![true, false, true])
    );
    assert_eq!(
        family.part_verdicts(&g.key, &serde_json::to_vec(&answers).unwrap()),
        Some(vec![true, true, true])
    );
    assert_eq!(family.part_verdicts(&g.key, b"[\"one\"]"), None);
    let mut padded = answers.clone();
    padded[0] = format!("{} or maybe something else", answers[0]);
    assert_eq!(
        family.verify(&g.key, &serde_json::to_vec(&padded).unwrap()),
        Err(Reject::AnswerMismatch)
    );
    let short = serde_json::to_vec(&answers[..2]).unwrap();
    assert_eq!(
        family.verify(&g.key, &short).unwrap_err().code(),
        "invalid_answer_format"
    );
    // An empty part is a wrong part: the code does not tell a script which parts it has right
    // (probing ["guess", "", ""] gives the same code whether the guess is right or not).
    let mut empty = answers.clone();
    empty[2] = " ".into();
    assert_eq!(
        family.verify(&g.key, &serde_json::to_vec(&empty).unwrap()),
        Err(Reject::AnswerMismatch)
    );
    let right_then_blank = [answers[0].clone(), String::new(), String::new()];
    let wrong_then_blank = [
        "certainly not this".to_owned(),
        String::new(),
        String::new(),
    ];
    assert_eq!(
        family.verify(&g.key, &serde_json::to_vec(&right_then_blank).unwrap()),
        family.verify(&g.key, &serde_json::to_vec(&wrong_then_blank).unwrap()),
    );
    assert_eq!(family.verify(&g.key, b"\n"), Err(Reject::MissingAnswer));
    for bad in [&b"PFK1"[..], b"{\"a\":1}", b"[1,2,3]", &[0xff, 0x00]] {
        assert_eq!(
            family.verify(&g.key, bad).unwrap_err().code(),
            "invalid_answer_format"
        );
    }
    let huge = serde_json::to_vec(&vec!["x".repeat(300); 3]).unwrap();
    assert_eq!(
        family.verify(&g.key, &huge).unwrap_err().code(),
        "invalid_answer_format"
    );
    assert!(family.verify(&AnswerKey(b"[]".to_vec()), b"[]").is_err());
}

#[test]
fn the_baseline_solver_mostly_fails_and_retirement_is_honoured() {
    let family = NarrativeChain::embedded();
    let p = family.default_params();
    let solved = (0..200)
        .filter(|i| {
            let g = family.generate(&seed(*i), &p);
            family
                .solve(&g.prompt)
                .is_some_and(|a| family.verify(&g.key, &a).is_ok())
        })
        .count();
    assert!(solved <= 2, "{solved}");

    let corpus = Arc::new(Corpus::embedded().clone());
    let keep = corpus.sets()[3].id.clone();
    let retired = RetiredSets(
        corpus
            .sets()
            .iter()
            .map(|s| s.id.clone())
            .filter(|id| *id != keep)
            .collect(),
    );
    let only_one = NarrativeChain::new(corpus.clone(), retired, ScheduleParams::default());
    let set: &NarrativeSet = corpus.get(&keep).unwrap();
    for i in 0..20 {
        let g = only_one.generate(&seed(i), &p);
        assert!(g.prompt.text.contains(&set.parts[0].narrative));
    }
    let none_left = NarrativeChain::new(
        corpus.clone(),
        RetiredSets(corpus.sets().iter().map(|s| s.id.clone()).collect()),
        ScheduleParams::default(),
    );
    assert!(none_left.check_params(&p).is_err());
    let g = none_left.generate(&seed(1), &p);
    assert!(none_left.verify(&g.key, b"[\"a\",\"b\",\"c\"]").is_err());
    assert!(
        family
            .check_params(&FamilyParams { difficulty: 4 })
            .is_err()
    );
}

#[test]
fn each_window_draws_from_its_own_slice_and_an_exhausted_window_has_nothing() {
    let corpus = Arc::new(Corpus::embedded().clone());
    let schedule = ScheduleParams {
        start_window: 5,
        sets_per_window: 2,
        reuse: false,
    };
    let family = NarrativeChain::new(corpus.clone(), RetiredSets::default(), schedule);
    let params = family.default_params();
    let first_part = |t: u64, seed: u8| {
        let g = family
            .generate_in_window(&Seed([seed; 32]), &params, t)
            .unwrap();
        let text = g.prompt.text.split("=== Part 1 ===\n").nth(1).unwrap();
        let narrative = text.split("\n\nQuestion 1: ").next().unwrap().to_owned();
        corpus
            .sets()
            .iter()
            .find(|s| s.parts[0].narrative == narrative)
            .map(|s| s.id.clone())
            .unwrap()
    };
    let end = family.schedule().end_window();
    for t in 5..end {
        let slice = family.schedule().slice(t).unwrap();
        for seed in 0..8 {
            assert!(slice.contains(&first_part(t, seed)), "window {t}");
        }
    }
    for t in [0, 4, end, end + 100] {
        assert!(
            family
                .generate_in_window(&Seed([1; 32]), &params, t)
                .is_none(),
            "window {t} has no sets"
        );
    }
    // Generation is a function of (seed, window): an auditor regenerates the same prompt.
    let a = family
        .generate_in_window(&Seed([9; 32]), &params, 6)
        .unwrap();
    let b = family
        .generate_in_window(&Seed([9; 32]), &params, 6)
        .unwrap();
    assert_eq!(a.prompt, b.prompt);
    let too_many = ScheduleParams {
        sets_per_window: 1000,
        ..schedule
    };
    let err = NarrativeChain::new(corpus, RetiredSets::default(), too_many)
        .check_params(&params)
        .unwrap_err();
    assert!(err.contains("sets_per_window"), "{err}");
}
