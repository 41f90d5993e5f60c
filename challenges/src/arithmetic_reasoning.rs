//! `arithmetic_reasoning`: a short multi-step number task ("Start with 17. Triple it. Take away
//! 9. …"); the answer is the resulting integer in decimal.
//!
//! This is the simplest reasoning family, there to exercise the core end to end. Its phrasings
//! are few and regular, so its baseline parser solves it: it gives no protection against scripts
//! on its own (its measured automated success is reported as such). Harder reasoning families come
//! with the human challenge families.
//!
//! Prompt data: `{"steps":N}`. Answer: the integer as ASCII decimal, optional surrounding spaces.

use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed, SeedStream};

/// The arithmetic reasoning family.
#[derive(Debug, Default, Clone, Copy)]
pub struct ArithmeticReasoning;

/// Allowed number of steps.
pub const STEPS: std::ops::RangeInclusive<u32> = 1..=8;

#[derive(Clone, Copy)]
enum Op {
    Add(i64),
    Sub(i64),
    Mul(i64),
}

const ADD: &[&str] = &[
    "Add {}.",
    "Increase it by {}.",
    "Then {} more arrive.",
    "Raise it by {}.",
];
const SUB: &[&str] = &[
    "Subtract {}.",
    "Take away {}.",
    "Then {} leave.",
    "Lower it by {}.",
];
const MUL: &[(&str, i64)] = &[
    ("Double it.", 2),
    ("Triple it.", 3),
    ("Multiply it by {}.", 0),
];
const START: &[&str] = &[
    "Start with {}.",
    "A basket holds {} apples.",
    "The counter shows {}.",
];

fn fill(template: &str, n: i64) -> String {
    template.replace("{}", &n.to_string())
}

fn draw_op(s: &mut SeedStream) -> (Op, String) {
    match s.below(3) {
        0 => {
            let n = s.range(2, 40);
            (Op::Add(n), fill(s.pick(ADD), n))
        }
        1 => {
            let n = s.range(2, 40);
            (Op::Sub(n), fill(s.pick(SUB), n))
        }
        _ => {
            let (text, factor) = s.pick(MUL);
            let factor = if factor == 0 { s.range(4, 9) } else { factor };
            (Op::Mul(factor), fill(text, factor))
        }
    }
}

fn apply(value: i64, op: Op) -> i64 {
    match op {
        Op::Add(n) => value.saturating_add(n),
        Op::Sub(n) => value.saturating_sub(n),
        Op::Mul(n) => value.saturating_mul(n),
    }
}

impl Family for ArithmeticReasoning {
    fn script_solvable(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "arithmetic_reasoning"
    }

    fn class(&self) -> Class {
        Class::Human
    }

    /// A person needs about this long at least (reading and computing a few steps).
    fn min_human_solve_ms(&self) -> u64 {
        2000
    }

    fn max_answer_len(&self) -> usize {
        32
    }

    fn default_params(&self) -> FamilyParams {
        FamilyParams { difficulty: 3 }
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        crate::check_difficulty(params, STEPS, "steps")
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let mut s = seed.derive("arithmetic").stream();
        let steps = params.difficulty.clamp(*STEPS.start(), *STEPS.end());
        let mut value = s.range(5, 30);
        let mut text = fill(s.pick(START), value);
        for _ in 0..steps {
            let (op, phrase) = draw_op(&mut s);
            value = apply(value, op);
            text.push(' ');
            text.push_str(&phrase);
        }
        text.push_str(" What is the result?");
        Generated {
            prompt: Prompt {
                family: self.name().to_owned(),
                text,
                data: format!("{{\"steps\":{steps}}}").into_bytes(),
            },
            key: AnswerKey(value.to_le_bytes().to_vec()),
        }
    }

    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
        let expected = i64::from_le_bytes(
            key.0
                .as_slice()
                .try_into()
                .map_err(|_| Reject::InvalidAnswerFormat("corrupt key"))?,
        );
        let text = std::str::from_utf8(answer)
            .map_err(|_| Reject::InvalidAnswerFormat("the answer must be UTF-8"))?
            .trim();
        if text.is_empty() {
            return Err(Reject::MissingAnswer);
        }
        let got: i64 = text
            .parse()
            .map_err(|_| Reject::InvalidAnswerFormat("the answer must be an integer"))?;
        if got == expected {
            Ok(())
        } else {
            Err(Reject::AnswerMismatch)
        }
    }

    fn solve(&self, prompt: &Prompt) -> Option<Vec<u8>> {
        baseline_parse(&prompt.text).map(|v| v.to_string().into_bytes())
    }

    fn reference_answer(&self, key: &AnswerKey) -> Option<Vec<u8>> {
        let value = i64::from_le_bytes(key.0.as_slice().try_into().ok()?);
        Some(value.to_string().into_bytes())
    }
}

/// The baseline script: reads the sentences with fixed patterns. It knows every phrasing, so it
/// succeeds; that is the honest ε_auto of this family.
fn baseline_parse(text: &str) -> Option<i64> {
    let number = |s: &str| -> Option<i64> {
        s.split(|c: char| !c.is_ascii_digit())
            .find(|w| !w.is_empty())?
            .parse()
            .ok()
    };
    let mut sentences = text.split_terminator('.').map(str::trim);
    let mut value = number(sentences.next()?)?;
    for sentence in sentences {
        let op = if sentence.starts_with("Double") {
            Op::Mul(2)
        } else if sentence.starts_with("Triple") {
            Op::Mul(3)
        } else if sentence.starts_with("Multiply") {
            Op::Mul(number(sentence)?)
        } else if ["Add", "Increase", "Raise"]
            .iter()
            .any(|p| sentence.starts_with(p))
            || sentence.ends_with("more arrive")
        {
            Op::Add(number(sentence)?)
        } else if ["Subtract", "Take", "Lower"]
            .iter()
            .any(|p| sentence.starts_with(p))
            || sentence.ends_with("leave")
        {
            Op::Sub(number(sentence)?)
        } else {
            continue;
        };
        value = apply(value, op);
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_solvable() {
        for i in 0..200u8 {
            let seed = Seed([i; 32]);
            let p = FamilyParams {
                difficulty: 1 + u32::from(i % 8),
            };
            let a = ArithmeticReasoning.generate(&seed, &p);
            assert_eq!(a.prompt, ArithmeticReasoning.generate(&seed, &p).prompt);
            let answer = ArithmeticReasoning
                .solve(&a.prompt)
                .expect("parser handles every phrasing");
            assert_eq!(
                ArithmeticReasoning.verify(&a.key, &answer),
                Ok(()),
                "{}",
                a.prompt.text
            );
        }
    }

    #[test]
    fn wrong_and_malformed_answers_are_rejected_with_codes() {
        let g = ArithmeticReasoning.generate(&Seed([9; 32]), &FamilyParams { difficulty: 3 });
        let right: i64 = String::from_utf8(ArithmeticReasoning.solve(&g.prompt).unwrap())
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            ArithmeticReasoning.verify(&g.key, format!(" {right}\n").as_bytes()),
            Ok(())
        );
        assert_eq!(
            ArithmeticReasoning.verify(&g.key, (right + 1).to_string().as_bytes()),
            Err(Reject::AnswerMismatch)
        );
        assert_eq!(
            ArithmeticReasoning.verify(&g.key, b"  "),
            Err(Reject::MissingAnswer)
        );
        assert_eq!(
            ArithmeticReasoning
                .verify(&g.key, b"twelve")
                .unwrap_err()
                .code(),
            "invalid_answer_format"
        );
        assert_eq!(
            ArithmeticReasoning
                .verify(&g.key, &[0xff, 0xfe])
                .unwrap_err()
                .code(),
            "invalid_answer_format"
        );
        assert!(
            ArithmeticReasoning
                .verify(&AnswerKey(vec![1, 2]), b"3")
                .is_err()
        );
    }

    #[test]
    fn params_outside_the_step_range_are_refused() {
        assert!(
            ArithmeticReasoning
                .check_params(&FamilyParams { difficulty: 0 })
                .is_err()
        );
        assert!(
            ArithmeticReasoning
                .check_params(&FamilyParams { difficulty: 9 })
                .is_err()
        );
        assert!(
            ArithmeticReasoning
                .check_params(&FamilyParams { difficulty: 4 })
                .is_ok()
        );
    }
}
