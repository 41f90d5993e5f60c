//! `attention`: letters flash on a 3×3 grid, seven at a time, in a stream the server plays in
//! real time; each time the cue letter (say `K`) is among them, the person clicks it before the
//! letters vanish, and leaves every other flash alone.
//!
//! Nothing the client receives as data says where or when the cue is. The prompt holds only
//! the cue and the layout: `{"cue":"K","frame":360,"grid":3,"letters":7,"events":8,
//! "visible_ms":1700,"tolerance":58,"stream":"/v1/attention/streams","plan":"<commitment>"}`. The node's stream
//! endpoint (identity-authenticated, once per challenge) sends each event as a PNG frame at its
//! seeded time and stamps the release on its own clock; it stamps each click on receipt, with the
//! click connection's RTT; at the end it seals its log with a MAC keyed from the challenge seed
//! (see `record.rs`). The answer is that sealed log; [`Family::verify`] checks the MAC and the
//! rules in `rules.rs` against the plan re-derived from the key (`plan.rs`), so verification
//! stays stateless and an auditor re-verifies from the revealed seed.
//!
//! What tells the cue from the other letters is only visual: each letter is turned, sheared,
//! scaled and warped, bitten, and drawn among fragments of other letters in the same ink
//! (`render.rs`); most of its companions are letters that share its strokes (`K` with `X`, `R`,
//! `H`, `N`, `Y`, `A`). A person reads a large capital at a glance; a script must read it from
//! the pixels within the reaction window, and its errors compound: it must be right on every one
//! of the events (7 at the default difficulty, 4 or 5 of them showing the cue), which
//! includes clicking nothing when the cue is absent. A stream of 7 plays about 14 s.
//!
//! Difficulty (1..=5, default 2): `5 + d` events. The key is `[2, d, plan seed (32 bytes)]`;
//! frames are rendered when streamed, so generation is a few hashes.
//!
//! What it resists: readers built by hand (OCR, shape matching against our own renderer) are
//! rarely right on every event of a challenge (0 of 600 live tries each). It does not resist a
//! trained one: a small per-cell letter classifier trained for 14 CPU-minutes on our own
//! generator passed 348 of 600 live first tries (58 %, Wilson 54–62 %; `docs/benchmarks.md`,
//! Trained attacker), and a multimodal model that reads letters would too, within the timing
//! rules. No guarantee of the network rests on this family (production relies on presence).

mod plan;
mod record;
pub mod render;
mod rules;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use plan::{
    CELL, CUES, Event, FRAME, GRID, Glyph, LETTERS, Plan, TOLERANCE, VISIBLE_MS, event_count,
    target_range, typical_duration_ms,
};
pub use record::{Click, Log, MAX_CLICKS, MAX_LOG, mac_key};
pub use rules::{MAX_REACTION_MS, MIN_REACTION_MS, RTT_CAP_MS};

use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed};

/// Allowed difficulties.
pub const LEVELS: std::ops::RangeInclusive<u32> = 1..=5;
/// The path where streams are opened.
pub const STREAM_PATH: &str = "/v1/attention/streams";
/// The family's name.
pub const NAME: &str = "attention";

/// The attention family.
#[derive(Debug, Default, Clone, Copy)]
pub struct Attention;

/// The prompt payload.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AttentionData {
    /// The letter to click.
    pub cue: String,
    /// Side of a frame, pixels.
    pub frame: u32,
    /// Cells per side.
    pub grid: u32,
    /// Letters per event.
    pub letters: u32,
    /// Events in the stream.
    pub events: u32,
    /// How long each event's letters stay.
    pub visible_ms: u32,
    /// Largest distance from the cue's centre to a click.
    pub tolerance: u32,
    /// Where to open the stream.
    pub stream: String,
    /// A commitment to the plan (a one-way hash of its seed): the signed prompt digest binds
    /// the plan, and an auditor checks it once the seed is revealed.
    pub plan: String,
}

/// What the stream endpoint needs: the plan, the MAC key, and the frame schedule.
#[derive(Debug, Clone)]
pub struct Live {
    /// The plan.
    pub plan: Plan,
    /// The key the log is sealed with.
    pub mac_key: [u8; 32],
    seed: Seed,
}

/// One frame of the stream: when to send it and which event it shows (`None`: clutter alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSlot {
    /// Send time, milliseconds after the stream starts.
    pub at_ms: u32,
    /// The event it releases.
    pub event: Option<usize>,
}

impl Live {
    /// The stream of an attention key; `None` for anything else.
    pub fn from_key(key: &AnswerKey) -> Option<Self> {
        let (&[version, difficulty], rest) = key.0.split_first_chunk::<2>()?;
        let seed: [u8; 32] = rest.try_into().ok()?;
        if version != 2 || !LEVELS.contains(&u32::from(difficulty)) {
            return None;
        }
        let seed = Seed(seed);
        Some(Self {
            plan: Plan::generate(&seed, event_count(u32::from(difficulty))),
            mac_key: mac_key(&seed.0),
            seed,
        })
    }

    /// The frames in sending order: a blank frame at 0, then each event and, `VISIBLE_MS`
    /// later, a blank frame that takes its letters away.
    pub fn frames(&self) -> Vec<FrameSlot> {
        let mut out = vec![FrameSlot {
            at_ms: 0,
            event: None,
        }];
        for (k, e) in self.plan.events.iter().enumerate() {
            out.push(FrameSlot {
                at_ms: e.at_ms,
                event: Some(k),
            });
            out.push(FrameSlot {
                at_ms: e.at_ms + VISIBLE_MS,
                event: None,
            });
        }
        out
    }

    /// Frame `index` of [`Live::frames`] as PNG bytes.
    pub fn render(&self, index: usize) -> Vec<u8> {
        let slot = self.frames().get(index).copied();
        let event = slot
            .and_then(|s| s.event)
            .and_then(|k| self.plan.events.get(k));
        let blank = self.seed.derive(&format!("blank {index}"));
        render::png(&render::frame(event, &blank, self.plan.cue))
    }
}

impl Family for Attention {
    fn name(&self) -> &'static str {
        NAME
    }

    fn class(&self) -> Class {
        Class::Human
    }

    /// The stream itself lasts longer; a person cannot answer before it ends.
    fn min_human_solve_ms(&self) -> u64 {
        4000
    }

    fn is_visual(&self) -> bool {
        true
    }

    fn max_answer_len(&self) -> usize {
        MAX_LOG
    }

    fn default_params(&self) -> FamilyParams {
        FamilyParams { difficulty: 2 }
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        crate::check_difficulty(params, LEVELS, "level")
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let plan_seed = seed.derive("attention v2");
        let d = params.difficulty.clamp(*LEVELS.start(), *LEVELS.end());
        let events = event_count(d);
        let mut s = plan_seed.derive("plan").stream();
        // The cue is the plan's first draw (see `Plan::generate`).
        let cue = CUES[s.below(CUES.len() as u64) as usize].0;
        let cue = char::from(cue);
        let seconds = typical_duration_ms(events).div_ceil(1000);
        let text = format!(
            "Letters flash on the grid, {LETTERS} at a time, {events} times over about {seconds} \
             seconds. Each time the letter {cue} is among them, click or tap that {cue} before \
             the letters vanish (or pick its cell with the arrow keys and press Enter). When \
             there is no {cue}, do nothing."
        );
        let data = AttentionData {
            cue: cue.to_string(),
            frame: FRAME,
            grid: GRID,
            letters: LETTERS as u32,
            events: events as u32,
            visible_ms: VISIBLE_MS,
            tolerance: TOLERANCE,
            stream: STREAM_PATH.to_owned(),
            plan: blake3::derive_key("hco attention plan commitment v2", &plan_seed.0)
                .iter()
                .take(16)
                .map(|b| format!("{b:02x}"))
                .collect(),
        };
        let mut key = vec![2, d as u8];
        key.extend_from_slice(&plan_seed.0);
        Generated {
            prompt: Prompt {
                family: self.name().to_owned(),
                text,
                data: serde_json::to_vec(&data).unwrap_or_default(),
            },
            key: AnswerKey(key),
        }
    }

    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
        let live = Live::from_key(key).ok_or(Reject::InvalidAnswerFormat("corrupt key"))?;
        let log = Log::open(answer, &live.mac_key)?;
        rules::check(&log, &live.plan)
    }

    /// The prompt alone says nothing about where or when the cue appears, and only the node
    /// can seal a log: the baseline sends an empty log it cannot seal (refused as
    /// `log_mac_mismatch`). The attackers in the node play the stream itself.
    fn solve(&self, _prompt: &Prompt) -> Option<Vec<u8>> {
        let log = Log {
            releases: Vec::new(),
            clicks: Vec::new(),
            end: 0,
            mac: "00".repeat(32),
        };
        Some(log.to_answer())
    }

    /// The sealed log of a person who clicked each cue 480–850 ms after it appeared, up to
    /// 20 pixels off its centre, on a connection with a 3 ms RTT.
    fn reference_answer(&self, key: &AnswerKey) -> Option<Vec<u8>> {
        let live = Live::from_key(key)?;
        let mut noise = live.seed.derive("reference answer").stream();
        // Varied reactions (a fixed spread, so the draw never looks machine-regular).
        const REACTIONS: [u32; 8] = [620, 480, 790, 555, 700, 515, 830, 660];
        let clicks = live
            .plan
            .events
            .iter()
            .filter(|e| e.target.is_some())
            .enumerate()
            .filter_map(|(k, e)| {
                let g = e.glyphs[e.target?];
                Some(Click {
                    at: e.at_ms + REACTIONS[k % REACTIONS.len()] + noise.below(20) as u32,
                    rtt: 3,
                    x: (i64::from(g.x) + noise.range(-14, 14)) as u32,
                    y: (i64::from(g.y) + noise.range(-14, 14)) as u32,
                })
            })
            .collect();
        let log = Log {
            releases: live.plan.events.iter().map(|e| e.at_ms).collect(),
            clicks,
            end: live.plan.end_ms,
            mac: String::new(),
        };
        Some(log.seal(&live.mac_key).to_answer())
    }
}
