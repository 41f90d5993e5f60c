//! `narrative_chain`: the aCAPTCHA narrative chain as a single-round family for agent-class
//! identities in the per-window machinery, with τ as its deadline.
//!
//! In window `t` ([`Family::generate_in_window`], what the oracle calls) the seed selects one
//! set of the window's slice of the [`SetSchedule`], so no set serves two windows; a window
//! with no slice (before the schedule's start, or past its end) has nothing to issue.
//! [`Family::generate`], outside any window (benchmarks, attack tools), draws among every
//! non-retired set. The seed also selects one question per part (as a three-round session
//! would). The
//! prompt shows the parts in order, each narrative followed by its question; later parts refer
//! back to earlier ones without naming their answers. The answer is a JSON array with one string
//! per part, in order: `["PFK1", "amber", "3"]`. Each string is matched against the question's
//! listed variants after NFKC, case folding and whitespace trimming.
//!
//! Difficulty (1..=3, default 3) is the number of parts shown, from the first.
//!
//! Prompt data: `{"rounds":N,"domain":"…"}`. The key holds the normalized variants.

use std::sync::Arc;

use super::session::{MAX_ROUND_ANSWER_LEN, RetiredSets, SessionPlan};
use super::{Corpus, ScheduleParams, SetSchedule, baselines};
use crate::normalize::normalize_answer;
use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed};

/// Allowed numbers of parts.
pub const ROUNDS: std::ops::RangeInclusive<u32> = 1..=3;

/// Largest answer accepted, in bytes.
pub const MAX_CHAIN_ANSWER_LEN: usize = 1024;

/// The narrative chain family over a corpus, a retirement list and a set schedule.
#[derive(Debug, Clone)]
pub struct NarrativeChain {
    corpus: Arc<Corpus>,
    retired: Arc<RetiredSets>,
    schedule: Arc<SetSchedule>,
}

impl NarrativeChain {
    /// A family over a corpus, excluding retired sets, handing out sets by `schedule`. The
    /// corpus root, the retirement list and the schedule are part of what a network must agree
    /// on for audits to replay.
    pub fn new(corpus: Arc<Corpus>, retired: RetiredSets, schedule: ScheduleParams) -> Self {
        Self {
            schedule: Arc::new(SetSchedule::new(&corpus, &retired, schedule)),
            corpus,
            retired: Arc::new(retired),
        }
    }

    /// The family over the compiled-in starter corpus, nothing retired, one set per window
    /// from window 0 and round again: the starter corpus is public, so reusing it leaks nothing
    /// more.
    pub fn embedded() -> Self {
        let schedule = ScheduleParams {
            reuse: true,
            ..ScheduleParams::default()
        };
        Self::new(
            Arc::new(Corpus::embedded().clone()),
            RetiredSets::default(),
            schedule,
        )
    }

    /// The corpus this family draws from.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// The schedule handing sets to windows.
    pub fn schedule(&self) -> &SetSchedule {
        &self.schedule
    }

    fn build(&self, plan: Option<SessionPlan>, params: &FamilyParams) -> Generated {
        let rounds = params.difficulty.clamp(*ROUNDS.start(), *ROUNDS.end()) as usize;
        let mut text = String::from(HEADER);
        let mut key: Vec<Vec<String>> = Vec::with_capacity(rounds);
        let mut domain = "";
        for i in 0..rounds {
            let Some(round) = plan.as_ref().and_then(|p| self.corpus.round(p, i)) else {
                break;
            };
            domain = round.domain;
            text.push_str(&format!(
                "\n\n=== Part {} ===\n{}\n\nQuestion {}: {}",
                i + 1,
                round.narrative,
                i + 1,
                round.question.question
            ));
            key.push(
                round
                    .question
                    .variants()
                    .into_iter()
                    .map(normalize_answer)
                    .collect(),
            );
        }
        Generated {
            prompt: Prompt {
                family: self.name().to_owned(),
                text,
                data: serde_json::json!({ "rounds": key.len(), "domain": domain })
                    .to_string()
                    .into_bytes(),
            },
            key: AnswerKey(serde_json::to_vec(&key).unwrap_or_default()),
        }
    }
}

impl Default for NarrativeChain {
    fn default() -> Self {
        Self::embedded()
    }
}

const HEADER: &str = "Read the linked reports below. Each later part refers back to earlier ones \
without repeating their findings. Answer the question after each part. Reply with a JSON array \
of strings, one short answer per part, in order, for example [\"X-1\", \"amber\", \"3\"].";

/// Whether each part of `answer` is right, or why the answer cannot be judged part by part.
fn part_verdicts(key: &AnswerKey, answer: &[u8]) -> Result<Vec<bool>, Reject> {
    let expected = decode_key(key)
        .filter(|k| !k.is_empty())
        .ok_or(Reject::InvalidAnswerFormat("corrupt key"))?;
    if answer.len() > MAX_CHAIN_ANSWER_LEN {
        return Err(Reject::InvalidAnswerFormat(
            "the answer is longer than 1024 bytes",
        ));
    }
    if answer.iter().all(u8::is_ascii_whitespace) {
        return Err(Reject::MissingAnswer);
    }
    let answers: Vec<String> = serde_json::from_slice(answer).map_err(|_| {
        Reject::InvalidAnswerFormat("expected a JSON array of strings, one per part")
    })?;
    if answers.len() != expected.len() {
        return Err(Reject::InvalidAnswerFormat(
            "the array must hold exactly one answer per part",
        ));
    }
    if answers.iter().any(|a| a.len() > MAX_ROUND_ANSWER_LEN) {
        return Err(Reject::InvalidAnswerFormat(
            "an answer is longer than 256 bytes",
        ));
    }
    Ok(expected
        .iter()
        .zip(&answers)
        .map(|(variants, given)| {
            let given = normalize_answer(given);
            !given.is_empty() && variants.contains(&given)
        })
        .collect())
}

fn decode_key(key: &AnswerKey) -> Option<Vec<Vec<String>>> {
    serde_json::from_slice(&key.0).ok()
}

impl Family for NarrativeChain {
    fn name(&self) -> &'static str {
        "narrative_chain"
    }

    fn class(&self) -> Class {
        Class::Agent
    }

    fn max_answer_len(&self) -> usize {
        MAX_CHAIN_ANSWER_LEN
    }

    fn default_params(&self) -> FamilyParams {
        FamilyParams { difficulty: 3 }
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        if !ROUNDS.contains(&params.difficulty) {
            return Err(format!(
                "difficulty {} parts is outside 1..=3",
                params.difficulty
            ));
        }
        if self.corpus.active_sets(&self.retired).next().is_none() {
            return Err(
                "the corpus has no set left that is not retired: add sets or un-retire some".into(),
            );
        }
        self.schedule.params().check()?;
        if self.schedule.windows() == 0 {
            return Err(format!(
                "the corpus has fewer sets that are not retired than sets_per_window ({}): \
                 add sets or take fewer per window",
                self.schedule.params().sets_per_window
            ));
        }
        Ok(())
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let plan = self
            .corpus
            .sample_session(&seed.derive("narrative_chain"), &self.retired);
        self.build(plan, params)
    }

    fn generate_in_window(&self, seed: &Seed, params: &FamilyParams, t: u64) -> Option<Generated> {
        let sets = self.schedule.challenge_sets(t)?;
        let plan = self
            .corpus
            .sample_from(&seed.derive("narrative_chain"), sets)?;
        Some(self.build(Some(plan), params))
    }

    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
        // One verdict for the whole chain: an empty or wrong part is just wrong, so the code
        // never tells which parts were right.
        if part_verdicts(key, answer)?.into_iter().all(|right| right) {
            Ok(())
        } else {
            Err(Reject::AnswerMismatch)
        }
    }

    fn part_verdicts(&self, key: &AnswerKey, answer: &[u8]) -> Option<Vec<bool>> {
        part_verdicts(key, answer).ok()
    }

    fn solve(&self, prompt: &Prompt) -> Option<Vec<u8>> {
        let mut answers = Vec::new();
        for part in prompt.text.split("\n\n=== Part ").skip(1) {
            let (narrative, question) = part.rsplit_once("\n\nQuestion ")?;
            let question = question.split_once(": ").map_or(question, |(_, q)| q);
            let kind = baselines::guess_answer_type(question);
            answers.push(baselines::keyword_overlap(narrative, question, kind)?);
        }
        serde_json::to_vec(&answers).ok()
    }

    fn reference_answer(&self, key: &AnswerKey) -> Option<Vec<u8>> {
        let key = decode_key(key)?;
        let firsts = key.iter().map(|v| v.first()).collect::<Option<Vec<_>>>()?;
        serde_json::to_vec(&firsts).ok()
    }
}

#[cfg(test)]
mod tests;
