//! Text images: letters laid out from the glyph atlas, then one inverse-mapped pass for
//! rotation, scale, shear and the elastic field, then occlusion, decoy strokes, clutter lines
//! and speckle noise.
//!
//! Every random choice comes from the challenge's [`SeedStream`], and the geometry uses only
//! IEEE basic arithmetic (the sine is a polynomial, not the platform's `libm`), so the same
//! seed gives the same pixels on every platform.

use image::GrayImage;

use super::clutter::clutter;
use super::field::Field;
use super::font::{Raster, TILT_CENTER, TILTS, atlas};
use super::geometry::{HEIGHT, Strength, WIDTH, spread, unit};
use super::trig::{cosine, sine};
use crate::SeedStream;

/// A word laid out on a tight coverage canvas.
struct Canvas {
    w: usize,
    h: usize,
    data: Vec<u8>,
}

impl Canvas {
    /// Bilinear coverage at canvas point `(x, y)`, 0 outside.
    #[inline]
    fn sample(&self, x: f32, y: f32) -> u32 {
        if !(x >= 0.0 && y >= 0.0) {
            return 0;
        }
        let (ix, iy) = (x as usize, y as usize);
        if ix + 1 >= self.w || iy + 1 >= self.h {
            return 0;
        }
        let (fx, fy) = (
            ((x - ix as f32) * 256.0) as u32,
            ((y - iy as f32) * 256.0) as u32,
        );
        let p = &self.data;
        let i = iy * self.w + ix;
        let j = i + self.w;
        let top = u32::from(p[i]) * (256 - fx) + u32::from(p[i + 1]) * fx;
        let bot = u32::from(p[j]) * (256 - fx) + u32::from(p[j + 1]) * fx;
        (top * (256 - fy) + bot * fy) >> 16
    }
}

/// What `layout` varies per letter.
struct Jitter {
    tilt: usize,
    dy: i32,
    gap: i32,
    /// Horizontal and vertical scale.
    scale: (f32, f32),
}

/// `r` resampled (bilinear) by `(sx, sy)` about its top-left corner.
fn rescale(r: &Raster, (sx, sy): (f32, f32)) -> Raster {
    let (w, h) = (
        ((r.w as f32 * sx).round() as usize).max(1),
        ((r.h as f32 * sy).round() as usize).max(1),
    );
    let src = Canvas {
        w: r.w + 1,
        h: r.h + 1,
        data: (0..=r.h)
            .flat_map(|y| (0..=r.w).map(move |x| (x, y)))
            .map(|(x, y)| {
                if x < r.w && y < r.h {
                    r.data[y * r.w + x]
                } else {
                    0
                }
            })
            .collect(),
    };
    let data = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .map(|(x, y)| src.sample(x as f32 / sx, y as f32 / sy).min(255) as u8)
        .collect();
    Raster {
        w,
        h,
        left: (r.left as f32 * sx).round() as i32,
        top: (r.top as f32 * sy).round() as i32,
        data,
    }
}

/// Lays out the capitals of `word`; `jitter` gives each letter's tilt, shift, gap and scale.
fn layout(word: &str, mut jitter: impl FnMut() -> Jitter) -> Canvas {
    let atlas = atlas();
    let mut placed = Vec::with_capacity(word.len());
    let mut pen = 0.0f32;
    let mut prev: Option<u8> = None;
    for c in word.bytes() {
        let Some(letter) = atlas.letter(c) else {
            continue;
        };
        if let Some(p) = prev {
            pen += atlas.kern(p, c);
        }
        let j = jitter();
        let r = rescale(&letter.tilts[j.tilt.min(TILTS - 1)], j.scale);
        let (left, top) = (r.left, r.top);
        placed.push((r, pen.round() as i32 + left, j.dy + top));
        pen += letter.advance * j.scale.0 + j.gap as f32;
        prev = Some(c);
    }
    let x0 = placed.iter().map(|p| p.1).min().unwrap_or(0) - 2;
    let y0 = placed.iter().map(|p| p.2).min().unwrap_or(0) - 2;
    let x1 = placed.iter().map(|p| p.1 + p.0.w as i32).max().unwrap_or(0) + 2;
    let y1 = placed.iter().map(|p| p.2 + p.0.h as i32).max().unwrap_or(0) + 2;
    let (w, h) = ((x1 - x0).max(4) as usize, (y1 - y0).max(4) as usize);
    let mut data = vec![0u8; w * h];
    for (r, px, py) in placed {
        let (ox, oy) = ((px - x0) as usize, (py - y0) as usize);
        for row in 0..r.h {
            let dst = &mut data[(oy + row) * w + ox..][..r.w];
            for (d, &s) in dst.iter_mut().zip(&r.data[row * r.w..][..r.w]) {
                *d = (*d).max(s);
            }
        }
    }
    Canvas { w, h, data }
}

/// Output pixel → canvas point: an inverse linear map about a centre, plus the elastic field.
struct Warp {
    /// Inverse linear map (row-major 2×2).
    inv: [f32; 4],
    /// Output point the canvas centre lands on.
    centre: (f32, f32),
    field: Field,
}

impl Warp {
    /// Renders the canvas through the warp onto a background gradient. Each row only visits
    /// the columns whose undisplaced source lies within the field's reach of the canvas.
    fn paint(&self, canvas: &Canvas, bg: &[u8], fg: u8) -> Vec<u8> {
        let (w, h) = (WIDTH as usize, HEIGHT as usize);
        let mut out = vec![0u8; w * h];
        let (ccx, ccy) = (canvas.w as f32 / 2.0 - 0.5, canvas.h as f32 / 2.0 - 0.5);
        let [a, b, c, d] = self.inv;
        let reach = self.field.reach() + 1.0;
        let ink = u32::from(fg);
        for (y, row) in out.chunks_exact_mut(w).enumerate() {
            row.copy_from_slice(&bg[..w]);
            let dy = y as f32 + 0.5 - self.centre.1;
            let dx0 = 0.5 - self.centre.0;
            let (row_x, row_y) = (ccx + a * dx0 + b * dy, ccy + c * dx0 + d * dy);
            let Some((x0, x1)) = span(row_x, a, -reach, canvas.w as f32 + reach, w)
                .zip(span(row_y, c, -reach, canvas.h as f32 + reach, w))
                .map(|((a0, a1), (b0, b1))| (a0.max(b0), a1.min(b1)))
            else {
                continue;
            };
            for (x, px) in row.iter_mut().enumerate().take(x1).skip(x0) {
                let (ex, ey) = self.field.at(x, y);
                let sx = row_x + a * x as f32 + ex;
                let sy = row_y + c * x as f32 + ey;
                let cov = canvas.sample(sx, sy);
                if cov > 0 {
                    let back = u32::from(*px);
                    *px = ((back * (255 - cov) + ink * cov) / 255) as u8;
                }
            }
        }
        out
    }
}

/// The columns `x` in `0..w` for which `start + slope·x` may fall in `[lo, hi]`, widened by
/// two pixels each side; `None` if none can.
fn span(start: f32, slope: f32, lo: f32, hi: f32, w: usize) -> Option<(usize, usize)> {
    if slope.abs() < 1e-6 {
        return (lo..=hi).contains(&start).then_some((0, w));
    }
    let (t0, t1) = ((lo - start) / slope, (hi - start) / slope);
    let (from, to) = (t0.min(t1) - 2.0, t0.max(t1) + 3.0);
    if to < 0.0 || from > w as f32 {
        return None;
    }
    Some((from.max(0.0) as usize, (to.min(w as f32) as usize).min(w)))
}

fn image(pixels: Vec<u8>) -> GrayImage {
    GrayImage::from_raw(WIDTH, HEIGHT, pixels).unwrap_or_else(|| GrayImage::new(WIDTH, HEIGHT))
}

/// Zoom that fits a canvas rotated by `angle_deg` into the image with `margin` pixels spare.
fn fit(canvas: &Canvas, angle_deg: f32, shear: f32, margin: f32) -> f32 {
    let (s, c) = (
        sine(angle_deg.to_radians()).abs(),
        cosine(angle_deg.to_radians()).abs(),
    );
    let (cw, ch) = (
        canvas.w as f32 + canvas.h as f32 * shear.abs(),
        canvas.h as f32,
    );
    let ew = cw * c + ch * s;
    let eh = cw * s + ch * c;
    ((WIDTH as f32 - 2.0 * margin) / ew)
        .min((HEIGHT as f32 - 2.0 * margin) / eh)
        .min(1.2)
}

/// `text` (capitals) under a random transformation of the given strength.
pub(crate) fn distorted(text: &str, strength: &Strength, s: &mut SeedStream) -> GrayImage {
    let tilt_span = strength.tilt_steps;
    let canvas = layout(text, || {
        let tilt = TILT_CENTER as i64 + s.range(-(tilt_span as i64), tilt_span as i64);
        let dy = s.range(-strength.letter_jitter, strength.letter_jitter) as i32;
        let gap = s.range(-strength.crowding, 2) as i32;
        let scale = (
            1.0 + spread(s, strength.letter_scale),
            1.0 + spread(s, strength.letter_scale),
        );
        Jitter {
            tilt: tilt.max(0) as usize,
            dy,
            gap,
            scale,
        }
    });
    let angle = spread(s, strength.rotation_deg);
    let shear = spread(s, strength.shear);
    let zoom = fit(&canvas, angle, shear, 3.0 + strength.elastic_px) * (0.92 + 0.08 * unit(s));
    let slack_x = (WIDTH as f32 - canvas.w as f32 * zoom).max(0.0) / 2.0;
    let centre = (
        WIDTH as f32 / 2.0 + spread(s, slack_x * 0.5),
        HEIGHT as f32 / 2.0 + spread(s, 3.0),
    );
    let (sn, cs) = (sine(angle.to_radians()), cosine(angle.to_radians()));
    let z = 1.0 / zoom;
    let warp = Warp {
        inv: [
            z * (cs + shear * sn),
            z * (sn - shear * cs),
            -z * sn,
            z * cs,
        ],
        centre,
        field: Field::new(s, strength.elastic_px),
    };

    let (bg_l, bg_r) = (200 + s.below(46) as u8, 200 + s.below(46) as u8);
    let bg: Vec<u8> = (0..WIDTH)
        .map(|x| {
            let t = x as f32 / (WIDTH - 1) as f32;
            (f32::from(bg_l) + (f32::from(bg_r) - f32::from(bg_l)) * t) as u8
        })
        .collect();
    let fg = 15 + s.below(56) as u8;
    let mut img = image(warp.paint(&canvas, &bg, fg));

    // The text's extent on the image, for placing occlusions, decoys and lines over it.
    let half = (canvas.w as f32 * zoom / 2.0, canvas.h as f32 * zoom / 2.0);
    clutter(&mut img, s, strength, centre, half, zoom, &bg, fg);
    img
}
