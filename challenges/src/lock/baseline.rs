//! The baseline script for the lock families: what a programmer with regular expressions, a
//! word list and an afternoon would write. It undoes the mechanical noise (case, digits for
//! letters, dotted spelling, fillers), finds the list as the line richest in known words, takes
//! the category from the first category name it sees, and reads steps by keyword. It is
//! deliberately competent: its success rate is the honest ε_auto of the lock families.

use super::{LetterRule, Order, Rule, Selection, Transform};
use crate::vocab::vocabulary;

const FILLERS: &[&str] = &["~~", "//", "[static]", "...", "<>", "(garbled)", "##", "::"];
const NUMBER_WORDS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
];

fn unleet(c: char) -> char {
    match c {
        '4' => 'a',
        '3' => 'e',
        '1' => 'i',
        '0' => 'o',
        '5' => 's',
        '7' => 't',
        c => c,
    }
}

/// Lower-cases, drops filler tokens, joins dotted spellings and maps digits inside words back
/// to letters.
pub(crate) fn denoise(text: &str) -> String {
    let mut lines = Vec::new();
    for line in text.lines() {
        let mut tokens = Vec::new();
        for token in line.split(' ') {
            if FILLERS.contains(&token) {
                continue;
            }
            let mut t = token.to_ascii_lowercase();
            let pieces: Vec<&str> = t.split('.').collect();
            if pieces.len() > 2
                && pieces
                    .iter()
                    .filter(|p| !p.is_empty())
                    .all(|p| p.chars().count() <= 2)
            {
                t = pieces.concat();
            }
            let has_letter = t.chars().any(|c| c.is_ascii_alphabetic());
            if has_letter {
                t = t.chars().map(unleet).collect();
            }
            tokens.push(t);
        }
        lines.push(tokens.join(" "));
    }
    lines.join("\n")
}

fn words_of(line: &str) -> Vec<&str> {
    line.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .collect()
}

fn number_after(text: &str, marker: &str) -> Option<usize> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let token = rest.split_whitespace().next()?;
    let token = token.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    token
        .parse()
        .ok()
        .or_else(|| NUMBER_WORDS.iter().position(|w| *w == token))
}

fn quoted_letter(text: &str) -> Option<u8> {
    let bytes = text.as_bytes();
    bytes
        .windows(3)
        .find(|w| w[0] == b'\'' && w[2] == b'\'' && w[1].is_ascii_alphabetic())
        .map(|w| w[1])
}

fn letter_rule(text: &str) -> Option<LetterRule> {
    if let Some(c) = quoted_letter(text) {
        let starts = ["begin", "first letter is", "opens with"]
            .iter()
            .any(|k| text.contains(k));
        return Some(if starts {
            LetterRule::StartsWith(c)
        } else {
            LetterRule::Contains(c)
        });
    }
    if let Some(n) = number_after(text, "more than ").or_else(|| number_after(text, "longer than "))
    {
        return Some(LetterRule::LongerThan(n));
    }
    if let Some(n) = number_after(text, "at least ") {
        return Some(LetterRule::LongerThan(n.saturating_sub(1)));
    }
    if let Some(n) = number_after(text, "shorter than ") {
        return Some(LetterRule::AtMost(n.saturating_sub(1)));
    }
    number_after(text, "no longer than ")
        .or_else(|| number_after(text, "of "))
        .filter(|_| text.contains("or fewer") || text.contains("no longer"))
        .map(LetterRule::AtMost)
}

fn transform(step: &str) -> Option<Transform> {
    let has = |k: &str| step.contains(k);
    if has("backwards")
        || has("reverse the letters")
        || has("mirror")
        || has("last letter to its first")
    {
        Some(Transform::Reverse)
    } else if let Some(n) =
        number_after(step, "first ").filter(|_| has("letters of") || has("characters"))
    {
        Some(Transform::Clip(n))
    } else if has("one place to the left") || (has("first letter") && (has(" end") || has("back")))
    {
        Some(Transform::RotateLeft)
    } else if has("one place to the right")
        || (has("last letter") && (has("front") || has("beginning")))
    {
        Some(Transform::RotateRight)
    } else if (has("first letter") || has("opening letter") || has("initial character"))
        && (has("remove") || has("chop") || has("delete"))
    {
        Some(Transform::DropFirst)
    } else if (has("last letter") || has("final character") || has("closing letter"))
        && (has("remove") || has("drop") || has("cut"))
    {
        Some(Transform::DropLast)
    } else {
        None
    }
}

fn order(step: &str) -> Option<Order> {
    let has = |k: &str| step.contains(k);
    if has("z to a") || has("reverse alphabetical") || has("z back to a") {
        Some(Order::AlphaDesc)
    } else if has("shortest to longest") || has("shortest first") {
        Some(Order::LengthAsc)
    } else if has("longest to shortest") || has("longest first") {
        Some(Order::LengthDesc)
    } else if has("reverse of their order") || has("end of the list") {
        Some(Order::GivenReversed)
    } else if has("do not reorder") || has("original sequence") {
        Some(Order::Given)
    } else if has("alphabetical") || has("a to z") || has("a-to-z") || has("dictionary") {
        Some(Order::Alpha)
    } else {
        None
    }
}

/// The step sentences in execution order: lines labelled `step N:` are sorted by N; anything
/// else stays in text order.
fn steps(instructions: &[&str]) -> Vec<String> {
    let mut numbered: Vec<(usize, String)> = Vec::new();
    let mut plain = Vec::new();
    for line in instructions {
        match line.strip_prefix("step ").and_then(|r| r.split_once(':')) {
            Some((n, rest)) if n.trim().parse::<usize>().is_ok() => {
                numbered.push((n.trim().parse().unwrap_or(0), rest.to_owned()));
            }
            _ => plain.extend(
                line.split_inclusive(['.', ';', ')', ']'])
                    .map(str::to_owned),
            ),
        }
    }
    numbered.sort_by_key(|(n, _)| *n);
    numbered.into_iter().map(|(_, s)| s).chain(plain).collect()
}

/// Tries to answer a lock prompt. `None` when it cannot find a list or a category.
pub(crate) fn solve(text: &str) -> Option<String> {
    let v = vocabulary();
    let clean = denoise(text);
    let lines: Vec<&str> = clean.lines().collect();
    let (list_index, _) = lines.iter().enumerate().max_by_key(|(_, l)| {
        words_of(l)
            .iter()
            .filter(|w| v.category_of(w).is_some())
            .count()
    })?;
    let words: Vec<&str> = words_of(lines[list_index])
        .into_iter()
        .filter(|w| v.category_of(w).is_some())
        .collect();
    let instructions: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != list_index)
        .map(|(_, l)| *l)
        .collect();
    let steps = steps(&instructions);

    let mut selection = None;
    let mut transforms = Vec::new();
    let mut order_rule = None;
    let mut order_first = false;
    for step in &steps {
        if selection.is_none() {
            let found = v.categories.iter().enumerate().find(|(_, c)| {
                words_of(step)
                    .iter()
                    .any(|w| *w == c.name || Some(w) == c.descriptions.first())
            });
            if let Some((category, _)) = found {
                let negate = [
                    "except those",
                    "throw out",
                    "remove any",
                    "strike",
                    "not wanted",
                ]
                .iter()
                .any(|k| step.contains(k));
                selection = Some(Selection {
                    category,
                    negate,
                    letter: None,
                });
                continue;
            }
        }
        if let Some(t) = transform(step) {
            transforms.push(t);
        } else if let Some(o) = order(step).filter(|_| order_rule.is_none()) {
            order_rule = Some(o);
            order_first = transforms.is_empty() && steps.len() > 4;
        } else if let Some(sel) = selection.as_mut().filter(|s| s.letter.is_none()) {
            sel.letter = letter_rule(step);
        }
    }
    let rule = Rule {
        selection: selection?,
        transforms,
        order: order_rule.unwrap_or(Order::Alpha),
        order_first,
    };
    let answer = rule.answer(&words);
    (!answer.is_empty()).then_some(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denoise_undoes_mechanical_noise() {
        assert_eq!(
            denoise("K33p ~~ the B.I.R.D.S, 5 letters"),
            "keep the birds, 5 letters"
        );
    }

    #[test]
    fn solves_a_plainly_worded_prompt() {
        let text = "Words: otter, robin, eagle, tulip, wren.\nKeep only the words that name birds. \
                    Sort them alphabetically. Answer in capitals joined by hyphens.";
        assert_eq!(solve(text).as_deref(), Some("EAGLE-ROBIN-WREN"));
    }

    #[test]
    fn is_fooled_by_a_paraphrase() {
        let text = "Words: otter, robin, eagle, tulip, wren.\nKeep the feathered creatures. \
                    Sort them alphabetically.";
        assert_eq!(solve(text), None);
    }
}
