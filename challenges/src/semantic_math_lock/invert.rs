//! Template inversion for `semantic_math_lock`: each sentence of a prompt is matched against
//! the generator's own templates (`phrasing`), its placeholders are read back, and each value
//! is evaluated with the generator's own tables — number words, the riddle table with its
//! offsets, the sum and product templates, the vocabulary's category descriptions. The prompt
//! carries no noise, so every sentence matches exactly one template.

use super::phrasing::{
    ALLOWED, COUNT, FEWER, MORE, NUMBER_WORDS, PRODUCTS, REQUIRED, REQUIRED_CLUE, RIDDLES, SUM,
    SUMS,
};
use crate::vocab::vocabulary;

/// What a prompt asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asked {
    /// The listed words, in the prompt's order.
    pub allowed: Vec<String>,
    /// The number of words.
    pub count: usize,
    /// The sum of the initials' codes.
    pub target: u32,
    /// The words that must appear once.
    pub required: Vec<String>,
}

/// Matches `text` whole against `pattern`, whose `{name}` placeholders stand for any
/// non-empty text, trying every split; the placeholders' `(name, value)` in order.
pub(crate) fn captures<'p, 't>(pattern: &'p str, text: &'t str) -> Option<Vec<(&'p str, &'t str)>> {
    // pattern = literal {name} literal {name} … literal
    let mut literals = Vec::new();
    let mut names = Vec::new();
    let mut rest = pattern;
    while let Some((lit, after)) = rest.split_once('{') {
        let (name, tail) = after.split_once('}')?;
        literals.push(lit);
        names.push(name);
        rest = tail;
    }
    literals.push(rest);
    let text = text.strip_prefix(literals[0])?;
    let mut values = Vec::with_capacity(names.len());
    fill(&literals[1..], text, &mut values).then(|| names.into_iter().zip(values).collect())
}

/// Splits `text` into a value then `literals[0]`, a value then `literals[1]`, …, the last
/// literal ending the text; backtracks over every occurrence of each literal.
fn fill<'t>(literals: &[&str], text: &'t str, values: &mut Vec<&'t str>) -> bool {
    let Some((lit, more)) = literals.split_first() else {
        return text.is_empty();
    };
    if more.is_empty() {
        return match text.strip_suffix(lit) {
            Some(v) if !v.is_empty() => {
                values.push(v);
                true
            }
            _ => false,
        };
    }
    for (at, _) in text.match_indices(lit).filter(|(at, _)| *at > 0) {
        values.push(&text[..at]);
        if fill(more, &text[at + lit.len()..], values) {
            return true;
        }
        values.pop();
    }
    false
}

/// The value of a placeholder named `name` in `caps`, as a number.
fn num(caps: &[(&str, &str)], name: &str) -> Option<u32> {
    caps.iter().find(|(n, _)| *n == name)?.1.parse().ok()
}

fn riddle(text: &str) -> Option<usize> {
    RIDDLES.iter().find(|(_, r)| *r == text).map(|(n, _)| *n)
}

fn number_word(text: &str) -> Option<usize> {
    NUMBER_WORDS.iter().position(|w| *w == text)
}

/// The word count a count phrase (`phrasing::count`) stands for.
fn count_value(text: &str) -> Option<usize> {
    if let Some(n) = text
        .parse()
        .ok()
        .or_else(|| number_word(text))
        .or_else(|| riddle(text))
    {
        return Some(n);
    }
    [(FEWER, false), (MORE, true)]
        .iter()
        .find_map(|(pattern, more)| {
            let caps = captures(pattern, text)?;
            let k = number_word(caps.iter().find(|(n, _)| *n == "k")?.1)?;
            let r = riddle(caps.iter().find(|(n, _)| *n == "r")?.1)?;
            if *more { Some(r + k) } else { r.checked_sub(k) }
        })
}

/// The number a target phrase (`phrasing::target`) stands for.
fn target_value(text: &str) -> Option<u32> {
    text.parse()
        .ok()
        .or_else(|| {
            SUMS.iter().find_map(|p| {
                let c = captures(p, text)?;
                num(&c, "a")?.checked_add(num(&c, "b")?)
            })
        })
        .or_else(|| {
            PRODUCTS.iter().find_map(|p| {
                let c = captures(p, text)?;
                num(&c, "f")?
                    .checked_mul(num(&c, "q")?)?
                    .checked_add(num(&c, "r")?)
            })
        })
}

/// The one value a sentence's placeholder takes under one of `templates`, evaluated by `eval`.
fn read<T>(templates: &[&str], sentence: &str, eval: impl Fn(&str) -> Option<T>) -> Option<T> {
    templates.iter().find_map(|t| {
        let caps = captures(t, sentence)?;
        let [(_, value)] = caps[..] else { return None };
        eval(value)
    })
}

/// Reads a semantic math prompt: the allowed line, the shuffled constraint sentences, the
/// closing line. `None` when a sentence matches no template or a value is missing.
pub(crate) fn read_prompt(text: &str) -> Option<Asked> {
    let mut lines = text.lines();
    let first = lines.next()?;
    let allowed: Vec<String> = ALLOWED
        .iter()
        .find_map(|a| first.strip_prefix(a))
        .and_then(|l| l.strip_suffix('.'))?
        .split(", ")
        .map(str::to_owned)
        .collect();
    let v = vocabulary();
    let (mut count, mut target, mut required) = (None, None, Vec::new());
    for sentence in lines.next()?.split_inclusive(". ").map(str::trim_end) {
        if let Some(n) = read(COUNT, sentence, count_value) {
            count = Some(n);
        } else if let Some(t) = read(SUM, sentence, target_value) {
            target = Some(t);
        } else if let Some(w) = read(REQUIRED, sentence, |w| allowed.iter().find(|a| *a == w)) {
            required.push(w.clone());
        } else {
            let category = read(REQUIRED_CLUE, sentence, |d| {
                v.categories
                    .iter()
                    .position(|c| c.descriptions.contains(&d))
            })?;
            let mut members = allowed
                .iter()
                .filter(|w| v.categories[category].words.contains(&w.as_str()));
            let (Some(word), None) = (members.next(), members.next()) else {
                return None;
            };
            required.push(word.clone());
        }
    }
    Some(Asked {
        allowed,
        count: count?,
        target: target?,
        required,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_try_every_split() {
        assert_eq!(
            captures(
                "{r} more than {f} multiplied by {q}",
                "3 more than 11 multiplied by 60"
            ),
            Some(vec![("r", "3"), ("f", "11"), ("q", "60")])
        );
        assert_eq!(
            captures(
                "Write exactly {n} words.",
                "Write exactly two more than six words."
            ),
            Some(vec![("n", "two more than six")])
        );
        assert_eq!(
            captures("a {x} b {y}.", "a 1 b 2 b 3."),
            Some(vec![("x", "1"), ("y", "2 b 3")])
        );
        assert_eq!(captures("Use {n} words.", "Use words."), None);
    }

    #[test]
    fn phrases_evaluate_to_what_the_generator_meant() {
        let mut s = crate::Seed([8; 32]).stream();
        for level in 1..=3 {
            for n in 5..=9 {
                for _ in 0..20 {
                    let text = super::super::phrasing::count(&mut s, n, level);
                    assert_eq!(count_value(&text), Some(n), "{text}");
                }
            }
            for t in [500u32, 689, 777, 1020] {
                let text = super::super::phrasing::target(&mut s, t, level);
                assert_eq!(target_value(&text), Some(t), "{text}");
            }
        }
    }
}
