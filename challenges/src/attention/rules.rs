//! The rules a sealed log is checked by against the plan, in order; the first rule broken is
//! the rejection. Every time is the server's (see `record.rs`).
//!
//! 1. The log parses, within its bounds, and its MAC verifies (`missing_answer`,
//!    `invalid_answer_format`, `log_mac_mismatch`). It has one release per event, none before
//!    its planned time, and ends no sooner than the plan (`invalid_answer_format`).
//! 2. Each click belongs to the last event released before it; a click before the first
//!    release is `reaction_too_fast`. Then, event by event in release order:
//!    - two clicks in one event: `wrong_target_order` (`event` is the event's index);
//!    - a click in an event that does not show the cue: `distractor_clicked` (its index);
//!    - no click in an event that shows it: `target_missed`;
//!    - the reaction, receipt − release − the connection's RTT (at most [`RTT_CAP_MS`]), under
//!      [`MIN_REACTION_MS`]: `reaction_too_fast`; over [`MAX_REACTION_MS`] (the letters had
//!      gone): `reaction_too_slow`;
//!    - the click further than `TOLERANCE` from the cue's centre: `wrong_target_position`.
//! 3. With three targets or more, the reactions are not machine-regular: spread over at least
//!    [`MIN_SPREAD_MS`] and not stepping by a constant amount: `timing_too_regular`.

use super::plan::{Plan, TOLERANCE, VISIBLE_MS};
use super::record::Log;
use crate::Reject;

/// Fastest plausible human reaction (seeing the cue among the letters and clicking it).
pub const MIN_REACTION_MS: i64 = 200;
/// Slowest accepted reaction: the letters have gone.
pub const MAX_REACTION_MS: i64 = VISIBLE_MS as i64;
/// Most RTT subtracted from a reaction (a client that slows its own connection gains no more).
pub const RTT_CAP_MS: u32 = 250;
/// Smallest accepted spread of reaction times across targets.
pub const MIN_SPREAD_MS: i64 = 25;

fn format(why: &'static str) -> Reject {
    Reject::InvalidAnswerFormat(why)
}

/// Checks rules 1 (after the MAC) to 3.
pub fn check(log: &Log, plan: &Plan) -> Result<(), Reject> {
    if log.releases.len() != plan.events.len() {
        return Err(format("the log does not cover every event"));
    }
    if log
        .releases
        .iter()
        .zip(&plan.events)
        .any(|(r, e)| *r < e.at_ms)
        || log.releases.windows(2).any(|w| w[1] < w[0])
        || log.end < plan.end_ms
        || log.clicks.windows(2).any(|w| w[1].at < w[0].at)
    {
        return Err(format("the log does not follow the plan"));
    }
    if let Some(first) = log.clicks.first()
        && log.releases.first().is_some_and(|r| first.at < *r)
    {
        return Err(Reject::ReactionTooFast {
            target: 0,
            reaction_ms: i64::from(first.at) - i64::from(log.releases[0]),
        });
    }
    let mut reactions = Vec::with_capacity(plan.events.len());
    for (k, (event, &release)) in plan.events.iter().zip(&log.releases).enumerate() {
        let until = log.releases.get(k + 1).copied().unwrap_or(u32::MAX);
        let mut clicks = log
            .clicks
            .iter()
            .filter(|c| c.at >= release && c.at < until);
        let (first, second) = (clicks.next(), clicks.next());
        let index = k as u32;
        if second.is_some() {
            return Err(Reject::WrongTargetOrder { event: index });
        }
        let (target, click) = match (event.target, first) {
            (None, None) => continue,
            (None, Some(_)) => return Err(Reject::DistractorClicked { distractor: index }),
            (Some(_), None) => return Err(Reject::TargetMissed { target: index }),
            (Some(t), Some(c)) => (event.glyphs[t], c),
        };
        let reaction_ms =
            i64::from(click.at) - i64::from(release) - i64::from(click.rtt.min(RTT_CAP_MS));
        if reaction_ms < MIN_REACTION_MS {
            return Err(Reject::ReactionTooFast {
                target: index,
                reaction_ms,
            });
        }
        if reaction_ms > MAX_REACTION_MS {
            return Err(Reject::ReactionTooSlow {
                target: index,
                reaction_ms,
            });
        }
        let (dx, dy) = (
            f64::from(click.x) - f64::from(target.x),
            f64::from(click.y) - f64::from(target.y),
        );
        let distance = (dx * dx + dy * dy).sqrt();
        if distance > f64::from(TOLERANCE) {
            return Err(Reject::WrongTargetPosition {
                target: index,
                distance: distance as u32,
                tolerance: TOLERANCE,
            });
        }
        reactions.push(reaction_ms);
    }
    regular(&reactions)
}

/// Rule 3.
fn regular(reactions: &[i64]) -> Result<(), Reject> {
    if reactions.len() < 3 {
        return Ok(());
    }
    let spread_ms = reactions.iter().max().unwrap_or(&0) - reactions.iter().min().unwrap_or(&0);
    let steps: Vec<i64> = reactions.windows(2).map(|w| w[1] - w[0]).collect();
    let stepping = steps.len() >= 3 && steps.windows(2).all(|w| w[0] == w[1]);
    if spread_ms < MIN_SPREAD_MS || stepping {
        return Err(Reject::TimingTooRegular { spread_ms });
    }
    Ok(())
}
