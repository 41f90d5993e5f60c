//! What the rendering passes share: the image size, the distortion strength of a difficulty,
//! and uniform draws from the challenge's stream. `render`, `field`, `clutter` and the encoders
//! depend on it; it depends only on the glyph atlas's tilt count, so imports point one way:
//! `render` → `clutter`/`field` → `geometry` → `font` → `trig`.

use super::font::TILT_CENTER;
use crate::SeedStream;

/// Image width in pixels.
pub(crate) const WIDTH: u32 = 240;
/// Image height in pixels.
pub(crate) const HEIGHT: u32 = 90;

/// How strongly a difficulty distorts. See the table in the module docs of `visual_match`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Strength {
    pub rotation_deg: f32,
    pub tilt_steps: u64,
    pub letter_jitter: i64,
    pub crowding: i64,
    /// Each letter is scaled by up to this fraction more or less, per axis.
    pub letter_scale: f32,
    pub shear: f32,
    /// Peak displacement of the elastic field, in canvas pixels.
    pub elastic_px: f32,
    pub blobs: u32,
    pub lines: u32,
    /// Short strokes as thick as the letters' own, drawn over the word.
    pub decoys: u32,
    pub speckles: u32,
}

impl Strength {
    /// The distortion of difficulty `d` (clamped to 1..=5).
    pub fn of(d: u32) -> Self {
        let d = d.clamp(1, 5);
        let f = d as f32;
        Strength {
            rotation_deg: 1.0 + f,
            tilt_steps: u64::from(d.min(TILT_CENTER as u32)),
            letter_jitter: i64::from(1 + d),
            crowding: i64::from(d * 8 / 5),
            letter_scale: 0.04 * f,
            shear: 0.04 * f,
            elastic_px: 0.9 * f,
            blobs: (d - 1) / 3,
            lines: d.div_ceil(2),
            decoys: d / 3,
            speckles: 25 * d,
        }
    }
}

/// A uniform float in `[0, 1)` from 24 bits of the stream.
pub(crate) fn unit(s: &mut SeedStream) -> f32 {
    (s.next_u64() >> 40) as f32 / (1u64 << 24) as f32
}

/// A uniform float in `[-m, m)`.
pub(crate) fn spread(s: &mut SeedStream, m: f32) -> f32 {
    (unit(s) * 2.0 - 1.0) * m
}
