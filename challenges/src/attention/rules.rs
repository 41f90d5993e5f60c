//! The client's event list and the rules it is checked by, in order; the first rule broken
//! is the rejection.
//!
//! 1. The answer is at most [`MAX_ANSWER`] bytes of JSON: an array of at most [`MAX_EVENTS`]
//!    objects `{"target": i, "t_ms": n, "x": n, "y": n}` or `{"distractor": k, …}` (exactly
//!    one of the two indices, in range; `t_ms` an integer, `x`, `y` finite numbers; no other
//!    fields). Otherwise `invalid_answer_format` (`missing_answer` when blank).
//! 2. No distractor was clicked: `distractor_clicked`.
//! 3. Events are in time order (`t_ms` never decreases) and name targets in strictly increasing
//!    order, so each target is reported once: `wrong_target_order`.
//! 4. Every target has its event: `target_missed`.
//! 5. For each target, the reaction time `t_ms − appearance` is at least
//!    [`MIN_REACTION_MS`] (a person cannot respond sooner; earlier or negative means a click
//!    timed from the schedule): `reaction_too_fast`; and at most [`MAX_REACTION_MS`] (the
//!    target has gone): `reaction_too_slow`.
//! 6. Each click lies within [`TOLERANCE`] of its target's centre: `wrong_target_position`.
//! 7. With three targets or more, the timing is not machine-regular: reaction times spread
//!    over at least [`MIN_SPREAD_MS`] (largest minus smallest), they do not step by a constant
//!    amount (with four or more targets), and the intervals between clicks are not all equal:
//!    otherwise `timing_too_regular`.

use serde::Deserialize;

use super::schedule::{Schedule, TOLERANCE, VISIBLE_MS};
use crate::Reject;

/// Largest answer, in bytes.
pub const MAX_ANSWER: usize = 4096;
/// Most events in an answer.
pub const MAX_EVENTS: usize = 64;
/// Fastest plausible human reaction to a target's appearance.
pub const MIN_REACTION_MS: i64 = 150;
/// Slowest accepted reaction: the target has disappeared by then.
pub const MAX_REACTION_MS: i64 = VISIBLE_MS as i64;
/// Smallest accepted spread of reaction times across targets.
pub const MIN_SPREAD_MS: i64 = 25;

/// One click as the client reports it.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// The target this click answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<u32>,
    /// The distractor that was clicked (an honest client reports these too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distractor: Option<u32>,
    /// Milliseconds after the schedule started.
    pub t_ms: i64,
    /// Click position, arena units.
    pub x: f64,
    /// Click position, arena units.
    pub y: f64,
}

fn format(why: &'static str) -> Reject {
    Reject::InvalidAnswerFormat(why)
}

/// Parses and bounds-checks the event list (rule 1).
pub fn parse(answer: &[u8], schedule: &Schedule) -> Result<Vec<Event>, Reject> {
    if answer.len() > MAX_ANSWER {
        return Err(format("the event list is too long"));
    }
    if answer.iter().all(u8::is_ascii_whitespace) {
        return Err(Reject::MissingAnswer);
    }
    let events: Vec<Event> = serde_json::from_slice(answer)
        .map_err(|_| format("a JSON array of {target|distractor, t_ms, x, y} events"))?;
    if events.len() > MAX_EVENTS {
        return Err(format("too many events"));
    }
    for e in &events {
        let in_range = match (e.target, e.distractor) {
            (Some(i), None) => (i as usize) < schedule.targets.len(),
            (None, Some(k)) => (k as usize) < schedule.distractors.len(),
            _ => return Err(format("each event names one target or one distractor")),
        };
        if !in_range {
            return Err(format("an event names an object not in the schedule"));
        }
        if !e.x.is_finite() || !e.y.is_finite() || e.t_ms.unsigned_abs() > 3_600_000 {
            return Err(format(
                "event times and positions must be finite and plausible",
            ));
        }
    }
    Ok(events)
}

/// Checks rules 2–7 on parsed events.
pub fn check(events: &[Event], schedule: &Schedule) -> Result<(), Reject> {
    if let Some(k) = events.iter().find_map(|e| e.distractor) {
        return Err(Reject::DistractorClicked { distractor: k });
    }
    let mut last: Option<(u32, i64)> = None;
    for (n, e) in events.iter().enumerate() {
        let target = e.target.unwrap_or(u32::MAX);
        if let Some((prev_target, prev_t)) = last
            && (target <= prev_target || e.t_ms < prev_t)
        {
            return Err(Reject::WrongTargetOrder { event: n as u32 });
        }
        last = Some((target, e.t_ms));
    }
    if let Some(missing) = (0..schedule.targets.len()).find(|&i| {
        !events
            .iter()
            .any(|e| e.target.is_some_and(|t| t as usize == i))
    }) {
        return Err(Reject::TargetMissed {
            target: missing as u32,
        });
    }
    // Now there is exactly one event per target, in target order.
    let mut reactions = Vec::with_capacity(events.len());
    for (i, (e, spot)) in events.iter().zip(&schedule.targets).enumerate() {
        let target = i as u32;
        let reaction_ms = e.t_ms - i64::from(spot.t_ms);
        if reaction_ms < MIN_REACTION_MS {
            return Err(Reject::ReactionTooFast {
                target,
                reaction_ms,
            });
        }
        if reaction_ms > MAX_REACTION_MS {
            return Err(Reject::ReactionTooSlow {
                target,
                reaction_ms,
            });
        }
        let (dx, dy) = (e.x - f64::from(spot.x), e.y - f64::from(spot.y));
        let distance = (dx * dx + dy * dy).sqrt();
        if distance > f64::from(TOLERANCE) {
            return Err(Reject::WrongTargetPosition {
                target,
                distance: distance.min(f64::from(u32::MAX)) as u32,
                tolerance: TOLERANCE,
            });
        }
        reactions.push(reaction_ms);
    }
    regular(&reactions, events)
}

/// Rule 7.
fn regular(reactions: &[i64], events: &[Event]) -> Result<(), Reject> {
    if reactions.len() < 3 {
        return Ok(());
    }
    let spread_ms = reactions.iter().max().unwrap_or(&0) - reactions.iter().min().unwrap_or(&0);
    let all_equal = |v: &[i64]| v.windows(2).all(|w| w[0] == w[1]);
    let steps: Vec<i64> = reactions.windows(2).map(|w| w[1] - w[0]).collect();
    let intervals: Vec<i64> = events.windows(2).map(|w| w[1].t_ms - w[0].t_ms).collect();
    let stepping = steps.len() >= 3 && all_equal(&steps);
    let metronome = intervals.len() >= 2 && all_equal(&intervals);
    if spread_ms < MIN_SPREAD_MS || stepping || metronome {
        return Err(Reject::TimingTooRegular { spread_ms });
    }
    Ok(())
}
