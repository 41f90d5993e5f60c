//! Attackers of the labelled baselines (`Family::script_solvable`): the three lock families,
//! `proof_of_work` and `arithmetic_reasoning`. A script with the source in hand needs no
//! guessing against them: it runs the family's own white-box solver, which inverts the
//! generator's public tables (`template-inversion`: the lock noise undone exactly, each
//! statement looked up through the phrase tables, riddles and sums evaluated), searches hashes
//! (`hash-search`) or reads the arithmetic template back (`template-reading`).
//!
//! They are in `hco bench attack` to show, over HTTP and against the real deadline, why these
//! families never count as proof of a class on their own: the policy keeps them out of every
//! step that must prove the class (`policy::validate`), and the bench marks them `baseline`.

use hco_challenges::{Prompt, Registry};

use super::{Attack, Session, Verdict, compute};

/// The family's own solver, played as a client.
pub struct OwnSolver {
    family: &'static str,
    name: &'static str,
}

/// One attacker for every labelled baseline in the registry.
pub fn attackers() -> Vec<Box<dyn Attack>> {
    let registry = Registry::builtin();
    registry
        .names()
        .filter(|name| registry.get(name).is_some_and(|f| f.script_solvable()))
        .map(|family| {
            let name = match family {
                "proof_of_work" => "hash-search",
                "arithmetic_reasoning" => "template-reading",
                _ => "template-inversion",
            };
            Box::new(OwnSolver { family, name }) as Box<dyn Attack>
        })
        .collect()
}

impl Attack for OwnSolver {
    fn family(&self) -> &'static str {
        self.family
    }
    fn name(&self) -> &'static str {
        self.name
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        let view = session.prompt();
        let prompt = Prompt {
            family: view.family.clone(),
            text: view.text.clone(),
            data: serde_json::to_vec(&view.data)?,
        };
        let family = Registry::builtin()
            .get(self.family)
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("unknown family `{}`", self.family))?;
        let Some(answer) = compute(|| family.solve(&prompt)) else {
            return Ok(Verdict::Rejected("no_answer_found".into()));
        };
        session.wait_min_solve(std::time::Duration::from_millis(50));
        session.respond(&answer)
    }
    fn concurrency(&self) -> usize {
        8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_labelled_baseline_has_an_attacker_and_nothing_else_does() {
        let registry = Registry::builtin();
        let attacked: Vec<&str> = attackers().iter().map(|a| a.family()).collect();
        for name in registry.names() {
            let solvable = registry.get(name).is_some_and(|f| f.script_solvable());
            assert_eq!(attacked.contains(&name), solvable, "{name}");
        }
        for lock in [
            "obfuscated_text_lock",
            "multi_pass_lock",
            "semantic_math_lock",
        ] {
            assert!(attacked.contains(&lock), "{lock}");
        }
    }
}
