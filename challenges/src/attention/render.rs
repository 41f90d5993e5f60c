//! The frames the stream sends: greyscale PNGs of `FRAME`×`FRAME` pixels. An event's frame
//! shows its letters, each turned, sheared, scaled and warped by its own draw, with bites taken
//! out of its strokes; every frame is strewn with fragments of other letters in the same ink
//! and stroke width, over and around the letters, so the ink of a cell is never one clean
//! shape. A blank frame (between events) is clutter alone.
//!
//! Frames are rendered when the stream sends them, not at generation; nothing verified depends
//! on their pixels (the verifier checks the server's log against the plan), so they use the
//! platform's floating point freely.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, PxScale, point};
pub use image::GrayImage;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ExtendedColorType, ImageEncoder, Luma};

use super::plan::{CUES, Event, FRAME};
use crate::{Seed, SeedStream};

/// DejaVu Sans Bold, the font the visual family also bundles.
const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans-Bold.ttf");
/// Em size of the glyph rasters.
const GLYPH_PX: f32 = 84.0;

/// A letter's coverage raster, centred on its ink box.
#[derive(Debug)]
pub struct Raster {
    /// Width.
    pub w: usize,
    /// Height.
    pub h: usize,
    /// Row-major coverage, 0–255.
    pub data: Vec<u8>,
}

impl Raster {
    /// Coverage at `(u, v)` from the raster's centre (bilinear), 0 outside.
    pub fn at(&self, u: f32, v: f32) -> f32 {
        let (x, y) = (u + self.w as f32 / 2.0 - 0.5, v + self.h as f32 / 2.0 - 0.5);
        if x < 0.0 || y < 0.0 || x >= (self.w - 1) as f32 || y >= (self.h - 1) as f32 {
            return 0.0;
        }
        let (x0, y0) = (x as usize, y as usize);
        let (fx, fy) = (x - x0 as f32, y - y0 as f32);
        let p = |dx: usize, dy: usize| f32::from(self.data[(y0 + dy) * self.w + x0 + dx]);
        let top = p(0, 0) * (1.0 - fx) + p(1, 0) * fx;
        let bottom = p(0, 1) * (1.0 - fx) + p(1, 1) * fx;
        (top * (1.0 - fy) + bottom * fy) / 255.0
    }
}

/// The 26 capitals, rasterised once.
pub fn rasters() -> &'static [Raster] {
    static RASTERS: OnceLock<Vec<Raster>> = OnceLock::new();
    RASTERS.get_or_init(|| {
        let font =
            FontRef::try_from_slice(FONT).expect("the bundled font is a valid TrueType file");
        let scale = PxScale::from(GLYPH_PX);
        (b'A'..=b'Z')
            .map(|c| {
                let id = font.glyph_id(char::from(c));
                let Some(outlined) =
                    font.outline_glyph(id.with_scale_and_position(scale, point(0.0, 0.0)))
                else {
                    return Raster {
                        w: 2,
                        h: 2,
                        data: vec![0; 4],
                    };
                };
                let b = outlined.px_bounds();
                let (w, h) = (b.width() as usize + 2, b.height() as usize + 2);
                let mut data = vec![0u8; w * h];
                outlined.draw(|x, y, c| {
                    if let Some(px) = data.get_mut((y as usize + 1) * w + x as usize + 1) {
                        *px = (c.clamp(0.0, 1.0) * 255.0).round() as u8;
                    }
                });
                Raster { w, h, data }
            })
            .collect()
    })
}

/// How one shape is drawn: where, turned and stretched how, and in which ink.
#[derive(Debug, Clone, Copy)]
pub struct Pose {
    /// Centre on the frame.
    pub x: f32,
    /// Centre on the frame.
    pub y: f32,
    /// Turn, radians.
    pub turn: f32,
    /// Scale.
    pub scale: f32,
    /// Horizontal shear.
    pub shear: f32,
    /// Sine warp amplitude (pixels) and phase.
    pub warp: f32,
    /// Warp phase.
    pub phase: f32,
    /// Width over height (1: the font's own).
    pub aspect: f32,
    /// Stroke weight: above 0 thicker, below thinner.
    pub weight: f32,
    /// A cut through the letter: the part beyond the line `u·cos a + v·sin a = d` is shifted by
    /// `(du, dv)`: `[a, d, du, dv]` (a zero shift: whole).
    pub cut: [f32; 4],
}

impl Pose {
    /// From frame coordinates to raster coordinates.
    pub fn inverse(&self, px: f32, py: f32) -> (f32, f32) {
        let (dx, dy) = ((px - self.x) / self.scale, (py - self.y) / self.scale);
        let (s, c) = self.turn.sin_cos();
        let (u, v) = (c * dx + s * dy, -s * dx + c * dy);
        let (u, v) = (u / self.aspect, v * self.aspect);
        let [a, d, du, dv] = self.cut;
        let (u, v) = if u * a.cos() + v * a.sin() > d {
            (u - du, v - dv)
        } else {
            (u, v)
        };
        let p = self.phase;
        let u = u - self.shear * v
            + self.warp * ((v * 0.11 + p).sin() + 0.6 * (u * 0.13 + v * 0.07 + 2.3 * p).sin());
        let v = v + self.warp
            * ((u * 0.10 + 1.7 * p).sin() + 0.6 * (v * 0.12 - u * 0.05 + 3.1 * p).sin());
        (u, v)
    }
}

/// Draws raster `r` at `pose` in `ink` where `mask(u, v)` (raster coordinates) holds.
pub fn stamp(
    img: &mut GrayImage,
    r: &Raster,
    pose: &Pose,
    ink: u8,
    mask: impl Fn(f32, f32) -> bool,
) {
    let reach = 0.75 * (r.w.max(r.h) as f32) * pose.scale + pose.warp + 4.0;
    let (x0, x1) = (
        (pose.x - reach).max(0.0) as u32,
        ((pose.x + reach) as u32).min(FRAME - 1),
    );
    let (y0, y1) = (
        (pose.y - reach).max(0.0) as u32,
        ((pose.y + reach) as u32).min(FRAME - 1),
    );
    for py in y0..=y1 {
        for px in x0..=x1 {
            let (u, v) = pose.inverse(px as f32, py as f32);
            let c = r.at(u, v);
            let c = if pose.weight == 0.0 {
                c
            } else {
                ((c - 0.5 + pose.weight) / 0.3 + 0.5).clamp(0.0, 1.0)
            };
            if c > 0.0 && mask(u, v) {
                let Luma([bg]) = *img.get_pixel(px, py);
                let mixed = f32::from(bg) * (1.0 - c) + f32::from(ink) * c;
                img.put_pixel(px, py, Luma([mixed.round() as u8]));
            }
        }
    }
}

fn uniform(s: &mut SeedStream, lo: f32, hi: f32) -> f32 {
    lo + (hi - lo) * (s.below(1 << 20) as f32 / (1 << 20) as f32)
}

fn ink(s: &mut SeedStream) -> u8 {
    s.range(35, 80) as u8
}

/// A letter's pose around `(x, y)`.
pub fn letter_pose(s: &mut SeedStream, x: f32, y: f32) -> Pose {
    Pose {
        x,
        y,
        turn: uniform(s, -0.6, 0.6),
        scale: uniform(s, 0.9, 1.1),
        shear: uniform(s, -0.3, 0.3),
        warp: uniform(s, 2.0, 4.0),
        phase: uniform(s, 0.0, std::f32::consts::TAU),
        aspect: uniform(s, 0.78, 1.25),
        weight: uniform(s, -0.25, 0.3),
        cut: if s.chance(60) {
            [
                uniform(s, 0.0, std::f32::consts::TAU),
                uniform(s, -8.0, 8.0),
                uniform(s, -5.0, 5.0),
                uniform(s, -5.0, 5.0),
            ]
        } else {
            [0.0; 4]
        },
    }
}

/// A light, uneven background.
fn background(s: &mut SeedStream) -> GrayImage {
    let (a, b, base) = (
        uniform(s, -0.06, 0.06),
        uniform(s, -0.06, 0.06),
        uniform(s, 215.0, 240.0),
    );
    GrayImage::from_fn(FRAME, FRAME, |x, y| {
        let v = base
            + a * x as f32
            + b * y as f32
            + 6.0 * ((x as f32 * 0.05).sin() * (y as f32 * 0.04).cos());
        Luma([v.clamp(170.0, 250.0) as u8])
    })
}

/// Fragments of letters other than the cue and the letters that share its strokes (a
/// fragment of those could pass for the cue, to a person too): a disc of a random letter's raster, anywhere on
/// the frame.
fn clutter(img: &mut GrayImage, s: &mut SeedStream, count: usize, cue: u8) {
    for _ in 0..count {
        let (x, y) = (uniform(s, 0.0, FRAME as f32), uniform(s, 0.0, FRAME as f32));
        fragment(img, s, cue, x, y);
    }
}

/// One fragment of a letter unlike the cue, centred at `(x, y)`.
fn fragment(img: &mut GrayImage, s: &mut SeedStream, cue: u8, x: f32, y: f32) {
    let confusers = CUES
        .iter()
        .find(|(c, _)| *c == cue)
        .map_or(&b""[..], |(_, others)| &others[..]);
    let letter = loop {
        let l = b'A' + s.below(26) as u8;
        if l != cue && !confusers.contains(&l) {
            break l;
        }
    };
    let r = &rasters()[usize::from(letter - b'A')];
    let (cu, cv) = (
        uniform(s, -0.3, 0.3) * r.w as f32,
        uniform(s, -0.3, 0.3) * r.h as f32,
    );
    let radius = uniform(s, 12.0, 22.0);
    let mut pose = letter_pose(s, x, y);
    // Place the fragment's own centre, not the letter's, at the drawn spot.
    let (sn, cs) = pose.turn.sin_cos();
    pose.x -= (cs * cu - sn * cv) * pose.scale;
    pose.y -= (sn * cu + cs * cv) * pose.scale;
    let tone = ink(s);
    let hollow = s.chance(50);
    stamp(img, r, &pose, tone, |u, v| {
        (u - cu).powi(2) + (v - cv).powi(2) < radius * radius
            && (!hollow
                || [(3.5, 0.0), (-3.5, 0.0), (0.0, 3.5), (0.0, -3.5)]
                    .iter()
                    .any(|(du, dv)| r.at(u + du, v + dv) < 0.5))
    });
}

/// Bites of background taken out of the strokes around `(x, y)`.
fn bites(img: &mut GrayImage, s: &mut SeedStream, x: f32, y: f32) {
    for _ in 0..s.range(2, 4) {
        let (bx, by) = (x + uniform(s, -30.0, 30.0), y + uniform(s, -30.0, 30.0));
        let r = uniform(s, 3.0, 5.5);
        for py in (by - r) as i64..=(by + r) as i64 {
            for px in (bx - r) as i64..=(bx + r) as i64 {
                if (0..i64::from(FRAME)).contains(&px)
                    && (0..i64::from(FRAME)).contains(&py)
                    && (px as f32 - bx).powi(2) + (py as f32 - by).powi(2) <= r * r
                {
                    let v = 225 + ((px * 7 + py * 13) % 11) as u8;
                    img.put_pixel(px as u32, py as u32, Luma([v]));
                }
            }
        }
    }
}

/// The frame of `event` (its letters in clutter), or a blank frame of clutter alone drawn from
/// `seed` when `event` is `None`. No fragment is cut from the `cue` letter.
pub fn frame(event: Option<&Event>, seed: &Seed, cue: u8) -> GrayImage {
    let mut s = match event {
        Some(e) => e.render_seed.stream(),
        None => seed.stream(),
    };
    let mut img = background(&mut s);
    clutter(&mut img, &mut s, 12, cue);
    if let Some(e) = event {
        let rasters = rasters();
        for g in &e.glyphs {
            let pose = letter_pose(&mut s, g.x as f32, g.y as f32);
            let tone = ink(&mut s);
            let r = &rasters[usize::from(g.letter - b'A')];
            if s.chance(50) {
                // Hollow: only a band along the outline.
                let band = uniform(&mut s, 3.5, 5.0);
                stamp(&mut img, r, &pose, tone, |u, v| {
                    [(band, 0.0), (-band, 0.0), (0.0, band), (0.0, -band)]
                        .iter()
                        .any(|(du, dv)| r.at(u + du, v + dv) < 0.5)
                });
            } else {
                stamp(&mut img, r, &pose, tone, |_, _| true);
            }
            bites(&mut img, &mut s, g.x as f32, g.y as f32);
            // Fragments against the letter itself.
            let angle = uniform(&mut s, 0.0, std::f32::consts::TAU);
            let distance = uniform(&mut s, 30.0, 42.0);
            let (dx, dy) = (distance * angle.cos(), distance * angle.sin());
            fragment(&mut img, &mut s, cue, g.x as f32 + dx, g.y as f32 + dy);
        }
        // Fragments over the letters too, and in the empty cells.
        clutter(&mut img, &mut s, 4, cue);
    }
    img
}

/// Decodes a frame sent as PNG (what a client, or an attacker, does with the stream);
/// `None` for anything that is not a `FRAME`×`FRAME` PNG.
pub fn decode(png: &[u8]) -> Option<GrayImage> {
    if png.len() > 1 << 20 {
        return None;
    }
    let img = image::load_from_memory_with_format(png, image::ImageFormat::Png)
        .ok()?
        .to_luma8();
    (img.width() == FRAME && img.height() == FRAME).then_some(img)
}

/// The frame as an 8-bit greyscale PNG.
pub fn png(img: &GrayImage) -> Vec<u8> {
    let mut out = Vec::with_capacity(24 * 1024);
    let encoder = PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Sub);
    if encoder
        .write_image(
            img.as_raw(),
            img.width(),
            img.height(),
            ExtendedColorType::L8,
        )
        .is_err()
    {
        out.clear();
    }
    out
}
