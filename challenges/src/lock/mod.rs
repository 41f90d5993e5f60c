//! Machinery shared by the two lock families (`obfuscated_text_lock`, `multi_pass_lock`): the
//! rule a prompt hides (select by meaning, transform, order), its exact answer, the phrasings
//! that state it, the noise that hides it, and the white-box solver that reads it back
//! (`denoise` undoes the noise, `invert` the phrasings, `baseline` is the families' entry point).
//!
//! A lock's answer is the selected words, transformed, ordered, in capitals and joined by
//! hyphens (`EAGLE-HERON-ROBIN`). Verification is an exact comparison after NFKC and trimming.

pub(crate) mod baseline;
mod denoise;
pub(crate) mod frame;
mod invert;
pub(crate) mod noise;
pub(crate) mod phrasing;

use crate::normalize::normalize_upper;
use crate::vocab::vocabulary;
use crate::{AnswerKey, Reject, SeedStream};

/// Largest answer the lock families accept, in bytes.
pub const MAX_LOCK_ANSWER_LEN: usize = 512;

/// A condition on a word's letters, combined with the category selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LetterRule {
    Contains(u8),
    StartsWith(u8),
    LongerThan(usize),
    AtMost(usize),
}

impl LetterRule {
    pub(crate) fn holds(self, word: &str) -> bool {
        match self {
            LetterRule::Contains(c) => word.bytes().any(|b| b == c),
            LetterRule::StartsWith(c) => word.as_bytes().first() == Some(&c),
            LetterRule::LongerThan(n) => word.len() > n,
            LetterRule::AtMost(n) => word.len() <= n,
        }
    }
}

/// Which words of the list are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Selection {
    pub category: usize,
    pub negate: bool,
    pub letter: Option<LetterRule>,
}

impl Selection {
    pub(crate) fn keeps(&self, word: &str) -> bool {
        let in_category = vocabulary().categories[self.category].words.contains(&word);
        in_category != self.negate && self.letter.is_none_or(|r| r.holds(word))
    }
}

/// A per-word transformation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transform {
    Reverse,
    DropFirst,
    DropLast,
    Clip(usize),
    RotateLeft,
    RotateRight,
}

impl Transform {
    pub(crate) fn apply(self, word: &str) -> String {
        match self {
            Transform::Reverse => word.chars().rev().collect(),
            Transform::DropFirst => word.get(1..).unwrap_or_default().to_owned(),
            Transform::DropLast => word
                .get(..word.len().saturating_sub(1))
                .unwrap_or_default()
                .to_owned(),
            Transform::Clip(n) => word.get(..n.min(word.len())).unwrap_or_default().to_owned(),
            Transform::RotateLeft => match word.get(1..) {
                Some(rest) if !word.is_empty() => format!("{rest}{}", &word[..1]),
                _ => word.to_owned(),
            },
            Transform::RotateRight => match word.len().checked_sub(1) {
                Some(last) if last > 0 => format!("{}{}", &word[last..], &word[..last]),
                _ => word.to_owned(),
            },
        }
    }

    /// Whether the transform shortens words (at most two per rule, so four-letter words
    /// never vanish).
    pub(crate) fn removes_letters(self) -> bool {
        matches!(
            self,
            Transform::DropFirst | Transform::DropLast | Transform::Clip(_)
        )
    }
}

/// The order of the final words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    Alpha,
    AlphaDesc,
    LengthAsc,
    LengthDesc,
    Given,
    GivenReversed,
}

impl Order {
    pub(crate) const ALL: [Order; 6] = [
        Order::Alpha,
        Order::AlphaDesc,
        Order::LengthAsc,
        Order::LengthDesc,
        Order::Given,
        Order::GivenReversed,
    ];

    pub(crate) fn apply(self, words: &mut [String]) {
        match self {
            Order::Alpha => words.sort(),
            Order::AlphaDesc => words.sort_by(|a, b| b.cmp(a)),
            Order::LengthAsc => words.sort_by(|a, b| a.len().cmp(&b.len()).then(a.cmp(b))),
            Order::LengthDesc => words.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b))),
            Order::Given => {}
            Order::GivenReversed => words.reverse(),
        }
    }
}

/// A complete hidden rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub selection: Selection,
    pub transforms: Vec<Transform>,
    pub order: Order,
    /// Order the kept words before transforming them (else the transformed words are ordered).
    pub order_first: bool,
}

impl Rule {
    /// The exact answer for a list of words: kept, transformed in order, ordered, upper-cased,
    /// joined by hyphens.
    pub(crate) fn answer(&self, words: &[&str]) -> String {
        let mut kept: Vec<String> = words
            .iter()
            .filter(|w| self.selection.keeps(w))
            .map(|w| (*w).to_owned())
            .collect();
        if self.order_first {
            self.order.apply(&mut kept);
        }
        for word in &mut kept {
            *word = self
                .transforms
                .iter()
                .fold(std::mem::take(word), |acc, t| t.apply(&acc));
        }
        if !self.order_first {
            self.order.apply(&mut kept);
        }
        kept.iter()
            .map(|w| w.to_ascii_uppercase())
            .collect::<Vec<_>>()
            .join("-")
    }
}

/// Draws the word list: `targets` words of `category` and decoys from other categories,
/// all distinct, shuffled.
pub(crate) fn draw_words(
    s: &mut SeedStream,
    category: usize,
    targets: usize,
    decoys: usize,
) -> Vec<&'static str> {
    let v = vocabulary();
    let mut words: Vec<&'static str> = Vec::with_capacity(targets + decoys);
    let own = &v.categories[category].words;
    while words.len() < targets {
        let w = s.pick(own);
        if !words.contains(&w) {
            words.push(w);
        }
    }
    while words.len() < targets + decoys {
        let c = s.below(v.categories.len() as u64) as usize;
        if c == category {
            continue;
        }
        let w = s.pick(&v.categories[c].words);
        if !words.contains(&w) {
            words.push(w);
        }
    }
    s.shuffle(&mut words);
    words
}

/// Whether a normalized answer has the lock format: `[A-Z]+(-[A-Z]+)*`.
pub(crate) fn is_hyphenated_upper(text: &str) -> bool {
    !text.is_empty()
        && text
            .split('-')
            .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_uppercase()))
}

/// Verifies a lock answer against a key holding the expected answer.
pub(crate) fn verify_lock(key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
    let expected = std::str::from_utf8(&key.0)
        .ok()
        .filter(|e| is_hyphenated_upper(e))
        .ok_or(Reject::InvalidAnswerFormat("corrupt key"))?;
    if answer.len() > MAX_LOCK_ANSWER_LEN {
        return Err(Reject::InvalidAnswerFormat(
            "the answer is longer than 512 bytes",
        ));
    }
    let text = std::str::from_utf8(answer)
        .map_err(|_| Reject::InvalidAnswerFormat("the answer must be UTF-8"))?;
    let normalized = normalize_upper(text);
    if normalized.is_empty() {
        return Err(Reject::MissingAnswer);
    }
    if !is_hyphenated_upper(&normalized) {
        return Err(Reject::InvalidAnswerFormat(
            "expected capital letters in words joined by single hyphens, like EAGLE-ROBIN",
        ));
    }
    if normalized == expected {
        Ok(())
    } else {
        Err(Reject::AnswerMismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transforms_do_what_they_say() {
        assert_eq!(Transform::Reverse.apply("otter"), "retto");
        assert_eq!(Transform::DropFirst.apply("otter"), "tter");
        assert_eq!(Transform::DropLast.apply("otter"), "otte");
        assert_eq!(Transform::Clip(3).apply("otter"), "ott");
        assert_eq!(Transform::Clip(9).apply("otter"), "otter");
        assert_eq!(Transform::RotateLeft.apply("otter"), "ttero");
        assert_eq!(Transform::RotateRight.apply("otter"), "rotte");
        assert_eq!(Transform::RotateRight.apply("a"), "a");
        assert_eq!(Transform::DropFirst.apply(""), "");
    }

    #[test]
    fn rule_answer_selects_transforms_and_orders() {
        let v = vocabulary();
        let bird = v.category_of("eagle").unwrap();
        let rule = Rule {
            selection: Selection {
                category: bird,
                negate: false,
                letter: None,
            },
            transforms: vec![Transform::Reverse],
            order: Order::LengthAsc,
            order_first: false,
        };
        assert_eq!(
            rule.answer(&["otter", "robin", "eagle", "wren", "tulip"]),
            "NERW-ELGAE-NIBOR"
        );
        let negated = Rule {
            selection: Selection {
                category: bird,
                negate: true,
                letter: Some(LetterRule::Contains(b't')),
            },
            transforms: vec![],
            order: Order::GivenReversed,
            order_first: false,
        };
        assert_eq!(
            negated.answer(&["otter", "robin", "tulip", "panda"]),
            "TULIP-OTTER"
        );
        let sort_then_reverse = Rule {
            order: Order::Alpha,
            order_first: true,
            ..rule.clone()
        };
        assert_eq!(
            sort_then_reverse.answer(&["robin", "eagle", "wren"]),
            "ELGAE-NIBOR-NERW"
        );
    }

    #[test]
    fn format_check() {
        assert!(is_hyphenated_upper("A-BC"));
        assert!(!is_hyphenated_upper("A--B"));
        assert!(!is_hyphenated_upper("A-b"));
        assert!(!is_hyphenated_upper("-A"));
        assert!(!is_hyphenated_upper("A B"));
    }
}
