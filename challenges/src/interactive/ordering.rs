//! Ordering puzzles: pairwise comparisons, given out of order, fix a ranking; the question asks
//! for one rank counted from the top or from the bottom.

use super::pattern::fill;
use super::{Puzzle, pick_names, puzzle};
use crate::SeedStream;

/// One compared quantity and its phrasings. In `above`, `{a}` ranks above `{b}` (taller,
/// older…); in `below`, `{a}` ranks below `{b}`. `{k}` in a question is the ordinal.
pub(crate) struct Attribute {
    pub above: &'static [&'static str],
    pub below: &'static [&'static str],
    pub ask_top: &'static str,
    pub ask_bottom: &'static str,
}

pub(crate) const ATTRIBUTES: &[Attribute] = &[
    Attribute {
        above: &[
            "{a} is taller than {b}.",
            "{b} is not as tall as {a}.",
            "{a} stands taller than {b}.",
        ],
        below: &["{a} is shorter than {b}.", "{b} towers over {a}."],
        ask_top: "Who is the {k}tallest?",
        ask_bottom: "Who is the {k}shortest?",
    },
    Attribute {
        above: &[
            "{a} is older than {b}.",
            "{a} was born before {b}.",
            "{b} is not as old as {a}.",
        ],
        below: &["{a} is younger than {b}.", "{a} was born after {b}."],
        ask_top: "Who is the {k}oldest?",
        ask_bottom: "Who is the {k}youngest?",
    },
    Attribute {
        above: &[
            "{a} finished the race ahead of {b}.",
            "{b} crossed the line after {a}.",
            "{a} beat {b} in the race.",
        ],
        below: &[
            "{a} finished behind {b}.",
            "{b} crossed the line before {a}.",
        ],
        ask_top: "Who was the {k}fastest?",
        ask_bottom: "Who was the {k}slowest?",
    },
    Attribute {
        above: &[
            "{a} has more stamps than {b}.",
            "{b} owns fewer stamps than {a}.",
        ],
        below: &[
            "{a} has fewer stamps than {b}.",
            "{b} collected more stamps than {a}.",
        ],
        ask_top: "Who has the {k}most stamps?",
        ask_bottom: "Who has the {k}fewest stamps?",
    },
];

pub(crate) const INTROS: &[&str] = &[
    "Read the clues, then answer.",
    "Some friends compared notes.",
    "Quick logic puzzle.",
    "Here is what we know.",
];

/// The ordinal word for a zero-based rank (`""` for the first).
pub(crate) const ORDINALS: [&str; 3] = ["", "second ", "third "];

/// `n` people (3..=5) ranked by a random attribute.
pub(crate) fn generate(s: &mut SeedStream, n: usize) -> Puzzle {
    let attr = &ATTRIBUTES[s.below(ATTRIBUTES.len() as u64) as usize];
    // ranking[0] is the top.
    let ranking = pick_names(s, n);
    let mut clues: Vec<String> = ranking
        .windows(2)
        .map(|pair| {
            let (hi, lo) = (pair[0], pair[1]);
            if s.chance(50) {
                fill(s.pick(attr.above), hi, lo, "")
            } else {
                fill(s.pick(attr.below), lo, hi, "")
            }
        })
        .collect();
    s.shuffle(&mut clues);
    let rank = s.below(n as u64) as usize;
    let from_bottom = n - 1 - rank;
    let question = if rank < ORDINALS.len() && (from_bottom >= ORDINALS.len() || s.chance(50)) {
        fill(attr.ask_top, "", "", ORDINALS[rank])
    } else {
        fill(attr.ask_bottom, "", "", ORDINALS[from_bottom])
    };
    let right = ranking[rank].to_owned();
    let mut wrong: Vec<String> = ranking
        .iter()
        .filter(|&&p| p != ranking[rank])
        .map(|p| (*p).to_owned())
        .collect();
    s.shuffle(&mut wrong);
    // With three people the fourth option is someone not in the puzzle.
    wrong.extend(pick_names(s, 8).into_iter().map(str::to_owned));
    let text = format!("{} {} {}", s.pick(INTROS), clues.join(" "), question);
    puzzle(s, text, right, wrong)
}
