//! The frame reader of the `frame-cv` attacker: template matching against the family's own
//! renderer. Every letter the cue is shown with is rasterised from the same font with the same
//! code (`hco_challenges::attention::render`), at a fan of turns, scales and shears; a frame is
//! thresholded, and in each cell of the grid every template is slid over the cell's centre
//! region and scored by how much of its ink lands on ink and how much of its surrounding
//! background lands on background (tolerant of a pixel of misalignment). The cell whose cue
//! score beats its best other letter by the widest margin is the cue, if the margin clears a
//! threshold; otherwise the frame is judged not to show it.

use std::sync::OnceLock;

use hco_challenges::attention::render::{GrayImage, Pose, rasters, stamp};
use hco_challenges::attention::{CELL, CUES, FRAME, GRID};

/// Ink threshold: the background is lighter than this, strokes darker.
const INK: u8 = 150;
/// Most ink and background points kept per template.
const POINTS: usize = 90;
/// The margin over the best other letter above which a cell is taken for the cue.
pub const MARGIN: f32 = 0.04;

/// A template: offsets from the letter's centre where it has ink, and where it has none.
struct Template {
    ink: Vec<(i32, i32)>,
    bg: Vec<(i32, i32)>,
}

fn thin<T: Copy>(v: Vec<T>) -> Vec<T> {
    let step = v.len().div_ceil(POINTS).max(1);
    v.into_iter().step_by(step).collect()
}

fn template(letter: u8, turn: f32, scale: f32, shear: f32) -> Template {
    let c = FRAME / 2;
    let mut img = GrayImage::new(FRAME, FRAME);
    let pose = Pose {
        x: c as f32,
        y: c as f32,
        turn,
        scale,
        shear,
        warp: 0.0,
        phase: 0.0,
        aspect: 1.0,
        weight: 0.0,
        cut: [0.0; 4],
    };
    stamp(
        &mut img,
        &rasters()[usize::from(letter - b'A')],
        &pose,
        255,
        |_, _| true,
    );
    let raw = img.as_raw();
    let at = |x: i32, y: i32| -> bool {
        (0..FRAME as i32).contains(&x)
            && (0..FRAME as i32).contains(&y)
            && raw[(y as u32 * FRAME + x as u32) as usize] > 127
    };
    let (mut ink, mut bg) = (Vec::new(), Vec::new());
    let reach = 48;
    for y in c as i32 - reach..c as i32 + reach {
        for x in c as i32 - reach..c as i32 + reach {
            if at(x, y) {
                ink.push((x - c as i32, y - c as i32));
            }
        }
    }
    let (x0, x1) = ink
        .iter()
        .fold((i32::MAX, i32::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (y0, y1) = ink
        .iter()
        .fold((i32::MAX, i32::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    for y in y0 - 3..=y1 + 3 {
        for x in x0 - 3..=x1 + 3 {
            let near =
                (-2..=2).any(|dy| (-2..=2).any(|dx| at(c as i32 + x + dx, c as i32 + y + dy)));
            if !near {
                bg.push((x, y));
            }
        }
    }
    Template {
        ink: thin(ink),
        bg: thin(bg),
    }
}

/// The letters the reader tells apart for `cue`: the cue and the letters shown beside it.
pub fn candidates(cue: u8) -> Vec<u8> {
    let mut out = vec![cue];
    if let Some((_, others)) = CUES.iter().find(|(c, _)| *c == cue) {
        for &l in others.iter() {
            if !out.contains(&l) {
                out.push(l);
            }
        }
    }
    out
}

/// Templates of every letter at every pose of the fan, built on first use.
fn templates() -> &'static Vec<Vec<Template>> {
    static T: OnceLock<Vec<Vec<Template>>> = OnceLock::new();
    T.get_or_init(|| {
        (b'A'..=b'Z')
            .map(|l| {
                let mut v = Vec::new();
                for turn in [-0.5f32, -0.3, -0.1, 0.1, 0.3, 0.5] {
                    for scale in [0.85f32, 1.0] {
                        for shear in [-0.2f32, 0.0, 0.2] {
                            v.push(template(l, turn, scale, shear));
                        }
                    }
                }
                v
            })
            .collect()
    })
}

/// A thresholded frame: ink, and ink dilated by one pixel.
struct Binary {
    ink: Vec<bool>,
    near: Vec<bool>,
}

impl Binary {
    fn of(img: &GrayImage) -> Self {
        let n = FRAME as usize;
        let ink: Vec<bool> = img.as_raw().iter().map(|&v| v < INK).collect();
        let mut near = ink.clone();
        for y in 0..n {
            for x in 0..n {
                if ink[y * n + x] {
                    for b in y.saturating_sub(1)..(y + 2).min(n) {
                        for a in x.saturating_sub(1)..(x + 2).min(n) {
                            near[b * n + a] = true;
                        }
                    }
                }
            }
        }
        Self { ink, near }
    }

    fn score(&self, t: &Template, cx: i32, cy: i32) -> f32 {
        let n = FRAME as i32;
        let idx = |(x, y): (i32, i32)| {
            let (x, y) = (x + cx, y + cy);
            ((0..n).contains(&x) && (0..n).contains(&y)).then(|| (y * n + x) as usize)
        };
        let hits = t
            .ink
            .iter()
            .filter(|&&p| idx(p).is_some_and(|i| self.near[i]))
            .count();
        let clear =
            t.bg.iter()
                .filter(|&&p| idx(p).is_some_and(|i| !self.ink[i]))
                .count();
        hits as f32 / t.ink.len().max(1) as f32 + clear as f32 / t.bg.len().max(1) as f32
    }

    /// The best score of `letter` around `(cx, cy)` and where it was found: every template on
    /// a coarse grid of places, then the best one refined pixel by pixel.
    fn best(&self, letter: u8, cx: i32, cy: i32) -> (f32, i32, i32) {
        let fan = &templates()[usize::from(letter - b'A')];
        let mut best = (f32::MIN, cx, cy, 0);
        for (k, t) in fan.iter().enumerate() {
            for dy in (-12..=12).step_by(6) {
                for dx in (-12..=12).step_by(6) {
                    let s = self.score(t, cx + dx, cy + dy);
                    if s > best.0 {
                        best = (s, cx + dx, cy + dy, k);
                    }
                }
            }
        }
        let (_, bx, by, k) = best;
        for dy in -3..=3 {
            for dx in -3..=3 {
                let s = self.score(&fan[k], bx + dx, by + dy);
                if s > best.0 {
                    best = (s, bx + dx, by + dy, k);
                }
            }
        }
        (best.0, best.1, best.2)
    }
}

/// What the reader makes of one cell.
#[derive(Debug, Clone, Copy)]
pub struct CellRead {
    /// Cue score minus the best other candidate's.
    pub margin: f32,
    /// Where the cue matched best.
    pub x: i32,
    /// Where the cue matched best.
    pub y: i32,
}

/// Reads every cell of a frame for `cue`.
pub fn read(img: &GrayImage, cue: u8) -> Vec<CellRead> {
    let b = Binary::of(img);
    let letters = candidates(cue);
    (0..GRID * GRID)
        .map(|cell| {
            let cx = (cell % GRID * CELL + CELL / 2) as i32;
            let cy = (cell / GRID * CELL + CELL / 2) as i32;
            let (cue_score, x, y) = b.best(cue, cx, cy);
            let other = letters[1..]
                .iter()
                .map(|&l| b.best(l, cx, cy).0)
                .fold(f32::MIN, f32::max);
            CellRead {
                margin: cue_score - other,
                x,
                y,
            }
        })
        .collect()
}

/// The click for a frame: where the cue is, or `None` when the reader judges it absent.
pub fn decide(img: &GrayImage, cue: u8, margin: f32) -> Option<(u32, u32)> {
    let reads = read(img, cue);
    let best = reads.iter().max_by(|a, b| a.margin.total_cmp(&b.margin))?;
    (best.margin > margin).then(|| {
        (
            best.x.clamp(0, FRAME as i32 - 1) as u32,
            best.y.clamp(0, FRAME as i32 - 1) as u32,
        )
    })
}

#[cfg(test)]
mod tests {
    use hco_challenges::attention::{Live, TOLERANCE, render};
    use hco_challenges::{Attention, Family, FamilyParams, Seed};

    use super::*;
    use crate::attack::stats::{Z95, wilson};

    /// One event: the truth (the cue's centre, if shown) and the reader's cells.
    type Read = (Option<(u32, u32)>, Vec<CellRead>);

    /// Per challenge, its events as read.
    fn reads(seeds: std::ops::Range<u64>) -> Vec<Vec<Read>> {
        seeds
            .map(|i| {
                let mut seed = [7u8; 32];
                seed[..8].copy_from_slice(&i.to_le_bytes());
                let g = Attention.generate(&Seed(seed), &FamilyParams { difficulty: 2 });
                let live = Live::from_key(&g.key).unwrap();
                let cue = live.plan.cue;
                live.plan
                    .events
                    .iter()
                    .map(|e| {
                        let img = render::frame(Some(e), &Seed([0; 32]), cue);
                        let truth = e.target.map(|t| (e.glyphs[t].x, e.glyphs[t].y));
                        (truth, read(&img, cue))
                    })
                    .collect()
            })
            .collect()
    }

    fn right(truth: Option<(u32, u32)>, cells: &[CellRead], margin: f32) -> bool {
        let best = cells
            .iter()
            .max_by(|a, b| a.margin.total_cmp(&b.margin))
            .unwrap();
        match (truth, best.margin > margin) {
            (None, false) => true,
            (Some((x, y)), true) => {
                let (dx, dy) = (best.x - x as i32, best.y - y as i32);
                dx * dx + dy * dy <= (TOLERANCE * TOLERANCE) as i32
            }
            _ => false,
        }
    }

    /// (events right, events, challenges right, challenges) at `margin`.
    fn rate(all: &[Vec<Read>], margin: f32) -> (u64, u64, u64, u64) {
        let (mut ev, mut n, mut ch) = (0, 0, 0);
        for c in all {
            let ok: Vec<bool> = c
                .iter()
                .map(|(t, cells)| right(*t, cells, margin))
                .collect();
            ev += ok.iter().filter(|&&b| b).count() as u64;
            n += ok.len() as u64;
            ch += u64::from(ok.iter().all(|&b| b));
        }
        (ev, n, ch, all.len() as u64)
    }

    /// The reader is a real attacker, not a strawman, and still passes no challenge: on four
    /// fixed seeds (deterministic) it reads at least a third of the events right, and gets no
    /// challenge's every event right. The rate over 24 seeds is the long test below.
    #[test]
    fn frame_cv_reads_events_but_not_whole_challenges() {
        let (ev, n, ch, tries) = rate(&reads(0..4), MARGIN);
        eprintln!("frame-cv offline, 4 seeds: events {ev}/{n}, challenges {ch}/{tries}");
        assert!(ev * 3 >= n, "{ev}/{n}");
        assert_eq!(ch, 0, "{ch}/{tries}");
    }

    /// The reader's first-try rate offline, at its best margin over a sweep (the margin is the
    /// attacker's to choose): bounded, and printed. About a minute in a debug build: one of the
    /// long tests (`scripts/test.sh --long`).
    #[test]
    fn frame_cv_offline_rate_is_low() {
        let all = reads(0..24);
        let (best_margin, (ev, n, ch, tries)) = [0.0f32, 0.02, 0.04, 0.06, 0.08, 0.12, 0.16, 0.2]
            .into_iter()
            .map(|m| (m, rate(&all, m)))
            .max_by_key(|(_, r)| (r.2, r.0))
            .unwrap();
        let (lo, hi) = wilson(ch, tries, Z95);
        eprintln!(
            "frame-cv offline: margin {best_margin}, events {ev}/{n}, challenges {ch}/{tries} \
             (Wilson 95 % {lo:.3}–{hi:.3})"
        );
        assert!(ch * 10 <= tries, "{ch}/{tries}");
    }

    /// The same over 300 seeds (slow in a debug build: run with `--release -- --ignored`).
    #[test]
    #[ignore]
    fn frame_cv_offline_rate_300() {
        let all = reads(1000..1300);
        for m in [0.0f32, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.16, 0.2, 0.25] {
            let (ev, n, ch, tries) = rate(&all, m);
            let (lo, hi) = wilson(ch, tries, Z95);
            // Events with and without the cue apart: what a plan with another share of cue
            // events would give the attacker.
            let split = |cue: bool| {
                let of: Vec<&Read> = all
                    .iter()
                    .flatten()
                    .filter(|r| r.0.is_some() == cue)
                    .collect();
                let ok = of.iter().filter(|(t, cells)| right(*t, cells, m)).count();
                ok as f64 / of.len().max(1) as f64
            };
            eprintln!(
                "frame-cv offline margin {m}: events {ev}/{n} ({:.3}; with cue {:.3}, without \
                 {:.3}), challenges {ch}/{tries} (Wilson 95 % {lo:.4}–{hi:.4})",
                ev as f64 / n as f64,
                split(true),
                split(false)
            );
        }
    }
}
