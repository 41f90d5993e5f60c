//! The one-person bound when a committee member answers for its own sybils.
//!
//! A member knows its window secret, so it passes every step it issues without a person — but
//! a touch prompt of a global slot carries another member's witness of its own beat, published
//! as the beat begins, and every other member refuses its acceptance after its deadline plus a
//! relay round `Δ` ([`hco_oracle::witness`]). So a lone member's sybils still need a touch for
//! each prompt it issues, inside `[beat start, beat start + J + r + Δ]`, while the prompts at
//! honest members need theirs inside `[opening, opening + r]`. The beats follow one another
//! (each `J + r` long), so all of one person's touches fall in the beats' span plus one round:
//!
//! `n ≤ (B·(J + r) + Δ + s) / (m·touch)`,
//!
//! `s` the difference between the witnessing member's clock and the receivers' (the relay rule
//! assumes deliveries and clock differences within `Δ`; with NTP it is milliseconds, and `0`
//! here; the figure with `s = Δ` is reported too). Which member issues which try does not
//! matter to this bound: every prompt costs a touch in the same seconds.
//!
//! A **coalition** names a colluder's witness, published whenever it likes, so the `c'`
//! prompts of an identity-window it issues need a touch only before their deadline plus a
//! round, anywhere in the window: only the honest members' prompts bind the person,
//! `n ≤ B·(J + r) / ((m − c')·touch)`, and `c' = m` needs no person at all. With rotating
//! issuers `c'` is at most the coalition's size (and one member's try per identity-window on
//! average `c·tries/n`).

use serde::Serialize;

use super::beats::Beats;
use super::touch_mc::{Member, TouchMonteCarlo, touch_monte_carlo_with};
use super::{CeremonyInputs, floor};

/// The bound with one malicious member, and with coalitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberBound {
    /// Identities one person keeps active per window at most when one member answers
    /// every cognitive step of its sybils and issues any of their prompts (clocks agreeing).
    pub identities_per_person: u64,
    /// Not rounded.
    pub capacity: f64,
    /// Seconds in which the touches can fall: `B·(J + r) + Δ`.
    pub touch_span_s: f64,
    /// The relay round `Δ`, seconds.
    pub relay_round_s: f64,
    /// The same if the witnessing member's clock runs a whole relay round ahead.
    pub identities_per_person_clocks_a_round_apart: u64,
    /// Colluding members issuing `c'` of each identity-window's prompts: identities per
    /// person, `None` when no prompt is left to an honest member (unbounded).
    pub with_colluders: Vec<Colluders>,
    /// The touch Monte Carlo with the member issuing one try of each identity-window, at the
    /// try that serves the attacker best (its keys ground for it): at most the formula.
    pub monte_carlo: Option<TouchMonteCarlo>,
    /// That try (`None`: a uniform one per identity-window served it best).
    pub monte_carlo_member_try: Option<u32>,
    /// The Monte Carlo with the member issuing a uniformly drawn try of each identity-window:
    /// what a committee rotating its issuers gives when the keys were not ground for a try
    /// (`hco bench attack --one-person --malicious-member` plays this case).
    pub monte_carlo_uniform_try: Option<TouchMonteCarlo>,
    /// What the figure assumes.
    pub note: String,
}

/// The bound when a coalition issues `prompts_issued` of each identity-window's prompts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Colluders {
    /// `c'`.
    pub prompts_issued: u32,
    /// Identities per person; `None`: unbounded.
    pub identities_per_person: Option<u64>,
}

/// The bound of `inputs` against one malicious member (and coalitions) when a model answers
/// every cognitive step and a touch takes `touch_s`; `None` unless the slot is global (a
/// staggered slot's bound is window-based already, and its prompts carry no witness).
pub fn one_member(inputs: &CeremonyInputs, beats: &Beats, touch_s: f64) -> Option<MemberBound> {
    if !beats.global {
        return None;
    }
    let m = beats.touches();
    let per_identity = f64::from(m) * touch_s;
    if per_identity <= 0.0 {
        return None;
    }
    let honest_span = beats.span_s(inputs);
    let round = inputs.relay_round_ms as f64 / 1000.0;
    let span = honest_span + round;
    let capacity = span / per_identity;
    let figure = floor(capacity);
    let with_colluders = (1..=m)
        .map(|c| Colluders {
            prompts_issued: c,
            identities_per_person: (c < m)
                .then(|| floor(honest_span / (f64::from(m - c) * touch_s))),
        })
        .collect();
    // The member's try matters only where it serves a prompt: those tries, and a uniform one.
    let runs: Vec<(Option<u32>, TouchMonteCarlo)> = std::iter::once(None)
        .chain(beats.tries.iter().map(|(j, _)| Some(*j)))
        .filter_map(|try_index| {
            let member = Member {
                round_s: round,
                try_index,
            };
            touch_monte_carlo_with(inputs, beats, touch_s, capacity, Some(member))
                .map(|mc| (try_index, mc))
        })
        .collect();
    let monte_carlo_uniform_try = runs
        .iter()
        .find(|(try_index, _)| try_index.is_none())
        .map(|(_, mc)| mc.clone());
    let best = runs
        .into_iter()
        .max_by_key(|(_, mc)| mc.identities_per_person);
    let (monte_carlo_member_try, monte_carlo) = match best {
        Some((try_index, mc)) => (try_index, Some(mc)),
        None => (None, None),
    };
    Some(MemberBound {
        identities_per_person: figure,
        capacity,
        touch_span_s: span,
        relay_round_s: round,
        identities_per_person_clocks_a_round_apart: floor((span + round) / per_identity),
        with_colluders,
        monte_carlo,
        monte_carlo_member_try,
        monte_carlo_uniform_try,
        note: format!(
            "one member answering every cognitive step of its sybils and issuing any of their \
             prompts: each prompt carries another member's witness of its beat and reaches the \
             others by its deadline plus a relay round, so every touch still falls in the beats' \
             {honest_span} s plus one round of {round} s: (B·(J + r) + Δ)/(m·touch) = {span} / \
             ({m}·{touch_s}) = {figure}; assumes the witnessing member is honest and members' \
             clocks agree to well under a round (a whole round apart: {}); colluders name each \
             other's witnesses, so their prompts cost no touch on a beat",
            floor((span + round) / per_identity)
        ),
    })
}
