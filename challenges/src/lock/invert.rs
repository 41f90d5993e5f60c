//! Template inversion for the lock families: the white-box solver of `baseline`.
//!
//! Every sentence a lock prompt can state is written out here from the generator's own phrase
//! tables (`phrasing`: every template, with every category description, letter and number
//! filled in, numbers in digits and in words) and kept by its skeleton (`denoise`) with what it
//! means. A prompt's noise is undone to its skeleton, the statements it contains are looked
//! up, and the rule they spell out is applied to the list with the generator's own
//! [`Rule::answer`].

use std::collections::HashMap;
use std::sync::OnceLock;

use super::denoise::{list_words, skeleton};
use super::frame::{LABEL_STYLES, label};
use super::phrasing::{self, DROP, FORMAT, KEEP, number_texts};
use super::{LetterRule, Order, Rule, Selection, Transform};
use crate::vocab::vocabulary;

/// Largest number written into a letter or clip condition that the table covers (words have
/// at most a dozen letters).
const MAX_NUMBER: usize = 20;

/// What one statement of a lock prompt says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Meaning {
    /// Keep (or, negated, drop) the words of a category.
    Select { category: usize, negate: bool },
    /// A second condition on the selected words' letters.
    Letter(LetterRule),
    /// One transformation pass.
    Transform(Transform),
    /// The order of the answer.
    Order(Order),
    /// The answer format (capitals joined by hyphens): always the same.
    Format,
}

/// Every statement the phrasings can write, as `(skeleton, meaning)`; a skeleton with two
/// meanings would be ambiguous, and `statements_are_unambiguous` checks there is none.
pub(crate) fn statements() -> &'static [(String, Meaning)] {
    static TABLE: OnceLock<Vec<(String, Meaning)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out = Vec::new();
        let mut add = |text: &str, m: Meaning| out.push((skeleton(text), m));
        for (category, c) in vocabulary().categories.iter().enumerate() {
            for d in &c.descriptions {
                for (templates, negate) in [(KEEP, false), (DROP, true)] {
                    for t in templates {
                        add(&t.replace("{d}", d), Meaning::Select { category, negate });
                    }
                }
            }
        }
        let mut rules: Vec<LetterRule> = (b'a'..=b'z')
            .flat_map(|c| [LetterRule::Contains(c), LetterRule::StartsWith(c)])
            .collect();
        rules.extend(
            (0..=MAX_NUMBER).flat_map(|n| [LetterRule::LongerThan(n), LetterRule::AtMost(n)]),
        );
        for rule in rules {
            let n = phrasing::letter_number(rule);
            for t in phrasing::letter_templates(rule) {
                for n_text in number_texts(n) {
                    for n1_text in number_texts(n + 1) {
                        add(
                            &phrasing::fill_letter(t, rule, &n_text, &n1_text),
                            Meaning::Letter(rule),
                        );
                    }
                }
            }
        }
        let mut transforms = vec![
            Transform::Reverse,
            Transform::DropFirst,
            Transform::DropLast,
            Transform::RotateLeft,
            Transform::RotateRight,
        ];
        transforms.extend((1..=MAX_NUMBER).map(Transform::Clip));
        for tr in transforms {
            for t in phrasing::transform_templates(tr) {
                match tr {
                    Transform::Clip(n) => {
                        for n_text in number_texts(n) {
                            add(&phrasing::fill_clip(t, n, &n_text), Meaning::Transform(tr));
                        }
                    }
                    _ => add(t, Meaning::Transform(tr)),
                }
            }
        }
        for o in Order::ALL {
            for t in phrasing::order_templates(o) {
                add(t, Meaning::Order(o));
            }
        }
        for t in FORMAT {
            add(t, Meaning::Format);
        }
        out
    })
}

/// The statement whose skeleton is exactly `skel`.
fn statement(skel: &str) -> Option<Meaning> {
    static INDEX: OnceLock<HashMap<&'static str, Meaning>> = OnceLock::new();
    INDEX
        .get_or_init(|| statements().iter().map(|(k, m)| (k.as_str(), *m)).collect())
        .get(skel)
        .copied()
}

/// The statements inside a run of sentences (`skel`, a skeleton), each found whole between
/// spaces, in text order. No statement lies inside another, nor inside the decoy sentences
/// (`statements_are_found_only_where_stated`), so every match is one the generator wrote.
fn statements_within(skel: &str) -> Vec<Meaning> {
    static NEEDLES: OnceLock<Vec<(String, Meaning)>> = OnceLock::new();
    let needles = NEEDLES.get_or_init(|| {
        statements()
            .iter()
            .map(|(k, m)| (format!(" {k} "), *m))
            .collect()
    });
    let padded = format!(" {skel} ");
    let mut found: Vec<(usize, Meaning)> = Vec::new();
    for (needle, m) in needles {
        found.extend(
            padded
                .match_indices(needle.as_str())
                .map(|(at, _)| (at, *m)),
        );
    }
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, m)| m).collect()
}

/// The one value every element of `items` agrees on, if any.
fn single<T: PartialEq + Copy>(items: impl IntoIterator<Item = T>) -> Option<T> {
    let mut it = items.into_iter();
    let first = it.next()?;
    it.all(|x| x == first).then_some(first)
}

fn answer(rule: &Rule, words: &[&str]) -> Option<String> {
    let answer = rule.answer(words);
    (!answer.is_empty()).then_some(answer)
}

/// Solves an `obfuscated_text_lock` prompt: an intro line, then the list line and the noisy
/// instruction blocks in either order.
pub(crate) fn obfuscated(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let [_, a, b] = lines[..] else { return None };
    let (words, instructions) = match list_words(a) {
        Some(w) => (w, b),
        None => (list_words(b)?, a),
    };
    let found = statements_within(&skeleton(instructions));
    let (category, negate) = single(found.iter().filter_map(|m| match m {
        Meaning::Select { category, negate } => Some((*category, *negate)),
        _ => None,
    }))?;
    let letters: Vec<LetterRule> = found
        .iter()
        .filter_map(|m| match m {
            Meaning::Letter(r) => Some(*r),
            _ => None,
        })
        .collect();
    let letter = if letters.is_empty() {
        None
    } else {
        Some(single(letters)?)
    };
    let order = single(found.iter().filter_map(|m| match m {
        Meaning::Order(o) => Some(*o),
        _ => None,
    }))?;
    let rule = Rule {
        selection: Selection {
            category,
            negate,
            letter,
        },
        transforms: Vec::new(),
        order,
        order_first: false,
    };
    answer(&rule, &words)
}

/// The step number of a `multi_pass_lock` line and its sentence, from the generator's labels.
fn labelled(line: &str) -> Option<(usize, &str)> {
    (0..LABEL_STYLES)
        .flat_map(|style| (0..9).map(move |n| (style, n)))
        .find_map(|(style, n)| {
            let label = label(style, n);
            line.strip_prefix(&label)?
                .strip_prefix(' ')
                .map(|rest| (n, rest))
        })
}

/// Solves a `multi_pass_lock` prompt: an intro line, the list line, then one labelled step per
/// line in shuffled order; each step is one whole statement.
pub(crate) fn multi_pass(text: &str) -> Option<String> {
    let mut lines = text.lines().skip(1);
    let words = list_words(lines.next()?)?;
    let mut steps: Vec<(usize, Meaning)> = lines
        .map(|line| {
            let (n, sentence) = labelled(line)?;
            Some((n, statement(&skeleton(sentence))?))
        })
        .collect::<Option<_>>()?;
    steps.sort_by_key(|(n, _)| *n);
    let mut selection = None;
    let mut transforms = Vec::new();
    let mut order = None;
    let mut order_first = false;
    for (_, meaning) in steps {
        match meaning {
            Meaning::Select { category, negate } => {
                selection = Some(Selection {
                    category,
                    negate,
                    letter: None,
                });
            }
            Meaning::Letter(rule) => selection.as_mut()?.letter = Some(rule),
            Meaning::Transform(t) => transforms.push(t),
            Meaning::Order(o) => {
                order = Some(o);
                order_first = transforms.is_empty();
            }
            Meaning::Format => {}
        }
    }
    let rule = Rule {
        selection: selection?,
        transforms,
        order: order?,
        order_first,
    };
    answer(&rule, &words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_unambiguous() {
        let mut seen: HashMap<&str, Meaning> = HashMap::new();
        for (k, m) in statements() {
            if let Some(other) = seen.insert(k, *m) {
                assert_eq!(other, *m, "`{k}` has two meanings");
            }
        }
        assert!(seen.len() > 1000, "{}", seen.len());
    }

    #[test]
    fn statements_are_found_only_where_stated() {
        let all = statements();
        for (k, m) in all {
            let padded = format!(" {k} ");
            for (other, n) in all {
                assert!(
                    k == other || !format!(" {other} ").contains(&padded),
                    "`{k}` ({m:?}) lies inside `{other}` ({n:?})"
                );
            }
        }
        let mut s = crate::Seed([9; 32]).stream();
        for c in &vocabulary().categories {
            for _ in 0..8 {
                let memo = crate::lock::noise::memo(&mut s, c.name);
                let decoy = crate::lock::noise::format_decoy(&mut s);
                assert_eq!(statements_within(&skeleton(&memo)), vec![], "{memo}");
                assert_eq!(statements_within(&skeleton(&decoy)), vec![], "{decoy}");
            }
        }
        let bird = vocabulary().category_of("eagle").unwrap();
        assert_eq!(
            statements_within(&skeleton(
                "Sort them in reverse alphabetical order, Z to A. Keep only the words that name \
                 birds. Ignore the margin scribble about birds, it belongs to another puzzle."
            )),
            vec![
                Meaning::Order(Order::AlphaDesc),
                Meaning::Select {
                    category: bird,
                    negate: false
                }
            ]
        );
    }
}
