//! Sessions of the three-round narrative chain: which set and which question per part a seed
//! selects, what each round shows, and how one round's answer is checked. The HTTP session
//! layer (single-use ids, per-round deadlines, the endpoint revealed in each reply) is built on
//! these functions; the `narrative_chain` family uses them for its single-round form.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::{Corpus, NarrativeSet, Question};
use crate::normalize::normalize_answer;
use crate::{Reject, Seed};

/// Largest answer accepted for one round, in bytes (answers are at most 20 characters).
pub const MAX_ROUND_ANSWER_LEN: usize = 256;

/// Set ids excluded from sampling because they were exposed (a revealed window, a leak).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetiredSets(pub BTreeSet<String>);

impl RetiredSets {
    /// Parses a retirement list: one set id per line; blank lines and `#` comments ignored.
    pub fn parse(text: &str) -> Self {
        Self(
            text.lines()
                .map(|l| l.split('#').next().unwrap_or_default().trim())
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }

    /// Whether a set is retired.
    pub fn contains(&self, id: &str) -> bool {
        self.0.contains(id)
    }

    /// A digest of the list (what network parameters commit to: the schedule depends on it).
    pub fn digest(&self) -> [u8; 32] {
        let mut h = blake3::Hasher::new_derive_key("hco retired narrative sets v1");
        for id in &self.0 {
            h.update(&(id.len() as u64).to_le_bytes())
                .update(id.as_bytes());
        }
        *h.finalize().as_bytes()
    }
}

/// The set and questions a session uses: everything the verifier must remember.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionPlan {
    /// The narrative set.
    pub set_id: String,
    /// The question index drawn for each part.
    pub questions: [usize; 3],
}

/// What one round shows, and its answer key.
#[derive(Debug, Clone, Copy)]
pub struct Round<'a> {
    /// 0, 1 or 2.
    pub index: usize,
    /// The set's domain.
    pub domain: &'a str,
    /// The narrative of this part.
    pub narrative: &'a str,
    /// The drawn question with its accepted answers.
    pub question: &'a Question,
}

impl Round<'_> {
    /// Checks one answer against the question's variants after NFKC, case folding and
    /// whitespace trimming.
    pub fn check(&self, answer: &[u8]) -> Result<(), Reject> {
        check_answer(&self.question.variants(), answer)
    }
}

/// Checks an answer against accepted variants (as written in the corpus or already
/// normalized). Never panics; refuses answers over [`MAX_ROUND_ANSWER_LEN`] bytes.
pub fn check_answer<S: AsRef<str>>(variants: &[S], answer: &[u8]) -> Result<(), Reject> {
    if answer.len() > MAX_ROUND_ANSWER_LEN {
        return Err(Reject::InvalidAnswerFormat(
            "an answer is longer than 256 bytes",
        ));
    }
    let text = std::str::from_utf8(answer)
        .map_err(|_| Reject::InvalidAnswerFormat("the answer must be UTF-8"))?;
    let normalized = normalize_answer(text);
    if normalized.is_empty() {
        return Err(Reject::MissingAnswer);
    }
    if variants
        .iter()
        .any(|v| normalize_answer(v.as_ref()) == normalized)
    {
        Ok(())
    } else {
        Err(Reject::AnswerMismatch)
    }
}

impl Corpus {
    /// The sets that are not retired, in id order.
    pub fn active_sets<'a>(
        &'a self,
        retired: &'a RetiredSets,
    ) -> impl Iterator<Item = &'a NarrativeSet> + 'a {
        self.sets().iter().filter(|s| !retired.contains(&s.id))
    }

    /// Draws a set uniformly among the active ones and one question per part, from the seed
    /// alone (so an auditor with the same corpus and retirement list draws the same).
    /// `None` when every set is retired.
    pub fn sample_session(&self, seed: &Seed, retired: &RetiredSets) -> Option<SessionPlan> {
        let active: Vec<&str> = self.active_sets(retired).map(|s| s.id.as_str()).collect();
        self.sample_from(seed, &active)
    }

    /// Draws a set uniformly among `ids` (a window's slice of the schedule) and one question
    /// per part, from the seed alone. `None` when `ids` names no set of the corpus.
    pub fn sample_from<S: AsRef<str>>(&self, seed: &Seed, ids: &[S]) -> Option<SessionPlan> {
        let mut s = seed.derive("narrative session").stream();
        let id = ids.get(s.below(ids.len().max(1) as u64) as usize)?;
        let set = self.get(id.as_ref())?;
        let mut questions = [0usize; 3];
        for (q, part) in questions.iter_mut().zip(&set.parts) {
            *q = s.below(part.questions.len().max(1) as u64) as usize;
        }
        Some(SessionPlan {
            set_id: set.id.clone(),
            questions,
        })
    }

    /// Round `index` (0..3) of a planned session.
    pub fn round(&self, plan: &SessionPlan, index: usize) -> Option<Round<'_>> {
        let set = self.get(&plan.set_id)?;
        let part = set.parts.get(index)?;
        Some(Round {
            index,
            domain: &set.domain,
            narrative: &part.narrative,
            question: part.questions.get(*plan.questions.get(index)?)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_is_deterministic_covers_the_corpus_and_skips_retired_sets() {
        let corpus = Corpus::embedded();
        let plan = corpus
            .sample_session(&Seed([1; 32]), &RetiredSets::default())
            .unwrap();
        assert_eq!(
            Some(&plan),
            corpus
                .sample_session(&Seed([1; 32]), &RetiredSets::default())
                .as_ref()
        );
        let mut seen = BTreeSet::new();
        let retired = RetiredSets::parse(&format!("# exposed\n{}\n\n", corpus.sets()[0].id));
        for i in 0..400u32 {
            let mut seed = [0u8; 32];
            seed[..4].copy_from_slice(&i.to_le_bytes());
            let plan = corpus.sample_session(&Seed(seed), &retired).unwrap();
            assert_ne!(plan.set_id, corpus.sets()[0].id);
            for r in 0..3 {
                let round = corpus.round(&plan, r).unwrap();
                assert_eq!(round.check(round.question.answer.as_bytes()), Ok(()));
            }
            seen.insert(plan.set_id);
        }
        assert_eq!(seen.len(), corpus.sets().len() - 1);
        let all = RetiredSets(corpus.sets().iter().map(|s| s.id.clone()).collect());
        assert_eq!(corpus.sample_session(&Seed([1; 32]), &all), None);
    }

    #[test]
    fn answers_match_after_nfkc_case_folding_and_trimming() {
        let variants = ["PFK1", "phosphofructokinase 1", "18.6 μM", "ABC"];
        for ok in [
            "pfk1",
            " PFK1\n",
            "ＰＦＫ１",
            "Phosphofructokinase  1",
            "18.6 µm",
            "ａｂｃ",
        ] {
            assert_eq!(check_answer(&variants, ok.as_bytes()), Ok(()), "{ok}");
        }
        assert_eq!(
            check_answer(&variants, b"PFK2"),
            Err(Reject::AnswerMismatch)
        );
        assert_eq!(
            check_answer(&variants, b"PFK1 and PFK2"),
            Err(Reject::AnswerMismatch)
        );
        assert_eq!(check_answer(&variants, b" \t"), Err(Reject::MissingAnswer));
        assert_eq!(
            check_answer(&variants, &[0xc3, 0x28]).unwrap_err().code(),
            "invalid_answer_format"
        );
        assert_eq!(
            check_answer(&variants, &[b'a'; 300]).unwrap_err().code(),
            "invalid_answer_format"
        );
    }
}
