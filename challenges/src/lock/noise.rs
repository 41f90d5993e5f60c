//! Noise for lock prompts: mixed case, digit-for-letter substitutions ("l33t"), letters split by
//! dots, filler tokens between words, and stale memos that name the wrong category. Every
//! transform is invertible (case aside): `denoise` undoes them exactly, so the noise stops only
//! scripts written without this file.

use crate::SeedStream;

pub(crate) const FILLERS: &[&str] = &["~~", "//", "[static]", "...", "<>", "(garbled)", "##", "::"];

const MEMOS: &[&str] = &[
    "(An older note asked for the {x}; that request was withdrawn.)",
    "Ignore the margin scribble about {x}, it belongs to another puzzle.",
    "[archived: last week's list was about {x}; not relevant now]",
    "A colleague suggested the {x} instead, but that was a misreading.",
];

const LOWERCASE_DECOYS: &[&str] = &[
    "A draft version wanted lowercase; it is obsolete.",
    "Earlier drafts separated words with commas; do not.",
    "Someone proposed sorting by vowel count once; disregard that.",
];

fn leet(b: u8) -> Option<u8> {
    match b {
        b'a' => Some(b'4'),
        b'e' => Some(b'3'),
        b'i' => Some(b'1'),
        b'o' => Some(b'0'),
        b's' => Some(b'5'),
        b't' => Some(b'7'),
        _ => None,
    }
}

/// The letter a digit stands for in [`leet`], its exact inverse (the mapping is one-to-one).
pub(crate) fn unleet(d: u8) -> Option<u8> {
    (b'a'..=b'z').find(|&b| leet(b) == Some(d))
}

/// Noise strengths per level (percent): case flips, leet letters, dotted words, fillers.
fn rates(level: u32) -> (u64, u64, u64, u64) {
    match level {
        0 => (0, 0, 0, 0),
        1 => (30, 0, 0, 4),
        2 => (45, 20, 8, 8),
        _ => (60, 35, 15, 12),
    }
}

/// Mixed case for every letter of a word.
fn mixed_case(s: &mut SeedStream, word: &str) -> String {
    word.chars()
        .map(|c| {
            if s.chance(50) {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

fn leetify(s: &mut SeedStream, word: &str, percent: u64) -> String {
    word.bytes()
        .map(|b| match leet(b.to_ascii_lowercase()) {
            Some(d) if s.chance(percent) => char::from(d),
            _ => char::from(b),
        })
        .collect()
}

fn dotted(word: &str) -> String {
    let letters: Vec<String> = word.chars().map(String::from).collect();
    letters.join(".")
}

/// One list entry with the level's noise (the word stays recoverable: the substitutions are
/// one-to-one and the words contain no digits).
pub(crate) fn dress_word(s: &mut SeedStream, word: &str, level: u32) -> String {
    let (case, leet_rate, dots, _) = rates(level);
    let mut out = word.to_owned();
    if s.chance(leet_rate) {
        out = leetify(s, &out, 60);
    }
    if s.chance(case) {
        out = mixed_case(s, &out);
    }
    if s.chance(dots) {
        out = dotted(&out);
    }
    out
}

/// Noise applied to a sentence of instructions, word by word. Only plain alphabetic words of
/// three letters or more are touched; quoted letters, numbers and punctuation stay intact.
pub(crate) fn noisy_sentence(s: &mut SeedStream, sentence: &str, level: u32) -> String {
    let (case, leet_rate, dots, fillers) = rates(level);
    let mut out = String::with_capacity(sentence.len() + 16);
    for (i, token) in sentence.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
            if s.chance(fillers) {
                out.push_str(s.pick(FILLERS));
                out.push(' ');
            }
        }
        let core_len = token.bytes().take_while(u8::is_ascii_alphabetic).count();
        let (core, rest) = token.split_at(core_len);
        if core_len < 3 || rest.bytes().any(|b| b.is_ascii_alphanumeric()) {
            out.push_str(token);
            continue;
        }
        let mut word = core.to_owned();
        if s.chance(leet_rate) {
            word = leetify(s, &word, 50);
        }
        if s.chance(case) {
            word = mixed_case(s, &word);
        }
        if s.chance(dots) {
            word = dotted(&word);
        }
        out.push_str(&word);
        out.push_str(rest);
    }
    out
}

/// A misleading memo naming another category by its plain name.
pub(crate) fn memo(s: &mut SeedStream, other_category_name: &str) -> String {
    let plural = crate::vocab::vocabulary()
        .categories
        .iter()
        .find(|c| c.name == other_category_name)
        .and_then(|c| c.descriptions.first().copied())
        .unwrap_or(other_category_name);
    s.pick(MEMOS).replace("{x}", plural)
}

/// A misleading remark about the format or order.
pub(crate) fn format_decoy(s: &mut SeedStream) -> String {
    s.pick(LOWERCASE_DECOYS).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Seed;

    fn clean(text: &str) -> String {
        text.replace('.', "")
            .chars()
            .map(|c| match c {
                '4' => 'a',
                '3' => 'e',
                '1' => 'i',
                '0' => 'o',
                '5' => 's',
                '7' => 't',
                c => c.to_ascii_lowercase(),
            })
            .collect()
    }

    #[test]
    fn dressed_words_stay_recoverable() {
        let mut s = Seed([1; 32]).stream();
        for _ in 0..200 {
            let d = dress_word(&mut s, "pelican", 3);
            assert_eq!(clean(&d), "pelican", "{d}");
        }
    }

    #[test]
    fn quoted_letters_and_numbers_survive_noise() {
        let mut s = Seed([2; 32]).stream();
        for _ in 0..100 {
            let n = noisy_sentence(
                &mut s,
                "Keep words containing the letter 'e' with 5 letters.",
                3,
            );
            assert!(n.contains("'e'") && n.contains(" 5 "), "{n}");
        }
    }
}
