//! `interactive_reasoning`: a short multi-step logic or calendar puzzle shown with a countdown,
//! answered by picking one of four options (`A`–`D`).
//!
//! Four templates, drawn with equal probability, each with several phrasings per sentence:
//!
//! - **ordering** — comparisons between people ("Ana is taller than Ben", "Ben is not as tall
//!   as Cleo", …) given out of order; who is the tallest, second youngest, …?
//! - **seating** — who sits where in a row, from clues ("directly right of", "somewhere left
//!   of", "at one end", "not in seat 2", …); clues are added until exactly one seating fits.
//! - **calendar** — day-of-week arithmetic over a chain of events ("the market is 9 days after
//!   the concert").
//! - **odd one out** — four words, three from one vocabulary category, named by a paraphrase.
//!
//! Difficulty (1..=3, default 2) sets the size: 3, 4 or 5 people in ordering and seating puzzles,
//! 1, 2 or 3 calendar steps. The countdown shown is the challenge deadline from the network
//! parameters (the paper reports a mean completion time of about 12 s for this family).
//!
//! The family is text only, so a screen reader presents it whole: it is the non-visual human
//! family an identity that opts out of visual challenges still receives.
//!
//! Prompt data (JSON): `{"choices":["Ana","Ben","Cleo","Dev"]}`, the options in letter order
//! (the text lists them as `A) Ana` …). Answer: the letter, case-insensitive, optionally
//! followed by `)` or `.`. The baseline parser (`baseline.rs`) reads the sentences with the
//! family's own phrase tables; it knows every phrasing, and its success is reported as such.

mod baseline;
mod calendar;
mod ordering;
mod pattern;
mod seating;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed, SeedStream};

/// Allowed sizes.
pub const SIZES: std::ops::RangeInclusive<u32> = 1..=3;
/// Options per question.
pub const CHOICES: usize = 4;
const LETTERS: [char; CHOICES] = ['A', 'B', 'C', 'D'];

/// The interactive reasoning family.
#[derive(Debug, Default, Clone, Copy)]
pub struct InteractiveReasoning;

/// The prompt payload.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ReasoningData {
    pub choices: Vec<String>,
}

/// A generated puzzle: the statement and question, the options, the right option's index.
pub(crate) struct Puzzle {
    pub text: String,
    pub choices: Vec<String>,
    pub answer: usize,
}

/// Given names used by the people puzzles: short, distinct, easy to read aloud.
pub(crate) const NAMES: &[&str] = &[
    "Ana", "Ben", "Chloe", "Dev", "Elif", "Farah", "Gus", "Hana", "Ivan", "Jade", "Kofi", "Lena",
    "Mateo", "Nora", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tess", "Umar", "Vera", "Wen",
    "Yuki",
];

/// `n` distinct names.
pub(crate) fn pick_names(s: &mut SeedStream, n: usize) -> Vec<&'static str> {
    let mut names = NAMES.to_vec();
    s.shuffle(&mut names);
    names.truncate(n);
    names
}

/// Builds the options: the right one and distinct wrong ones, shuffled.
pub(crate) fn puzzle(
    s: &mut SeedStream,
    text: String,
    right: String,
    wrong: impl IntoIterator<Item = String>,
) -> Puzzle {
    let mut choices = vec![right.clone()];
    for w in wrong {
        if choices.len() == CHOICES {
            break;
        }
        if !choices.contains(&w) {
            choices.push(w);
        }
    }
    s.shuffle(&mut choices);
    let answer = choices.iter().position(|c| *c == right).unwrap_or(0);
    Puzzle {
        text,
        choices,
        answer,
    }
}

impl Family for InteractiveReasoning {
    fn name(&self) -> &'static str {
        "interactive_reasoning"
    }

    fn class(&self) -> Class {
        Class::Human
    }

    /// A person needs about this long at least (reading the puzzle and working it out).
    fn min_human_solve_ms(&self) -> u64 {
        3000
    }

    fn max_answer_len(&self) -> usize {
        16
    }

    fn default_params(&self) -> FamilyParams {
        FamilyParams { difficulty: 2 }
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        crate::check_difficulty(params, SIZES, "puzzle size")
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let mut s = seed.derive("interactive_reasoning").stream();
        let size = params.difficulty.clamp(*SIZES.start(), *SIZES.end()) as usize;
        let p = match s.below(4) {
            0 => ordering::generate(&mut s, size + 2),
            1 => seating::generate(&mut s, size + 2),
            2 => calendar::days(&mut s, size),
            _ => calendar::odd_one_out(&mut s),
        };
        let mut text = p.text;
        for (letter, choice) in LETTERS.iter().zip(&p.choices) {
            text.push_str(&format!("\n{letter}) {choice}"));
        }
        text.push_str("\nAnswer with the letter.");
        let data = ReasoningData { choices: p.choices };
        Generated {
            prompt: Prompt {
                family: self.name().to_owned(),
                text,
                data: serde_json::to_vec(&data).unwrap_or_default(),
            },
            key: AnswerKey(vec![p.answer as u8, data.choices.len() as u8]),
        }
    }

    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
        let &[right, count] = key.0.as_slice() else {
            return Err(Reject::InvalidAnswerFormat("corrupt key"));
        };
        if answer.len() > self.max_answer_len() {
            return Err(Reject::InvalidAnswerFormat("the answer is one letter"));
        }
        let text = std::str::from_utf8(answer)
            .map_err(|_| Reject::InvalidAnswerFormat("the answer must be UTF-8"))?
            .trim();
        if text.is_empty() {
            return Err(Reject::MissingAnswer);
        }
        let letter = text
            .strip_suffix([')', '.'])
            .unwrap_or(text)
            .to_ascii_uppercase();
        let index = match letter.as_bytes() {
            [c @ b'A'..=b'Z'] if c - b'A' < count => c - b'A',
            _ => {
                return Err(Reject::InvalidAnswerFormat(
                    "answer with the letter of one option",
                ));
            }
        };
        if index == right {
            Ok(())
        } else {
            Err(Reject::AnswerMismatch)
        }
    }

    fn solve(&self, prompt: &Prompt) -> Option<Vec<u8>> {
        let index = baseline::solve(&prompt.text, &prompt.data)?;
        Some(vec![*LETTERS.get(index)? as u8])
    }

    fn reference_answer(&self, key: &AnswerKey) -> Option<Vec<u8>> {
        let &[right, count] = key.0.as_slice() else {
            return None;
        };
        if right >= count {
            return None;
        }
        Some(vec![*LETTERS.get(usize::from(right))? as u8])
    }
}
