//! Calendar puzzles (day-of-week arithmetic over a chain of events) and odd-one-out questions
//! over the vocabulary's categories.

use super::pattern::fill;
use super::{Puzzle, puzzle};
use crate::SeedStream;
use crate::vocab::vocabulary;

pub(crate) const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
const EVENTS: &[&str] = &[
    "the concert",
    "the market",
    "the exam",
    "the party",
    "the trip",
    "the dentist visit",
    "the match",
    "the wedding",
    "the book club",
    "the bake sale",
];
pub(crate) const TODAY: &[&str] = &["Today is {a}.", "It is {a} today."];
/// The first event, relative to today (`{k}` is a duration).
pub(crate) const FROM_TODAY: &[&str] = &["{a} is {k} from today.", "{a} takes place {k} from now."];
pub(crate) const AGO: &[&str] = &["{a} was {k} ago.", "{a} took place {k} ago."];
/// A later event relative to the previous one (`{b}`).
pub(crate) const AFTER: &[&str] = &["{a} is {k} after {b}.", "{a} comes {k} later than {b}."];
pub(crate) const BEFORE: &[&str] = &["{a} is {k} before {b}.", "{a} falls {k} earlier than {b}."];
pub(crate) const DAY_QUESTION: &str = "On which day of the week is {a}?";

pub(crate) const ODD_QUESTIONS: &[&str] = &[
    "Three of these are {a}. Which one is not?",
    "Which word does not belong with the others?",
    "All but one of these are {a}. Which is the exception?",
];

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|first| first.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// A span of 2..=20 days, in words.
fn duration(s: &mut SeedStream) -> (i64, String) {
    let n = s.range(2, 20);
    let text = match n {
        7 if s.chance(50) => "a week".to_owned(),
        14 if s.chance(50) => "two weeks".to_owned(),
        8..=13 if s.chance(30) => format!("a week and {} days", n - 7),
        _ => format!("{n} days"),
    };
    (n, text)
}

/// A chain of `steps` (1..=3) events from today; which weekday is the last one?
pub(crate) fn days(s: &mut SeedStream, steps: usize) -> Puzzle {
    let today = s.below(7) as i64;
    let mut events = EVENTS.to_vec();
    s.shuffle(&mut events);
    let mut text = fill(s.pick(TODAY), DAYS[today as usize], "", "");
    let mut day = today;
    for step in 0..steps {
        let (n, span) = duration(s);
        let later = step > 0 || s.chance(75);
        let table = match (step, later) {
            (0, true) => FROM_TODAY,
            (0, false) => AGO,
            (_, true) => AFTER,
            (_, false) => BEFORE,
        };
        let previous = if step > 0 { events[step - 1] } else { "" };
        let sentence = fill(s.pick(table), events[step], previous, &span);
        text.push(' ');
        text.push_str(&capitalised(&sentence));
        day += if later { n } else { -n };
    }
    text.push(' ');
    text.push_str(&fill(DAY_QUESTION, events[steps - 1], "", ""));
    let answer = day.rem_euclid(7) as usize;
    let mut wrong: Vec<String> = (1..7).map(|d| DAYS[(answer + d) % 7].to_owned()).collect();
    s.shuffle(&mut wrong);
    puzzle(s, text, DAYS[answer].to_owned(), wrong)
}

/// Three words of one category and one of another; which one is the odd one?
pub(crate) fn odd_one_out(s: &mut SeedStream) -> Puzzle {
    let cats = &vocabulary().categories;
    let a = s.below(cats.len() as u64) as usize;
    let b = (a + 1 + s.below(cats.len() as u64 - 1) as usize) % cats.len();
    let mut members = cats[a].words.clone();
    s.shuffle(&mut members);
    let odd = s.pick(&cats[b].words).to_owned();
    let description = s.pick(&cats[a].descriptions);
    let question = fill(s.pick(ODD_QUESTIONS), description, "", "");
    let wrong = members.into_iter().take(3).map(str::to_owned);
    puzzle(s, question, odd, wrong)
}
