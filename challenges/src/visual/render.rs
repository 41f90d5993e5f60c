//! Word images: letters laid out from the glyph atlas, then one inverse-mapped pass for
//! rotation, scale, shear and a sine warp, then occlusion, clutter lines and speckle noise.
//!
//! Every random choice comes from the challenge's [`SeedStream`], and the geometry uses only
//! IEEE basic arithmetic (the sine below is a polynomial, not the platform's `libm`), so the
//! same seed gives the same pixels on every platform.

use image::GrayImage;

use super::clutter::clutter;
use super::font::{TILT_CENTER, TILTS, atlas};
use super::geometry::{HEIGHT, Strength, WIDTH, spread, unit};
use super::trig::{cosine, sine};
use crate::SeedStream;

/// A word laid out on a tight coverage canvas.
struct Canvas {
    w: usize,
    h: usize,
    data: Vec<u8>,
}

/// Lays out the capitals of `word`; `jitter` gives each letter's (tilt index, vertical shift,
/// extra gap after it).
fn layout(word: &str, mut jitter: impl FnMut() -> (usize, i32, i32)) -> Canvas {
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
        let (tilt, dy, gap) = jitter();
        let r = &letter.tilts[tilt.min(TILTS - 1)];
        placed.push((r, pen.round() as i32 + r.left, dy + r.top));
        pen += letter.advance + gap as f32;
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

/// The geometric part of a distortion: output pixel → canvas point.
struct Warp {
    /// Inverse linear map (row-major 2×2).
    inv: [f32; 4],
    /// Output point the canvas centre lands on.
    centre: (f32, f32),
    /// Canvas x offset per output row, and y offset per output column.
    x_wave: Vec<f32>,
    y_wave: Vec<f32>,
}

impl Warp {
    fn new(angle_deg: f32, shear: f32, zoom: f32, centre: (f32, f32)) -> Self {
        let (s, c) = (sine(angle_deg.to_radians()), cosine(angle_deg.to_radians()));
        let z = 1.0 / zoom;
        Warp {
            inv: [z * (c + shear * s), z * (s - shear * c), -z * s, z * c],
            centre,
            x_wave: vec![0.0; HEIGHT as usize],
            y_wave: vec![0.0; WIDTH as usize],
        }
    }

    /// Adds a sine displacement of `amplitude` canvas pixels along each axis.
    fn waves(&mut self, s: &mut SeedStream, amplitude: f32) {
        let tau = std::f32::consts::TAU;
        let (ax, ay) = (
            amplitude * (0.6 + 0.4 * unit(s)),
            amplitude * (0.6 + 0.4 * unit(s)),
        );
        let (px, py) = (40.0 + 50.0 * unit(s), 35.0 + 45.0 * unit(s));
        let (phx, phy) = (tau * unit(s), tau * unit(s));
        for (y, v) in self.x_wave.iter_mut().enumerate() {
            *v = ax * sine(tau * y as f32 / px + phx);
        }
        for (x, v) in self.y_wave.iter_mut().enumerate() {
            *v = ay * sine(tau * x as f32 / py + phy);
        }
    }

    /// Renders the canvas through the warp onto a background gradient.
    ///
    /// Canvas coordinates are stepped in 16.16 fixed point, and each row only visits the span
    /// of columns that can land on the canvas (the rest is background).
    fn paint(&self, canvas: &Canvas, bg: &[u8], fg: u8) -> Vec<u8> {
        const ONE: f32 = 65536.0;
        let (w, h) = (WIDTH as usize, HEIGHT as usize);
        let mut out = vec![0u8; w * h];
        let (ccx, ccy) = (canvas.w as f32 / 2.0, canvas.h as f32 / 2.0);
        let (maxx, maxy) = (canvas.w as f32 - 1.0, canvas.h as f32 - 1.0);
        let (lim_x, lim_y) = ((canvas.w as u32 - 1) << 16, (canvas.h as u32 - 1) << 16);
        let [a, b, c, d] = self.inv;
        let (a_fp, c_fp) = ((a * ONE) as i32, (c * ONE) as i32);
        let wave: Vec<i32> = self.y_wave.iter().map(|v| (v * ONE) as i32).collect();
        let amp = self.y_wave.iter().fold(0.0f32, |m, v| m.max(v.abs())) + 1.0;
        let ink = u32::from(fg);
        let p = &canvas.data;
        for (y, row) in out.chunks_exact_mut(w).enumerate() {
            row.copy_from_slice(&bg[..w]);
            let dy = y as f32 + 0.5 - self.centre.1;
            let dx0 = 0.5 - self.centre.0;
            let row_x = ccx + a * dx0 + b * dy + self.x_wave[y] - 0.5;
            let row_y = ccy + c * dx0 + d * dy - 0.5;
            let (x0, x1) = span(row_x, a, 0.0, maxx, w)
                .and_then(|sx| Some((sx, span(row_y, c, -amp, maxy + amp, w)?)))
                .map_or((0, 0), |((a0, a1), (b0, b1))| (a0.max(b0), a1.min(b1)));
            let (sx0, sy0) = ((row_x * ONE) as i32, (row_y * ONE) as i32);
            for x in x0..x1.max(x0) {
                let sx = sx0 + a_fp * x as i32;
                let sy = sy0 + c_fp * x as i32 + wave[x];
                if (sx as u32) >= lim_x || (sy as u32) >= lim_y {
                    continue;
                }
                let (ix, iy) = ((sx >> 16) as usize, (sy >> 16) as usize);
                let (fx, fy) = (((sx >> 8) & 255) as u32, ((sy >> 8) & 255) as u32);
                let i = iy * canvas.w + ix;
                let j = i + canvas.w;
                let top = u32::from(p[i]) * (256 - fx) + u32::from(p[i + 1]) * fx;
                let bot = u32::from(p[j]) * (256 - fx) + u32::from(p[j + 1]) * fx;
                let cov = (top * (256 - fy) + bot * fy) >> 16;
                if cov > 0 {
                    let back = u32::from(row[x]);
                    row[x] = ((back * (255 - cov) + ink * cov) / 255) as u8;
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

/// The undistorted rendering of `word`: upright, centred, dark on a plain light background.
pub(crate) fn clean(word: &str) -> GrayImage {
    let canvas = layout(word, || (TILT_CENTER, 0, 0));
    let zoom = fit(&canvas, 0.0, 0.0, 6.0);
    let warp = Warp::new(0.0, 0.0, zoom, (WIDTH as f32 / 2.0, HEIGHT as f32 / 2.0));
    image(warp.paint(&canvas, &[240; WIDTH as usize], 30))
}

/// `word` under a random transformation of the given strength.
pub(crate) fn distorted(word: &str, strength: &Strength, s: &mut SeedStream) -> GrayImage {
    let tilt_span = strength.tilt_steps;
    let canvas = layout(word, || {
        let tilt = TILT_CENTER as i64 + s.range(-(tilt_span as i64), tilt_span as i64);
        let dy = s.range(-strength.letter_jitter, strength.letter_jitter) as i32;
        let gap = s.range(-strength.crowding, 2) as i32;
        (tilt.max(0) as usize, dy, gap)
    });
    let angle = spread(s, strength.rotation_deg);
    let shear = spread(s, strength.shear);
    let zoom = fit(&canvas, angle, shear, 3.0 + strength.warp_px) * (0.9 + 0.1 * unit(s));
    let slack_x = (WIDTH as f32 - canvas.w as f32 * zoom).max(0.0) / 2.0;
    let centre = (
        WIDTH as f32 / 2.0 + spread(s, slack_x * 0.5),
        HEIGHT as f32 / 2.0 + spread(s, 3.0),
    );
    let mut warp = Warp::new(angle, shear, zoom, centre);
    warp.waves(s, strength.warp_px);

    let (bg_l, bg_r) = (200 + s.below(46) as u8, 200 + s.below(46) as u8);
    let bg: Vec<u8> = (0..WIDTH)
        .map(|x| {
            let t = x as f32 / (WIDTH - 1) as f32;
            (f32::from(bg_l) + (f32::from(bg_r) - f32::from(bg_l)) * t) as u8
        })
        .collect();
    let fg = 15 + s.below(56) as u8;
    let mut img = image(warp.paint(&canvas, &bg, fg));

    // The text's extent on the image, for placing occlusions and lines over it.
    let half = (canvas.w as f32 * zoom / 2.0, canvas.h as f32 * zoom / 2.0);
    clutter(&mut img, s, strength, centre, half, &bg, fg);
    img
}
