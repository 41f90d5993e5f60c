use super::*;

fn params(level: u32) -> FamilyParams {
    FamilyParams { difficulty: level }
}

fn generate(i: u32, level: u32) -> Generated {
    let mut seed = [1u8; 32];
    seed[..4].copy_from_slice(&i.to_le_bytes());
    SemanticMathLock.generate(&Seed(seed), &params(level))
}

#[test]
fn generation_is_deterministic_and_the_planned_solution_verifies() {
    for i in 0..300 {
        let level = 1 + i % 3;
        let g = generate(i, level);
        assert_eq!(g.prompt, generate(i, level).prompt);
        let answer = SemanticMathLock.reference_answer(&g.key).unwrap();
        assert_eq!(
            SemanticMathLock.verify(&g.key, &answer),
            Ok(()),
            "{}",
            g.prompt.text
        );
    }
}

#[test]
fn template_inversion_solves_semantic_math_lock_at_every_difficulty() {
    for level in LEVELS {
        let failed: Vec<Generated> = (0..200)
            .map(|i| generate(10_000 + i, level))
            .filter(|g| {
                SemanticMathLock
                    .solve(&g.prompt)
                    .is_none_or(|a| SemanticMathLock.verify(&g.key, &a).is_err())
            })
            .collect();
        assert!(
            failed.len() <= 2,
            "level {level}: {}/200 solved; first failure:\n{}",
            200 - failed.len(),
            failed.first().map_or("", |g| g.prompt.text.as_str())
        );
    }
}

#[test]
fn each_constraint_has_its_reason() {
    let g = generate(7, 3);
    let c = Constraints::decode(&g.key.0).unwrap();
    let good = c.solution.join(" ");
    assert_eq!(
        SemanticMathLock.verify(&g.key, good.to_uppercase().as_bytes()),
        Ok(())
    );
    assert_eq!(
        SemanticMathLock.verify(&g.key, format!("{}.", c.solution.join(", ")).as_bytes()),
        Ok(())
    );

    // Padding with any word, even one that keeps the sum, changes the count.
    let padded = format!("{good} and");
    assert_eq!(
        SemanticMathLock
            .verify(&g.key, padded.as_bytes())
            .unwrap_err()
            .code(),
        "wrong_word_count"
    );

    // A word outside the list, in place of a non-required word with the same initial.
    let free = c
        .solution
        .iter()
        .position(|w| !c.required.contains(w))
        .unwrap();
    let mut outsider = c.solution.clone();
    outsider[free] = format!("{}zzz", &c.solution[free][..1]);
    assert_eq!(
        SemanticMathLock.verify(&g.key, outsider.join(" ").as_bytes()),
        Err(Reject::WordNotAllowed)
    );

    // A required word twice, or replaced.
    let mut twice = c.solution.clone();
    twice[free] = c.required[0].clone();
    assert_eq!(
        SemanticMathLock.verify(&g.key, twice.join(" ").as_bytes()),
        Err(Reject::RequiredWordConstraintFailed)
    );

    // A free word repeated.
    let mut repeated = c.solution.clone();
    let other_free = c
        .solution
        .iter()
        .rposition(|w| !c.required.contains(w))
        .unwrap();
    if other_free != free {
        repeated[other_free] = repeated[free].clone();
        assert_eq!(
            SemanticMathLock.verify(&g.key, repeated.join(" ").as_bytes()),
            Err(Reject::WordNotAllowed)
        );
    }

    // A listed word with a different initial breaks the sum.
    let unused = c
        .allowed
        .iter()
        .find(|w| !c.solution.contains(w) && w.as_bytes()[0] != c.solution[free].as_bytes()[0])
        .unwrap();
    let mut swapped = c.solution.clone();
    swapped[free] = unused.clone();
    assert_eq!(
        SemanticMathLock
            .verify(&g.key, swapped.join(" ").as_bytes())
            .unwrap_err()
            .code(),
        "initial_sum_mismatch"
    );

    assert_eq!(
        SemanticMathLock.verify(&g.key, b"  ,  "),
        Err(Reject::MissingAnswer)
    );
    assert_eq!(
        SemanticMathLock
            .verify(&g.key, b"word 42 word")
            .unwrap_err()
            .code(),
        "invalid_answer_format"
    );
    assert_eq!(
        SemanticMathLock
            .verify(&g.key, &[b'a'; 600])
            .unwrap_err()
            .code(),
        "invalid_answer_format"
    );
    assert!(
        SemanticMathLock
            .verify(&AnswerKey(b"x".to_vec()), b"a")
            .is_err()
    );
}

#[test]
fn key_round_trips() {
    let g = generate(3, 2);
    let c = Constraints::decode(&g.key.0).unwrap();
    assert_eq!(c.encode(), g.key.0);
    assert_eq!(initial_sum(&c.solution), c.target);
    assert!(
        c.required
            .iter()
            .all(|r| c.allowed.contains(r) && c.solution.contains(r))
    );
}
