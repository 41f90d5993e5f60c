//! Baseline non-LLM solvers for narrative questions: the surface heuristics that reading
//! comprehension datasets are known to leak to (lexical overlap, position, frequency, cue
//! words). The linter runs all of them on every question and fails a question that any of them
//! answers; the `narrative_chain` family's built-in solver is the keyword-overlap one.
//!
//! Candidates are extracted by answer type: numbers for numeric answers; identifier-like tokens
//! (`PFK1`, `CVE-2024-1234`, `Fund B`) and capitalised words for entities; quoted terms, words
//! after classification cues ("tier", "class", "grade", …) and capitalised words for labels.

use super::AnswerType;

const STOPWORDS: &[&str] = &[
    "the",
    "and",
    "for",
    "with",
    "that",
    "this",
    "which",
    "what",
    "was",
    "were",
    "are",
    "how",
    "many",
    "much",
    "from",
    "into",
    "after",
    "before",
    "about",
    "than",
    "its",
    "their",
    "has",
    "had",
    "have",
    "not",
    "but",
    "part",
    "report",
    "according",
    "did",
    "does",
    "one",
    "all",
    "any",
    "who",
    "whose",
    "when",
    "where",
    "per",
    "each",
    "other",
    "those",
    "these",
    "been",
];

const LABEL_CUES: &[&str] = &[
    "tier",
    "class",
    "grade",
    "category",
    "level",
    "status",
    "rating",
    "code",
    "band",
    "as",
    "designated",
    "labelled",
    "labeled",
    "classified",
    "rated",
    "flagged",
];

const SIGNAL_CUES: &[&str] = &[
    "persist",
    "confirm",
    "replicat",
    "reproduc",
    "sustain",
    "revised",
    "final",
    "actual",
    "in fact",
    "correct",
    "true",
    "consistent",
    "verified",
    "definitive",
];

/// Guesses a question's answer type from its wording (for solvers that are not told it).
pub fn guess_answer_type(question: &str) -> AnswerType {
    let q = question.to_lowercase();
    if [
        "how many",
        "how much",
        "what percentage",
        "what value",
        "what number",
        "how long",
        "what was the total",
    ]
    .iter()
    .any(|k| q.contains(k))
    {
        AnswerType::Numeric
    } else if [
        "tier", "class", "category", "label", "rating", "status", "grade", "level",
    ]
    .iter()
    .any(|k| q.contains(k))
    {
        AnswerType::Label
    } else {
        AnswerType::Entity
    }
}

fn strip(token: &str) -> &str {
    token.trim_matches(|c: char| !c.is_alphanumeric() && c != '%')
}

fn is_number(token: &str) -> bool {
    let t = token.trim_end_matches('%');
    !t.is_empty()
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
}

fn is_identifier(token: &str) -> bool {
    let upper = token.chars().filter(char::is_ascii_uppercase).count();
    let digit = token.chars().any(|c| c.is_ascii_digit());
    let alpha = token.chars().any(char::is_alphabetic);
    alpha && (upper >= 2 || (upper >= 1 && digit) || (digit && token.contains('-')))
}

fn is_capitalised(token: &str) -> bool {
    token.chars().next().is_some_and(char::is_uppercase)
        && token.chars().skip(1).all(|c| c.is_lowercase())
}

/// Candidate answers of a type in a text, in order of appearance (with repeats).
pub fn candidates(text: &str, kind: AnswerType) -> Vec<String> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, raw) in tokens.iter().enumerate() {
        let t = strip(raw);
        if t.is_empty() {
            continue;
        }
        let sentence_start = i == 0 || tokens[i - 1].ends_with(['.', ':', '!', '?']);
        match kind {
            AnswerType::Numeric => {
                if is_number(t) {
                    out.push(t.trim_end_matches(['.', ',']).to_owned());
                }
            }
            AnswerType::Entity => {
                if is_identifier(t) || (is_capitalised(t) && !sentence_start && t.len() > 2) {
                    out.push(t.to_owned());
                }
            }
            AnswerType::Label => {
                let after_cue =
                    i > 0 && LABEL_CUES.contains(&strip(tokens[i - 1]).to_lowercase().as_str());
                let quoted = raw.starts_with(['"', '\u{201c}', '\'']);
                if after_cue || quoted || (is_capitalised(t) && !sentence_start) || is_identifier(t)
                {
                    out.push(t.to_owned());
                }
            }
        }
    }
    out
}

fn content_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.len() >= 3 && !STOPWORDS.contains(&w.as_str()))
        .map(|w| w.chars().take(5).collect())
        .collect()
}

fn sentences(text: &str) -> Vec<&str> {
    text.split_inclusive(['.', '\n', ';', '?', '!'])
        .map(str::trim)
        .filter(|s| s.chars().filter(|c| c.is_alphanumeric()).count() > 3)
        .collect()
}

fn best_sentence(narrative: &str, score: impl Fn(&str) -> usize) -> Option<&str> {
    let mut best: Option<(&str, usize)> = None;
    for s in sentences(narrative) {
        let sc = score(s);
        if sc > 0 && best.is_none_or(|(_, b)| sc > b) {
            best = Some((s, sc));
        }
    }
    best.map(|(s, _)| s)
}

fn overlap(question: &str) -> impl Fn(&str) -> usize {
    let q = content_words(question);
    move |s: &str| content_words(s).iter().filter(|w| q.contains(w)).count()
}

/// First candidate of the sentence sharing most words with the question.
pub fn keyword_overlap(narrative: &str, question: &str, kind: AnswerType) -> Option<String> {
    candidates(best_sentence(narrative, overlap(question))?, kind)
        .into_iter()
        .next()
}

/// Every baseline's answer (`None` where it has no candidate), by name.
pub fn all(
    narrative: &str,
    question: &str,
    kind: AnswerType,
) -> Vec<(&'static str, Option<String>)> {
    let all = candidates(narrative, kind);
    let most_frequent = all
        .iter()
        .max_by_key(|c| {
            (
                all.iter().filter(|d| d == c).count(),
                std::cmp::Reverse(all.iter().position(|d| d == *c)),
            )
        })
        .cloned();
    let overlap_sentence = best_sentence(narrative, overlap(question));
    let cue_sentence = best_sentence(narrative, |s| {
        let l = s.to_lowercase();
        SIGNAL_CUES.iter().filter(|c| l.contains(*c)).count()
    });
    let last_paragraph = narrative
        .split("\n\n")
        .filter(|p| !candidates(p, kind).is_empty())
        .last();
    let first_of = |s: Option<&str>| s.and_then(|s| candidates(s, kind).into_iter().next());
    let last_of = |s: Option<&str>| s.and_then(|s| candidates(s, kind).into_iter().last());
    vec![
        ("first_candidate", all.first().cloned()),
        ("last_candidate", all.last().cloned()),
        ("most_frequent_candidate", most_frequent),
        ("keyword_overlap_first", first_of(overlap_sentence)),
        ("keyword_overlap_last", last_of(overlap_sentence)),
        ("cue_word_sentence", first_of(cue_sentence)),
        ("last_paragraph", first_of(last_paragraph)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "The screen flagged TYR_K3 once. MAP2K1 drifted and recovered. \
        PFK1 deviated in three replicate assays, confirmed by batch CD-891. \
        The enzyme was assigned to tier \"amber\". Temperature was 3.8 degrees.";

    #[test]
    fn candidates_by_type() {
        assert_eq!(candidates(TEXT, AnswerType::Numeric), vec!["3.8"]);
        let entities = candidates(TEXT, AnswerType::Entity);
        assert!(entities.contains(&"PFK1".to_owned()) && entities.contains(&"CD-891".to_owned()));
        assert!(candidates(TEXT, AnswerType::Label).contains(&"amber".to_owned()));
    }

    #[test]
    fn baselines_answer_a_shallow_question() {
        let answers = all(
            TEXT,
            "Which enzyme deviated in replicate assays?",
            AnswerType::Entity,
        );
        assert!(
            answers.iter().any(|(_, a)| a.as_deref() == Some("PFK1")),
            "{answers:?}"
        );
        assert_eq!(
            guess_answer_type("How many replicate assays?"),
            AnswerType::Numeric
        );
        assert_eq!(
            guess_answer_type("Which alert tier was assigned?"),
            AnswerType::Label
        );
    }
}
