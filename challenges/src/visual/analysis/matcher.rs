//! A template matcher written against the renderer: every letter of the alphabet, rasterised
//! from the family's own glyph atlas at every tilt the renderer uses and at a few scales, is
//! slid over the deskewed ink by normalised cross-correlation; a dynamic programme then picks
//! the [`LENGTH`] placements, left to right and spaced as the layout spaces letters, whose
//! correlations add up to the most. Letters may differ in scale within a window of
//! neighbouring scales; the window with the best total wins.

use super::super::font::{TILTS, atlas};
use super::super::{ALPHABET, LENGTH};
use super::ink::Ink;

/// Scale factors tried around the estimate from the ink's height.
const ZOOMS: [f32; 7] = [0.62, 0.68, 0.74, 0.8, 0.86, 0.92, 0.98];
/// Neighbouring scales one size hypothesis spans.
const WINDOW: usize = 3;
/// Vertical search around the text's centre line, in half-resolution pixels.
const BAND: i64 = 5;
/// Centre-to-centre distance of neighbours, as a fraction of their mean advance.
const SPACING: (f32, f32) = (0.45, 1.35);

/// A zero-mean letter template at half resolution.
struct Template {
    w: usize,
    h: usize,
    t: Vec<f32>,
    norm: f32,
}

/// `ink` averaged over 2×2 blocks.
pub fn half(ink: &Ink) -> Ink {
    let (w, h) = (ink.w / 2, ink.h / 2);
    let mut v = vec![0.0; w * h];
    for y in 0..h {
        for x in 0..w {
            let (sx, sy) = (2 * x as i64, 2 * y as i64);
            v[y * w + x] =
                (ink.at(sx, sy) + ink.at(sx + 1, sy) + ink.at(sx, sy + 1) + ink.at(sx + 1, sy + 1))
                    / 4.0;
        }
    }
    Ink { w, h, v }
}

/// Letter `c` at tilt `tilt`, scaled by `scale`, box-averaged, zero-meaned.
fn template(c: u8, tilt: usize, scale: f32) -> Option<Template> {
    let r = &atlas().letter(c)?.tilts[tilt];
    let (w, h) = (
        ((r.w as f32 * scale).round() as usize).max(2),
        ((r.h as f32 * scale).round() as usize).max(2),
    );
    let mut t = vec![0.0f32; w * h];
    for (y, row) in t.chunks_exact_mut(w).enumerate() {
        for (x, v) in row.iter_mut().enumerate() {
            let (x0, x1) = (x as f32 / scale, (x + 1) as f32 / scale);
            let (y0, y1) = (y as f32 / scale, (y + 1) as f32 / scale);
            let (mut sum, mut n) = (0.0, 0.0);
            for sy in y0 as usize..(y1.ceil() as usize).min(r.h) {
                for sx in x0 as usize..(x1.ceil() as usize).min(r.w) {
                    sum += f32::from(r.data[sy * r.w + sx]) / 255.0;
                    n += 1.0;
                }
            }
            *v = if n > 0.0 { sum / n } else { 0.0 };
        }
    }
    let mean = t.iter().sum::<f32>() / t.len() as f32;
    t.iter_mut().for_each(|v| *v -= mean);
    let norm = t.iter().map(|v| v * v).sum::<f32>().sqrt();
    (norm > 1e-3).then_some(Template { w, h, t, norm })
}

/// Summed-area tables of `v` and `v²`.
struct Integral {
    w: usize,
    s1: Vec<f64>,
    s2: Vec<f64>,
}

impl Integral {
    fn new(ink: &Ink) -> Self {
        let w = ink.w + 1;
        let (mut s1, mut s2) = (vec![0.0; w * (ink.h + 1)], vec![0.0; w * (ink.h + 1)]);
        for y in 0..ink.h {
            for x in 0..ink.w {
                let v = f64::from(ink.v[y * ink.w + x]);
                let i = (y + 1) * w + x + 1;
                s1[i] = v + s1[i - 1] + s1[i - w] - s1[i - w - 1];
                s2[i] = v * v + s2[i - 1] + s2[i - w] - s2[i - w - 1];
            }
        }
        Integral { w, s1, s2 }
    }

    /// Sums of `v` and `v²` over the box `[x0, x1) × [y0, y1)` (already clipped).
    fn sums(&self, x0: usize, y0: usize, x1: usize, y1: usize) -> (f64, f64) {
        let at = |s: &[f64], x: usize, y: usize| s[y * self.w + x];
        let f = |s: &[f64]| at(s, x1, y1) - at(s, x0, y1) - at(s, x1, y0) + at(s, x0, y0);
        (f(&self.s1), f(&self.s2))
    }
}

/// The best correlation of `tp` centred on column `cx` within the band around `cy`.
fn best_at(ink: &Ink, sums: &Integral, tp: &Template, cx: i64, cy: i64) -> f32 {
    let mut best = -1.0f32;
    for y in cy - BAND..=cy + BAND {
        let (x0, y0) = (cx - tp.w as i64 / 2, y - tp.h as i64 / 2);
        let (x1, y1) = (x0 + tp.w as i64, y0 + tp.h as i64);
        if x0 < 0 || y0 < 0 || x1 > ink.w as i64 || y1 > ink.h as i64 {
            continue;
        }
        let (x0, y0) = (x0 as usize, y0 as usize);
        let n = (tp.w * tp.h) as f64;
        let (s1, s2) = sums.sums(x0, y0, x0 + tp.w, y0 + tp.h);
        let var = s2 - s1 * s1 / n;
        if var < 1e-3 {
            continue;
        }
        let mut dot = 0.0f32;
        for row in 0..tp.h {
            let img = &ink.v[(y0 + row) * ink.w + x0..][..tp.w];
            let tpl = &tp.t[row * tp.w..][..tp.w];
            dot += img.iter().zip(tpl).map(|(a, b)| a * b).sum::<f32>();
        }
        best = best.max(dot / (tp.norm * var.sqrt() as f32));
    }
    best
}

/// Reads [`LENGTH`] letters from deskewed half-resolution ink whose text spans rows
/// `top..bottom` (full resolution); the letters and the mean correlation per letter.
pub fn read(ink: &Ink, top: f32, bottom: f32) -> Option<(String, f32)> {
    let letters = ALPHABET.as_bytes();
    let atlas = atlas();
    let cap = atlas.letter(b'H')?.tilts[TILTS / 2].h as f32;
    let estimate = (bottom - top) / cap;
    let cy = ((top + bottom) / 4.0) as i64;
    let sums = Integral::new(ink);
    // by_scale[z][l][x]: letter l's best correlation at scale z centred on column x, over
    // tilts and the band.
    let by_scale: Vec<Vec<Vec<f32>>> = ZOOMS
        .iter()
        .map(|factor| {
            let scale = estimate * factor / 2.0;
            letters
                .iter()
                .map(|&c| {
                    let tps: Vec<Template> =
                        (0..TILTS).filter_map(|t| template(c, t, scale)).collect();
                    (0..ink.w as i64)
                        .map(|x| {
                            tps.iter()
                                .map(|tp| best_at(ink, &sums, tp, x, cy))
                                .fold(-1.0f32, f32::max)
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    // The renderer scales each letter on its own about a common size: each window of
    // WINDOW neighbouring scales is one hypothesis of that size, letters free within it.
    let mut best: Option<(String, f32)> = None;
    for first in 0..=ZOOMS.len() - WINDOW {
        let window = &by_scale[first..first + WINDOW];
        let score: Vec<Vec<f32>> = (0..letters.len())
            .map(|l| {
                (0..ink.w)
                    .map(|x| window.iter().map(|z| z[l][x]).fold(-1.0f32, f32::max))
                    .collect()
            })
            .collect();
        let mid = estimate * ZOOMS[first + WINDOW / 2] / 2.0;
        let advance: Vec<f32> = letters
            .iter()
            .map(|&c| atlas.letter(c).map_or(20.0, |l| l.advance) * mid)
            .collect();
        if let Some((text, total)) = arrange(&score, &advance, letters) {
            let mean = total / LENGTH as f32;
            if best.as_ref().is_none_or(|b| mean > b.1) {
                best = Some((text, mean));
            }
        }
    }
    best
}

/// The dynamic programme: the spaced left-to-right placement of [`LENGTH`] letters with the
/// highest total score.
fn arrange(score: &[Vec<f32>], advance: &[f32], letters: &[u8]) -> Option<(String, f32)> {
    let (n, w) = (score.len(), score.first()?.len());
    // value[k][x * n + l], and where it came from.
    let mut value = vec![vec![f32::NEG_INFINITY; w * n]; LENGTH];
    let mut from = vec![vec![usize::MAX; w * n]; LENGTH];
    for x in 0..w {
        for l in 0..n {
            value[0][x * n + l] = score[l][x];
        }
    }
    for k in 1..LENGTH {
        for x in 0..w {
            for l in 0..n {
                let mut best = (f32::NEG_INFINITY, usize::MAX);
                for p in 0..n {
                    let mean = (advance[l] + advance[p]) / 2.0;
                    let (lo, hi) = ((mean * SPACING.0) as usize, (mean * SPACING.1) as usize);
                    for px in x.saturating_sub(hi)..=x.saturating_sub(lo.max(1)) {
                        let v = value[k - 1][px * n + p];
                        if v > best.0 {
                            best = (v, px * n + p);
                        }
                    }
                }
                if best.1 != usize::MAX {
                    value[k][x * n + l] = best.0 + score[l][x];
                    from[k][x * n + l] = best.1;
                }
            }
        }
    }
    let (mut at, total) = value[LENGTH - 1]
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, &v)| (i, v))?;
    if !total.is_finite() {
        return None;
    }
    let mut out = vec![0u8; LENGTH];
    for k in (0..LENGTH).rev() {
        out[k] = letters[at % n];
        at = from[k][at];
    }
    Some((String::from_utf8(out).ok()?, total))
}
