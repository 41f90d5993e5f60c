//! The corpus linter (`hco corpus lint DIR`): schema, length and generation-rule checks, and
//! script resistance. Every question is put to every baseline of [`super::baselines`] (told the
//! answer type, which makes them stronger than a real script); a question that any baseline
//! answers fails the lint.

use std::path::Path;

use serde::Serialize;

use super::corpus::{AnswerType, NarrativeSet, parse_set, read_dir_files};
use super::{Corpus, baselines};
use crate::normalize::{matches_any, normalize_answer};

/// Thresholds of the lint, defaulting to the aCAPTCHA paper's.
#[derive(Debug, Clone, Serialize)]
pub struct LintConfig {
    /// Fewest tokens per part (tokens are estimated as words × 4/3).
    pub min_tokens: usize,
    /// Most tokens per part.
    pub max_tokens: usize,
    /// Longest answer or variant, in characters.
    pub max_answer_chars: usize,
    /// Fewest questions per part.
    pub min_questions: usize,
    /// Most questions per part.
    pub max_questions: usize,
    /// Fewest numbers in a part's narrative (numeric distractors).
    pub min_numbers: usize,
}

impl Default for LintConfig {
    fn default() -> Self {
        Self {
            min_tokens: 350,
            max_tokens: 1100,
            max_answer_chars: 20,
            min_questions: 3,
            max_questions: 5,
            min_numbers: 4,
        }
    }
}

/// One problem found.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LintIssue {
    /// The set (or file) concerned.
    pub set: String,
    /// 1-based part, where it applies.
    pub part: Option<usize>,
    /// 1-based question, where it applies.
    pub question: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// The baseline outcome of one question.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionResult {
    /// The set.
    pub set: String,
    /// 1-based part.
    pub part: usize,
    /// 1-based question.
    pub question: usize,
    /// `entity`, `numeric` or `label`.
    pub answer_type: &'static str,
    /// The baselines that answered it correctly (the question fails if any did).
    pub solved_by: Vec<&'static str>,
}

/// The lint report, serializable for `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct LintReport {
    /// Sets checked.
    pub sets: usize,
    /// Distinct domains.
    pub domains: usize,
    /// Questions checked.
    pub questions: usize,
    /// Fraction of questions some baseline answered.
    pub baseline_success: f64,
    /// Problems; the lint passes when there are none.
    pub issues: Vec<LintIssue>,
    /// Per-question baseline results.
    pub results: Vec<QuestionResult>,
}

impl LintReport {
    /// Whether the corpus passed.
    pub fn passed(&self) -> bool {
        self.issues.is_empty()
    }
}

fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Estimated tokens (1 token ≈ 0.75 words).
pub fn estimate_tokens(text: &str) -> usize {
    (word_count(text) * 4).div_ceil(3)
}

fn contains_word(haystack: &str, needle: &str) -> bool {
    let (h, n) = (normalize_answer(haystack), normalize_answer(needle));
    !n.is_empty()
        && h.match_indices(&n).any(|(i, _)| {
            let before = h[..i]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let after = h[i + n.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric());
            before && after
        })
}

fn lint_set(set: &NarrativeSet, config: &LintConfig, report: &mut LintReport) {
    let mut issue = |part: Option<usize>, question: Option<usize>, message: String| {
        report.issues.push(LintIssue {
            set: set.id.clone(),
            part,
            question,
            message,
        });
    };
    if !set
        .id
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    {
        issue(
            None,
            None,
            "the id must be lowercase letters, digits, '-' or '_'".into(),
        );
    }
    if set.domain.trim().is_empty() {
        issue(None, None, "the domain is empty".into());
    }
    for (p, part) in set.parts.iter().enumerate() {
        let pn = Some(p + 1);
        let tokens = estimate_tokens(&part.narrative);
        if tokens < config.min_tokens || tokens > config.max_tokens {
            issue(
                pn,
                None,
                format!(
                    "about {tokens} tokens, outside {}..={}",
                    config.min_tokens, config.max_tokens
                ),
            );
        }
        let numbers = baselines::candidates(&part.narrative, AnswerType::Numeric).len();
        if numbers < config.min_numbers {
            issue(
                pn,
                None,
                format!(
                    "{numbers} numbers in the narrative, at least {} are needed as distractors",
                    config.min_numbers
                ),
            );
        }
        let n = part.questions.len();
        if n < config.min_questions || n > config.max_questions {
            issue(
                pn,
                None,
                format!(
                    "{n} questions, outside {}..={}",
                    config.min_questions, config.max_questions
                ),
            );
        }
        let mut reasoning: Vec<_> = part.questions.iter().map(|q| q.reasoning_type).collect();
        reasoning.sort();
        reasoning.dedup();
        if reasoning.len() != n {
            issue(pn, None, "two questions share a reasoning type".into());
        }
        if n >= 3 {
            for kind in [AnswerType::Entity, AnswerType::Numeric, AnswerType::Label] {
                if !part.questions.iter().any(|q| q.answer_type == kind) {
                    issue(
                        pn,
                        None,
                        format!("no {} answer among the questions", kind.as_str()),
                    );
                }
            }
        }
        for (qi, q) in part.questions.iter().enumerate() {
            let qn = Some(qi + 1);
            if q.question.trim().is_empty() {
                issue(pn, qn, "the question is empty".into());
            }
            if !q.answers.is_empty() && q.answers[0] != q.answer {
                issue(pn, qn, "`answers` must start with `answer`".into());
            }
            if q.variants().len() > 5 {
                issue(pn, qn, "more than 5 accepted variants".into());
            }
            for v in q.variants() {
                if v.chars().count() > config.max_answer_chars || normalize_answer(v).is_empty() {
                    issue(
                        pn,
                        qn,
                        format!(
                            "variant `{v}` is empty or longer than {} characters",
                            config.max_answer_chars
                        ),
                    );
                }
                if v.chars().count() >= 2 && contains_word(&q.question, v) {
                    issue(
                        pn,
                        qn,
                        format!("the question gives its answer away (`{v}`)"),
                    );
                }
            }
            if q.answer_type != AnswerType::Numeric {
                for (later_index, later) in set.parts.iter().enumerate().skip(p + 1) {
                    if let Some(v) = q
                        .variants()
                        .into_iter()
                        .find(|v| v.chars().count() >= 3 && contains_word(&later.narrative, v))
                    {
                        issue(
                            pn,
                            qn,
                            format!(
                                "part {} names this answer (`{v}`): later parts must refer to it indirectly",
                                later_index + 1
                            ),
                        );
                    }
                }
            }
            let solved_by: Vec<&'static str> =
                baselines::all(&part.narrative, &q.question, q.answer_type)
                    .into_iter()
                    .filter(|(_, a)| a.as_deref().is_some_and(|a| matches_any(&q.variants(), a)))
                    .map(|(name, _)| name)
                    .collect();
            if !solved_by.is_empty() {
                issue(
                    pn,
                    qn,
                    format!("a script answers it ({})", solved_by.join(", ")),
                );
            }
            report.results.push(QuestionResult {
                set: set.id.clone(),
                part: p + 1,
                question: qi + 1,
                answer_type: q.answer_type.as_str(),
                solved_by,
            });
        }
    }
}

/// Lints a loaded corpus.
pub fn lint(corpus: &Corpus, config: &LintConfig) -> LintReport {
    let mut report = LintReport {
        sets: corpus.sets().len(),
        domains: corpus.domains().len(),
        questions: 0,
        baseline_success: 0.0,
        issues: Vec::new(),
        results: Vec::new(),
    };
    for set in corpus.sets() {
        lint_set(set, config, &mut report);
    }
    report.questions = report.results.len();
    let solved = report
        .results
        .iter()
        .filter(|r| !r.solved_by.is_empty())
        .count();
    report.baseline_success = if report.questions == 0 {
        0.0
    } else {
        solved as f64 / report.questions as f64
    };
    report
}

/// Lints a directory of set files: files that do not parse, or sets that break the structure
/// rules, are reported as issues rather than stopping the lint.
pub fn lint_dir(dir: &Path, config: &LintConfig) -> Result<LintReport, super::CorpusError> {
    let mut parse_issues = Vec::new();
    let mut sets = Vec::new();
    for (stem, text) in read_dir_files(dir)? {
        match parse_set(&stem, &text) {
            Ok(set) => sets.push(set),
            Err(e) => parse_issues.push(LintIssue {
                set: stem,
                part: None,
                question: None,
                message: e.to_string(),
            }),
        }
    }
    let mut report = match Corpus::from_sets(sets) {
        Ok(corpus) => lint(&corpus, config),
        Err(e) => lint(&Corpus::default(), config).with_issue(LintIssue {
            set: String::new(),
            part: None,
            question: None,
            message: e.to_string(),
        }),
    };
    parse_issues.append(&mut report.issues);
    report.issues = parse_issues;
    Ok(report)
}

impl LintReport {
    fn with_issue(mut self, issue: LintIssue) -> Self {
        self.issues.push(issue);
        self
    }
}

#[cfg(test)]
mod tests;
