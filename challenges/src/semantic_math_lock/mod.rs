//! `semantic_math_lock`: write a short text of exactly N words, drawn only from a given list and
//! none twice, that uses each required word exactly once and whose words' lowercase initial
//! letters have ASCII codes adding up to a target T.
//!
//! agentproof's version accepts any words, so a script pads the required words with filler until
//! the count and the sum fit. Here every word must come from the prompt's list (18 to 26 words
//! of the vocabulary), so padding with arbitrary words is refused (`word_not_allowed`), and the
//! constraints are stated in language: N as an everyday riddle ("two more than the number of
//! legs of an insect"), T as arithmetic in words, required words as "the one listed word that
//! names one of the feathered creatures". A solution exists by construction.
//!
//! Difficulty (1..=3, default 3): 1 states N, T and the required words literally; 2 gives N as a
//! riddle or number word, T as a sum, and one required word by its category; 3 gives N as a
//! riddle with an offset, T as a product plus a remainder, and every required word by its
//! category.
//!
//! A labelled baseline (`script_solvable`) at every level: the riddles, templates and
//! descriptions are closed tables in the source, so a script inverts them. The baseline solver
//! (`baseline`, reading through `invert`) is that script; it solves 100 % of the prompts at
//! every level (200 per level in its tests), the family's honest ε_auto.
//!
//! Prompt data: `{"difficulty":N}`. Answer: the words separated by whitespace (punctuation
//! between words is ignored), compared after NFKC and case folding. Rejections, in order of
//! checking: `wrong_word_count`, `word_not_allowed`, `required_word_constraint_failed`,
//! `initial_sum_mismatch`.

mod baseline;
mod invert;
mod phrasing;

use crate::normalize::normalize_answer;
use crate::vocab::vocabulary;
use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed};

/// Allowed difficulty levels.
pub const LEVELS: std::ops::RangeInclusive<u32> = 1..=3;

/// Largest answer accepted, in bytes.
pub const MAX_TEXT_LEN: usize = 512;

/// The semantic math lock family.
#[derive(Debug, Default, Clone, Copy)]
pub struct SemanticMathLock;

/// The constraints, kept in the answer key as four text lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Constraints {
    pub count: usize,
    pub target: u32,
    pub allowed: Vec<String>,
    pub required: Vec<String>,
    pub solution: Vec<String>,
}

impl Constraints {
    fn encode(&self) -> Vec<u8> {
        format!(
            "{} {}\n{}\n{}\n{}",
            self.count,
            self.target,
            self.allowed.join(" "),
            self.required.join(" "),
            self.solution.join(" ")
        )
        .into_bytes()
    }

    fn decode(key: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(key).ok()?;
        let mut lines = text.split('\n');
        let (count, target) = lines.next()?.split_once(' ')?;
        let words = |l: &str| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        Some(Self {
            count: count.parse().ok()?,
            target: target.parse().ok()?,
            allowed: words(lines.next()?),
            required: words(lines.next()?),
            solution: words(lines.next()?),
        })
    }
}

/// The sum of the ASCII codes of the words' first letters.
pub(crate) fn initial_sum<S: AsRef<str>>(words: &[S]) -> u32 {
    words
        .iter()
        .filter_map(|w| w.as_ref().bytes().next())
        .map(u32::from)
        .sum()
}

/// Splits an answer into lowercase words; `None` if a token holds anything but letters once
/// surrounding punctuation is stripped.
fn answer_words(text: &str) -> Option<Vec<String>> {
    normalize_answer(text)
        .split(|c: char| c.is_whitespace() || ",;:.!?\"()".contains(c))
        .filter(|w| !w.is_empty())
        .map(|w| w.chars().all(|c| c.is_alphabetic()).then(|| w.to_owned()))
        .collect()
}

impl Family for SemanticMathLock {
    fn script_solvable(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "semantic_math_lock"
    }

    fn class(&self) -> Class {
        Class::Agent
    }

    fn max_answer_len(&self) -> usize {
        MAX_TEXT_LEN
    }

    fn default_params(&self) -> FamilyParams {
        FamilyParams { difficulty: 3 }
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        crate::check_difficulty(params, LEVELS, "level")
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let level = params.difficulty.clamp(*LEVELS.start(), *LEVELS.end());
        let mut s = seed.derive("semantic_math_lock").stream();
        let v = vocabulary();
        let n_required = if level == 3 { 3 } else { 2 };
        let n_allowed = 14 + 4 * level as usize;
        let count = s.range(5, 9) as usize;

        // Required words come from distinct categories that no other listed word shares, so
        // "the one listed word that names one of the …" is unambiguous.
        let mut required_categories: Vec<usize> = Vec::new();
        while required_categories.len() < n_required {
            let c = s.below(v.categories.len() as u64) as usize;
            if !required_categories.contains(&c) {
                required_categories.push(c);
            }
        }
        let required: Vec<&'static str> = required_categories
            .iter()
            .map(|c| s.pick(&v.categories[*c].words))
            .collect();
        let mut allowed = required.clone();
        while allowed.len() < n_allowed {
            let c = s.below(v.categories.len() as u64) as usize;
            let w = s.pick(&v.categories[c].words);
            if !required_categories.contains(&c) && !allowed.contains(&w) {
                allowed.push(w);
            }
        }
        s.shuffle(&mut allowed);
        let mut others: Vec<&str> = allowed
            .iter()
            .copied()
            .filter(|w| !required.contains(w))
            .collect();
        s.shuffle(&mut others);
        let mut solution: Vec<&str> = required.clone();
        solution.extend(others.iter().take(count - n_required));
        s.shuffle(&mut solution);
        let target = initial_sum(&solution);

        let n_text = phrasing::count(&mut s, count, level);
        let t_text = phrasing::target(&mut s, target, level);
        let mut sentences = vec![
            phrasing::count_sentence(&mut s, &n_text),
            phrasing::sum_sentence(&mut s, &t_text),
        ];
        for (i, (word, category)) in required.iter().zip(&required_categories).enumerate() {
            let by_clue = level == 3 || (level == 2 && i == 0);
            let clue = by_clue.then(|| crate::lock::phrasing::describe(&mut s, *category, true));
            sentences.push(phrasing::required_sentence(&mut s, word, clue));
        }
        s.shuffle(&mut sentences);
        let text = format!(
            "{}\n{}\n{}",
            phrasing::allowed_line(&mut s, &allowed),
            sentences.join(" "),
            phrasing::closing(&mut s)
        );
        let constraints = Constraints {
            count,
            target,
            allowed: allowed.iter().map(|w| (*w).to_owned()).collect(),
            required: required.iter().map(|w| (*w).to_owned()).collect(),
            solution: solution.iter().map(|w| (*w).to_owned()).collect(),
        };
        Generated {
            prompt: Prompt {
                family: self.name().to_owned(),
                text,
                data: format!("{{\"difficulty\":{level}}}").into_bytes(),
            },
            key: AnswerKey(constraints.encode()),
        }
    }

    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
        let c = Constraints::decode(&key.0).ok_or(Reject::InvalidAnswerFormat("corrupt key"))?;
        if answer.len() > MAX_TEXT_LEN {
            return Err(Reject::InvalidAnswerFormat(
                "the answer is longer than 512 bytes",
            ));
        }
        let text = std::str::from_utf8(answer)
            .map_err(|_| Reject::InvalidAnswerFormat("the answer must be UTF-8"))?;
        let words = answer_words(text).ok_or(Reject::InvalidAnswerFormat(
            "the answer must be words made of letters",
        ))?;
        if words.is_empty() {
            return Err(Reject::MissingAnswer);
        }
        if words.len() != c.count {
            return Err(Reject::WrongWordCount {
                want: c.count,
                got: words.len(),
            });
        }
        if words.iter().any(|w| !c.allowed.contains(w)) {
            return Err(Reject::WordNotAllowed);
        }
        if c.required
            .iter()
            .any(|r| words.iter().filter(|w| *w == r).count() != 1)
        {
            return Err(Reject::RequiredWordConstraintFailed);
        }
        if words
            .iter()
            .enumerate()
            .any(|(i, w)| words[..i].contains(w))
        {
            return Err(Reject::WordNotAllowed);
        }
        let got = initial_sum(&words);
        if got != c.target {
            return Err(Reject::InitialSumMismatch {
                want: c.target,
                got,
            });
        }
        Ok(())
    }

    fn solve(&self, prompt: &Prompt) -> Option<Vec<u8>> {
        baseline::solve(&prompt.text).map(String::into_bytes)
    }

    fn reference_answer(&self, key: &AnswerKey) -> Option<Vec<u8>> {
        Constraints::decode(&key.0).map(|c| c.solution.join(" ").into_bytes())
    }
}

#[cfg(test)]
mod tests;
