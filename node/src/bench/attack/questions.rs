//! Every question of a narrative corpus read once by each script reader, offline, judged as
//! the family judges (`narrative::check_answer`).
//!
//! Why it exists: the over-HTTP figures of `narrative_chain` count tries, and a try draws one
//! question per part from a corpus of a few dozen sets. A script's reader is deterministic, so
//! a thousand tries over 90 questions are not a thousand independent trials: what one try can
//! find is fixed by which questions the reader gets right. The unit that carries evidence is
//! the question (and, for a whole chain, the set), so this report counts those:
//!
//! - `questions`, `right` and their 95 % Wilson interval: the reader's first choice, one look per
//!   question (every question of every set, not a sample);
//! - `chain_exact`: the exact first-try rate of a `difficulty`-part chain on this corpus — the
//!   mean over sets of the product over its first `difficulty` parts of the share of the part's
//!   questions the reader gets right (the family draws one question per part, uniformly). A
//!   game session is the same draw over all three parts, so at 3 this is also a script's
//!   admission rate per session on this corpus;
//! - `sets_with_a_right_chain` of `sets` and its Wilson interval: how many sets hold any chain
//!   the reader gets wholly right (the population statement: a new set of the same kind);
//! - `chain_if_independent`: the per-question Wilson upper end raised to `difficulty`, a bound
//!   that assumes a set's parts are answered right or wrong independently (stated, not shown).
//!
//! `qa-ranking-top-64` asks whether the right answer is among the reader's first 64 ranked
//! candidates: what a script could find with 64 looks at one question, the ceiling of the
//! oracle attacker's learning. The game grants one failed look a question a window.
//!
//! [`challenge_oracle`] replays, per set, the oracle learner over [`ORACLE_VERDICTS`] draws
//! with their joint verdicts — what a script holding that many agent identities gets in a
//! window whose per-window challenge set it is (a failed challenge retires nothing): the sets
//! it is taught, i.e. accepted at least once in the last quarter of the draws.

use std::collections::BTreeMap;

use hco_challenges::narrative::{Corpus, Question, check_answer};
use serde::Serialize;

use crate::attack::oracle::{Game, replay};
use crate::attack::stats::{Z95, wilson};
use crate::attack::{agent, oracle, qa_ranking};

/// One reader's figures over a corpus.
#[derive(Debug, Clone, Serialize)]
pub struct ReaderQuestions {
    /// Questions read (every question of the corpus).
    pub questions: u64,
    /// Of those, answered right.
    pub right: u64,
    /// Lower end of the 95 % Wilson interval of `right / questions`.
    pub wilson_low: f64,
    /// Upper end.
    pub wilson_high: f64,
    /// Parts in a chain.
    pub difficulty: u32,
    /// The exact first-try rate of a `difficulty`-part chain (or a game session at 3) on
    /// this corpus.
    pub chain_exact: f64,
    /// Sets in the corpus.
    pub sets: u64,
    /// Sets with at least one chain the reader gets wholly right.
    pub sets_with_a_right_chain: u64,
    /// Upper end of the 95 % Wilson interval of `sets_with_a_right_chain / sets`.
    pub sets_wilson_high: f64,
    /// `wilson_high ^ difficulty`: a bound assuming parts are answered independently.
    pub chain_if_independent: f64,
}

/// A reader: (narrative, question) → its one answer, if it forms one.
type Reader = fn(&str, &str) -> Option<String>;

fn top_64(narrative: &str, question: &str) -> Vec<String> {
    qa_ranking::ranked(narrative, question, oracle::CANDIDATES)
}

fn right(q: &Question, answer: &str) -> bool {
    check_answer(&q.variants(), answer.as_bytes()).is_ok()
}

/// Every reader over every question of `corpus`, chains of `difficulty` parts.
pub fn per_question(corpus: &Corpus, difficulty: u32) -> BTreeMap<&'static str, ReaderQuestions> {
    let readers: [(&'static str, Reader); 2] = [
        ("keyword", agent::best_guess),
        ("qa-ranking", qa_ranking::rank),
    ];
    let mut out = BTreeMap::new();
    for (name, reader) in readers {
        let judge = |n: &str, q: &Question| reader(n, &q.question).is_some_and(|a| right(q, &a));
        out.insert(name, measure(corpus, difficulty, judge));
    }
    let ceiling = |n: &str, q: &Question| top_64(n, &q.question).iter().any(|a| right(q, a));
    out.insert("qa-ranking-top-64", measure(corpus, difficulty, ceiling));
    out
}

/// `judge` over every question: the figures of [`ReaderQuestions`].
fn measure(
    corpus: &Corpus,
    difficulty: u32,
    judge: impl Fn(&str, &Question) -> bool,
) -> ReaderQuestions {
    let (mut questions, mut right) = (0u64, 0u64);
    let (mut chain_sum, mut sets_right) = (0.0f64, 0u64);
    let sets = corpus.sets();
    for set in sets {
        let mut chain = 1.0f64;
        for (i, part) in set.parts.iter().enumerate() {
            let here = part
                .questions
                .iter()
                .filter(|q| judge(&part.narrative, q))
                .count();
            questions += part.questions.len() as u64;
            right += here as u64;
            if i < difficulty as usize {
                chain *= here as f64 / part.questions.len().max(1) as f64;
            }
        }
        chain_sum += chain;
        sets_right += u64::from(chain > 0.0);
    }
    let n_sets = sets.len() as u64;
    let (wilson_low, wilson_high) = wilson(right, questions, Z95);
    ReaderQuestions {
        questions,
        right,
        wilson_low,
        wilson_high,
        difficulty,
        chain_exact: if n_sets == 0 {
            0.0
        } else {
            chain_sum / n_sets as f64
        },
        sets: n_sets,
        sets_with_a_right_chain: sets_right,
        sets_wilson_high: wilson(sets_right, n_sets, Z95).1,
        chain_if_independent: wilson_high.powi(difficulty as i32),
    }
}

/// Draws per set in [`challenge_oracle`]: a script holding this many agent identities.
pub const ORACLE_VERDICTS: u64 = 1_000;

/// The oracle learner over one set's draws.
#[derive(Debug, Clone, Serialize)]
pub struct SetReplay {
    /// Draws accepted over all.
    pub accepted: u64,
    /// Of those, in the last quarter of the draws.
    pub last_quarter: u64,
    /// Answers the verdicts confirmed.
    pub confirmed: u64,
}

/// The per-window challenges as an answer oracle, per set, offline.
#[derive(Debug, Clone, Serialize)]
pub struct ChallengeOracle {
    /// Draws (agent identities) per set.
    pub verdicts_per_set: u64,
    /// Sets replayed.
    pub sets: u64,
    /// Sets whose last quarter of draws had an acceptance.
    pub sets_taught: u64,
    /// Upper end of the 95 % Wilson interval of `sets_taught / sets`.
    pub sets_taught_wilson_high: f64,
    /// Each set's figures, by set id.
    pub by_set: BTreeMap<String, SetReplay>,
}

/// [`ORACLE_VERDICTS`] joint verdicts per set of `corpus` to the oracle learner.
pub fn challenge_oracle(corpus: &Corpus) -> ChallengeOracle {
    challenge_oracle_with(corpus, ORACLE_VERDICTS)
}

fn challenge_oracle_with(corpus: &Corpus, verdicts: u64) -> ChallengeOracle {
    let by_set: BTreeMap<String, SetReplay> = corpus
        .sets()
        .iter()
        .enumerate()
        .map(|(i, set)| {
            let r = replay(corpus, i, verdicts, verdicts / 4, Game::Joint);
            let figures = SetReplay {
                accepted: r.admitted,
                last_quarter: r.admitted_tail,
                confirmed: r.learner.confirmed() as u64,
            };
            (set.id.clone(), figures)
        })
        .collect();
    let sets = by_set.len() as u64;
    let taught = by_set.values().filter(|r| r.last_quarter > 0).count() as u64;
    ChallengeOracle {
        verdicts_per_set: verdicts,
        sets,
        sets_taught: taught,
        sets_taught_wilson_high: wilson(taught, sets, Z95).1,
        by_set,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_corpus_is_read_question_by_question() {
        let corpus = Corpus::embedded();
        let all: u64 = corpus
            .sets()
            .iter()
            .flat_map(|s| &s.parts)
            .map(|p| p.questions.len() as u64)
            .sum();
        let report = per_question(corpus, 3);
        let qa = &report["qa-ranking"];
        assert_eq!(qa.questions, all);
        assert_eq!(qa.sets, corpus.sets().len() as u64);
        // The starter-lookup's key answers every question: the judge accepts the key itself.
        let key = measure(corpus, 3, |_, q| right(q, &q.answer));
        assert_eq!((key.right, key.chain_exact), (all, 1.0));
        assert_eq!(key.sets_with_a_right_chain, key.sets);
        // The ceiling lists the first choice, so it is right at least as often.
        let top = &report["qa-ranking-top-64"];
        assert!(top.right >= qa.right, "{} < {}", top.right, qa.right);
        assert!(qa.wilson_low <= qa.right as f64 / all as f64 && qa.wilson_high > 0.0);
    }

    #[test]
    fn a_chain_is_right_only_where_every_part_has_a_right_question() {
        let corpus = Corpus::embedded();
        // Right exactly on each set's first question of its first part: one part in three has
        // a right question, so no 3-part chain can be, and a 1-part chain is right a third of
        // the time.
        let first = |n: &str, q: &Question| {
            corpus
                .sets()
                .iter()
                .any(|s| s.parts[0].narrative == n && s.parts[0].questions[0] == *q)
        };
        let three = measure(corpus, 3, first);
        assert_eq!((three.chain_exact, three.sets_with_a_right_chain), (0.0, 0));
        let one = measure(corpus, 1, first);
        let q0 = corpus.sets()[0].parts[0].questions.len() as f64;
        assert!(
            (one.chain_exact - 1.0 / q0).abs() < 1e-9,
            "{}",
            one.chain_exact
        );
        assert_eq!(one.sets_with_a_right_chain, one.sets);
    }

    #[test]
    fn the_challenge_oracle_is_taught_the_starter_set_whose_answers_rank_high() {
        // biochemistry-01: the reader ranks one answer of each part first or second (the
        // learner's own test); 800 draws teach it, as they would a script with 800 identities.
        let corpus = Corpus::embedded();
        let report = challenge_oracle_with(corpus, 800);
        assert_eq!(report.sets, corpus.sets().len() as u64);
        let bio = &report.by_set["biochemistry-01"];
        assert!(bio.last_quarter > 0 && bio.confirmed >= 3, "{bio:?}");
        assert!(
            report.sets_taught >= 1 && report.sets_taught < report.sets,
            "{report:?}"
        );
    }
}
