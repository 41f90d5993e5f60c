//! How a semantic math prompt states its numbers and required words: digits, number words,
//! everyday riddles ("the number of legs of a spider"), arithmetic in words, and required words
//! named by the only category they represent in the list.

use crate::SeedStream;

/// Riddles for the word counts 5..=9.
pub(crate) const RIDDLES: &[(usize, &str)] = &[
    (4, "the number of strings on a violin"),
    (4, "the number of seasons in a year"),
    (4, "the number of legs of a horse"),
    (5, "the number of fingers on one hand"),
    (5, "the number of sides of a pentagon"),
    (5, "the number of rings in the Olympic symbol"),
    (6, "the number of legs of an insect"),
    (6, "the number of sides of a hexagon"),
    (6, "the number of faces of a cube"),
    (6, "half a dozen"),
    (7, "the number of days in a week"),
    (7, "the number of colours in a rainbow"),
    (7, "the number of notes in a major scale"),
    (8, "the number of legs of a spider"),
    (8, "the number of arms of an octopus"),
    (8, "the number of sides of an octagon"),
    (8, "the number of bits in a byte"),
    (9, "the number of sides of a nonagon"),
    (9, "a dozen minus three"),
    (9, "the square of three"),
    (10, "the number of fingers on two hands"),
    (10, "the number of years in a decade"),
    (11, "the number of players in a soccer team on the pitch"),
    (12, "the number of months in a year"),
];

pub(crate) const NUMBER_WORDS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
];

fn riddle(s: &mut SeedStream, n: usize) -> Option<&'static str> {
    let matching: Vec<&str> = RIDDLES
        .iter()
        .filter(|(v, _)| *v == n)
        .map(|(_, r)| *r)
        .collect();
    (!matching.is_empty()).then(|| s.pick(&matching))
}

/// A riddle `{r}` less an offset `{k}` (a number word), and more.
pub(crate) const FEWER: &str = "{k} fewer than {r}";
pub(crate) const MORE: &str = "{k} more than {r}";

/// The target as a sum (level 2) and as a product plus a remainder (level 3).
pub(crate) const SUMS: [&str; 3] = ["{a} plus {b}", "the sum of {a} and {b}", "{b} added to {a}"];
pub(crate) const PRODUCTS: [&str; 3] = [
    "{f} times {q}, plus {r}",
    "the product of {q} and {f}, increased by {r}",
    "{r} more than {f} multiplied by {q}",
];

/// The word count as text: digits at level 1, a number word or riddle at 2, a riddle with an
/// offset at 3.
pub(crate) fn count(s: &mut SeedStream, n: usize, level: u32) -> String {
    match level {
        1 => n.to_string(),
        2 => match riddle(s, n) {
            Some(r) if s.chance(70) => r.to_owned(),
            _ => NUMBER_WORDS
                .get(n)
                .map_or_else(|| n.to_string(), |w| (*w).to_owned()),
        },
        _ => {
            let offset = s.range(1, 3) as usize;
            let (riddled, template) = if s.chance(50) {
                (riddle(s, n + offset), FEWER)
            } else {
                (riddle(s, n - offset.min(n)), MORE)
            };
            riddled
                .map(|r| {
                    template
                        .replace("{k}", NUMBER_WORDS[offset])
                        .replace("{r}", r)
                })
                .or_else(|| riddle(s, n).map(str::to_owned))
                .unwrap_or_else(|| n.to_string())
        }
    }
}

/// The target sum as text: digits at level 1, a sum at 2, a product plus a remainder at 3.
pub(crate) fn target(s: &mut SeedStream, t: u32, level: u32) -> String {
    match level {
        1 => t.to_string(),
        2 => {
            let a = s.range(100, i64::from(t) - 100) as u32;
            s.pick(&SUMS)
                .replace("{a}", &a.to_string())
                .replace("{b}", &(t - a).to_string())
        }
        _ => {
            let factor = s.range(11, 29) as u32;
            let (q, r) = (t / factor, t % factor);
            s.pick(&PRODUCTS)
                .replace("{f}", &factor.to_string())
                .replace("{q}", &q.to_string())
                .replace("{r}", &r.to_string())
        }
    }
}

pub(crate) const COUNT: &[&str] = &[
    "Write exactly {n} words.",
    "Your answer must be {n} words long, no more and no fewer.",
    "Use {n} words in total.",
    "The text has as many words as {n}.",
];

pub(crate) const REQUIRED: &[&str] = &[
    "Include the word \"{w}\" exactly once.",
    "\"{w}\" must appear once and only once.",
    "Use \"{w}\", a single time.",
];

pub(crate) const REQUIRED_CLUE: &[&str] = &[
    "Include, exactly once, the one listed word that names one of the {d}.",
    "Exactly one listed word belongs among the {d}; it must appear once.",
    "Among the list there is a single word for one of the {d}: use it, once.",
];

pub(crate) const SUM: &[&str] = &[
    "Take the first letter of every word: their ASCII codes, in lowercase (a = 97, z = 122), must add up to {t}.",
    "Add the ASCII values of the lowercase initial letters of all your words; the total must be {t}.",
    "The character codes of the words' initials (lowercase: a is 97, z is 122) sum to {t}.",
];

pub(crate) const ALLOWED: &[&str] = &[
    "Use only words from this list, each at most once: ",
    "Every word must come from the following list, none repeated: ",
    "Allowed words (no word twice): ",
];

const CLOSING: &[&str] = &[
    "Separate the words with spaces; answer with the words only.",
    "Reply with the words alone, separated by single spaces.",
];

pub(crate) fn count_sentence(s: &mut SeedStream, n_text: &str) -> String {
    let t = s.pick(COUNT);
    // "as many words as 7" reads badly: that template is for riddles only.
    let t = if t.contains("as many") && n_text.chars().all(|c| c.is_ascii_digit()) {
        COUNT[0]
    } else {
        t
    };
    t.replace("{n}", n_text)
}

pub(crate) fn required_sentence(s: &mut SeedStream, word: &str, clue: Option<&str>) -> String {
    match clue {
        Some(d) => s.pick(REQUIRED_CLUE).replace("{d}", d),
        None => s.pick(REQUIRED).replace("{w}", word),
    }
}

pub(crate) fn sum_sentence(s: &mut SeedStream, t_text: &str) -> String {
    s.pick(SUM).replace("{t}", t_text)
}

pub(crate) fn allowed_line(s: &mut SeedStream, words: &[&str]) -> String {
    format!("{}{}.", s.pick(ALLOWED), words.join(", "))
}

pub(crate) fn closing(s: &mut SeedStream) -> &'static str {
    s.pick(CLOSING)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Seed;

    #[test]
    fn every_count_in_range_has_a_riddle_and_offsets_resolve() {
        let mut s = Seed([4; 32]).stream();
        for n in 5..=9 {
            assert!(riddle(&mut s, n).is_some(), "{n}");
            for _ in 0..20 {
                let text = count(&mut s, n, 3);
                assert!(!text.is_empty());
            }
        }
    }

    #[test]
    fn target_expressions_evaluate_to_the_target() {
        let mut s = Seed([5; 32]).stream();
        for t in [500u32, 777, 1020] {
            let text = target(&mut s, t, 2);
            let nums: Vec<u32> = text
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|x| x.parse().ok())
                .collect();
            assert_eq!(nums.iter().sum::<u32>(), t, "{text}");
        }
    }
}
