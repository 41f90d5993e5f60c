//! Stand-in human families for the core.
//!
//! The core rotates over the families registered for a class and enforces each family's own
//! deadline. The scenario's human families (visual matching, attention…) need a person, so the
//! exact engine registers one stand-in per scenario family under that family's name: prompts,
//! answer keys and verification are those of the real `arithmetic_reasoning` family, and its
//! built-in solver writes the answer of a human the scenario says got it right.

use hco_challenges::{
    AnswerKey, ArithmeticReasoning, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed,
};

/// A human-class family named after a scenario family, backed by `arithmetic_reasoning`.
pub struct StandIn {
    name: &'static str,
}

impl StandIn {
    /// A stand-in called `name`. Names are leaked once per exact run (a handful of bytes).
    pub fn new(name: &str) -> Self {
        Self {
            name: Box::leak(name.to_owned().into_boxed_str()),
        }
    }
}

impl Family for StandIn {
    fn name(&self) -> &'static str {
        self.name
    }

    fn class(&self) -> Class {
        Class::Human
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        ArithmeticReasoning.check_params(params)
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let mut g = ArithmeticReasoning.generate(seed, params);
        g.prompt.family = self.name.to_owned();
        g
    }

    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
        ArithmeticReasoning.verify(key, answer)
    }

    fn solve(&self, prompt: &Prompt) -> Option<Vec<u8>> {
        ArithmeticReasoning.solve(prompt)
    }

    /// The stand-in of `presence` keeps its touch prompts' timing (not its passkeys).
    fn touch_prompt(&self) -> bool {
        self.name == hco_challenges::presence::NAME
    }
}

/// A wrong answer for a prompt: the solver's answer with a digit appended.
pub fn wrong_answer(correct: &[u8]) -> Vec<u8> {
    let mut v = correct.to_vec();
    v.push(b'7');
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stand_in_verifies_solver_answers_and_rejects_wrong_ones() {
        let f = StandIn::new("visual_match");
        let g = f.generate(&Seed([3; 32]), &FamilyParams { difficulty: 3 });
        assert_eq!(g.prompt.family, "visual_match");
        let answer = f.solve(&g.prompt).unwrap();
        assert!(f.verify(&g.key, &answer).is_ok());
        assert!(f.verify(&g.key, &wrong_answer(&answer)).is_err());
    }
}
