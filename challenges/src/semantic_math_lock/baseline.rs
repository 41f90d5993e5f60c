//! The baseline script for `semantic_math_lock`: reads literal numbers (and number words, and a
//! two-term sum), quoted required words, and required words whose category is named plainly;
//! then searches the list for words that meet the count and the sum. It solves level 1 and
//! fails where the prompt needs reading.

use crate::vocab::vocabulary;

const NUMBER_WORDS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
];

fn numbers(sentence: &str) -> Vec<u32> {
    sentence
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|t| {
            t.parse()
                .ok()
                .or_else(|| NUMBER_WORDS.iter().position(|w| *w == t).map(|n| n as u32))
        })
        .collect()
}

fn word_count(sentence: &str) -> Option<usize> {
    let tokens: Vec<&str> = sentence.split_whitespace().collect();
    tokens.windows(2).find_map(|w| {
        (w[1].starts_with("words"))
            .then(|| numbers(w[0]).first().map(|n| *n as usize))
            .flatten()
    })
}

fn target(sentence: &str) -> Option<u32> {
    let nums: Vec<u32> = numbers(sentence)
        .into_iter()
        .filter(|n| *n != 97 && *n != 122)
        .collect();
    match nums.as_slice() {
        [t] => Some(*t),
        [a, b]
            if ["plus", "sum of", "added to"]
                .iter()
                .any(|k| sentence.contains(k)) =>
        {
            Some(a + b)
        }
        _ => None,
    }
}

fn search(pool: &[&str], need: usize, target: u32, chosen: &mut Vec<usize>, from: usize) -> bool {
    if need == 0 {
        return target == 0;
    }
    for i in from..pool.len() {
        let code = u32::from(pool[i].as_bytes()[0]);
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

/// Tries to answer a semantic math prompt.
pub(crate) fn solve(text: &str) -> Option<String> {
    let v = vocabulary();
    let lower = text.to_lowercase();
    let mut lines = lower.lines();
    let allowed_line = lines.next()?;
    let allowed: Vec<&str> = allowed_line
        .split_once(':')?
        .1
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    let rest: String = lines.collect::<Vec<_>>().join(" ");
    let mut count = None;
    let mut sum = None;
    let mut required: Vec<&str> = Vec::new();
    for sentence in rest.split_inclusive('.') {
        if sentence.contains("ascii") || sentence.contains("character codes") {
            sum = sum.or_else(|| target(sentence));
        } else if let Some(quoted) = sentence.split('"').nth(1) {
            required.push(allowed.iter().copied().find(|w| *w == quoted)?);
        } else if sentence.contains("listed word")
            || sentence.contains("among")
            || sentence.contains("single word")
        {
            let word = allowed.iter().copied().find(|w| {
                v.category_of(w).is_some_and(|c| {
                    let cat = &v.categories[c];
                    sentence.contains(cat.name)
                        || cat
                            .descriptions
                            .first()
                            .is_some_and(|d| sentence.contains(d))
                })
            })?;
            required.push(word);
        } else if count.is_none() {
            count = word_count(sentence);
        }
    }
    let (count, sum) = (count?, sum?);
    let fixed = super::initial_sum(&required);
    let pool: Vec<&str> = allowed
        .iter()
        .copied()
        .filter(|w| !required.contains(w))
        .collect();
    let mut chosen = Vec::new();
    if !search(
        &pool,
        count.checked_sub(required.len())?,
        sum.checked_sub(fixed)?,
        &mut chosen,
        0,
    ) {
        return None;
    }
    let mut words: Vec<&str> = required;
    words.extend(chosen.iter().map(|i| pool[*i]));
    Some(words.join(" "))
}
