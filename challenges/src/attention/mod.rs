//! `attention`: a timed sequence of targets on a grid. The person clicks (or taps, or selects
//! with the keyboard) each target as it appears, in order, and leaves the distractors alone;
//! the page reports the clicks and the verifier checks them against the seeded schedule.
//!
//! The prompt data is the whole schedule, since the page must draw it:
//! `{"arena":1000,"grid":5,"radius":60,"tolerance":90,"visible_ms":1500,
//! "targets":[{"t_ms":1234,"x":310,"y":505},…],"distractors":[…]}` — times in milliseconds
//! after the page starts the sequence, positions in arena units (a 1000×1000 square the page
//! scales to the screen). Targets come 1.0–2.0 s apart after a 1.0–1.5 s lead-in and stay
//! `visible_ms`; each sits within 30 units of the centre of a cell of the 5×5 grid, so a
//! keyboard user who selects the cell and reports its centre is within `tolerance`.
//!
//! The answer is a JSON list of [`Event`]s: `[{"target":0,"t_ms":1630,"x":305,"y":512},…]`,
//! with `{"distractor":k,…}` for a click on a distractor. The rules, in the order applied, and
//! their codes are spelled out in `rules.rs`: format, no distractor clicked
//! (`distractor_clicked`), order (`wrong_target_order`), completeness (`target_missed`),
//! reaction time 150–1500 ms after each target appears (`reaction_too_fast`,
//! `reaction_too_slow`), position within the tolerance (`wrong_target_position`), and timing
//! that is not machine-regular (`timing_too_regular`).
//!
//! Difficulty (1..=5, default 2): `3 + d` targets and `d` distractors.
//!
//! Honesty about ε_auto: the schedule is in the prompt and the client's clock is its own, so
//! these rules catch only scripts that answer too fast or too regularly. The baseline
//! (`Family::solve`) is the simple bot — it clicks every target centre exactly 250 ms after
//! it appears — and the regularity rule rejects it. A bot that adds human-like jitter to its
//! reaction times and positions passes (the tests show one); what this family measures is
//! real-time presence for the length of the sequence, not the absence of a script. It is a
//! visual and motor task: an identity that opts out of visual challenges is not given it.

mod rules;
mod schedule;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use rules::{Event, MAX_REACTION_MS, MIN_REACTION_MS, MIN_SPREAD_MS};
pub use schedule::{ARENA, GRID, RADIUS, Schedule, Spot, TOLERANCE, VISIBLE_MS};

use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed};

/// Allowed difficulties.
pub const LEVELS: std::ops::RangeInclusive<u32> = 1..=5;
/// The simple bot's fixed reaction time.
pub const BOT_REACTION_MS: u32 = 250;

/// The attention family.
#[derive(Debug, Default, Clone, Copy)]
pub struct Attention;

/// The prompt payload.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct AttentionData {
    arena: u32,
    grid: u32,
    radius: u32,
    tolerance: u32,
    visible_ms: u32,
    targets: Vec<Spot>,
    distractors: Vec<Spot>,
}

/// Clicks for every target at the given reaction times and offsets from the centres.
fn clicks(schedule: &Schedule, mut reaction: impl FnMut(usize) -> (u32, i64, i64)) -> Vec<Event> {
    schedule
        .targets
        .iter()
        .enumerate()
        .map(|(i, spot)| {
            let (r, dx, dy) = reaction(i);
            Event {
                target: Some(i as u32),
                distractor: None,
                t_ms: i64::from(spot.t_ms + r),
                x: (i64::from(spot.x) + dx) as f64,
                y: (i64::from(spot.y) + dy) as f64,
            }
        })
        .collect()
}

impl Family for Attention {
    fn name(&self) -> &'static str {
        "attention"
    }

    fn class(&self) -> Class {
        Class::Human
    }

    /// A person needs about this long at least (watching the schedule play out).
    fn min_human_solve_ms(&self) -> u64 {
        4000
    }

    fn is_visual(&self) -> bool {
        true
    }

    fn max_answer_len(&self) -> usize {
        rules::MAX_ANSWER
    }

    fn default_params(&self) -> FamilyParams {
        FamilyParams { difficulty: 2 }
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        crate::check_difficulty(params, LEVELS, "level")
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let mut s = seed.derive("attention").stream();
        let d = params.difficulty.clamp(*LEVELS.start(), *LEVELS.end()) as usize;
        let schedule = Schedule::generate(&mut s, 3 + d, d);
        let seconds = schedule.targets.last().map_or(0, |t| t.t_ms + VISIBLE_MS) / 1000 + 1;
        let text = format!(
            "Watch the grid. {} green circles appear one at a time over about {seconds} seconds: \
             click or tap each one as soon as it appears, in order, or select its cell with the \
             arrow keys and press Enter. Leave the grey squares alone.",
            schedule.targets.len()
        );
        let data = AttentionData {
            arena: ARENA,
            grid: GRID,
            radius: RADIUS,
            tolerance: TOLERANCE,
            visible_ms: VISIBLE_MS,
            targets: schedule.targets.clone(),
            distractors: schedule.distractors.clone(),
        };
        Generated {
            prompt: Prompt {
                family: self.name().to_owned(),
                text,
                data: serde_json::to_vec(&data).unwrap_or_default(),
            },
            key: AnswerKey(schedule.encode()),
        }
    }

    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
        let schedule =
            Schedule::decode(&key.0).ok_or(Reject::InvalidAnswerFormat("corrupt key"))?;
        let events = rules::parse(answer, &schedule)?;
        rules::check(&events, &schedule)
    }

    /// The simple scripted bot: every target centre, exactly [`BOT_REACTION_MS`] after it
    /// appears. Rejected by the regularity rule.
    fn solve(&self, prompt: &Prompt) -> Option<Vec<u8>> {
        if prompt.data.len() > 64 * 1024 {
            return None;
        }
        let data: AttentionData = serde_json::from_slice(&prompt.data).ok()?;
        let schedule = Schedule {
            targets: data.targets,
            distractors: Vec::new(),
        };
        serde_json::to_vec(&clicks(&schedule, |_| (BOT_REACTION_MS, 0, 0))).ok()
    }

    /// A human-like answer derived from the key: reaction times of 300–650 ms and clicks up to
    /// 30 units off centre, drawn from a hash of the key.
    fn reference_answer(&self, key: &AnswerKey) -> Option<Vec<u8>> {
        let schedule = Schedule::decode(&key.0)?;
        let mut hasher = blake3::Hasher::new_derive_key("hco attention reference answer v1");
        hasher.update(&key.0);
        let mut noise = [0u8; 4 * 64];
        hasher.finalize_xof().fill(&mut noise);
        let mut events = clicks(&schedule, |i| {
            let b = &noise[(4 * i) % noise.len()..][..4];
            let r = 300 + u32::from(u16::from_le_bytes([b[0], b[1]])) % 351;
            (r, i64::from(b[2] % 61) - 30, i64::from(b[3] % 61) - 30)
        });
        // A random draw can, rarely, look regular: nudge one reaction until it does not.
        for nudge in [97, 41, 13] {
            if !matches!(
                rules::check(&events, &schedule),
                Err(Reject::TimingTooRegular { .. })
            ) {
                break;
            }
            if let Some(first) = events.first_mut() {
                first.t_ms += nudge;
            }
        }
        serde_json::to_vec(&events).ok()
    }
}
