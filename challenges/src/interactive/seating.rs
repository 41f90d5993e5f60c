//! Seating puzzles: people in a row of numbered seats, clues added until exactly one seating
//! fits (checked by enumerating all of them), then "who sits in seat k?".

use super::pattern::fill;
use super::{Puzzle, pick_names, puzzle};
use crate::SeedStream;

/// A clue about a seating. Persons and seats are zero-based; seats run left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clue {
    /// Person sits in seat.
    At(usize, usize),
    /// Person does not sit in seat.
    NotAt(usize, usize),
    /// First person sits directly right of the second.
    RightOf(usize, usize),
    /// First person sits somewhere left of the second.
    LeftOf(usize, usize),
    /// The two sit side by side.
    Beside(usize, usize),
    /// Person sits in the first or the last seat.
    End(usize),
}

/// `{a}` lists everyone ("Ana, Ben and Cleo").
pub(crate) const INTRO: &str = "{a} sit in a row of seats numbered 1 to {k} from left to right.";
pub(crate) const QUESTION: &str = "Who sits in seat {k}?";
pub(crate) const AT: &[&str] = &["{a} sits in seat {k}.", "Seat {k} belongs to {a}."];
pub(crate) const NOT_AT: &[&str] = &["{a} is not in seat {k}.", "{a} does not sit in seat {k}."];
pub(crate) const RIGHT_OF: &[&str] = &[
    "{a} sits directly right of {b}.",
    "{b} sits immediately to the left of {a}.",
];
pub(crate) const LEFT_OF: &[&str] = &[
    "{a} sits somewhere left of {b}.",
    "{b} sits further right than {a}.",
];
pub(crate) const BESIDE: &[&str] = &[
    "{a} and {b} sit next to each other.",
    "{a} sits beside {b}.",
];
pub(crate) const END: &[&str] = &["{a} sits at one end of the row.", "{a} has an end seat."];

impl Clue {
    /// Whether the clue holds in a row of `n` seats when person `p` sits in `seats[p]` (a seat
    /// of `n` or more: not in the row).
    pub fn holds(self, seats: &[usize], n: usize) -> bool {
        let at = |p: usize| seats.get(p).copied().unwrap_or(usize::MAX);
        match self {
            Clue::At(p, k) => at(p) == k,
            Clue::NotAt(p, k) => at(p) != k,
            Clue::RightOf(p, q) => at(p) == at(q).wrapping_add(1),
            Clue::LeftOf(p, q) => at(p) < at(q),
            Clue::Beside(p, q) => at(p).abs_diff(at(q)) == 1,
            Clue::End(p) => at(p) == 0 || at(p).wrapping_add(1) == n,
        }
    }
}

/// Every seating of `n` people (`n!` of them), as seat-per-person vectors.
pub(crate) fn seatings(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for smaller in seatings(n - 1) {
        // Person n-1 takes seat `k`; everyone at or right of it moves one seat right.
        for k in 0..n {
            let mut v: Vec<usize> = smaller.iter().map(|&x| x + usize::from(x >= k)).collect();
            v.push(k);
            out.push(v);
        }
    }
    out
}

/// A random clue true of `truth` that does not name the seat asked about.
fn true_clue(s: &mut SeedStream, truth: &[usize], asked: usize) -> Clue {
    let n = truth.len();
    let who = |seat: usize| truth.iter().position(|&x| x == seat).unwrap_or(0);
    let person = s.below(n as u64) as usize;
    match s.below(10) {
        0 if truth[person] != asked => Clue::At(person, truth[person]),
        0..=2 => {
            let other = (truth[person] + 1 + s.below(n as u64 - 1) as usize) % n;
            Clue::NotAt(person, other)
        }
        3 | 4 => {
            let seat = 1 + s.below(n as u64 - 1) as usize;
            Clue::RightOf(who(seat), who(seat - 1))
        }
        5 | 6 => {
            let l = s.below(n as u64 - 1) as usize;
            let r = l + 1 + s.below((n - 1 - l) as u64) as usize;
            Clue::LeftOf(who(l), who(r))
        }
        7 | 8 => {
            let seat = s.below(n as u64 - 1) as usize;
            if s.chance(50) {
                Clue::Beside(who(seat), who(seat + 1))
            } else {
                Clue::Beside(who(seat + 1), who(seat))
            }
        }
        _ => Clue::End(who(if s.chance(50) { 0 } else { n - 1 })),
    }
}

fn phrase(s: &mut SeedStream, clue: Clue, names: &[&str]) -> String {
    let name = |p: usize| names.get(p).copied().unwrap_or("");
    match clue {
        Clue::At(p, k) => fill(s.pick(AT), name(p), "", &(k + 1).to_string()),
        Clue::NotAt(p, k) => fill(s.pick(NOT_AT), name(p), "", &(k + 1).to_string()),
        Clue::RightOf(p, q) => fill(s.pick(RIGHT_OF), name(p), name(q), ""),
        Clue::LeftOf(p, q) => fill(s.pick(LEFT_OF), name(p), name(q), ""),
        Clue::Beside(p, q) => fill(s.pick(BESIDE), name(p), name(q), ""),
        Clue::End(p) => fill(s.pick(END), name(p), "", ""),
    }
}

/// A seating puzzle for `n` people (3..=5).
pub(crate) fn generate(s: &mut SeedStream, n: usize) -> Puzzle {
    let names = pick_names(s, n);
    let mut truth: Vec<usize> = (0..n).collect();
    s.shuffle(&mut truth);
    let asked = s.below(n as u64) as usize;
    let mut candidates = seatings(n);
    let mut clues = Vec::new();
    let mut add = |clue: Clue, candidates: &mut Vec<Vec<usize>>| {
        let before = candidates.len();
        candidates.retain(|c| clue.holds(c, n));
        if candidates.len() < before {
            clues.push(clue);
        }
    };
    for _ in 0..40 {
        if candidates.len() <= 1 {
            break;
        }
        let clue = true_clue(s, &truth, asked);
        add(clue, &mut candidates);
    }
    // Rarely the random clues leave a doubt: place the others outright.
    for (p, &seat) in truth.iter().enumerate() {
        if candidates.len() > 1 && seat != asked {
            add(Clue::At(p, seat), &mut candidates);
        }
    }
    s.shuffle(&mut clues);
    let mut listed = names.clone();
    s.shuffle(&mut listed);
    let everyone = match listed.split_last() {
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    let mut text = fill(INTRO, &everyone, "", &n.to_string());
    for clue in clues {
        text.push(' ');
        text.push_str(&phrase(s, clue, &names));
    }
    text.push(' ');
    text.push_str(&fill(QUESTION, "", "", &(asked + 1).to_string()));
    let answer = truth.iter().position(|&x| x == asked).unwrap_or(0);
    let right = names[answer].to_owned();
    let mut wrong: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    s.shuffle(&mut wrong);
    wrong.extend(pick_names(s, 8).into_iter().map(str::to_owned));
    puzzle(s, text, right, wrong)
}
