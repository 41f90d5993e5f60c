//! The corpus: narrative sets in the JSON format of the aCAPTCHA generation prompt, one set per
//! file, loaded from a directory or from the copy compiled into the binary.
//!
//! ```json
//! {"id": "biochemistry-01", "domain": "biochemistry",
//!  "parts": [{"narrative": "…",
//!             "questions": [{"question": "…", "answer": "PFK1", "answers": ["PFK1", "phosphofructokinase 1"],
//!                            "reasoning_type": "negation", "answer_type": "entity"}]}]}
//! ```
//!
//! `id` may be omitted (the file name without `.json` is used). A set has exactly three parts,
//! each with at least one question; the linter checks everything else.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Largest corpus file read, in bytes.
pub const MAX_SET_FILE_LEN: u64 = 1 << 20;

/// How a question's answer is reached (Appendix A of the aCAPTCHA paper).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningType {
    /// Eliminate candidates that are explained away.
    Negation,
    /// Compare quantities.
    Comparison,
    /// Use time cues.
    Temporal,
    /// Trace facts across sections.
    MultiHop,
    /// Apply a stated rule.
    Conditional,
    /// Tell cause from correlation.
    Causal,
}

impl ReasoningType {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningType::Negation => "negation",
            ReasoningType::Comparison => "comparison",
            ReasoningType::Temporal => "temporal",
            ReasoningType::MultiHop => "multi_hop",
            ReasoningType::Conditional => "conditional",
            ReasoningType::Causal => "causal",
        }
    }
}

/// What kind of string the answer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerType {
    /// A name or identifier.
    Entity,
    /// A number, possibly with a unit.
    Numeric,
    /// A label or classification.
    Label,
}

impl AnswerType {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerType::Entity => "entity",
            AnswerType::Numeric => "numeric",
            AnswerType::Label => "label",
        }
    }
}

/// One question with its accepted answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The question shown.
    pub question: String,
    /// The canonical answer.
    pub answer: String,
    /// Every accepted form, the canonical one first.
    #[serde(default)]
    pub answers: Vec<String>,
    /// How the answer is reached.
    pub reasoning_type: ReasoningType,
    /// What kind of answer it is.
    pub answer_type: AnswerType,
}

impl Question {
    /// The canonical answer followed by the other listed forms, without repeats.
    pub fn variants(&self) -> Vec<&str> {
        let mut out = vec![self.answer.as_str()];
        for a in &self.answers {
            if !out.contains(&a.as_str()) {
                out.push(a);
            }
        }
        out
    }
}

/// One part of a set: a narrative and its questions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    /// The text to read.
    pub narrative: String,
    /// Questions about it (one is drawn per session).
    pub questions: Vec<Question>,
}

/// A three-part narrative set in one domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NarrativeSet {
    /// Stable identifier (used for retirement and audits).
    #[serde(default)]
    pub id: String,
    /// The domain (`biochemistry`, `cybersecurity`, …).
    pub domain: String,
    /// Exactly three parts.
    pub parts: Vec<Part>,
}

/// Why a corpus could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CorpusError {
    /// A file or directory could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is larger than [`MAX_SET_FILE_LEN`].
    #[error("{file} is larger than {MAX_SET_FILE_LEN} bytes: split it into one set per file")]
    TooLarge {
        /// The file.
        file: String,
    },
    /// A file is not a narrative set in the expected JSON format.
    #[error("{file} is not a narrative set: {message}")]
    Parse {
        /// The file.
        file: String,
        /// The JSON error.
        message: String,
    },
    /// A set breaks a structural rule.
    #[error("set `{set}`: {message}")]
    Invalid {
        /// The set id.
        set: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// Parses one set; an empty `id` becomes `default_id`.
pub fn parse_set(default_id: &str, json: &str) -> Result<NarrativeSet, CorpusError> {
    let mut set: NarrativeSet = serde_json::from_str(json).map_err(|e| CorpusError::Parse {
        file: default_id.to_owned(),
        message: e.to_string(),
    })?;
    if set.id.is_empty() {
        default_id.clone_into(&mut set.id);
    }
    Ok(set)
}

/// Reads every `*.json` file of a directory, sorted by name, as `(file stem, contents)`.
pub fn read_dir_files(dir: &Path) -> Result<Vec<(String, String)>, CorpusError> {
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CorpusError + '_ {
        move |source| CorpusError::Io {
            path: path.to_owned(),
            source,
        }
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let len = std::fs::metadata(&path).map_err(io(&path))?.len();
        if len > MAX_SET_FILE_LEN {
            return Err(CorpusError::TooLarge { file: stem });
        }
        out.push((stem, std::fs::read_to_string(&path).map_err(io(&path))?));
    }
    Ok(out)
}

/// A validated collection of narrative sets, sorted by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Corpus {
    sets: Vec<NarrativeSet>,
}

impl Corpus {
    /// Checks the structure every session relies on: unique non-empty ids, three parts, at
    /// least one question per part, a non-empty canonical answer.
    pub fn from_sets(mut sets: Vec<NarrativeSet>) -> Result<Self, CorpusError> {
        sets.sort_by(|a, b| a.id.cmp(&b.id));
        for (i, set) in sets.iter().enumerate() {
            let invalid = |message: String| CorpusError::Invalid {
                set: set.id.clone(),
                message,
            };
            if set.id.is_empty() {
                return Err(invalid("the id is empty".into()));
            }
            if i > 0 && sets[i - 1].id == set.id {
                return Err(invalid("the id is used by two sets".into()));
            }
            if set.parts.len() != 3 {
                return Err(invalid(format!(
                    "has {} parts, a set has exactly 3",
                    set.parts.len()
                )));
            }
            for (p, part) in set.parts.iter().enumerate() {
                if part.questions.is_empty() {
                    return Err(invalid(format!("part {} has no question", p + 1)));
                }
                if part.questions.iter().any(|q| q.answer.trim().is_empty()) {
                    return Err(invalid(format!(
                        "part {} has a question without answer",
                        p + 1
                    )));
                }
            }
        }
        Ok(Self { sets })
    }

    /// Loads every `*.json` set of a directory.
    pub fn load_dir(dir: &Path) -> Result<Self, CorpusError> {
        let sets = read_dir_files(dir)?
            .into_iter()
            .map(|(stem, text)| parse_set(&stem, &text))
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_sets(sets)
    }

    /// The starter corpus compiled into the binary (empty if it were ever malformed; a test
    /// guarantees it is not).
    pub fn embedded() -> &'static Corpus {
        static EMBEDDED: OnceLock<Corpus> = OnceLock::new();
        EMBEDDED.get_or_init(|| {
            super::embedded::FILES
                .iter()
                .map(|(stem, text)| parse_set(stem, text))
                .collect::<Result<Vec<_>, _>>()
                .and_then(Corpus::from_sets)
                .unwrap_or_default()
        })
    }

    /// The sets, sorted by id.
    pub fn sets(&self) -> &[NarrativeSet] {
        &self.sets
    }

    /// The set with that id.
    pub fn get(&self, id: &str) -> Option<&NarrativeSet> {
        self.sets
            .binary_search_by(|s| s.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.sets[i])
    }

    /// The distinct domains, sorted.
    pub fn domains(&self) -> Vec<&str> {
        let mut d: Vec<&str> = self.sets.iter().map(|s| s.domain.as_str()).collect();
        d.sort_unstable();
        d.dedup();
        d
    }
}
