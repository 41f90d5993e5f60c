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

/// The best-ranked candidate of the question's answer type (then of any type), if the
/// narrative has one.
pub fn rank(narrative: &str, question: &str) -> Option<String> {
    let words: Vec<&str> = narrative.split_whitespace().collect();
    let stems: Vec<String> = words.iter().map(|w| stem(w)).collect();
    let asked = content(question);
    // Rarity of each question word among the narrative's sentences.
    let sentences: Vec<HashSet<String>> = narrative
        .split(['.', '\n', ';'])
        .map(|s| s.split_whitespace().map(stem).collect())
        .collect();
    let idf: HashMap<&str, f64> = asked
        .iter()
        .map(|w| {
            let df = sentences.iter().filter(|s| s.contains(w)).count() as f64;
            (w.as_str(), (1.0 + sentences.len() as f64 / (1.0 + df)).ln())
        })
        .collect();
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
