//! The seeded schedule of targets and distractors, and its compact binary form (the answer
//! key).

use serde::{Deserialize, Serialize};

use crate::SeedStream;

/// Side of the square arena, in arena units; the page scales it to the screen.
pub const ARENA: u32 = 1000;
/// The arena is a `GRID`×`GRID` grid of cells; each object sits near a cell centre.
pub const GRID: u32 = 5;
/// Drawn radius of a target.
pub const RADIUS: u32 = 60;
/// Largest accepted distance from a target's centre to the click.
pub const TOLERANCE: u32 = 90;
/// How long each object stays on screen.
pub const VISIBLE_MS: u32 = 1500;
/// Largest offset of an object from its cell centre (keeps a cell-centre click within
/// [`TOLERANCE`], for keyboard users who pick cells).
const JITTER: i64 = 30;

/// One object on the screen: when it appears (ms after the start) and where its centre is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spot {
    /// Appearance time, milliseconds after the schedule starts.
    pub t_ms: u32,
    /// Centre, arena units from the left.
    pub x: u32,
    /// Centre, arena units from the top.
    pub y: u32,
}

/// Targets to click in order, and distractors to leave alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// In order of appearance.
    pub targets: Vec<Spot>,
    /// In order of appearance.
    pub distractors: Vec<Spot>,
}

fn cell_of(spot: &Spot) -> u32 {
    let cell = ARENA / GRID;
    (spot.y / cell) * GRID + spot.x / cell
}

fn place(s: &mut SeedStream, t_ms: u32, avoid: &[u32]) -> Spot {
    let cell = ARENA / GRID;
    let free: Vec<u32> = (0..GRID * GRID).filter(|c| !avoid.contains(c)).collect();
    let c = if free.is_empty() {
        s.below(u64::from(GRID * GRID)) as u32
    } else {
        free[s.below(free.len() as u64) as usize]
    };
    let centre = |i: u32| i64::from(i * cell + cell / 2);
    Spot {
        t_ms,
        x: (centre(c % GRID) + s.range(-JITTER, JITTER)) as u32,
        y: (centre(c / GRID) + s.range(-JITTER, JITTER)) as u32,
    }
}

fn overlaps(a: u32, b: u32) -> bool {
    a.abs_diff(b) < VISIBLE_MS
}

impl Schedule {
    /// `targets` targets 1.0–2.0 s apart after a 1.0–1.5 s lead-in, and `distractors`
    /// distractors among them, never in the cell of an object on screen at the same time.
    pub fn generate(s: &mut SeedStream, targets: usize, distractors: usize) -> Self {
        let mut t = s.range(1000, 1500) as u32;
        let mut placed: Vec<Spot> = Vec::with_capacity(targets);
        for _ in 0..targets {
            let avoid: Vec<u32> = placed
                .iter()
                .filter(|p| overlaps(p.t_ms, t))
                .map(cell_of)
                .collect();
            placed.push(place(s, t, &avoid));
            t += s.range(1000, 2000) as u32;
        }
        let (first, last) = (
            placed.first().map_or(1000, |p| p.t_ms),
            placed.last().map_or(1000, |p| p.t_ms),
        );
        let mut extra: Vec<Spot> = Vec::with_capacity(distractors);
        for _ in 0..distractors {
            let t = s.range(i64::from(first) + 300, i64::from(last) + 300) as u32;
            let avoid: Vec<u32> = placed
                .iter()
                .chain(&extra)
                .filter(|p| overlaps(p.t_ms, t))
                .map(cell_of)
                .collect();
            extra.push(place(s, t, &avoid));
        }
        extra.sort_by_key(|d| d.t_ms);
        Schedule {
            targets: placed,
            distractors: extra,
        }
    }

    /// The answer key: a version byte, the two counts, then each spot as `t_ms` (u32), `x` and
    /// `y` (u16), little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![1, self.targets.len() as u8, self.distractors.len() as u8];
        for spot in self.targets.iter().chain(&self.distractors) {
            out.extend_from_slice(&spot.t_ms.to_le_bytes());
            out.extend_from_slice(&(spot.x as u16).to_le_bytes());
            out.extend_from_slice(&(spot.y as u16).to_le_bytes());
        }
        out
    }

    /// Reads a key written by [`Schedule::encode`]; `None` for anything else.
    pub fn decode(key: &[u8]) -> Option<Self> {
        let (&[version, targets, distractors], rest) = key.split_first_chunk::<3>()?;
        let count = usize::from(targets) + usize::from(distractors);
        if version != 1 || rest.len() != count * 8 {
            return None;
        }
        let mut spots = rest.chunks_exact(8).map(|c| Spot {
            t_ms: u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
            x: u32::from(u16::from_le_bytes([c[4], c[5]])),
            y: u32::from(u16::from_le_bytes([c[6], c[7]])),
        });
        let targets = spots.by_ref().take(usize::from(targets)).collect();
        Some(Schedule {
            targets,
            distractors: spots.collect(),
        })
    }
}
