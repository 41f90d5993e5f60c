//! What a class's window policy ([`crate::policy`]) takes under these parameters: the
//! families each step may draw for a profile, the ceremony slot's phases and touch-prompt
//! beats, and the checks that every step has a family and every beat fits in the slot.

use std::ops::Range;

use hco_challenges::{Class, Registry, SeedStream};

use super::bad;
use crate::policy::{DRAWN, Step, WindowPolicy};
use crate::{FamilyConfig, NetworkParams, ParamsError, Profile, Timestamp};

impl NetworkParams {
    /// The policy of `class`.
    pub fn policy(&self, class: Class) -> &WindowPolicy {
        self.policies.of(class)
    }

    /// The families a step may take for `profile`, in configuration order: the named family,
    /// or the pool of a drawn step.
    pub fn step_families(
        &self,
        step: &Step,
        profile: impl Into<Profile>,
        registry: &Registry,
    ) -> Vec<&FamilyConfig> {
        let profile = profile.into();
        let policy = self.policy(profile.class);
        let pool: Vec<&FamilyConfig> = self
            .families_for(profile, registry)
            .into_iter()
            .filter(|f| match step {
                Step::Family(name) => f.name == *name,
                Step::Drawn => {
                    !policy.names(&f.name)
                        && !registry.get(&f.name).is_some_and(|fam| fam.uses_passkeys())
                }
            })
            .collect();
        if *step != Step::Drawn {
            return pool;
        }
        // A drawn step never lands on a family a script passes while the pool holds another.
        let solvable = |f: &FamilyConfig| {
            registry
                .get(&f.name)
                .is_some_and(|fam| fam.script_solvable())
        };
        if pool.iter().all(|f| solvable(f)) {
            pool
        } else {
            pool.into_iter().filter(|f| !solvable(f)).collect()
        }
    }

    /// The enabled families some step of `class`'s policy may take for an identity that did
    /// not opt out of visual families, in configuration order, each once.
    pub fn policy_families(&self, class: Class, registry: &Registry) -> Vec<&FamilyConfig> {
        let profile = Profile::new(class, false);
        let mut out: Vec<&FamilyConfig> = Vec::new();
        for step in &self.policy(class).steps {
            for f in self.step_families(step, profile, registry) {
                if !out.iter().any(|o| o.name == f.name) {
                    out.push(f);
                }
            }
        }
        out
    }

    /// Whether `class` is served by labelled baselines only: every family some step of its
    /// policy may take ([`NetworkParams::policy_families`]) is one a script with the source
    /// passes ([`hco_challenges::Family::script_solvable`]: proof of work, the lock families,
    /// templated arithmetic), so the class's activity proves nothing about who holds its
    /// identities. False for a class no step can serve (it is not served at all).
    pub fn baseline_only(&self, class: Class, registry: &Registry) -> bool {
        let families = self.policy_families(class, registry);
        !families.is_empty()
            && families.iter().all(|f| {
                registry
                    .get(&f.name)
                    .is_some_and(|fam| fam.script_solvable())
            })
    }

    /// Which step of its class's policy a challenge of `family` served: the fixed step naming
    /// it, else the drawn one. `None` when the family fits no step of the policy.
    pub fn step_of_family(&self, class: Class, family: &str) -> Option<Step> {
        let policy = self.policy(class);
        if policy.names(family) {
            Some(Step::Family(family.into()))
        } else {
            policy.steps.contains(&Step::Drawn).then_some(Step::Drawn)
        }
    }

    /// The minimum human solve time of an enabled family (its configured floor).
    pub fn min_solve_ms(&self, family: &str) -> u64 {
        self.family(family).map_or(0, |f| f.min_solve_ms)
    }

    /// Whether a challenge of `family` is a touch prompt: a family bound to a credential
    /// (`presence`, [`hco_challenges::Family::touch_prompt`]) in a `global` or `staggered` slot. A prompt opens on its beat
    /// ([`NetworkParams::beat`]) and is due its family's deadline after it.
    pub fn is_prompt(&self, family: &str, registry: &Registry) -> bool {
        self.slot_mode != crate::SlotMode::Open
            && registry.get(family).is_some_and(|f| f.touch_prompt())
    }

    /// The reaction window of challenges of `family` if they are touch prompts.
    pub fn prompt_reaction_ms(&self, family: &str, registry: &Registry) -> Option<u64> {
        if !self.is_prompt(family, registry) {
            return None;
        }
        self.family(family).map(|f| f.deadline_ms)
    }

    /// Where touch prompt `j` of `class` (reaction window `reaction_ms`) may open: the beats
    /// are the slot's last moments, one per try, so that a person who comes late to the slot
    /// still has the steps before the prompts to do first. Beat `j` starts
    /// `(tries − j) · (reaction_ms + prompt_jitter_ms)` before the slot's end and the prompt
    /// opens at most `prompt_jitter_ms` after that (inclusive). Needs no secret: anyone can check
    /// that a prompt was issued on its beat.
    pub fn beat(
        &self,
        slot: &Range<Timestamp>,
        class: Class,
        j: u32,
        reaction_ms: u64,
    ) -> Range<Timestamp> {
        let spacing = reaction_ms.saturating_add(self.prompt_jitter_ms);
        let tries = u64::from(self.policy(class).tries());
        let before_end = tries.saturating_sub(u64::from(j)).saturating_mul(spacing);
        let start = slot.end.saturating_sub(before_end).max(slot.start);
        start..start.saturating_add(self.prompt_jitter_ms + 1)
    }

    /// Where every beat of `slot` starts, over both classes' policies: a beat `j` for each try
    /// of a class whose policy has a touch prompt, at [`NetworkParams::beat`] with that
    /// prompt's reaction window. Members publish a witness of each ([`crate::witness`]).
    pub fn beat_starts(
        &self,
        slot: &Range<Timestamp>,
        registry: &Registry,
    ) -> std::collections::BTreeSet<Timestamp> {
        let mut starts = std::collections::BTreeSet::new();
        for class in [Class::Human, Class::Agent] {
            let policy = self.policy(class);
            for step in &policy.steps {
                let Step::Family(name) = step else { continue };
                let Some(reaction_ms) = self.prompt_reaction_ms(name, registry) else {
                    continue;
                };
                for j in 0..policy.tries() {
                    starts.insert(self.beat(slot, class, j, reaction_ms).start);
                }
            }
        }
        starts
    }

    /// When challenge `j` opens inside `slot`: at a moment drawn by its seed inside the first
    /// half of phase `j` of `tries` equal phases, or, for a touch prompt (`prompt` is its
    /// reaction window), on beat `j`. An `open` slot opens every challenge at once.
    ///
    /// Only the first half: the last phase ends with the slot, after which nothing is issued, so
    /// an opening drawn in its last moments would leave an honest client milliseconds to ask.
    /// Half a phase is always left to ask in.
    pub fn opens_at(
        &self,
        slot: &Range<Timestamp>,
        class: Class,
        j: u32,
        prompt: Option<u64>,
        draw: &mut SeedStream,
    ) -> Timestamp {
        if self.slot_mode == crate::SlotMode::Open {
            return slot.start;
        }
        let window = match prompt {
            Some(reaction_ms) => self.beat(slot, class, j, reaction_ms),
            None => {
                let phase = self.phase(slot, class, j);
                phase.start..phase.start + (phase.end - phase.start).div_ceil(2)
            }
        };
        window.start + draw.below((window.end - window.start).max(1))
    }

    /// Phase `j` of `tries` equal phases of `slot`, inside which challenge `j` opens (the
    /// whole slot when slots are `open`). Needs no secret: anyone can check that a challenge
    /// was not issued before its phase began.
    pub fn phase(&self, slot: &Range<Timestamp>, class: Class, j: u32) -> Range<Timestamp> {
        if self.slot_mode == crate::SlotMode::Open {
            return slot.clone();
        }
        let tries = u64::from(self.policy(class).tries().max(1));
        let phase = (slot.end - slot.start) / tries;
        let start = slot.start + u64::from(j).min(tries - 1) * phase;
        start..start + phase
    }

    /// Checks a class's policy against the enabled families: every step has a family to take,
    /// for both profiles where the class has visual families.
    pub(crate) fn validate_policy(
        &self,
        class: Class,
        registry: &Registry,
    ) -> Result<(), ParamsError> {
        let field = format!("policy.{}", class.as_str());
        let policy = self.policy(class);
        let has_family = !self
            .families_for(Profile::new(class, false), registry)
            .is_empty();
        // A class with no enabled family is not served at all; its policy is not used.
        if !has_family {
            return Ok(());
        }
        if policy.steps.is_empty() {
            return Err(bad(
                format!("{field}.steps"),
                "list at least one step (a family name or \"cognitive\")",
            ));
        }
        if policy.steps.len() > 16 || policy.spares > 16 {
            return Err(bad(field, "at most 16 steps and 16 spares"));
        }
        for (i, step) in policy.steps.iter().enumerate() {
            if let Step::Family(name) = step {
                let Some(family) = registry.get(name).filter(|_| self.family(name).is_some())
                else {
                    return Err(bad(
                        format!("{field}.steps[{i}]"),
                        format!("`{name}` is not an enabled family (or use \"{DRAWN}\")"),
                    ));
                };
                if family.class() != class {
                    return Err(bad(
                        format!("{field}.steps[{i}]"),
                        format!("`{name}` is a {} family", family.class().as_str()),
                    ));
                }
            }
            if self
                .step_families(step, Profile::new(class, false), registry)
                .is_empty()
            {
                return Err(bad(
                    format!("{field}.steps[{i}]"),
                    format!(
                        "no enabled {} family is left for a \"{DRAWN}\" step",
                        class.as_str()
                    ),
                ));
            }
        }
        self.validate_beats(class, registry)?;
        // Where the class has a family no script passes, some step must always take one: a
        // baseline (proof of work, a lock family, templated arithmetic) is never the proof.
        let profile = Profile::new(class, false);
        let solvable = |f: &FamilyConfig| {
            registry
                .get(&f.name)
                .is_some_and(|fam| fam.script_solvable())
        };
        let has_proof = self
            .families_for(profile, registry)
            .iter()
            .any(|f| !solvable(f));
        let proves = |step: &Step| {
            self.step_families(step, profile, registry)
                .iter()
                .all(|f| !solvable(f))
        };
        if has_proof && !policy.steps.iter().any(proves) {
            return Err(bad(
                format!("{field}.steps"),
                format!(
                    "every step may be served by a family a script passes (a baseline); name a \
                     {} family no script passes, or use \"{DRAWN}\"",
                    class.as_str()
                ),
            ));
        }
        Ok(())
    }
}

impl NetworkParams {
    /// Every try that may serve a touch prompt has its beat inside the slot: the beats of the
    /// tries from the first prompt step on fit between the slot's start and its end.
    fn validate_beats(&self, class: Class, registry: &Registry) -> Result<(), ParamsError> {
        if self.slot_mode == crate::SlotMode::Open {
            return Ok(());
        }
        let policy = self.policy(class);
        let first = policy
            .steps
            .iter()
            .enumerate()
            .find_map(|(i, step)| match step {
                Step::Family(name) => self.prompt_reaction_ms(name, registry).map(|r| (i, r)),
                Step::Drawn => None,
            });
        let Some((first, reaction_ms)) = first else {
            return Ok(());
        };
        let beats = u64::from(policy.tries()) - first as u64;
        let needed = beats.saturating_mul(reaction_ms.saturating_add(self.prompt_jitter_ms));
        if needed > self.slot_ms {
            return Err(bad(
                "slot_ms",
                format!(
                    "the {} policy's touch prompts need {beats} beats of {} ms at the slot's end \
                     ({needed} ms), more than the slot ({} ms): lengthen the slot or shorten the \
                     prompt's deadline or prompt_jitter",
                    class.as_str(),
                    reaction_ms + self.prompt_jitter_ms,
                    self.slot_ms
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(steps: &[&str], spares: u32) -> WindowPolicy {
        WindowPolicy {
            steps: steps.iter().map(|s| Step::from(s.to_string())).collect(),
            spares,
        }
    }

    fn enable(p: &mut NetworkParams, name: &str) {
        p.families.push(FamilyConfig {
            name: name.into(),
            deadline_ms: 15_000,
            difficulty: 1,
            min_solve_ms: 0,
        });
    }

    #[test]
    fn an_opening_leaves_half_its_phase_to_ask_in() {
        let mut p = crate::testing::params_for(&[crate::NodeId([1; 32])]);
        p.slot_mode = crate::SlotMode::Global;
        p.policies.human = policy(&["cognitive", "cognitive", "cognitive"], 1);
        let slot = 1_000_000..1_100_000;
        let mut latest = 0;
        for n in 0..500u32 {
            let seed = hco_challenges::Seed(*blake3::hash(&n.to_be_bytes()).as_bytes());
            for j in 0..4 {
                let phase = p.phase(&slot, Class::Human, j);
                let at = p.opens_at(&slot, Class::Human, j, None, &mut seed.stream());
                assert!(phase.contains(&at), "{j}: {at}");
                assert!(
                    at <= phase.start + (phase.end - phase.start) / 2,
                    "{j}: {at}"
                );
                latest = latest.max(at - phase.start);
            }
        }
        // The draw still covers the half it is given.
        assert!(latest > 12_000, "{latest}");
    }

    #[test]
    fn a_baseline_is_never_the_only_proof_where_the_class_has_a_real_family() {
        let registry = Registry::builtin();
        let mut p = crate::testing::params_for(&[crate::NodeId([1; 32])]);
        // Only baselines for agents (a devnet's proof of work): allowed, drawn as before, and
        // said (a node outside development refuses to start with it).
        p.policies.agent = policy(&["cognitive"], 1);
        p.validate(&registry).unwrap();
        assert!(p.baseline_only(Class::Agent, &registry));
        assert!(p.baseline_only(Class::Human, &registry));
        // With narrative_chain and a lock family beside proof of work, a drawn step only ever
        // lands on narrative_chain…
        enable(&mut p, "narrative_chain");
        enable(&mut p, "obfuscated_text_lock");
        let drawn = p.step_families(&Step::Drawn, Class::Agent, &registry);
        let names: Vec<&str> = drawn.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["narrative_chain"]);
        p.validate(&registry).unwrap();
        // …and a policy of baselines alone is refused.
        p.policies.agent = policy(&["obfuscated_text_lock", "proof_of_work"], 1);
        let err = p.validate(&registry).unwrap_err().to_string();
        assert!(err.contains("a script passes"), "{err}");
        // A baseline beside the real step is fine (it only adds work).
        p.policies.agent = policy(&["proof_of_work", "narrative_chain"], 1);
        p.validate(&registry).unwrap();
        assert!(!p.baseline_only(Class::Agent, &registry));
        // Humans: templated arithmetic is drawn only for those who opted out of visual families.
        enable(&mut p, "visual_match");
        p.policies.human = policy(&["cognitive"], 1);
        p.validate(&registry).unwrap();
        let seen = p.step_families(&Step::Drawn, Class::Human, &registry);
        assert_eq!(
            seen.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            ["visual_match"]
        );
        assert!(!p.baseline_only(Class::Human, &registry));
        let opted_out = p.step_families(&Step::Drawn, Profile::new(Class::Human, true), &registry);
        assert_eq!(
            opted_out
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>(),
            ["arithmetic_reasoning"]
        );
    }

    #[test]
    fn lock_families_alone_are_baseline_only_and_a_class_without_families_is_not() {
        let registry = Registry::builtin();
        let mut p = crate::testing::params_for(&[crate::NodeId([1; 32])]);
        p.families.retain(|f| f.name != "proof_of_work");
        // No agent family: the class is not served, not "served by baselines".
        assert!(p.policy_families(Class::Agent, &registry).is_empty());
        assert!(!p.baseline_only(Class::Agent, &registry));
        // Lock families only: each passes validation, and each is a baseline.
        enable(&mut p, "multi_pass_lock");
        enable(&mut p, "obfuscated_text_lock");
        for (steps, drawn) in [
            (&["multi_pass_lock"][..], &["multi_pass_lock"][..]),
            (
                &["cognitive"][..],
                &["multi_pass_lock", "obfuscated_text_lock"][..],
            ),
        ] {
            p.policies.agent = policy(steps, 0);
            p.validate(&registry).unwrap();
            let names: Vec<&str> = p
                .policy_families(Class::Agent, &registry)
                .iter()
                .map(|f| f.name.as_str())
                .collect();
            assert_eq!(names, drawn);
            assert!(p.baseline_only(Class::Agent, &registry), "{steps:?}");
        }
    }
}
