//! `obfuscated_text_lock`: a noisy, shuffled instruction asks for the words of a list that
//! belong to a category named only by a paraphrase ("feathered creatures"), in a stated order,
//! as capitals joined by hyphens (`EAGLE-ROBIN-WREN`).
//!
//! Unlike agentproof's version (one 16-word vocabulary, three templates), the list is drawn from
//! about six hundred words in two dozen categories, categories are described in several ways,
//! every step has several phrasings, and list entries and instructions carry noise: mixed case,
//! digits for letters, dotted spelling, fillers and stale memos naming other categories.
//!
//! Difficulty (1..=3, default 2) is the noise level: 1 mixes case and may name the category
//! plainly; 2 always paraphrases it and adds digit substitutions, dotted words, a misleading
//! memo and negated selections ("everything except the …"); 3 adds stronger noise and a second
//! condition on the letters ("… and containing 'r'").
//!
//! Prompt data: `{"difficulty":N}`. Answer: the words in capitals joined by single hyphens,
//! compared exactly after NFKC and trimming.
//!
//! A labelled baseline (`script_solvable`): the vocabulary, the phrase tables and the noise are
//! closed and public, so a script holding the source undoes the noise and inverts every
//! template. Its baseline solver (`lock::baseline`) is that script; it solves 100 % of the
//! prompts at every level (200 per level in its tests), which is the family's honest ε_auto.

use crate::lock::frame::OBFUSCATED_INTROS as INTROS;
use crate::lock::{self, LetterRule, Order, Rule, Selection, noise, phrasing};
use crate::vocab::vocabulary;
use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed, SeedStream};

/// Allowed noise levels.
pub const LEVELS: std::ops::RangeInclusive<u32> = 1..=3;

/// The obfuscated text lock family.
#[derive(Debug, Default, Clone, Copy)]
pub struct ObfuscatedTextLock;

/// A second condition that keeps at least two and drops at least one of the selected words.
pub(crate) fn letter_rule(
    s: &mut SeedStream,
    words: &[&str],
    selection: &Selection,
) -> Option<LetterRule> {
    let selected: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| selection.keeps(w))
        .collect();
    for _ in 0..12 {
        let sample = s.pick(&selected);
        let bytes = sample.as_bytes();
        let rule = match s.below(4) {
            0 => LetterRule::Contains(bytes[s.below(bytes.len() as u64) as usize]),
            1 => LetterRule::StartsWith(bytes[0]),
            2 => LetterRule::LongerThan(bytes.len().saturating_sub(1)),
            _ => LetterRule::AtMost(bytes.len()),
        };
        let kept = selected.iter().filter(|w| rule.holds(w)).count();
        if kept >= 2 && kept < selected.len() {
            return Some(rule);
        }
    }
    None
}

impl Family for ObfuscatedTextLock {
    fn script_solvable(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "obfuscated_text_lock"
    }

    fn class(&self) -> Class {
        Class::Agent
    }

    fn max_answer_len(&self) -> usize {
        lock::MAX_LOCK_ANSWER_LEN
    }

    fn default_params(&self) -> FamilyParams {
        FamilyParams { difficulty: 2 }
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        crate::check_difficulty(params, LEVELS, "noise level")
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let level = params.difficulty.clamp(*LEVELS.start(), *LEVELS.end());
        let mut s = seed.derive("obfuscated_text_lock").stream();
        let v = vocabulary();
        let category = s.below(v.categories.len() as u64) as usize;
        let targets = s.range(3, 5) as usize;
        let decoys = s.range(4, 7) as usize;
        let words = lock::draw_words(&mut s, category, targets, decoys);
        let mut selection = Selection {
            category,
            negate: level >= 2 && s.chance(30),
            letter: None,
        };
        if level >= 3 {
            selection.letter = letter_rule(&mut s, &words, &selection);
        }
        let rule = Rule {
            selection,
            transforms: Vec::new(),
            order: s.pick(&Order::ALL),
            order_first: false,
        };
        let answer = rule.answer(&words);

        let mut blocks = vec![
            phrasing::selection(&mut s, &rule.selection, level >= 2).join(" "),
            phrasing::order(&mut s, rule.order),
            phrasing::format_step(&mut s),
        ];
        if level >= 2 {
            let other = loop {
                let c = s.below(v.categories.len() as u64) as usize;
                if c != category {
                    break v.categories[c].name;
                }
            };
            blocks.push(noise::memo(&mut s, other));
            blocks.push(noise::format_decoy(&mut s));
        }
        s.shuffle(&mut blocks);
        let noisy: Vec<String> = blocks
            .iter()
            .map(|b| noise::noisy_sentence(&mut s, b, level))
            .collect();
        let list = phrasing::list(&mut s, &words, |s, w| noise::dress_word(s, w, level));
        let intro = s.pick(INTROS);
        let text = if s.chance(50) {
            format!("{intro}\n{list}\n{}", noisy.join(" "))
        } else {
            format!("{intro}\n{}\n{list}", noisy.join(" "))
        };
        Generated {
            prompt: Prompt {
                family: self.name().to_owned(),
                text,
                data: format!("{{\"difficulty\":{level}}}").into_bytes(),
            },
            key: AnswerKey(answer.into_bytes()),
        }
    }

    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
        lock::verify_lock(key, answer)
    }

    fn solve(&self, prompt: &Prompt) -> Option<Vec<u8>> {
        lock::baseline::solve(&prompt.text).map(String::into_bytes)
    }

    fn reference_answer(&self, key: &AnswerKey) -> Option<Vec<u8>> {
        Some(key.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(level: u32) -> FamilyParams {
        FamilyParams { difficulty: level }
    }

    #[test]
    fn generation_is_deterministic_and_keys_verify() {
        for i in 0..300u32 {
            let mut seed = [0u8; 32];
            seed[..4].copy_from_slice(&i.to_le_bytes());
            let p = params(1 + i % 3);
            let a = ObfuscatedTextLock.generate(&Seed(seed), &p);
            let b = ObfuscatedTextLock.generate(&Seed(seed), &p);
            assert_eq!(a.prompt, b.prompt);
            assert_eq!(a.key, b.key);
            let answer = ObfuscatedTextLock.reference_answer(&a.key).unwrap();
            assert_eq!(ObfuscatedTextLock.verify(&a.key, &answer), Ok(()));
            assert!(
                answer.contains(&b'-'),
                "at least two words: {}",
                a.prompt.text
            );
        }
    }

    #[test]
    fn answers_are_normalized_then_compared_exactly() {
        let g = ObfuscatedTextLock.generate(&Seed([3; 32]), &params(2));
        let right = String::from_utf8(g.key.0.clone()).unwrap();
        let lower = format!("  {}\n", right.to_lowercase());
        assert_eq!(ObfuscatedTextLock.verify(&g.key, lower.as_bytes()), Ok(()));
        let full_width: String = right
            .chars()
            .map(|c| {
                if c == '-' {
                    c
                } else {
                    char::from_u32(c as u32 + 0xFEE0).unwrap()
                }
            })
            .collect();
        assert_eq!(
            ObfuscatedTextLock.verify(&g.key, full_width.as_bytes()),
            Ok(())
        );
        let padded = format!("{right}-EXTRA");
        assert_eq!(
            ObfuscatedTextLock.verify(&g.key, padded.as_bytes()),
            Err(Reject::AnswerMismatch)
        );
        assert_eq!(
            ObfuscatedTextLock.verify(&g.key, b" "),
            Err(Reject::MissingAnswer)
        );
        for bad in [&b"A, B"[..], b"A--B", b"{\"answer\":1}", &[0xff, 0xfe]] {
            assert_eq!(
                ObfuscatedTextLock.verify(&g.key, bad).unwrap_err().code(),
                "invalid_answer_format"
            );
        }
        let huge = vec![b'A'; 10_000];
        assert_eq!(
            ObfuscatedTextLock.verify(&g.key, &huge).unwrap_err().code(),
            "invalid_answer_format"
        );
        assert!(
            ObfuscatedTextLock
                .verify(&AnswerKey(vec![0xff]), b"A")
                .is_err()
        );
    }

    #[test]
    fn params_outside_the_levels_are_refused() {
        assert!(ObfuscatedTextLock.check_params(&params(0)).is_err());
        assert!(ObfuscatedTextLock.check_params(&params(4)).is_err());
        assert!(
            ObfuscatedTextLock
                .check_params(&ObfuscatedTextLock.default_params())
                .is_ok()
        );
    }
}
