//! `oracle`: the attacker that uses the agent-admission game as an answer oracle, with no model
//! and no key. Every round shows a narrative and a question; the attacker answers the candidate
//! it currently believes in for that question's text (the extractive reader's ranked candidates,
//! [`qa_ranking::ranked`]) and learns from whatever the node says back:
//!
//! - an admission confirms the session's three answers;
//! - `not_admitted` after the third round says that at least one of the three was wrong: each
//!   answer's belief is lowered by the chance that the other two were right (a mean-field
//!   Bayesian update), so an answer whose two companions are confirmed is ruled out outright,
//!   and answers drift to their next candidates as sessions fail;
//! - any per-round signal: a session that a wrong answer ends early (the game's old behaviour)
//!   rules that answer out and confirms the rounds before it; a reply that says whether the
//!   last answer was right (`correct`, `right`) is taken at its word.
//!
//! Each round's answer is chosen for the whole session's chance of admission given every
//! verdict so far, never repeating three answers already refused together. Answers are
//! remembered by the question's text, so what a session taught answers the same question
//! wherever it is shown again: in a later session, or in a per-window `narrative_chain`
//! challenge ([`Learner::chain_answers`]).
//!
//! What it finds (offline, against the starter corpus's sets judged as the game judges): when a
//! wrong answer ends the session (the game before), 800 sessions confirm 4 to 8 of a set's 9
//! answers, whichever set. Under the joint verdict it must guess a session's three answers
//! right together before it learns anything: it does so within 800 sessions for one set of
//! the ten (biochemistry-01, whose reader's first or second candidate is right in each part),
//! within 3000 for a second (food-safety-01), and not within 10 000 for the other eight. So the
//! joint verdict alone left the game an oracle for a set whose answers a script ranks near the
//! top, at a few hundred sessions a window. Per-window challenges never show the game's sets,
//! but they are the same draw with the same joint verdict: one verdict per agent identity a
//! script holds, a window, no question retired — so they teach this learner as sessions did
//! (over HTTP, 1,500 identities in one window whose challenge set is one of those two: 6
//! answers confirmed, 124 accepted, 119 of them among the last 750).
//! The game now retires every question a failed session showed for the rest of its window and
//! shows a question to one open session at a time, so against a node this learner gets one
//! verdict per question and no second look: it learns only from admissions it won unaided.
//! The challenges' verdicts are still open to it (the bench learns from them).

use std::collections::{HashMap, HashSet};

use hco_challenges::Seed;
use hco_challenges::narrative::{Corpus, check_answer};

use super::qa_ranking;

/// Candidates kept per question.
pub const CANDIDATES: usize = 64;

/// Prior weight of candidate `i` (0-based) of the ranked list: the reader's first choice is
/// rarely right on its own (3 of the starter corpus's 90 questions) and the right answer, when
/// listed, may sit anywhere in the first few dozen, so the weights fall off as a power of the
/// rank, not geometrically.
fn prior(i: usize) -> f64 {
    1.0 / (1.0 + i as f64).powf(PRIOR_DECAY)
}

/// How fast the prior falls with rank.
const PRIOR_DECAY: f64 = 1.2;

/// Prior mass of "the answer is none of the candidates" (a phrase or a computation the
/// reader does not form), relative to the candidates' total.
const NONE_SHARE: f64 = 0.5;

/// Candidates of a question considered when choosing a session's answers.
const CONSIDERED: usize = 24;

/// Sweeps of the mean-field update over every failed session.
const SWEEPS: usize = 3;

/// Failures between two full recomputations of the marginals.
const RESWEEP: usize = 64;

/// What the attacker believes about one question.
#[derive(Debug, Clone)]
struct Question {
    /// The round (part) that shows it.
    part: usize,
    candidates: Vec<String>,
    prior: Vec<f64>,
    none: f64,
    ruled_out: Vec<bool>,
    confirmed: Option<usize>,
    /// The probability of each candidate given everything seen (mean field).
    marginal: Vec<f64>,
    /// The likeliest candidates, best first (at most [`CONSIDERED`]).
    order: Vec<usize>,
}

impl Question {
    fn new(part: usize, narrative: &str, question: &str) -> Self {
        let candidates = qa_ranking::ranked(narrative, question, CANDIDATES);
        let prior: Vec<f64> = (0..candidates.len()).map(prior).collect();
        let none = (NONE_SHARE * prior.iter().sum::<f64>()).max(1e-3);
        let n = candidates.len();
        let mut q = Self {
            part,
            candidates,
            prior,
            none,
            ruled_out: vec![false; n],
            confirmed: None,
            marginal: vec![0.0; n],
            order: Vec::new(),
        };
        q.set_marginal(&vec![1.0; n]);
        q
    }

    fn set_marginal(&mut self, factors: &[f64]) {
        self.marginal = self.weigh(factors);
        self.order = self.likeliest();
    }

    /// Marginals from the prior times `factors`, with what is known for certain.
    fn weigh(&self, factors: &[f64]) -> Vec<f64> {
        if let Some(c) = self.confirmed {
            return (0..self.candidates.len())
                .map(|i| if i == c { 1.0 } else { 0.0 })
                .collect();
        }
        let w: Vec<f64> = self
            .prior
            .iter()
            .zip(factors)
            .zip(&self.ruled_out)
            .map(|((p, f), out)| if *out { 0.0 } else { p * f })
            .collect();
        let total = w.iter().sum::<f64>() + self.none;
        w.iter().map(|x| x / total).collect()
    }

    /// The candidates most likely right, best first (at most [`CONSIDERED`]).
    fn likeliest(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.candidates.len())
            .filter(|i| self.marginal[*i] > 0.0)
            .collect();
        order.sort_by(|a, b| {
            self.marginal[*b]
                .total_cmp(&self.marginal[*a])
                .then(a.cmp(b))
        });
        order.truncate(CONSIDERED);
        order
    }

    fn best(&self) -> Option<usize> {
        self.order.first().copied()
    }
}

/// One answer given in a session: the question and the candidate answered (`None`: the
/// one-shot control, or nothing left to try).
#[derive(Debug, Clone, Copy)]
pub struct Given {
    question: usize,
    candidate: Option<usize>,
}

/// What the attacker learnt so far, by question text.
#[derive(Debug, Default)]
pub struct Learner {
    questions: Vec<Question>,
    by_text: HashMap<String, usize>,
    /// Sessions not admitted: the three answers given, not all right.
    failures: Vec<[(usize, usize); 3]>,
    /// Each question's factors from the failures (recomputed every [`RESWEEP`] failures,
    /// updated one failure at a time in between).
    factors: Vec<Vec<f64>>,
    excluded: HashSet<[(usize, usize); 3]>,
    /// Whether a wrong answer was ever seen to end a session early: then reaching a round
    /// means the rounds before it were right.
    pub early_stops: u64,
    /// Replies that said whether one answer was right (a per-round signal).
    pub round_signals: u64,
}

/// A question's key: its text with whitespace folded.
pub fn key(question: &str) -> String {
    question.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Learner {
    fn question(&mut self, part: usize, narrative: &str, question: &str) -> usize {
        let k = key(question);
        if let Some(&q) = self.by_text.get(&k) {
            return q;
        }
        let new = Question::new(part, narrative, question);
        self.factors.push(vec![1.0; new.candidates.len()]);
        self.questions.push(new);
        let q = self.questions.len() - 1;
        self.by_text.insert(k, q);
        q
    }

    /// The answer to round `part` (0-based) of a session whose earlier answers were `given`:
    /// the candidate that makes the whole session likeliest to be admitted, given every
    /// verdict so far (never a combination already refused). `one_shot`: the reader's first
    /// choice, nothing learnt (the control).
    pub fn answer(
        &mut self,
        part: usize,
        narrative: &str,
        question: &str,
        given: &[Given],
        one_shot: bool,
    ) -> (String, Given) {
        if one_shot {
            let first = qa_ranking::ranked(narrative, question, 1);
            return (
                first.into_iter().next().unwrap_or_default(),
                Given {
                    question: usize::MAX,
                    candidate: None,
                },
            );
        }
        let q = self.question(part, narrative, question);
        let candidate = self.choose(q, given);
        let text = candidate
            .and_then(|i| self.questions[q].candidates.get(i).cloned())
            .unwrap_or_default();
        (
            text,
            Given {
                question: q,
                candidate,
            },
        )
    }

    /// The questions seen in round `part`.
    fn of_part(&self, part: usize) -> Vec<usize> {
        (0..self.questions.len())
            .filter(|q| self.questions[*q].part == part)
            .collect()
    }

    /// Whether answering `combo` would repeat a refused session.
    fn refused(&self, combo: [(usize, usize); 3]) -> bool {
        self.excluded.contains(&combo)
    }

    /// The candidate for question `q` after `given`: by the chance that the session's answers
    /// are all right, over the questions later rounds may show.
    fn choose(&self, q: usize, given: &[Given]) -> Option<usize> {
        let question = &self.questions[q];
        if question.confirmed.is_some() {
            return question.confirmed;
        }
        let part = question.part;
        let fixed: Option<Vec<(usize, usize)>> = given
            .iter()
            .map(|g| g.candidate.map(|c| (g.question, c)))
            .collect();
        let Some(fixed) = fixed.filter(|f| f.len() == part && part < 3) else {
            return question.best();
        };
        let later: Vec<Vec<usize>> = (part + 1..3).map(|p| self.of_part(p)).collect();
        let mut best: Option<(f64, usize)> = None;
        for &i in &question.order {
            let mut prefix = [(0, 0); 3];
            prefix[..part].copy_from_slice(&fixed);
            prefix[part] = (q, i);
            let chance = question.marginal[i] * self.completion(prefix, part + 1, &later);
            if chance > 0.0 && best.is_none_or(|(b, _)| chance > b) {
                best = Some((chance, i));
            }
        }
        best.map(|(_, i)| i).or_else(|| question.best())
    }

    /// The mean, over the questions the remaining rounds may show, of the best chance that
    /// their answers complete `prefix` into a session not yet refused.
    fn completion(&self, prefix: [(usize, usize); 3], len: usize, later: &[Vec<usize>]) -> f64 {
        let Some((questions, rest)) = later.split_first() else {
            return if self.refused(prefix) { 0.0 } else { 1.0 };
        };
        if questions.is_empty() {
            // A round not seen yet: nothing is known against any answer of it.
            return 1.0;
        }
        let mut sum = 0.0;
        for &q in questions {
            let question = &self.questions[q];
            let mut best: f64 = 0.0;
            for &i in &question.order {
                let p = question.marginal[i];
                if p <= best {
                    break;
                }
                let mut next = prefix;
                next[len] = (q, i);
                best = best.max(p * self.completion(next, len + 1, rest));
            }
            sum += best;
        }
        sum / questions.len() as f64
    }

    /// One answer was right (`true`) or wrong, as the node said for that round alone.
    pub fn round_verdict(&mut self, given: Given, right: bool) {
        let Some(i) = given.candidate else {
            return;
        };
        let Some(q) = self.questions.get_mut(given.question) else {
            return;
        };
        if right {
            q.confirmed = Some(i);
        } else if q.confirmed != Some(i) {
            // (A wrong verdict on an admitted answer contradicts the admission: trust that.)
            q.ruled_out[i] = true;
        }
    }

    /// The whole session's verdict on `given` (the answers of its three rounds, in order).
    pub fn session_verdict(&mut self, given: &[Given], admitted: bool) {
        if admitted {
            for g in given {
                self.round_verdict(*g, true);
            }
        } else if let [a, b, c] = given
            && let (Some(i), Some(j), Some(k)) = (a.candidate, b.candidate, c.candidate)
        {
            let combo = [(a.question, i), (b.question, j), (c.question, k)];
            if self.excluded.insert(combo) {
                self.failures.push(combo);
                if !self.failures.len().is_multiple_of(RESWEEP) {
                    // One failure's factors against the current marginals; the full sweeps
                    // every RESWEEP failures keep the cost linear in the sessions.
                    self.apply(combo);
                    self.settle();
                    return;
                }
            }
        }
        self.update();
    }

    /// Multiplies each answer of a refused session by the chance that another was wrong.
    fn apply(&mut self, combo: [(usize, usize); 3]) {
        for (n, &(q, i)) in combo.iter().enumerate() {
            let others: f64 = combo
                .iter()
                .enumerate()
                .filter(|(m, _)| *m != n)
                .map(|(_, &(r, j))| self.questions[r].marginal[j])
                .product();
            self.factors[q][i] *= (1.0 - others).max(0.0);
        }
    }

    /// Marginals from the current factors.
    fn settle(&mut self) {
        for (q, f) in self.questions.iter_mut().zip(&self.factors) {
            for (i, x) in f.iter().enumerate() {
                if *x <= 1e-9 && q.confirmed != Some(i) {
                    q.ruled_out[i] = true;
                }
            }
            q.set_marginal(f);
        }
    }

    /// A session ended at round `wrong` (0-based) on a wrong answer, before the third: that
    /// answer was wrong and, the game having let the earlier rounds through, they were right.
    pub fn early_stop(&mut self, given: &[Given], wrong: usize) {
        self.early_stops += 1;
        for (i, g) in given.iter().enumerate().take(wrong + 1) {
            self.round_verdict(*g, i < wrong);
        }
        self.update();
    }

    /// Recomputes every marginal from the priors, the certain facts and the refused sessions:
    /// a refused session lowers each of its answers by the chance that the other two were
    /// right (mean field, a few sweeps). Two confirmed companions rule the third out.
    fn update(&mut self) {
        for _ in 0..SWEEPS {
            for f in &mut self.factors {
                f.fill(1.0);
            }
            for n in 0..self.failures.len() {
                self.apply(self.failures[n]);
            }
            self.settle();
        }
    }

    /// Questions seen since the first `from` (in the order first seen), and how many of them
    /// are confirmed.
    pub fn questions_from(&self, from: usize) -> (usize, usize) {
        let later = self.questions.get(from..).unwrap_or_default();
        (
            later.len(),
            later.iter().filter(|q| q.confirmed.is_some()).count(),
        )
    }

    /// The keys ([`key`]) of every question shown so far.
    pub fn seen_keys(&self) -> HashSet<String> {
        self.by_text.keys().cloned().collect()
    }

    /// Questions seen.
    pub fn questions(&self) -> usize {
        self.questions.len()
    }

    /// Questions whose answer an admission (or a per-round signal) confirmed.
    pub fn confirmed(&self) -> usize {
        self.questions
            .iter()
            .filter(|q| q.confirmed.is_some())
            .count()
    }

    /// Candidates ruled out for certain, over all questions.
    pub fn ruled_out(&self) -> usize {
        self.questions
            .iter()
            .map(|q| q.ruled_out.iter().filter(|x| **x).count())
            .sum()
    }

    /// The learnt answer to `question` (the confirmed one, else the likeliest), if the game
    /// ever showed it.
    pub fn learnt(&self, question: &str) -> Option<String> {
        let q = &self.questions[*self.by_text.get(&key(question))?];
        q.candidates.get(q.confirmed.or_else(|| q.best())?).cloned()
    }

    /// Answers to a `narrative_chain` prompt's parts: the learnt answer where the game showed
    /// the same question, else the reader's first choice; with how many parts were learnt.
    pub fn chain_answers(&self, parts: &[(&str, &str)]) -> (Vec<String>, usize) {
        let mut learnt = 0;
        let answers = parts
            .iter()
            .map(|(n, q)| match self.learnt(q) {
                Some(a) => {
                    learnt += 1;
                    a
                }
                None => qa_ranking::ranked(n, q, 1)
                    .into_iter()
                    .next()
                    .unwrap_or_default(),
            })
            .collect();
        (answers, learnt)
    }
}

/// How a replayed game (or a per-window challenge) tells the attacker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Game {
    /// One verdict on the three answers together (the game as it is, a per-window challenge).
    Joint,
    /// A wrong answer ends the session at its round (the game before).
    StopsOnWrong,
}

/// What [`replay`] found.
#[derive(Debug)]
pub struct Replay {
    /// Sessions (or challenges) admitted over all.
    pub admitted: u64,
    /// Of those, among the last `tail`.
    pub admitted_tail: u64,
    /// The learner afterwards.
    pub learner: Learner,
}

/// Offline, with the key: `sessions` draws over set `set` of `corpus` (one question per part,
/// seeded in turn, as a game session or a per-window challenge draws them), each answered by
/// a learner that learns from the verdict `game` gives.
pub fn replay(corpus: &Corpus, set: usize, sessions: u64, tail: u64, game: Game) -> Replay {
    let ids = [corpus.sets()[set].id.clone()];
    let mut learner = Learner::default();
    let (mut admitted, mut admitted_tail) = (0, 0);
    for s in 0..sessions {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&s.to_le_bytes());
        let Some(plan) = corpus.sample_from(&Seed(seed), &ids) else {
            break;
        };
        let mut given = Vec::new();
        let mut right = true;
        for r in 0..3 {
            let Some(round) = corpus.round(&plan, r) else {
                break;
            };
            let (text, g) =
                learner.answer(r, round.narrative, &round.question.question, &given, false);
            given.push(g);
            if check_answer(&round.question.variants(), text.as_bytes()).is_err() {
                right = false;
                if game == Game::StopsOnWrong {
                    learner.early_stop(&given, r);
                    break;
                }
            }
        }
        if right || game == Game::Joint {
            learner.session_verdict(&given, right);
        }
        admitted += u64::from(right);
        if right && s >= sessions.saturating_sub(tail) {
            admitted_tail += 1;
        }
    }
    Replay {
        admitted,
        admitted_tail,
        learner,
    }
}

#[cfg(test)]
#[path = "oracle_tests.rs"]
mod tests;
