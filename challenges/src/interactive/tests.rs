use super::seating::{Clue, seatings};
use super::*;

fn challenge(i: u64, difficulty: u32) -> Generated {
    let mut seed = [0x44u8; 32];
    seed[..8].copy_from_slice(&i.to_le_bytes());
    InteractiveReasoning.generate(&Seed(seed), &FamilyParams { difficulty })
}

#[test]
fn generation_is_deterministic_and_varied() {
    let mut kinds = std::collections::BTreeSet::new();
    for i in 0..80 {
        let (a, b) = (challenge(i, 2), challenge(i, 2));
        assert_eq!(a.prompt, b.prompt);
        assert_eq!(a.key, b.key);
        let text = &a.prompt.text;
        kinds.insert(if text.contains("seats numbered") {
            "seating"
        } else if text.contains("day of the week") {
            "calendar"
        } else if text.contains("Which") && text.contains("not") || text.contains("exception") {
            "odd"
        } else {
            "ordering"
        });
        let data: ReasoningData = serde_json::from_slice(&a.prompt.data).unwrap();
        assert_eq!(data.choices.len(), CHOICES, "{text}");
        let distinct: std::collections::BTreeSet<_> = data.choices.iter().collect();
        assert_eq!(distinct.len(), CHOICES, "{text}");
        for (letter, choice) in LETTERS.iter().zip(&data.choices) {
            assert!(text.contains(&format!("{letter}) {choice}")), "{text}");
        }
    }
    assert_eq!(kinds.len(), 4, "{kinds:?}");
}

#[test]
fn answers_verify_and_others_get_their_codes() {
    for i in 0..40 {
        let g = challenge(i, 1 + (i % 3) as u32);
        let right = InteractiveReasoning.reference_answer(&g.key).unwrap();
        assert_eq!(InteractiveReasoning.verify(&g.key, &right), Ok(()));
        let lower = format!(" {}) ", char::from(right[0]).to_ascii_lowercase());
        assert_eq!(
            InteractiveReasoning.verify(&g.key, lower.as_bytes()),
            Ok(())
        );
        let other = if right[0] == b'A' { b"B" } else { b"A" };
        let code = |a: &[u8]| InteractiveReasoning.verify(&g.key, a).unwrap_err().code();
        assert_eq!(code(other), "answer_mismatch");
        assert_eq!(code(b"E"), "invalid_answer_format");
        assert_eq!(code(b"AB"), "invalid_answer_format");
        assert_eq!(code(&[0xc3]), "invalid_answer_format");
        assert_eq!(code(&[b'A'; 17]), "invalid_answer_format");
        assert_eq!(code(b" "), "missing_answer");
    }
    assert!(
        InteractiveReasoning
            .verify(&AnswerKey(vec![9]), b"A")
            .is_err()
    );
    assert!(
        InteractiveReasoning
            .reference_answer(&AnswerKey(vec![4, 4]))
            .is_none()
    );
}

#[test]
fn seating_puzzles_have_exactly_one_solution() {
    assert_eq!(seatings(4).len(), 24);
    for i in 0..60 {
        let mut s = Seed([i as u8; 32]).stream();
        let n = 3 + i % 3;
        let p = seating::generate(&mut s, n);
        // Re-solve from the text with the parser's enumeration: one answer, the keyed one.
        let data = serde_json::to_vec(&ReasoningData {
            choices: p.choices.clone(),
        })
        .unwrap();
        assert_eq!(
            baseline::solve(&p.text, &data),
            Some(p.answer),
            "{}",
            p.text
        );
    }
    let seats = [2, 0, 1];
    assert!(Clue::RightOf(0, 2).holds(&seats, 3));
    assert!(Clue::End(1).holds(&seats, 3) && !Clue::End(2).holds(&seats, 3));
    assert!(Clue::LeftOf(1, 0).holds(&seats, 3) && Clue::Beside(2, 1).holds(&seats, 3));
}

#[test]
fn calendar_arithmetic_wraps_both_ways() {
    for i in 0..60 {
        let mut s = Seed([i as u8; 32]).stream();
        let p = calendar::days(&mut s, 1 + i % 3);
        let data = serde_json::to_vec(&ReasoningData {
            choices: p.choices.clone(),
        })
        .unwrap();
        assert_eq!(
            baseline::solve(&p.text, &data),
            Some(p.answer),
            "{}",
            p.text
        );
    }
}

/// The parser's success, printed for the record: it knows every phrasing, so it is expected
/// to solve nearly everything. This is the family's honest ε_auto against a tailored script.
#[test]
fn baseline_success_is_measured() {
    for d in SIZES {
        let trials = 100usize;
        let solved = (0..trials)
            .filter(|&i| {
                let g = challenge(5_000 + i as u64, d);
                InteractiveReasoning
                    .solve(&g.prompt)
                    .is_some_and(|a| InteractiveReasoning.verify(&g.key, &a).is_ok())
            })
            .count();
        eprintln!("interactive_reasoning difficulty {d}: baseline solved {solved}/{trials}");
        assert!(
            solved > trials * 9 / 10,
            "difficulty {d}: {solved}/{trials}"
        );
    }
    let garbage = Prompt {
        family: "interactive_reasoning".into(),
        text: "What?".into(),
        data: b"{\"choices\":[]}".to_vec(),
    };
    assert!(InteractiveReasoning.solve(&garbage).is_none());
}
