//! The baseline solver of `semantic_math_lock` (`Family::solve`): the strongest script we can
//! write with the source in hand, because the attacker has it too. `invert` reads every
//! constraint back through the generator's own templates and tables (riddles with their
//! offsets, sums and products, category descriptions); then a search over the listed words
//! finds the count and the initial-letter sum (a solution exists by construction, and any
//! solution is accepted). Its success rate is the family's honest ε_auto.
//!
//! Measured (200 challenges per level from fixed seeds, first try): 100 % at every level
//! (1–3). The family is a labelled baseline (`Family::script_solvable`) and never counts as
//! proof of the agent class on its own.

use super::initial_sum;
use super::invert::read_prompt;

/// Lowest and highest code of a lowercase initial.
const CODES: std::ops::RangeInclusive<u32> = 97..=122;

/// Picks `need` words of `pool` (from index `from` on) whose initials' codes add up to
/// `target`, into `chosen`; `false` if there is no such choice.
fn search(pool: &[&str], need: usize, target: u32, chosen: &mut Vec<usize>, from: usize) -> bool {
    let need32 = need as u32;
    if target < need32 * CODES.start() || target > need32 * CODES.end() {
        return false;
    }
    if need == 0 {
        return true;
    }
    for i in from..pool.len() {
        let code = pool[i].bytes().next().map_or(0, u32::from);
        if code > target {
            continue;
        }
        chosen.push(i);
        if search(pool, need - 1, target - code, chosen, i + 1) {
            return true;
        }
        chosen.pop();
    }
    false
}

/// Answers a semantic math prompt; `None` when it cannot be read or has no solution.
pub(crate) fn solve(text: &str) -> Option<String> {
    let asked = read_prompt(text)?;
    let pool: Vec<&str> = asked
        .allowed
        .iter()
        .map(String::as_str)
        .filter(|w| !asked.required.iter().any(|r| r == w))
        .collect();
    let need = asked.count.checked_sub(asked.required.len())?;
    let rest = asked.target.checked_sub(initial_sum(&asked.required))?;
    let mut chosen = Vec::new();
    if !search(&pool, need, rest, &mut chosen, 0) {
        return None;
    }
    let mut words: Vec<&str> = asked.required.iter().map(String::as_str).collect();
    words.extend(chosen.iter().map(|i| pool[*i]));
    Some(words.join(" "))
}
