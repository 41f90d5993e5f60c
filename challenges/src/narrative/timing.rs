//! The human timing model of the aCAPTCHA paper (Eq. 6 and 14), applied to a corpus: the least
//! time a person needs for a round (read the narrative, one decision, type the answer), set
//! beside the budget an agent gets. It is what "humans cannot meet τ" rests on, stated as
//! numbers for the corpus a node actually runs.
//!
//! `T_human(L, A) ≥ L / R_read + T_PRP + A / R_type` with the paper's constants: silent reading
//! at 5.0 tokens/s (238 wpm, Brysbaert 2019), one decision bottleneck `T_PRP` = 0.35 s (Pashler
//! 1994), expert typing at 0.9 tokens/s (Dhakal et al. 2018). It is a lower bound: no
//! re-reading, no comprehension overhead, first answer right. Tokens are the linter's estimate
//! ([`estimate_tokens`]: 1 token ≈ 0.75 words), so lengths here are approximate; the paper's
//! own corpus averages 682 narrative tokens a round.

use serde::Serialize;

use super::{Corpus, estimate_tokens};

/// Silent reading rate, tokens per second.
pub const READ_TOKENS_PER_S: f64 = 5.0;
/// Psychological refractory period: one decision, seconds.
pub const DECIDE_S: f64 = 0.35;
/// Expert typing rate, tokens per second.
pub const TYPE_TOKENS_PER_S: f64 = 0.9;

fn tokens(text: &str) -> f64 {
    estimate_tokens(text) as f64
}

/// Eq. 6: the least time, in seconds, to read `read` tokens, decide once and type `typed` tokens.
pub fn human_s(read: f64, typed: f64) -> f64 {
    read / READ_TOKENS_PER_S + DECIDE_S + typed / TYPE_TOKENS_PER_S
}

/// The lower bound on a person's time for one round: `narrative` read once, one decision,
/// `answer` typed.
pub fn human_round_s(narrative: &str, answer: &str) -> f64 {
    human_s(tokens(narrative), tokens(answer))
}

/// Least, median and largest of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Smallest value.
    pub min: f64,
    /// Median.
    pub median: f64,
    /// Largest value.
    pub max: f64,
}

impl Spread {
    fn of(mut v: Vec<f64>) -> Option<Self> {
        v.sort_by(f64::total_cmp);
        Some(Self {
            min: *v.first()?,
            median: v[v.len() / 2],
            max: *v.last()?,
        })
    }
}

/// The model over a corpus, beside the budgets an agent gets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimingReport {
    /// Sets and rounds (parts × questions) measured.
    pub sets: usize,
    /// Rounds measured: every (part, question) pair.
    pub rounds: usize,
    /// Narrative length per round, estimated tokens.
    pub narrative_tokens: Spread,
    /// A person's least time per admission-game round, seconds.
    pub human_round_s: Spread,
    /// The agent's budget per round (τ), seconds.
    pub round_budget_s: f64,
    /// The smallest human round time over τ: how many times τ even the fastest modelled
    /// person needs on the shortest round.
    pub round_separation: f64,
    /// A person's least time for a whole `narrative_chain` challenge (all three parts shown at
    /// once, one question each), seconds.
    pub human_chain_s: Spread,
    /// The `narrative_chain` deadline, seconds.
    pub chain_deadline_s: f64,
    /// The smallest human chain time over the deadline.
    pub chain_separation: f64,
}

/// The model of every round of `corpus`, against a round budget and a chain deadline.
pub fn report(corpus: &Corpus, round_budget_s: f64, chain_deadline_s: f64) -> Option<TimingReport> {
    let mut narrative_tokens = Vec::new();
    let mut rounds = Vec::new();
    let mut chains = Vec::new();
    for set in corpus.sets() {
        let mut chain = 0.0;
        for part in &set.parts {
            narrative_tokens.push(tokens(&part.narrative));
            let per_question: Vec<f64> = part
                .questions
                .iter()
                .map(|q| human_round_s(&part.narrative, &q.answer))
                .collect();
            chain += per_question.iter().copied().fold(f64::INFINITY, f64::min);
            rounds.extend(per_question);
        }
        chains.push(chain);
    }
    let human_round = Spread::of(rounds.clone())?;
    let human_chain = Spread::of(chains)?;
    Some(TimingReport {
        sets: corpus.sets().len(),
        rounds: rounds.len(),
        narrative_tokens: Spread::of(narrative_tokens)?,
        human_round_s: human_round,
        round_budget_s,
        round_separation: human_round.min / round_budget_s,
        human_chain_s: human_chain,
        chain_deadline_s,
        chain_separation: human_chain.min / chain_deadline_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_worked_example() {
        // Eq. 14: 682 tokens read, 10 typed: about 148 s.
        let t = human_s(682.0, 10.0);
        assert!((147.0..149.0).contains(&t), "{t}");
        // 300 words read (400 tokens), 3 words typed (4 tokens).
        let narrative = vec!["word"; 300].join(" ");
        let t = human_round_s(&narrative, "one two three");
        assert!((t - human_s(400.0, 4.0)).abs() < 1e-9, "{t}");
    }

    #[test]
    fn the_starter_corpus_keeps_people_far_outside_the_budgets() {
        let r = report(Corpus::embedded(), 15.0, 45.0).unwrap();
        assert_eq!(r.sets, Corpus::embedded().sets().len());
        assert!(r.rounds >= 3 * r.sets);
        assert!(r.human_round_s.min <= r.human_round_s.median);
        assert!(r.human_round_s.median <= r.human_round_s.max);
        // Even the shortest round takes a modelled person several times τ.
        assert!(r.round_separation > 2.0, "{r:?}");
        assert!(r.chain_separation > 2.0, "{r:?}");
    }
}
