//! The lock noise undone exactly, for the white-box solver (`invert`). Every transform in
//! `noise` is invertible once case is ignored: filler tokens stand alone between words and are
//! dropped, a dotted spelling is single characters joined by dots and is joined again, and each
//! digit stands for exactly one letter (`noise::unleet`, the inverse of the generator's own
//! table). The *skeleton* of a text — fillers dropped, dots joined, lowercased, every digit
//! mapped to its letter — is therefore the same for a noisy sentence and for the template it
//! came from, and a template is recognised by comparing skeletons.

use super::noise::{FILLERS, unleet};
use super::phrasing::{LIST_INTRO, SEPARATORS};
use crate::vocab::vocabulary;

/// `t.o.k.e.n,` → `token,`: a token whose alphanumeric core is three or more single characters
/// joined by dots (what `noise` makes of a word) loses the dots; anything else is unchanged.
fn undot(token: &str) -> String {
    let chars: Vec<char> = token.chars().collect();
    let mut core = String::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i).filter(|c| c.is_ascii_alphanumeric()) {
        core.push(c);
        let dot_then_char = chars.get(i + 1) == Some(&'.')
            && chars.get(i + 2).is_some_and(char::is_ascii_alphanumeric);
        i += if dot_then_char { 2 } else { 1 };
        if !dot_then_char {
            break;
        }
    }
    let rest: String = chars[i..].iter().collect();
    if core.chars().count() >= 3 && !rest.chars().any(|c| c.is_ascii_alphanumeric()) {
        core + &rest
    } else {
        token.to_owned()
    }
}

/// One token without its noise: joined, lowercased, digits mapped back to letters.
pub(crate) fn clean_token(token: &str) -> String {
    undot(token)
        .chars()
        .map(|c| {
            let lower = c.to_ascii_lowercase();
            u8::try_from(lower)
                .ok()
                .and_then(unleet)
                .map_or(lower, char::from)
        })
        .collect()
}

/// The skeleton of a text: its space-separated tokens cleaned, filler tokens dropped, joined
/// by single spaces. A template and any noisy rendering of it have the same skeleton.
pub(crate) fn skeleton(text: &str) -> String {
    text.split(' ')
        .filter(|t| !t.is_empty() && !FILLERS.contains(t))
        .map(clean_token)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words of a list line (`phrasing::list`: an intro, the dressed words joined by one
/// separator, a full stop), in the list's order; `None` if `line` is not such a line.
pub(crate) fn list_words(line: &str) -> Option<Vec<&'static str>> {
    let body = LIST_INTRO
        .iter()
        .find_map(|intro| line.strip_prefix(intro))?
        .strip_suffix('.')?;
    let v = vocabulary();
    SEPARATORS.iter().find_map(|sep| {
        let words: Option<Vec<&'static str>> = body
            .split(sep)
            .map(|entry| {
                let word = clean_token(entry);
                v.words().map(|(_, w)| w).find(|w| *w == word)
            })
            .collect();
        words.filter(|w| w.len() >= 2)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Seed;
    use crate::lock::noise;

    #[test]
    fn dotted_words_join_and_other_tokens_stay() {
        assert_eq!(undot("c.h.a.r.s."), "chars.");
        assert_eq!(undot("5.e.v.e.n"), "5even");
        assert_eq!(undot("a.b"), "a.b");
        assert_eq!(undot("list."), "list.");
        assert_eq!(undot("'e'."), "'e'.");
        assert_eq!(clean_token("W.0.R.d.S,"), "words,");
    }

    #[test]
    fn noise_leaves_the_skeleton_unchanged() {
        let mut s = Seed([6; 32]).stream();
        let sentence = "Then narrow it further to words no longer than 7 characters. \
                        A word stays only if 'e' occurs somewhere in its spelling.";
        for level in 0..=3 {
            for _ in 0..200 {
                let noisy = noise::noisy_sentence(&mut s, sentence, level);
                assert_eq!(skeleton(&noisy), skeleton(sentence), "{noisy}");
            }
        }
    }

    #[test]
    fn list_lines_give_back_their_words_in_order() {
        let mut s = Seed([7; 32]).stream();
        let words = ["pelican", "otter", "tulip", "saxophone"];
        for _ in 0..200 {
            let line =
                crate::lock::phrasing::list(&mut s, &words, |s, w| noise::dress_word(s, w, 3));
            assert_eq!(list_words(&line).as_deref(), Some(&words[..]), "{line}");
        }
    }
}
