//! The per-window policy of each identity class (DESIGN §12): a fixed sequence of steps, a few
//! spare tries, one answer per challenge.
//!
//! Challenge `j` of `(id, t)` serves the first step not yet passed. It is issued only after
//! challenge `j − 1` was answered (right or wrong) or expired, so the family of a later step is
//! not visible before, and the client never chooses a family: a fixed step names its family, a
//! drawn step (`"cognitive"`) takes the next family of a permutation of the class's pool that
//! the window secret fixes per identity (no repeat before the pool is used up). An identity
//! is active in `t` when every step passed within `steps + spares` tries.
//!
//! Inside a `global` or `staggered` ceremony slot, the slot is cut into one phase per try and
//! challenge `j` opens at a seed-derived moment inside phase `j`; it cannot be fetched earlier,
//! so a person cannot collect a window's steps ahead of time.
//!
//! A challenge of a family bound to a credential (`presence`) is a **touch prompt** there: it
//! opens on beat `j`, `(tries − j) · (deadline + prompt_jitter)` before the slot's end plus a
//! seed-drawn moment of at most `prompt_jitter`, counts as issued at that moment whenever it is
//! fetched, and is due its family's deadline (the reaction window) later. A person serving `k` identities faces
//! their prompts inside the same few seconds of every beat, and one touch takes time that
//! cannot be spent on two identities: this, not the cognitive steps (which a model may answer),
//! is what bounds the identities one person keeps (docs/protocol.md, `hco sim bound`).

use hco_challenges::Class;
use serde::{Deserialize, Serialize};

use crate::Reason;

/// The keyword of a drawn step in configs.
pub const DRAWN: &str = "cognitive";

/// One step of a window's sequence.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Step {
    /// A family drawn by the seed from the class's pool: its enabled families that no fixed
    /// step names, except factors bound to a credential (`presence`), which only a fixed step
    /// asks for; without the visual ones for an identity that opted out of them.
    Drawn,
    /// This family.
    Family(String),
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Step {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Step".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "a family's name, or \"cognitive\": a family drawn from the class's pool",
        })
    }
}

impl From<String> for Step {
    fn from(s: String) -> Self {
        if s == DRAWN {
            Step::Drawn
        } else {
            Step::Family(s)
        }
    }
}

impl From<Step> for String {
    fn from(s: Step) -> Self {
        match s {
            Step::Drawn => DRAWN.into(),
            Step::Family(name) => name,
        }
    }
}

/// The sequence a class runs each window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowPolicy {
    /// The steps, in order; all must pass.
    pub steps: Vec<Step>,
    /// Extra tries for honest slips: a failed or expired challenge uses one (default 1).
    #[serde(default = "one")]
    pub spares: u32,
}

fn one() -> u32 {
    1
}

impl WindowPolicy {
    /// Tries a window allows: steps plus spares.
    pub fn tries(&self) -> u32 {
        self.steps.len() as u32 + self.spares
    }

    /// Whether accepted challenges of these families pass every step: each fixed step by one
    /// of its family, each drawn step by one of any other family.
    pub fn covered_by<'f>(&self, families: impl IntoIterator<Item = &'f str>) -> bool {
        let mut missing: Vec<&Step> = self.steps.iter().collect();
        let mut drawn = 0usize;
        for family in families {
            if let Some(i) = missing
                .iter()
                .position(|s| matches!(s, Step::Family(name) if name == family))
            {
                missing.swap_remove(i);
            } else if !self.names(family) {
                drawn += 1;
            }
        }
        missing.iter().all(|s| **s == Step::Drawn) && missing.len() <= drawn
    }

    /// Whether `family` is named by a fixed step.
    pub fn names(&self, family: &str) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, Step::Family(name) if name == family))
    }
}

/// One drawn step and one spare: the policy a config that names none gets.
impl Default for WindowPolicy {
    fn default() -> Self {
        Self {
            steps: vec![Step::Drawn],
            spares: 1,
        }
    }
}

/// The policies of both classes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClassPolicies {
    /// For people.
    #[serde(default)]
    pub human: WindowPolicy,
    /// For agents.
    #[serde(default)]
    pub agent: WindowPolicy,
}

impl ClassPolicies {
    /// The policy of `class`.
    pub fn of(&self, class: Class) -> &WindowPolicy {
        match class {
            Class::Human => &self.human,
            Class::Agent => &self.agent,
        }
    }
}

/// What one earlier challenge of the window came to, for [`next_step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Accepted: its step passed.
    Passed,
    /// Answered wrong, or expired unanswered: a try used.
    Failed,
    /// Neither answered nor expired yet.
    Open,
}

/// Which step challenge `j = outcomes.len()` serves, given what challenges `0..j` came to: the
/// index into the policy's steps, or why no challenge `j` may be issued.
pub fn next_step(policy: &WindowPolicy, outcomes: &[Outcome]) -> Result<usize, Reason> {
    let j = outcomes.len() as u32;
    if let Some(previous) = outcomes.iter().position(|o| *o == Outcome::Open) {
        return Err(Reason::PreviousStepUnanswered {
            previous: previous as u32,
        });
    }
    let passed = outcomes.iter().filter(|o| **o == Outcome::Passed).count();
    if passed >= policy.steps.len() {
        return Err(Reason::StepsComplete);
    }
    // Refused as soon as the tries left cannot cover the steps left.
    let steps_left = (policy.steps.len() - passed) as u32;
    if policy.tries().saturating_sub(j) < steps_left {
        return Err(Reason::NoTriesLeft {
            tries: policy.tries(),
        });
    }
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Outcome::*;

    fn policy(steps: &[&str], spares: u32) -> WindowPolicy {
        WindowPolicy {
            steps: steps.iter().map(|s| Step::from(s.to_string())).collect(),
            spares,
        }
    }

    #[test]
    fn steps_come_in_order_and_spares_absorb_slips() {
        let p = policy(&["presence", "cognitive", "cognitive"], 1);
        assert_eq!(next_step(&p, &[]), Ok(0));
        assert_eq!(next_step(&p, &[Passed]), Ok(1));
        assert_eq!(next_step(&p, &[Passed, Failed]), Ok(1));
        assert_eq!(next_step(&p, &[Passed, Failed, Passed]), Ok(2));
        assert_eq!(
            next_step(&p, &[Passed, Failed, Passed, Failed]).unwrap_err(),
            Reason::NoTriesLeft { tries: 4 }
        );
        assert_eq!(
            next_step(&p, &[Passed, Passed, Passed]).unwrap_err(),
            Reason::StepsComplete
        );
        assert_eq!(
            next_step(&p, &[Passed, Open]).unwrap_err(),
            Reason::PreviousStepUnanswered { previous: 1 }
        );
        // Two slips with three steps to go: the remaining tries cannot make it.
        assert_eq!(
            next_step(&p, &[Failed, Failed]).unwrap_err(),
            Reason::NoTriesLeft { tries: 4 }
        );
        assert_eq!(next_step(&p, &[Failed]), Ok(0));
    }

    #[test]
    fn coverage_needs_every_fixed_step_and_enough_drawn_ones() {
        let p = policy(&["presence", "cognitive", "cognitive"], 1);
        assert!(p.covered_by(["presence", "visual_match", "attention"]));
        assert!(p.covered_by(["visual_match", "presence", "visual_match"]));
        assert!(!p.covered_by(["visual_match", "attention", "interactive_reasoning"]));
        assert!(!p.covered_by(["presence", "presence", "visual_match"]));
        assert!(!p.covered_by(["presence", "visual_match"]));
        assert!(!p.covered_by([]));
    }

    #[test]
    fn steps_serialise_as_their_config_words() {
        let p = policy(&["presence", "cognitive"], 1);
        let words: Vec<String> = p.steps.iter().cloned().map(String::from).collect();
        assert_eq!(words, ["presence", "cognitive"]);
        assert_eq!(p.steps[1], Step::Drawn);
        let bytes = crate::codec::encode(&p);
        assert_eq!(
            crate::codec::decode::<WindowPolicy>(&bytes, 1024).unwrap(),
            p
        );
        assert!(p.names("presence") && !p.names("cognitive"));
        assert_eq!(p.tries(), 3);
    }
}
