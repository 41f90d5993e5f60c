//! Touch prompts: what bounds one person when a model answers every cognitive step.
//!
//! In a `global` or `staggered` slot a challenge of a family bound to a credential (`presence`)
//! is a **touch prompt**: challenge `j` opens on beat `j`, one of the slot's last moments, at
//! `slot end − (tries − j)·(r + J) + U[0, J]` (`r` the family's deadline, the reaction window;
//! `J` the prompt jitter; [`super::beats::beat_start`] mirrors [`hco_oracle::NetworkParams::beat`]), is
//! issued at that moment whenever it is fetched, and is due by opening + `r`. A policy's steps
//! are served in order and a failed or expired try takes a spare, so prompt step `i` is served
//! by one of the tries `i ..= i + spares`: the tries that may serve a prompt are the union of
//! those ranges, `B` of them (for prompt steps next to each other, the first prompt step to
//! the last plus the spares).
//!
//! A model answers the cognitive steps at no cost to the person; what is left is `m` touches
//! (one per prompt step) per identity-window, each inside its prompt's reaction window. In a
//! global slot the prompts of all the person's identities open within the same `J` seconds of
//! each beat, so all the touches fall in the `B` beats' spans of `J + r` seconds:
//!
//! `n ≤ B·(J + r) / (m·touch)`.
//!
//! Staggered slots do not hold one person's identities to the same beats, so there the bound is
//! window-based, `n ≤ (window + r) / (m·touch)`. Without a touch prompt (an `open` window, or
//! no `presence` step) nothing here bounds a model: the figure is `None`.
//!
//! The Monte Carlo of one person touching for `n` identities is in [`super::touch_mc`].

use serde::Serialize;

use super::beats::Beats;
use super::touch_mc::{TouchMonteCarlo, touch_monte_carlo};
use super::{CeremonyInputs, floor};
use crate::scenario::SlotMode;

/// What one touch takes a person by default, milliseconds (`hco sim bound --touch-ms`).
pub const DEFAULT_TOUCH_MS: u64 = 1000;
/// The touch pace of a rig pressing keys by machine that the output prices, milliseconds.
pub const RIG_TOUCH_MS: u64 = 250;

/// A rig's pace, priced with the same formula.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RigPace {
    /// Seconds per touch.
    pub touch_s: f64,
    /// Identities one key with its actuator keeps per window at that pace (`None`:
    /// unbounded).
    pub identities_per_key: Option<u64>,
    /// Not rounded.
    pub capacity: Option<f64>,
}

/// The one-person bound when a model answers every cognitive step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSolves {
    /// Identities one person keeps active per window at most (`None`: unbounded, no touch
    /// prompt).
    pub identities_per_person: Option<u64>,
    /// Not rounded.
    pub capacity: Option<f64>,
    /// `beats` (global slot), `window` (staggered slots) or `none` (no touch prompt).
    pub basis: &'static str,
    /// Seconds a touch takes the person.
    pub touch_s: f64,
    /// Touches per identity-window (`m`, one per prompt step).
    pub touches_per_identity_window: u32,
    /// Seconds of the person per identity-window (`m·touch`).
    pub person_seconds_per_identity_window: f64,
    /// The tries that may serve a touch prompt (global: their beats).
    pub prompt_tries: Vec<u32>,
    /// How many (`B`).
    pub beats: u32,
    /// The longest reaction window of a prompt, seconds.
    pub reaction_s: Option<f64>,
    /// Prompt jitter, seconds.
    pub prompt_jitter_s: f64,
    /// Seconds in which the touches can fall (global: `B·(J + r)`; staggered: window + `r`).
    pub touch_span_s: Option<f64>,
    /// The Monte Carlo (`None` when unbounded or beyond 5000 identities).
    pub monte_carlo: Option<TouchMonteCarlo>,
    /// The same formula at a rig's pace.
    pub rig: RigPace,
    /// Against a committee member answering for its own sybils (`None` unless the slot is
    /// global or without a prompt).
    pub one_malicious_member: Option<super::member::MemberBound>,
    /// What the figure is.
    pub note: String,
    /// What it does not price: the hardware.
    pub hardware: Vec<String>,
}

/// The bound of `inputs` when a model answers every cognitive step and a touch takes the person
/// `touch_ms`.
pub fn model_solves(inputs: &CeremonyInputs, touch_ms: u64) -> ModelSolves {
    let touch_s = touch_ms as f64 / 1000.0;
    let rig_s = RIG_TOUCH_MS as f64 / 1000.0;
    let Some(beats) = Beats::of(inputs) else {
        return ModelSolves {
            identities_per_person: None,
            capacity: None,
            basis: "none",
            touch_s,
            touches_per_identity_window: 0,
            person_seconds_per_identity_window: 0.0,
            prompt_tries: Vec::new(),
            beats: 0,
            reaction_s: None,
            prompt_jitter_s: inputs.prompt_jitter_ms as f64 / 1000.0,
            touch_span_s: None,
            monte_carlo: None,
            rig: RigPace {
                touch_s: rig_s,
                identities_per_key: None,
                capacity: None,
            },
            one_malicious_member: None,
            note: format!(
                "unbounded: no step is a touch prompt ({}), so a model that answers every step \
                 keeps any number of identities without a person; only the human-speed figure \
                 (identities_per_person, a person answering every step) and the cost of \
                 registering bound it",
                if inputs.slot_mode == SlotMode::Open {
                    "an open window has none: prompts need a global or staggered slot"
                } else {
                    "the policy has no step of a family bound to a credential, such as presence"
                }
            ),
            hardware: Vec::new(),
        };
    };
    let m = beats.touches();
    let capacity = beats.capacity(inputs, |_| touch_s);
    let rig = beats.capacity(inputs, |_| rig_s);
    let r = beats.reaction_s();
    let monte_carlo = touch_monte_carlo(inputs, &beats, touch_s, capacity);
    let figure = floor(capacity);
    let note = if beats.global {
        format!(
            "upper bound with a model answering every cognitive step at once: each identity \
             needs {m} touch(es) of its hardware key per window, each inside its prompt's \
             reaction window ({r} s); the prompts of all of one person's identities open within \
             the same {j} s of each beat, and the {b} tries that may serve a prompt have {b} \
             beats of {j} + {r} s, so B·(J + r)/(m·touch) = {b}·{span_each} / ({m}·{touch_s}) = \
             {figure}",
            j = beats.jitter_s,
            b = beats.tries.len(),
            span_each = beats.jitter_s + r,
        )
    } else {
        format!(
            "upper bound with a model answering every cognitive step at once, window-based: \
             staggered slots do not hold one person's identities to the same beats, so their \
             {m} touch(es) per identity fall anywhere in the window plus the reaction window: \
             (window + r)/(m·touch) = {span} / ({m}·{touch_s}) = {figure}",
            span = beats.span_s(inputs),
        )
    };
    let rig_figure = floor(rig);
    let hardware = vec![
        format!(
            "no hardware per identity is enforced: strict attestation checks a key's model and \
             vendor chain, and batch attestation (one certificate for a batch of keys of one \
             model) cannot tell two keys of that model apart, nor one key from two, so one key \
             may hold a credential for every identity; what a prompt costs is the touch, \
             {m} touch(es) = {} s of a person per identity-window",
            f64::from(m) * touch_s
        ),
        format!(
            "a rig that presses keys by machine removes the person from this bound: the cost is \
             then the rig's hardware and its touch pace per key, e.g. at {rig_s} s per touch \
             this formula (touch_ms = {RIG_TOUCH_MS}) gives {rig_figure} identities per key and \
             actuator, and keys with actuators run in parallel"
        ),
        "user verification raises a rig's cost only if it is biometric (a fingerprint key such \
         as the YubiKey Bio needs a finger on its sensor for every assertion); PIN verification \
         does not, since the rig's software enters the PIN"
            .to_owned(),
    ];
    ModelSolves {
        identities_per_person: Some(figure),
        capacity: Some(capacity),
        basis: if beats.global { "beats" } else { "window" },
        touch_s,
        touches_per_identity_window: m,
        person_seconds_per_identity_window: f64::from(m) * touch_s,
        prompt_tries: beats.tries.iter().map(|(j, _)| *j).collect(),
        beats: beats.tries.len() as u32,
        reaction_s: Some(r),
        prompt_jitter_s: beats.jitter_s,
        touch_span_s: Some(beats.span_s(inputs)),
        monte_carlo,
        rig: RigPace {
            touch_s: rig_s,
            identities_per_key: Some(rig_figure),
            capacity: Some(rig),
        },
        one_malicious_member: super::member::one_member(inputs, &beats, touch_s),
        note,
        hardware,
    }
}
