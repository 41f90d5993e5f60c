//! `qa-ranking`: the classic non-neural extractive reader (sliding window with distance, as in
//! the reading-comprehension baselines of MCTest and SQuAD) against `narrative_chain`, with no
//! key and no model. Every candidate of the answer type the question asks for
//! (`narrative::baselines::candidates`) is scored by the question's words found near each of
//! its mentions, weighted by how rare each word is in the narrative and by how close it stands;
//! candidates the question itself names are dropped (a question rarely contains its answer),
//! and ties go to the later mention (narratives correct themselves towards the end). It ranks
//! every candidate where `keyword` takes one sentence's first, so it is the stronger of the two
//! wherever the answer sits near the question's words but not in the sentence sharing most.

use std::collections::{HashMap, HashSet};

use hco_challenges::narrative::{AnswerType, baselines};

use super::agent::{NARRATIVE_CHAIN, answer_each_part};
use super::{Attack, Session, Verdict};

/// Words of a question that carry no content.
const STOP: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "which", "what", "who", "whose", "whom", "how",
    "was", "were", "are", "is", "its", "their", "from", "into", "onto", "after", "before", "did",
    "does", "had", "has", "have", "not", "but", "than", "then", "any", "all", "one", "been",
    "under", "over", "per", "each", "would", "should", "could", "will", "when", "where", "why",
    "there", "they", "them", "whom", "about", "being", "only", "also", "of", "to", "in", "on",
    "at", "by", "as", "or", "an", "a", "be", "it", "no",
];

/// How far from a mention (in words) a question word still counts.
const WINDOW: usize = 20;

/// The extractive ranking reader.
pub struct QaRanking;

impl Attack for QaRanking {
    fn family(&self) -> &'static str {
        NARRATIVE_CHAIN
    }
    fn name(&self) -> &'static str {
        "qa-ranking"
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        answer_each_part(session, rank)
    }
}

/// A word folded for matching: lowercase, punctuation stripped, cut to a crude stem.
fn stem(word: &str) -> String {
    let w: String = word
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-')
        .flat_map(char::to_lowercase)
        .collect();
    w.chars().take(6).collect()
}

fn content(text: &str) -> HashSet<String> {
    text.split_whitespace()
        .filter(|w| {
            !STOP.contains(
                &w.to_lowercase()
                    .trim_matches(|c: char| !c.is_alphanumeric()),
            )
        })
        .map(stem)
        .filter(|w| w.len() > 2)
        .collect()
}

/// What a question asks for, read from its wording more closely than the linter's
/// `guess_answer_type` (units, rates, differences count as numbers).
fn asked_type(question: &str) -> AnswerType {
    let q = question.to_lowercase();
    const NUMERIC: &[&str] = &[
        "how many",
        "how much",
        "how long",
        "how far",
        "how old",
        "how often",
        "what percentage",
        "what percent",
        "what value",
        "what number",
        "what was the total",
        "what is the total",
        "by how",
        "what rate",
        "what figure",
        "what amount",
        "what count",
        "what dose",
        "what temperature",
        "what reading",
        "what score",
        "what level of",
        "in minutes",
        "in hours",
        "in days",
        "in weeks",
        "in percent",
        "in kilo",
        "in mega",
        "in milli",
        "in metres",
        "in meters",
        "in euros",
        "in dollars",
    ];
    const LABEL: &[&str] = &[
        "how is ",
        "how was ",
        "how would ",
        "how should ",
        "graded",
        "classified",
        "labelled",
        "labeled",
        "categorised",
        "categorized",
        "designated",
        "what kind",
        "what type",
        "which kind",
        "which type",
        "which mechanism",
        "which track",
        "which lane",
    ];
    if NUMERIC.iter().any(|k| q.contains(k)) {
        AnswerType::Numeric
    } else if LABEL.iter().any(|k| q.contains(k)) {
        AnswerType::Label
    } else {
        baselines::guess_answer_type(question)
    }
}

/// A token's word, punctuation trimmed.
fn bare(token: &str) -> &str {
    token
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '%' && c != '.')
        .trim_end_matches('.')
}

fn is_stop(word: &str) -> bool {
    STOP.contains(&word.to_lowercase().as_str())
}

/// Words of a header line (all capitals): titles, not answers.
fn header_words(narrative: &str) -> HashSet<String> {
    narrative
        .lines()
        .filter(|l| !l.chars().any(char::is_lowercase))
        .flat_map(str::split_whitespace)
        .map(|w| bare(w).to_owned())
        .filter(|w| !w.chars().any(|c| c.is_ascii_digit()))
        .collect()
}

/// Words after which a text names a label (`graded as narrow`).
const NAMING: &[&str] = &[
    "as", "called", "termed", "labelled", "labeled", "graded", "rated", "deemed", "into",
];

/// Candidates of `kind`, with their token positions: the linter's candidates (headers and the
/// question's own words dropped). For labels, the words that stand where a label stands — before
/// one of the question's nouns (`cobalt track` for "which track") or after a naming word
/// (`graded as narrow`) — are taken alone where the narrative has any.
fn candidates(narrative: &str, question: &str, kind: AnswerType) -> Vec<(usize, String)> {
    let all = typed_candidates(narrative, question, kind);
    let placed: Vec<_> = all
        .iter()
        .filter(|(_, _, placed)| *placed)
        .cloned()
        .collect();
    let chosen = if placed.is_empty() { all } else { placed };
    chosen.into_iter().map(|(i, w, _)| (i, w)).collect()
}

/// Every candidate, with whether it stands where a label stands.
fn typed_candidates(
    narrative: &str,
    question: &str,
    kind: AnswerType,
) -> Vec<(usize, String, bool)> {
    let tokens: Vec<&str> = narrative.split_whitespace().collect();
    let headers = header_words(narrative);
    let asked: HashSet<String> = question.split_whitespace().map(stem).collect();
    let typed: HashSet<String> = baselines::candidates(narrative, kind).into_iter().collect();
    let mut out = Vec::new();
    for (i, raw) in tokens.iter().enumerate() {
        let word = bare(raw);
        if word.is_empty() || is_stop(word) || headers.contains(word) || asked.contains(&stem(word))
        {
            continue;
        }
        let label_like = kind == AnswerType::Label
            && word.chars().all(|c| c.is_alphabetic() || c == '-')
            && !raw.ends_with([',', ';', ':']);
        let before_asked_noun = tokens
            .get(i + 1)
            .is_some_and(|next| asked.contains(&stem(bare(next))) && bare(next).len() > 3);
        let after_naming = i > 0 && NAMING.contains(&bare(tokens[i - 1]).to_lowercase().as_str());
        let placed = label_like && (before_asked_noun || after_naming);
        if typed.contains(word) || placed {
            out.push((i, word.to_owned(), placed));
        }
    }
    out
}

/// The question's content words with their rarity among the narrative's sentences.
fn rarity(narrative: &str, asked: &HashSet<String>) -> HashMap<String, f64> {
    let sentences: Vec<HashSet<String>> = narrative
        .split(['.', '\n', ';'])
        .map(|s| s.split_whitespace().map(stem).collect())
        .collect();
    asked
        .iter()
        .map(|w| {
            let df = sentences.iter().filter(|s| s.contains(w)).count() as f64;
            (w.clone(), (1.0 + sentences.len() as f64 / (1.0 + df)).ln())
        })
        .collect()
}

/// The best-ranked candidate of the question's answer type (then of any type), if the
/// narrative has one.
pub fn rank(narrative: &str, question: &str) -> Option<String> {
    let words: Vec<&str> = narrative.split_whitespace().collect();
    let stems: Vec<String> = words.iter().map(|w| stem(w)).collect();
    let asked = content(question);
    // Rarity of each question word among the narrative's sentences.
    let rare = rarity(narrative, &asked);
    let idf: HashMap<&str, f64> = rare.iter().map(|(w, s)| (w.as_str(), *s)).collect();
    [
        asked_type(question),
        AnswerType::Entity,
        AnswerType::Label,
        AnswerType::Numeric,
    ]
    .into_iter()
    .find_map(|kind| {
        let mut best: Option<(f64, String)> = None;
        for (at, candidate) in candidates(narrative, question, kind) {
            // Narratives revise early conclusions: a later mention weighs a little more.
            let score = window_score(&stems, at, &idf) + 0.5 * at as f64 / words.len() as f64;
            if best.as_ref().is_none_or(|(s, _)| score >= *s) {
                best = Some((score, candidate));
            }
        }
        best.map(|(_, c)| c)
    })
}

/// Every answer the reader can form from the narrative, best first, each once (compared
/// case-folded), at most `limit`: the candidates of the question's answer type as [`rank`]
/// ranks them (its answer first), then those of the other types; then two-word phrases
/// (`cron job`, `Halden Bank`); then, for a question asking for a number, the differences,
/// ratios, sums and products of two of the narrative's numbers. Phrases and pairs are ranked
/// by the question's words around them, as single candidates are. What an attacker allowed to
/// guess again tries, in order.
pub fn ranked(narrative: &str, question: &str, limit: usize) -> Vec<String> {
    let tokens: Vec<&str> = narrative.split_whitespace().collect();
    let stems: Vec<String> = tokens.iter().map(|w| stem(w)).collect();
    let asked = content(question);
    let rare = rarity(narrative, &asked);
    let idf: HashMap<&str, f64> = rare.iter().map(|(w, s)| (w.as_str(), *s)).collect();
    let score =
        |at: usize| window_score(&stems, at, &idf) + 0.5 * at as f64 / tokens.len().max(1) as f64;
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut push = |answer: String, out: &mut Vec<String>| {
        if out.len() < limit && seen.insert(answer.to_lowercase()) {
            out.push(answer);
        }
    };
    let kind = match asked_type(question) {
        AnswerType::Numeric => AnswerType::Numeric,
        _ if asks_number(question) => AnswerType::Numeric,
        other => other,
    };
    let typed = |kind: AnswerType| {
        let mut scored: Vec<(bool, f64, usize, String)> =
            typed_candidates(narrative, question, kind)
                .into_iter()
                .map(|(at, word, placed)| (placed, score(at), at, word))
                .collect();
        // As `rank` chooses: placed labels first, then the score, ties to the later mention.
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.total_cmp(&a.1)).then(b.2.cmp(&a.2)));
        scored.into_iter().map(|(_, _, _, w)| w).collect::<Vec<_>>()
    };
    let asked_stems: HashSet<String> = question.split_whitespace().map(stem).collect();
    let headers = header_words(narrative);
    let plain = |raw: &str| {
        let w = bare(raw);
        !w.is_empty()
            && w.chars().all(|c| c.is_alphanumeric() || c == '-')
            && w.chars().any(char::is_alphabetic)
            && !is_stop(w)
            && !headers.contains(w)
    };
    // Any content word, for labels a scheme names in plain lowercase (`gold requires …`).
    let mut words: Vec<(f64, String)> = tokens
        .iter()
        .enumerate()
        .filter(|(_, raw)| {
            plain(raw) && bare(raw).len() > 2 && !asked_stems.contains(&stem(bare(raw)))
        })
        .map(|(i, raw)| (score(i), bare(raw).to_owned()))
        .collect();
    words.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut phrases: Vec<(f64, String)> = tokens
        .windows(2)
        .enumerate()
        .filter(|(_, pair)| {
            plain(pair[0])
                && plain(pair[1])
                && !pair[0].ends_with([',', ';', ':', '.', ')'])
                && !(asked_stems.contains(&stem(pair[0])) && asked_stems.contains(&stem(pair[1])))
        })
        .map(|(i, pair)| {
            (
                score(i).max(score(i + 1)),
                format!("{} {}", bare(pair[0]), bare(pair[1])),
            )
        })
        .collect();
    phrases.sort_by(|a, b| b.0.total_cmp(&a.0));
    let words = words.into_iter().map(|(_, w)| w);
    let phrases = phrases.into_iter().map(|(_, p)| p);
    let sequence: Vec<String> = match kind {
        AnswerType::Numeric => typed(AnswerType::Numeric)
            .into_iter()
            .chain(
                arithmetic(&tokens, question, &score)
                    .into_iter()
                    .take(ARITHMETIC),
            )
            .chain(typed(AnswerType::Entity))
            .chain(typed(AnswerType::Label))
            .chain(words)
            .chain(phrases)
            .collect(),
        AnswerType::Label => typed(AnswerType::Label)
            .into_iter()
            .chain(words)
            .chain(phrases)
            .chain(typed(AnswerType::Entity))
            .chain(typed(AnswerType::Numeric))
            .collect(),
        AnswerType::Entity => typed(AnswerType::Entity)
            .into_iter()
            .chain(typed(AnswerType::Label))
            .chain(phrases)
            .chain(words)
            .chain(typed(AnswerType::Numeric))
            .collect(),
    };
    for answer in sequence {
        push(answer, &mut out);
    }
    out
}

/// Wordings of a question asking for a number that [`asked_type`] leaves to the linter's guess
/// (the guess [`rank`] keeps).
fn asks_number(question: &str) -> bool {
    // Whole words only: "preparations" does not ask for a ratio.
    let words: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let q = format!(" {} ", words.join(" "));
    [
        "factor",
        "multiple",
        "ratio",
        "which day",
        "what day",
        "how many",
        "how much",
        "percentage",
        "what share",
        "what fraction",
    ]
    .iter()
    .any(|cue| q.contains(&format!(" {cue} ")))
}

/// Computed numbers tried for a numeric question, at most.
const ARITHMETIC: usize = 32;

/// The narrative numbers nearest the question's words, at most this many, combined in pairs.
const PAIRED_NUMBERS: usize = 8;

/// Differences, ratios, sums and products of two of the narrative's numbers (the best-placed
/// ones), the operation the question's wording suggests first, pairs by their summed scores.
fn arithmetic(tokens: &[&str], question: &str, score: &dyn Fn(usize) -> f64) -> Vec<String> {
    let mut numbers: Vec<(f64, f64)> = Vec::new();
    for (i, raw) in tokens.iter().enumerate() {
        let word = bare(raw).trim_end_matches('%').replace(',', "");
        let Ok(value) = word.parse::<f64>() else {
            continue;
        };
        if !value.is_finite() {
            continue;
        }
        let s = score(i);
        match numbers.iter_mut().find(|(v, _)| *v == value) {
            Some(entry) => entry.1 = entry.1.max(s),
            None => numbers.push((value, s)),
        }
    }
    numbers.sort_by(|a, b| b.1.total_cmp(&a.1));
    numbers.truncate(PAIRED_NUMBERS);
    let q = question.to_lowercase();
    let has = |cues: &[&str]| cues.iter().any(|c| q.contains(c));
    let mut ops: Vec<fn(f64, f64) -> Option<f64>> = Vec::new();
    let diff: fn(f64, f64) -> Option<f64> = |a, b| (a > b).then_some(a - b);
    let ratio: fn(f64, f64) -> Option<f64> = |a, b| (b != 0.0 && a > b).then(|| a / b);
    let sum: fn(f64, f64) -> Option<f64> = |a, b| Some(a + b);
    let product: fn(f64, f64) -> Option<f64> = |a, b| Some(a * b);
    if has(&["factor", "multiple", "times", "ratio", "fold"]) {
        ops.extend([ratio, diff, sum, product]);
    } else if has(&["sum", "total", "together", "combined", "in all"]) {
        ops.extend([sum, diff, ratio, product]);
    } else {
        ops.extend([diff, ratio, sum, product]);
    }
    let mut out: Vec<(usize, f64, String)> = Vec::new();
    for (rank_op, op) in ops.iter().enumerate() {
        for (i, (a, sa)) in numbers.iter().enumerate() {
            for (b, sb) in numbers.iter().skip(i + 1) {
                for (x, y) in [(*a, *b), (*b, *a)] {
                    if let Some(v) = op(x, y).filter(|v| v.is_finite() && *v > 0.0) {
                        out.push((rank_op, sa + sb, number(v)));
                    }
                }
            }
        }
    }
    // The suggested operation's pairs, best-placed first, then the next operation's.
    out.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    out.into_iter().map(|(_, _, v)| v).collect()
}

/// A computed number as a narrative writes it: no trailing zeros, at most four decimals.
fn number(v: f64) -> String {
    let text = format!("{v:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_owned()
}

/// The question words near position `at`, each counted once at its closest, weighted by rarity
/// and nearness.
fn window_score(stems: &[String], at: usize, idf: &HashMap<&str, f64>) -> f64 {
    let lo = at.saturating_sub(WINDOW);
    let hi = (at + WINDOW + 1).min(stems.len());
    idf.iter()
        .filter_map(|(word, weight)| {
            (lo..hi)
                .filter(|&i| stems[i] == *word)
                .map(|i| i.abs_diff(at))
                .min()
                .map(|d| weight / (1.0 + d as f64 / 5.0))
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use hco_challenges::narrative::Corpus;

    use super::*;

    #[test]
    fn ranked_lists_more_answers_than_the_reader_finds_first() {
        // Of the starter corpus's 90 questions the reader's first choice answers 3; its first
        // 64 candidates hold the answer of 56 (computed numbers and two-word labels included).
        let (mut first, mut listed, mut all) = (0, 0, 0);
        for set in Corpus::embedded().sets() {
            for part in &set.parts {
                for q in &part.questions {
                    let list = ranked(&part.narrative, &q.question, 64);
                    assert!(list.len() <= 64);
                    let variants = q.variants();
                    let right = |a: &String| {
                        hco_challenges::narrative::check_answer(&variants, a.as_bytes()).is_ok()
                    };
                    first += usize::from(list.first().is_some_and(right));
                    listed += usize::from(list.iter().any(right));
                    all += 1;
                }
            }
        }
        assert_eq!(all, 90);
        assert!(first <= 10, "{first}");
        assert!(listed >= 45, "{listed}");
    }

    #[test]
    fn arithmetic_forms_a_difference_and_a_ratio() {
        let narrative = "The first compound read 2.4 uM on plate 40. The second read 1.9 uM.";
        let list = ranked(
            narrative,
            "By how many micromolar does the first exceed the second?",
            64,
        );
        assert!(list.contains(&"0.5".to_owned()), "{list:?}");
        let list = ranked(
            narrative,
            "By what factor does plate 40 exceed the first reading?",
            64,
        );
        assert!(list.iter().any(|a| a == "16.6667"), "{list:?}");
        assert_eq!(number(12.5), "12.5");
        assert_eq!(number(3.0), "3");
    }

    #[test]
    fn the_reader_answers_every_starter_question_and_finds_a_plain_fact() {
        for set in Corpus::embedded().sets() {
            for part in &set.parts {
                for q in &part.questions {
                    assert!(rank(&part.narrative, &q.question).is_some(), "{}", set.id);
                }
            }
        }
        let narrative = "The audit of 2019 covered Depot North and 12 relays. Depot South \
                         logged 41 faults in March. The relay at Depot North was replaced.";
        assert_eq!(
            rank(narrative, "How many faults did Depot South log?").as_deref(),
            Some("41")
        );
    }
}
