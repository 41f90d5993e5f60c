//! `multi_pass_lock`: numbered steps, presented out of order, select words of a list by meaning,
//! transform them in several passes (reverse, drop a letter, clip, rotate) and order them,
//! before the result is written in capitals joined by hyphens.
//!
//! The steps must be put back in their numbered order: the passes do not commute, and the order
//! step may come before or after the transformations. Step labels mix styles (`Step 3:`,
//! `(iii)`, `Third:`); instructions carry light noise; categories are paraphrased.
//!
//! Difficulty (1..=4, default 3) is the number of transformation passes (at most two of them
//! remove letters, and words have four letters or more, so no word vanishes). From two passes
//! on, the category is always paraphrased.
//!
//! Prompt data: `{"difficulty":N}`. Answer as for `obfuscated_text_lock`.
//!
//! A labelled baseline (`script_solvable`): its baseline solver (`lock::baseline`) reads the
//! labels with [`label`], inverts each step's template and solves 100 % of the prompts at every
//! pass count (200 per count in its tests), the family's honest ε_auto.

use crate::lock::frame::{LABEL_STYLES, MULTI_PASS_INTROS as INTROS, label};
use crate::lock::{self, Order, Rule, Selection, Transform, noise, phrasing};
use crate::vocab::vocabulary;
use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed, SeedStream};

/// Allowed numbers of passes.
pub const PASSES: std::ops::RangeInclusive<u32> = 1..=4;

/// The multi-pass lock family.
#[derive(Debug, Default, Clone, Copy)]
pub struct MultiPassLock;

fn draw_transforms(s: &mut SeedStream, passes: usize) -> Vec<Transform> {
    let mut out: Vec<Transform> = Vec::with_capacity(passes);
    while out.len() < passes {
        let t = match s.below(6) {
            0 => Transform::Reverse,
            1 => Transform::DropFirst,
            2 => Transform::DropLast,
            3 => Transform::Clip(s.range(3, 5) as usize),
            4 => Transform::RotateLeft,
            _ => Transform::RotateRight,
        };
        let removing = out.iter().filter(|t| t.removes_letters()).count();
        let repeats_last = out.last() == Some(&t);
        if !(repeats_last || (t.removes_letters() && removing >= 2)) {
            out.push(t);
        }
    }
    out
}

impl Family for MultiPassLock {
    fn script_solvable(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "multi_pass_lock"
    }

    fn class(&self) -> Class {
        Class::Agent
    }

    fn max_answer_len(&self) -> usize {
        lock::MAX_LOCK_ANSWER_LEN
    }

    fn default_params(&self) -> FamilyParams {
        FamilyParams { difficulty: 3 }
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        crate::check_difficulty(params, PASSES, "passes")
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let passes = params.difficulty.clamp(*PASSES.start(), *PASSES.end()) as usize;
        let mut s = seed.derive("multi_pass_lock").stream();
        let v = vocabulary();
        let category = s.below(v.categories.len() as u64) as usize;
        let targets = s.range(3, 5) as usize;
        let decoys = s.range(4, 6) as usize;
        let words = lock::draw_words(&mut s, category, targets, decoys);
        let order = s.pick(&[
            Order::Alpha,
            Order::AlphaDesc,
            Order::LengthAsc,
            Order::LengthDesc,
        ]);
        let rule = Rule {
            selection: Selection {
                category,
                negate: s.chance(25),
                letter: None,
            },
            transforms: draw_transforms(&mut s, passes),
            order,
            order_first: s.chance(35),
        };
        let answer = rule.answer(&words);

        let mut steps = vec![phrasing::selection(&mut s, &rule.selection, passes >= 2).join(" ")];
        let order_step = phrasing::order(&mut s, rule.order);
        if rule.order_first {
            steps.push(order_step.clone());
        }
        for t in &rule.transforms {
            steps.push(phrasing::transform(&mut s, *t));
        }
        if !rule.order_first {
            steps.push(order_step);
        }
        steps.push(phrasing::format_step(&mut s));
        let style = s.below(LABEL_STYLES);
        let mut labelled: Vec<String> = steps
            .iter()
            .enumerate()
            .map(|(i, step)| {
                format!(
                    "{} {}",
                    label(style, i),
                    noise::noisy_sentence(&mut s, step, 1)
                )
            })
            .collect();
        s.shuffle(&mut labelled);
        let list = phrasing::list(&mut s, &words, |s, w| noise::dress_word(s, w, 1));
        let intro = s.pick(INTROS);
        let text = format!("{intro}\n{list}\n{}", labelled.join("\n"));
        Generated {
            prompt: Prompt {
                family: self.name().to_owned(),
                text,
                data: format!("{{\"difficulty\":{passes}}}").into_bytes(),
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

    #[test]
    fn generation_is_deterministic_and_keys_verify() {
        for i in 0..300u32 {
            let mut seed = [7u8; 32];
            seed[..4].copy_from_slice(&i.to_le_bytes());
            let p = FamilyParams {
                difficulty: 1 + i % 4,
            };
            let a = MultiPassLock.generate(&Seed(seed), &p);
            assert_eq!(a.prompt, MultiPassLock.generate(&Seed(seed), &p).prompt);
            let answer = MultiPassLock.reference_answer(&a.key).unwrap();
            assert_eq!(
                MultiPassLock.verify(&a.key, &answer),
                Ok(()),
                "{}",
                a.prompt.text
            );
        }
    }

    #[test]
    fn passes_never_remove_more_than_two_letters_nor_repeat() {
        let mut s = Seed([5; 32]).stream();
        for _ in 0..500 {
            let ts = draw_transforms(&mut s, 4);
            assert_eq!(ts.len(), 4);
            assert!(ts.iter().filter(|t| t.removes_letters()).count() <= 2);
            assert!(ts.windows(2).all(|w| w[0] != w[1]));
        }
    }

    #[test]
    fn wrong_order_of_passes_gives_a_wrong_answer() {
        let g = MultiPassLock.generate(&Seed([8; 32]), &MultiPassLock.default_params());
        let right = String::from_utf8(g.key.0.clone()).unwrap();
        let mut parts: Vec<&str> = right.split('-').collect();
        parts.reverse();
        let swapped = parts.join("-");
        if swapped != right {
            assert_eq!(
                MultiPassLock.verify(&g.key, swapped.as_bytes()),
                Err(Reject::AnswerMismatch)
            );
        }
        assert!(
            MultiPassLock
                .check_params(&FamilyParams { difficulty: 5 })
                .is_err()
        );
    }
}
