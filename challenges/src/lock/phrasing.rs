//! The many ways a lock prompt states its rule. Every step has several templates, categories
//! are named through paraphrases, numbers are written in digits or words, and the list is
//! introduced and separated in varied ways. The tables are closed: `invert` writes out every
//! sentence they can produce and reads each prompt back exactly.

use super::{LetterRule, Order, Selection, Transform};
use crate::SeedStream;
use crate::vocab::vocabulary;

pub(crate) const KEEP: &[&str] = &[
    "Keep only the words that name {d}.",
    "Discard every entry except the {d}.",
    "From the list, retain the {d} and nothing else.",
    "Only the {d} matter here; drop the rest.",
    "Filter the list down to its {d}.",
    "Everything that is not one of the {d} must go.",
    "Pick out the {d} and set the other words aside.",
    "What survives the first cut is the {d}, and only them.",
];

pub(crate) const DROP: &[&str] = &[
    "Throw out the {d}; keep all the other words.",
    "Keep every word except those naming {d}.",
    "Remove any {d} from the list and keep what remains.",
    "The {d} are not wanted: everything else stays.",
    "Strike the {d} off the list; the survivors are what you work with.",
];

const CONTAINS: &[&str] = &[
    "Of those, keep only the ones containing the letter '{c}'.",
    "Then narrow it further to words spelled with at least one '{c}'.",
    "A word stays only if '{c}' occurs somewhere in its spelling.",
];
const STARTS: &[&str] = &[
    "Of those, keep only the ones beginning with '{c}'.",
    "Then narrow it further to words whose first letter is '{c}'.",
    "A word stays only if it opens with the letter '{c}'.",
];
const LONGER: &[&str] = &[
    "Of those, keep only words with more than {n} letters.",
    "Then narrow it further to words longer than {n} characters.",
    "A word stays only if it has at least {n1} letters.",
];
const AT_MOST: &[&str] = &[
    "Of those, keep only words of {n} letters or fewer.",
    "Then narrow it further to words no longer than {n} characters.",
    "A word stays only if it is shorter than {n1} letters.",
];

const REVERSE: &[&str] = &[
    "Spell each word backwards.",
    "Reverse the letters of every word.",
    "Write each word from its last letter to its first.",
    "Mirror each word letter by letter.",
];
const DROP_FIRST: &[&str] = &[
    "Remove the first letter of each word.",
    "Chop off each word's opening letter.",
    "Delete the initial character of every word.",
];
const DROP_LAST: &[&str] = &[
    "Remove the last letter of each word.",
    "Drop the final character of every word.",
    "Cut away each word's closing letter.",
];
const CLIP: &[&str] = &[
    "Keep only the first {n} letters of each word (shorter words stay whole).",
    "Shorten each word to its first {n} characters; words that short already stay as they are.",
    "Truncate every word after its {nth} letter, leaving shorter words untouched.",
];
const ROTATE_LEFT: &[&str] = &[
    "Move the first letter of each word to its end.",
    "Take each word's first letter and put it at the back.",
    "Rotate every word one place to the left, so its first letter becomes its last.",
];
const ROTATE_RIGHT: &[&str] = &[
    "Move the last letter of each word to its front.",
    "Bring each word's final letter round to the beginning.",
    "Rotate every word one place to the right, so its last letter becomes its first.",
];

const ALPHA: &[&str] = &[
    "Sort them alphabetically.",
    "Arrange them in dictionary order, A to Z.",
    "Put them in A-to-Z order.",
    "Order them as a dictionary would.",
];
const ALPHA_DESC: &[&str] = &[
    "Sort them in reverse alphabetical order, Z to A.",
    "Arrange them from Z back to A.",
    "Order them as a dictionary read backwards would.",
];
const LENGTH_ASC: &[&str] = &[
    "Order them from shortest to longest, breaking ties alphabetically.",
    "Put the shortest first and the longest last; equal lengths go A to Z.",
    "Rank them by length, fewest letters first, ties in dictionary order.",
];
const LENGTH_DESC: &[&str] = &[
    "Order them from longest to shortest, breaking ties alphabetically.",
    "Put the longest first and the shortest last; equal lengths go A to Z.",
    "Rank them by length, most letters first, ties in dictionary order.",
];
const GIVEN: &[&str] = &[
    "Keep them in the order in which the list gives them.",
    "Do not reorder them: the list's own order stands.",
    "Leave them in their original sequence.",
];
const GIVEN_REVERSED: &[&str] = &[
    "List them in the reverse of their order in the list.",
    "Start from the end of the list and work back to its start.",
    "Flip their original sequence, last first.",
];

pub(crate) const FORMAT: &[&str] = &[
    "Answer with the resulting words in capitals, joined by hyphens.",
    "Reply in uppercase, words separated by single hyphens, nothing else.",
    "Give the result as UPPERCASE words linked with '-'.",
    "Write the final words in block capitals with a hyphen between neighbours.",
];

pub(crate) const LIST_INTRO: &[&str] = &[
    "Words: ",
    "Here is the list: ",
    "The entries are ",
    "Candidates -> ",
    "Working set = ",
];
pub(crate) const SEPARATORS: &[&str] = &[", ", " / ", " | ", "; ", " ~ "];

pub(crate) const NUMBERS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
];
const ORDINALS: &[&str] = &[
    "zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
];

/// A number in digits or in words.
pub(crate) fn number(s: &mut SeedStream, n: usize) -> String {
    match NUMBERS.get(n) {
        Some(word) if s.chance(50) => (*word).to_owned(),
        _ => n.to_string(),
    }
}

/// Every way [`number`] may write `n`: its digits, and its word where it has one.
pub(crate) fn number_texts(n: usize) -> Vec<String> {
    let mut out = vec![n.to_string()];
    out.extend(NUMBERS.get(n).map(|w| (*w).to_owned()));
    out
}

fn ordinal(n: usize) -> String {
    ORDINALS
        .get(n)
        .map_or_else(|| format!("{n}th"), |o| (*o).to_owned())
}

/// A description of a category: any of its descriptions, or with `paraphrase` only the ones
/// that avoid its plain name (the first description).
pub(crate) fn describe(s: &mut SeedStream, category: usize, paraphrase: bool) -> &'static str {
    let all = &vocabulary().categories[category].descriptions;
    match all.get(1..) {
        Some(rest) if paraphrase && !rest.is_empty() => s.pick(rest),
        _ => s.pick(all),
    }
}

pub(crate) fn selection(s: &mut SeedStream, sel: &Selection, paraphrase: bool) -> Vec<String> {
    let d = describe(s, sel.category, paraphrase);
    let template = if sel.negate {
        s.pick(DROP)
    } else {
        s.pick(KEEP)
    };
    let mut out = vec![template.replace("{d}", d)];
    if let Some(rule) = sel.letter {
        out.push(letter_rule(s, rule));
    }
    out
}

fn letter_rule(s: &mut SeedStream, rule: LetterRule) -> String {
    let t = s.pick(letter_templates(rule));
    let n = letter_number(rule);
    let n_text = number(s, n);
    let n1_text = number(s, n + 1);
    fill_letter(t, rule, &n_text, &n1_text)
}

/// The templates that state a letter condition of `rule`'s kind.
pub(crate) fn letter_templates(rule: LetterRule) -> &'static [&'static str] {
    match rule {
        LetterRule::Contains(_) => CONTAINS,
        LetterRule::StartsWith(_) => STARTS,
        LetterRule::LongerThan(_) => LONGER,
        LetterRule::AtMost(_) => AT_MOST,
    }
}

/// The `{n}` of a letter condition (its `{n1}` is one more); 0 for the letter conditions.
pub(crate) fn letter_number(rule: LetterRule) -> usize {
    match rule {
        LetterRule::LongerThan(n) | LetterRule::AtMost(n) => n,
        LetterRule::Contains(_) | LetterRule::StartsWith(_) => 0,
    }
}

/// A letter-condition template with its letter and numbers written in.
pub(crate) fn fill_letter(template: &str, rule: LetterRule, n_text: &str, n1_text: &str) -> String {
    let c = match rule {
        LetterRule::Contains(c) | LetterRule::StartsWith(c) => c,
        LetterRule::LongerThan(_) | LetterRule::AtMost(_) => b'?',
    };
    template
        .replace("{c}", &char::from(c).to_string())
        .replace("{n1}", n1_text)
        .replace("{n}", n_text)
}

pub(crate) fn transform(s: &mut SeedStream, t: Transform) -> String {
    let text = s.pick(transform_templates(t));
    match t {
        Transform::Clip(n) => {
            let n_text = number(s, n);
            fill_clip(text, n, &n_text)
        }
        _ => text.to_owned(),
    }
}

/// The templates that state transform `t`.
pub(crate) fn transform_templates(t: Transform) -> &'static [&'static str] {
    match t {
        Transform::Reverse => REVERSE,
        Transform::DropFirst => DROP_FIRST,
        Transform::DropLast => DROP_LAST,
        Transform::Clip(_) => CLIP,
        Transform::RotateLeft => ROTATE_LEFT,
        Transform::RotateRight => ROTATE_RIGHT,
    }
}

/// A clip template with its length written in (`n_text`, and the ordinal of `n`).
pub(crate) fn fill_clip(template: &str, n: usize, n_text: &str) -> String {
    template
        .replace("{nth}", &ordinal(n))
        .replace("{n}", n_text)
}

pub(crate) fn order(s: &mut SeedStream, o: Order) -> String {
    s.pick(order_templates(o)).to_owned()
}

/// The templates that state order `o`.
pub(crate) fn order_templates(o: Order) -> &'static [&'static str] {
    match o {
        Order::Alpha => ALPHA,
        Order::AlphaDesc => ALPHA_DESC,
        Order::LengthAsc => LENGTH_ASC,
        Order::LengthDesc => LENGTH_DESC,
        Order::Given => GIVEN,
        Order::GivenReversed => GIVEN_REVERSED,
    }
}

pub(crate) fn format_step(s: &mut SeedStream) -> String {
    s.pick(FORMAT).to_owned()
}

/// The list line, each word passed through `dress` (the noise of the family).
pub(crate) fn list(
    s: &mut SeedStream,
    words: &[&str],
    mut dress: impl FnMut(&mut SeedStream, &str) -> String,
) -> String {
    let intro = s.pick(LIST_INTRO);
    let sep = s.pick(SEPARATORS);
    let dressed: Vec<String> = words.iter().map(|w| dress(s, w)).collect();
    format!("{intro}{}.", dressed.join(sep))
}
