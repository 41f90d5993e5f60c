//! The beats of a ceremony's touch prompts: where each opens and which tries may serve
//! one (see [`super::touch`] for what they bound).

use std::collections::BTreeMap;

use super::CeremonyInputs;
use crate::scenario::SlotMode;
use crate::schedule::Slot;

/// Where beat `j` of `slot` starts, seconds: `(tries − j)·(reaction + jitter)` before the
/// slot's end, not before its start, as [`hco_oracle::NetworkParams::beat`] places it. The
/// prompt opens up to `jitter` later.
pub fn beat_start(slot: Slot, tries: u32, j: u32, reaction_s: f64, jitter_s: f64) -> f64 {
    (slot.1 - f64::from(tries.saturating_sub(j)) * (reaction_s + jitter_s)).max(slot.0)
}

/// One step of the policy that is a touch prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptStep {
    /// Step index.
    pub step: usize,
    /// The family.
    pub family: String,
    /// Reaction window (the family's deadline), seconds.
    pub reaction_s: f64,
    /// Least time from the issue to an answer, seconds.
    pub min_solve_s: f64,
}

/// The touch prompts of a ceremony.
#[derive(Debug, Clone, PartialEq)]
pub struct Beats {
    /// The prompt steps.
    pub prompts: Vec<PromptStep>,
    /// The tries that may serve a prompt, ascending, each with its beat's span: the jitter plus
    /// the longest reaction window of the prompt steps it may serve, seconds.
    pub tries: Vec<(u32, f64)>,
    /// Prompt jitter, seconds.
    pub jitter_s: f64,
    /// Whether one slot holds every identity (`global`) rather than each its own (`staggered`).
    pub global: bool,
}

impl Beats {
    /// The touch prompts of `inputs`; `None` when there is none (an `open` window never has
    /// one).
    pub fn of(inputs: &CeremonyInputs) -> Option<Self> {
        if inputs.slot_mode == SlotMode::Open {
            return None;
        }
        let prompts: Vec<PromptStep> = inputs
            .steps
            .iter()
            .enumerate()
            .filter_map(|(step, s)| {
                let r = s.prompt_reaction_ms?;
                let f = s.families.first()?;
                Some(PromptStep {
                    step,
                    family: f.name.clone(),
                    reaction_s: r as f64 / 1000.0,
                    min_solve_s: f.min_solve_ms as f64 / 1000.0,
                })
            })
            .collect();
        if prompts.is_empty() {
            return None;
        }
        let jitter_s = inputs.prompt_jitter_ms as f64 / 1000.0;
        let mut tries = BTreeMap::<u32, f64>::new();
        for p in &prompts {
            let first = p.step as u32;
            for j in first..=first + inputs.spares {
                let span = tries.entry(j).or_insert(0.0);
                *span = span.max(jitter_s + p.reaction_s);
            }
        }
        Some(Self {
            prompts,
            tries: tries.into_iter().collect(),
            jitter_s,
            global: inputs.slot_mode == SlotMode::Global,
        })
    }

    /// Touches per identity-window: one per prompt step.
    pub fn touches(&self) -> u32 {
        self.prompts.len() as u32
    }

    /// The longest reaction window, seconds.
    pub fn reaction_s(&self) -> f64 {
        self.prompts
            .iter()
            .map(|p| p.reaction_s)
            .fold(0.0, f64::max)
    }

    /// Seconds in which one person's touches can fall: the beats' spans summed (global), or
    /// the window plus the longest reaction window (staggered).
    pub fn span_s(&self, inputs: &CeremonyInputs) -> f64 {
        if self.global {
            self.tries.iter().map(|(_, s)| s).sum()
        } else {
            inputs.window_ms as f64 / 1000.0 + self.reaction_s()
        }
    }

    /// Identities one person keeps (not rounded) when the prompt of `family` takes
    /// `touch_s(family)` seconds of the person and every other step none.
    pub fn capacity(&self, inputs: &CeremonyInputs, touch_s: impl Fn(&str) -> f64) -> f64 {
        let per_identity: f64 = self.prompts.iter().map(|p| touch_s(&p.family)).sum();
        if per_identity > 0.0 {
            self.span_s(inputs) / per_identity
        } else {
            f64::INFINITY
        }
    }
}
