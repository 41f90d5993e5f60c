//! The baseline solver of `interactive_reasoning`: a parser that matches each sentence
//! against the family's phrase tables, then solves the puzzle it recognised (ranking by
//! transitive comparisons, seating by enumeration, day arithmetic, category look-up in the
//! public vocabulary). It is the script an attacker writes after reading this crate.

use std::collections::BTreeSet;

use super::ReasoningData;
use super::calendar::{AFTER, AGO, BEFORE, DAYS, FROM_TODAY, TODAY};
use super::ordering::{ATTRIBUTES, ORDINALS};
use super::pattern::{Captures, capture, fill};
use super::seating::{self, Clue};
use crate::vocab::vocabulary;

/// Largest prompt the parser reads.
const MAX_TEXT: usize = 8 * 1024;

/// The index of the option the parser picks, or `None` if it cannot read the prompt.
pub(crate) fn solve(text: &str, data: &[u8]) -> Option<usize> {
    if text.len() > MAX_TEXT || data.len() > MAX_TEXT {
        return None;
    }
    let data: ReasoningData = serde_json::from_slice(data).ok()?;
    let body = text.lines().next()?;
    let sentences = split(body);
    let answer = if let Some(c) = sentences.iter().find_map(|s| capture(seating::INTRO, s)) {
        let everyone: Vec<&str> =
            c.a.split([',', ' '])
                .filter(|w| !w.is_empty() && *w != "and")
                .collect();
        seat(&sentences, &everyone)?
    } else if sentences.iter().any(|s| first(TODAY, s).is_some()) {
        weekday(&sentences)?
    } else if data
        .choices
        .iter()
        .all(|c| vocabulary().category_of(c).is_some())
    {
        odd(&data.choices)?
    } else {
        rank(&sentences)?
    };
    data.choices.iter().position(|c| *c == answer)
}

/// Sentences ending in `.` or `?`, terminator kept.
fn split(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if (b == b'.' || b == b'?') && bytes.get(i + 1).is_none_or(|&n| n == b' ') {
            out.push(text[start..=i].trim());
            start = i + 1;
        }
    }
    out
}

fn first<'t>(patterns: &[&str], sentence: &'t str) -> Option<Captures<'t>> {
    patterns.iter().find_map(|p| capture(p, sentence))
}

fn rank(sentences: &[&str]) -> Option<String> {
    for attr in ATTRIBUTES {
        let mut above: Vec<(&str, &str)> = Vec::new();
        for s in sentences {
            if let Some(c) = first(attr.above, s) {
                above.push((c.a, c.b));
            } else if let Some(c) = first(attr.below, s) {
                above.push((c.b, c.a));
            }
        }
        if above.is_empty() {
            continue;
        }
        let people: BTreeSet<&str> = above.iter().flat_map(|&(a, b)| [a, b]).collect();
        // How many people rank above each person, following the comparisons transitively.
        let above_count = |p: &str| {
            let mut seen = BTreeSet::from([p]);
            let mut frontier = vec![p];
            while let Some(x) = frontier.pop() {
                for &(hi, lo) in &above {
                    if lo == x && seen.insert(hi) {
                        frontier.push(hi);
                    }
                }
            }
            seen.len() - 1
        };
        let question = sentences.last()?;
        for (k, ord) in ORDINALS.iter().enumerate() {
            let target = if *question == fill(attr.ask_top, "", "", ord) {
                k
            } else if *question == fill(attr.ask_bottom, "", "", ord) {
                people.len().checked_sub(k + 1)?
            } else {
                continue;
            };
            return people
                .iter()
                .find(|p| above_count(p) == target)
                .map(|p| (*p).to_owned());
        }
    }
    None
}

fn seat(sentences: &[&str], everyone: &[&str]) -> Option<String> {
    let n = everyone.len();
    let mut people: Vec<String> = everyone.iter().map(|p| (*p).to_owned()).collect();
    let index = |name: &str, people: &mut Vec<String>| -> usize {
        let name = name.trim();
        if let Some(i) = people.iter().position(|p| p == name) {
            return i;
        }
        people.push(name.to_owned());
        people.len() - 1
    };
    let mut clues = Vec::new();
    let mut asked = None;
    for s in sentences {
        let k = |c: &Captures<'_>| c.k.parse::<usize>().ok()?.checked_sub(1);
        let clue = if let Some(c) = capture(seating::QUESTION, s) {
            asked = k(&c);
            continue;
        } else if let Some(c) = first(seating::AT, s) {
            Clue::At(index(c.a, &mut people), k(&c)?)
        } else if let Some(c) = first(seating::NOT_AT, s) {
            Clue::NotAt(index(c.a, &mut people), k(&c)?)
        } else if let Some(c) = first(seating::RIGHT_OF, s) {
            Clue::RightOf(index(c.a, &mut people), index(c.b, &mut people))
        } else if let Some(c) = first(seating::LEFT_OF, s) {
            Clue::LeftOf(index(c.a, &mut people), index(c.b, &mut people))
        } else if let Some(c) = first(seating::BESIDE, s) {
            Clue::Beside(index(c.a, &mut people), index(c.b, &mut people))
        } else if let Some(c) = first(seating::END, s) {
            Clue::End(index(c.a, &mut people))
        } else {
            continue;
        };
        clues.push(clue);
    }
    if people.len() != n {
        return None;
    }
    let asked = asked?;
    let mut answers = BTreeSet::new();
    for seats in seating::seatings(people.len()) {
        if clues.iter().all(|c| c.holds(&seats, n)) {
            answers.insert(seats.iter().position(|&x| x == asked)?);
        }
    }
    let &who = answers.first()?;
    people.get(who).cloned()
}

fn span(text: &str) -> Option<i64> {
    let weeks = if text.contains("two weeks") {
        14
    } else if text.contains("a week") {
        7
    } else {
        0
    };
    let days: i64 = text
        .split(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())
        .map_or(Ok(0), str::parse)
        .ok()?;
    Some(weeks + days)
}

fn weekday(sentences: &[&str]) -> Option<String> {
    let mut day: Option<i64> = None;
    for s in sentences {
        if let Some(c) = first(TODAY, s) {
            day = Some(DAYS.iter().position(|d| *d == c.a)? as i64);
        } else if let Some(c) = first(FROM_TODAY, s).or_else(|| first(AFTER, s)) {
            day = Some(day? + span(c.k)?);
        } else if let Some(c) = first(AGO, s).or_else(|| first(BEFORE, s)) {
            day = Some(day? - span(c.k)?);
        }
    }
    Some(DAYS[day?.rem_euclid(7) as usize].to_owned())
}

fn odd(choices: &[String]) -> Option<String> {
    let v = vocabulary();
    let cats: Vec<Option<usize>> = choices.iter().map(|c| v.category_of(c)).collect();
    let i = cats
        .iter()
        .position(|c| cats.iter().filter(|d| *d == c).count() == 1)?;
    Some(choices[i].clone())
}
