//! Attackers of `narrative_chain`, the agent class's per-window step: scripts with the source
//! in hand and no language model.
//!
//! - `starter-lookup` looks every part's narrative up in the starter corpus that ships in the
//!   source and answers from its key. It passes wherever a node runs on that corpus (development
//!   configs) and can do nothing against a private one; `configs/prod.toml` refuses to start on
//!   the starter corpus.
//! - `keyword` answers each question with the extractive heuristics of the corpus linter
//!   (`narrative::baselines`: the sentence sharing most words with the question, cue words, the
//!   last paragraph, the most frequent candidate of the answer type guessed from the question),
//!   falling back from one to the next so that it always answers: what a script does without
//!   any key.
//!
//! - `qa-ranking` (in `qa_ranking`) ranks every candidate by the question's words around it.
//!
//! All answer once, as every attacker does: the first verdict is final.

use std::collections::HashMap;
use std::sync::OnceLock;

use hco_challenges::narrative::{AnswerType, Corpus, baselines};

use super::{Attack, Session, Verdict};

pub(super) const NARRATIVE_CHAIN: &str = "narrative_chain";

/// The parts of a chain prompt: (narrative, question) in order.
pub(crate) fn parts(text: &str) -> Vec<(&str, &str)> {
    text.split("\n\n=== Part ")
        .skip(1)
        .filter_map(|part| {
            let body = part.split_once(" ===\n").map_or(part, |(_, b)| b);
            let (narrative, question) = body.rsplit_once("\n\nQuestion ")?;
            let question = question.split_once(": ").map_or(question, |(_, q)| q);
            Some((narrative, question))
        })
        .collect()
}

fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every (narrative, question) of the starter corpus → its canonical answer.
fn starter_key() -> &'static HashMap<(String, String), String> {
    static KEY: OnceLock<HashMap<(String, String), String>> = OnceLock::new();
    KEY.get_or_init(|| {
        Corpus::embedded()
            .sets()
            .iter()
            .flat_map(|s| &s.parts)
            .flat_map(|p| {
                p.questions
                    .iter()
                    .map(|q| ((fold(&p.narrative), fold(&q.question)), q.answer.clone()))
            })
            .collect()
    })
}

/// Answers every part of the chain with `reader` (narrative, question → answer) and sends the
/// answers once; a part the reader cannot answer ends the try as `no_answer_found`.
pub(super) fn answer_each_part(
    session: &Session<'_>,
    reader: impl Fn(&str, &str) -> Option<String>,
) -> anyhow::Result<Verdict> {
    let answers = parts(&session.prompt().text)
        .into_iter()
        .map(|(n, q)| reader(n, q))
        .collect::<Option<Vec<_>>>();
    let Some(answers) = answers else {
        return Ok(Verdict::Rejected("no_answer_found".into()));
    };
    session.wait_min_solve(std::time::Duration::from_millis(50));
    session.respond(&serde_json::to_vec(&answers)?)
}

/// The starter corpus's answer to `question` about `narrative`, if they are its.
pub(crate) fn starter_answer(narrative: &str, question: &str) -> Option<String> {
    starter_key()
        .get(&(fold(narrative), fold(question)))
        .cloned()
}

/// Lookup in the shipped starter corpus.
pub struct StarterLookup;

impl Attack for StarterLookup {
    fn family(&self) -> &'static str {
        NARRATIVE_CHAIN
    }
    fn name(&self) -> &'static str {
        "starter-lookup"
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        answer_each_part(session, starter_answer)
    }
}

/// The extractive keyword heuristic, no key.
pub struct Keyword;

impl Attack for Keyword {
    fn family(&self) -> &'static str {
        NARRATIVE_CHAIN
    }
    fn name(&self) -> &'static str {
        "keyword"
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        answer_each_part(session, best_guess)
    }
}

/// The heuristics in the order they were right most often on the starter corpus: the sentence
/// that shares most words with the question first; never gives up while the text has any
/// candidate of any answer type.
const PREFERENCE: [&str; 7] = [
    "keyword_overlap_first",
    "cue_word_sentence",
    "keyword_overlap_last",
    "last_paragraph",
    "most_frequent_candidate",
    "first_candidate",
    "last_candidate",
];

/// The keyword reader's one answer to `question` about `narrative`.
pub(crate) fn best_guess(narrative: &str, question: &str) -> Option<String> {
    let guessed = baselines::guess_answer_type(question);
    let kinds = [
        guessed,
        AnswerType::Entity,
        AnswerType::Label,
        AnswerType::Numeric,
    ];
    kinds.into_iter().find_map(|kind| {
        let all = baselines::all(narrative, question, kind);
        PREFERENCE.iter().find_map(|want| {
            all.iter()
                .find(|(name, _)| name == want)
                .and_then(|(_, a)| a.clone())
        })
    })
}

#[cfg(test)]
mod tests {
    use hco_challenges::{Family, NarrativeChain, Seed};

    use super::*;

    #[test]
    fn parts_reads_what_the_family_writes() {
        let family = NarrativeChain::embedded();
        let g = family.generate(&Seed([3; 32]), &family.default_params());
        let p = parts(&g.prompt.text);
        assert_eq!(p.len(), 3);
        let key = starter_key();
        let looked_up: Vec<String> = p
            .iter()
            .map(|(n, q)| key[&(fold(n), fold(q))].clone())
            .collect();
        assert_eq!(
            family.verify(&g.key, &serde_json::to_vec(&looked_up).unwrap()),
            Ok(())
        );
    }

    #[test]
    fn the_keyword_attacker_always_answers_something() {
        for set in Corpus::embedded().sets() {
            for part in &set.parts {
                for q in &part.questions {
                    assert!(
                        best_guess(&part.narrative, &q.question).is_some(),
                        "{}",
                        set.id
                    );
                }
            }
        }
    }
}
