//! The seeded plan of a challenge: the cue letter, and for each event its release time, the
//! cells its letters occupy, the letters, and which of them (if any) is the cue. Derived from
//! the answer key alone, so the stream endpoint and the verifier agree on it; never sent.

use crate::{Seed, SeedStream};

/// Side of a frame, in pixels (also the unit of click positions).
pub const FRAME: u32 = 360;
/// The frame is a `GRID`×`GRID` grid of cells; each letter sits near a cell centre.
pub const GRID: u32 = 3;
/// Side of a cell, in pixels.
pub const CELL: u32 = FRAME / GRID;
/// Letters shown at once in each event.
pub const LETTERS: usize = 7;
/// Largest offset of a letter's centre from its cell centre.
pub const JITTER: i64 = 8;
/// Largest accepted distance from the cue letter's centre to the click.
pub const TOLERANCE: u32 = 58;
/// How long the letters of an event stay on screen.
pub const VISIBLE_MS: u32 = 1700;
/// Time before the first event.
pub const LEAD_IN_MS: (u32, u32) = (1000, 1300);
/// Time from one event's release to the next.
pub const SPACING_MS: (u32, u32) = (1750, 1900);
/// Time after the last event's letters go before the stream ends.
pub const TAIL_MS: u32 = 300;

/// The letters a cue is drawn from, each with the letters most often shown beside it (shapes
/// that share its strokes, so a shape matcher has to tell them apart).
pub const CUES: &[(u8, &[u8; 6])] = &[
    (b'K', b"XRHNYA"),
    (b'E', b"FBPLHT"),
    (b'R', b"PBKAHD"),
    (b'G', b"COQDSU"),
    (b'P', b"RFBDEL"),
    (b'N', b"MHKVWZ"),
    (b'B', b"ERPDSH"),
    (b'D', b"OBPQGU"),
    (b'H', b"NKMEAU"),
    (b'F', b"EPTRLY"),
];

/// One letter of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Glyph {
    /// ASCII capital.
    pub letter: u8,
    /// Cell index, row-major.
    pub cell: u32,
    /// Centre, pixels.
    pub x: u32,
    /// Centre, pixels.
    pub y: u32,
}

/// One event: letters released together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Planned release, milliseconds after the stream starts.
    pub at_ms: u32,
    /// The letters, in cell order.
    pub glyphs: Vec<Glyph>,
    /// Index in `glyphs` of the cue letter, when the event shows it.
    pub target: Option<usize>,
    /// Seed of this event's rendering (distortion, clutter).
    pub render_seed: Seed,
}

/// A challenge's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The letter to click.
    pub cue: u8,
    /// The events, in release order.
    pub events: Vec<Event>,
    /// When the stream ends, milliseconds after it starts.
    pub end_ms: u32,
}

/// Events per challenge at `difficulty`.
pub fn event_count(difficulty: u32) -> usize {
    5 + difficulty as usize
}

/// Events that show the cue, at most: `⌈n/2⌉ + 1`; at least one less. More than half, because
/// a reader of pixels misses the cue more often than it sees one that is not there (frame-cv,
/// offline over 300 challenges: right on 32 % of cue events, 71 % of the others).
pub fn target_range(events: usize) -> std::ops::RangeInclusive<usize> {
    let most = (events.div_ceil(2) + 1).min(events);
    most.saturating_sub(1)..=most
}

/// About how long a stream of `events` events plays, in milliseconds (the means of its random
/// gaps).
pub fn typical_duration_ms(events: usize) -> u32 {
    let mean = |(lo, hi): (u32, u32)| (lo + hi) / 2;
    mean(LEAD_IN_MS) + events.saturating_sub(1) as u32 * mean(SPACING_MS) + VISIBLE_MS + TAIL_MS
}

fn between(s: &mut SeedStream, (lo, hi): (u32, u32)) -> u32 {
    s.range(i64::from(lo), i64::from(hi)) as u32
}

impl Plan {
    /// The plan of `seed` (the key's plan seed) with `events` events.
    pub fn generate(seed: &Seed, events: usize) -> Self {
        let mut s = seed.derive("plan").stream();
        let (cue, confusers) = CUES[s.below(CUES.len() as u64) as usize];
        // A little over half the events show the cue (`target_range`), at random.
        let range = target_range(events);
        let targets = range.start() + s.below((range.end() - range.start() + 1) as u64) as usize;
        let mut with_target: Vec<bool> = (0..events).map(|i| i < targets).collect();
        s.shuffle(&mut with_target);
        let mut t = between(&mut s, LEAD_IN_MS);
        let mut out = Vec::with_capacity(events);
        for (k, &has_target) in with_target.iter().enumerate() {
            let mut cells: Vec<u32> = (0..GRID * GRID).collect();
            s.shuffle(&mut cells);
            cells.truncate(LETTERS);
            cells.sort_unstable();
            let target = has_target.then(|| s.below(LETTERS as u64) as usize);
            let glyphs = cells
                .iter()
                .enumerate()
                .map(|(i, &cell)| {
                    let letter = if Some(i) == target {
                        cue
                    } else if s.chance(80) {
                        confusers[s.below(6) as usize]
                    } else {
                        loop {
                            let l = b'A' + s.below(26) as u8;
                            if l != cue {
                                break l;
                            }
                        }
                    };
                    let centre = |i: u32| i64::from(i * CELL + CELL / 2);
                    Glyph {
                        letter,
                        cell,
                        x: (centre(cell % GRID) + s.range(-JITTER, JITTER)) as u32,
                        y: (centre(cell / GRID) + s.range(-JITTER, JITTER)) as u32,
                    }
                })
                .collect();
            out.push(Event {
                at_ms: t,
                glyphs,
                target,
                render_seed: seed.derive(&format!("render {k}")),
            });
            t += between(&mut s, SPACING_MS);
        }
        let end_ms = out.last().map_or(0, |e| e.at_ms) + VISIBLE_MS + TAIL_MS;
        Plan {
            cue,
            events: out,
            end_ms,
        }
    }

    /// The events that show the cue.
    pub fn target_count(&self) -> usize {
        self.events.iter().filter(|e| e.target.is_some()).count()
    }
}
