//! The glyph atlas: capital letters of the bundled DejaVu Sans Bold, rasterised once at a
//! fixed size and at a fan of tilts, so rendering a word is blitting and never rasterising.
//!
//! The font ships in `assets/` under its own licence (`assets/DejaVuSans-Bold.LICENSE`) and is
//! compiled into the binary: nothing is fetched at run time. Rasters depend only on the font
//! bytes and on `ab_glyph`, whose version is pinned by the lock file; the prompt known-answer
//! test in `visual/tests.rs` catches any change in them.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};

use super::trig::{cosine, sine};

/// DejaVu Sans Bold 2.37, unmodified.
const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans-Bold.ttf");

/// Em size of the rasters, in pixels.
pub(crate) const GLYPH_PX: f32 = 40.0;

/// Tilt of raster `i` is `(i - TILT_CENTER) * TILT_STEP` degrees.
pub(crate) const TILT_STEP: f32 = 6.0;
/// Index of the upright raster.
pub(crate) const TILT_CENTER: usize = 4;
/// Number of tilts per letter (−24° … +24°).
pub(crate) const TILTS: usize = 2 * TILT_CENTER + 1;

/// A coverage raster placed relative to the pen: its top-left corner sits at
/// `(pen_x + left, baseline + top)`.
#[derive(Debug, Clone)]
pub(crate) struct Raster {
    pub w: usize,
    pub h: usize,
    pub left: i32,
    pub top: i32,
    /// Row-major coverage, 0 (none) to 255 (full ink).
    pub data: Vec<u8>,
}

/// One capital letter: its advance and its rasters, one per tilt.
#[derive(Debug, Clone)]
pub(crate) struct Letter {
    pub advance: f32,
    pub tilts: Vec<Raster>,
}

/// The 26 capital letters and their pairwise kerning.
#[derive(Debug)]
pub(crate) struct Atlas {
    pub letters: Vec<Letter>,
    kerning: Vec<f32>,
}

impl Atlas {
    /// The letter for an ASCII capital, `None` for anything else.
    pub fn letter(&self, c: u8) -> Option<&Letter> {
        self.letters.get(usize::from(c.checked_sub(b'A')?))
    }

    /// Kerning adjustment between two ASCII capitals, in pixels.
    pub fn kern(&self, a: u8, b: u8) -> f32 {
        let (Some(a), Some(b)) = (a.checked_sub(b'A'), b.checked_sub(b'A')) else {
            return 0.0;
        };
        self.kerning
            .get(usize::from(a) * 26 + usize::from(b))
            .copied()
            .unwrap_or(0.0)
    }
}

/// The atlas, built on first use (a few milliseconds).
pub(crate) fn atlas() -> &'static Atlas {
    static ATLAS: OnceLock<Atlas> = OnceLock::new();
    ATLAS.get_or_init(build)
}

fn build() -> Atlas {
    let font = FontRef::try_from_slice(FONT).expect("the bundled font is a valid TrueType file");
    let scale = PxScale::from(GLYPH_PX);
    let scaled = font.as_scaled(scale);
    let ids: Vec<_> = (b'A'..=b'Z')
        .map(|c| font.glyph_id(char::from(c)))
        .collect();
    let letters = ids
        .iter()
        .map(|&id| {
            let upright = font
                .outline_glyph(id.with_scale_and_position(scale, point(0.0, 0.0)))
                .map(|outlined| {
                    let bounds = outlined.px_bounds();
                    let (w, h) = (bounds.width() as usize, bounds.height() as usize);
                    let mut data = vec![0u8; w * h];
                    outlined.draw(|x, y, c| {
                        if let Some(px) = data.get_mut(y as usize * w + x as usize) {
                            *px = (c.clamp(0.0, 1.0) * 255.0).round() as u8;
                        }
                    });
                    Raster {
                        w,
                        h,
                        left: bounds.min.x as i32,
                        top: bounds.min.y as i32,
                        data,
                    }
                })
                .unwrap_or(Raster {
                    w: 0,
                    h: 0,
                    left: 0,
                    top: 0,
                    data: Vec::new(),
                });
            let tilts = (0..TILTS)
                .map(|i| tilt(&upright, (i as f32 - TILT_CENTER as f32) * TILT_STEP))
                .collect();
            Letter {
                advance: scaled.h_advance(id),
                tilts,
            }
        })
        .collect();
    let kerning = ids
        .iter()
        .flat_map(|&a| ids.iter().map(move |&b| (a, b)))
        .map(|(a, b)| scaled.kern(a, b))
        .collect();
    Atlas { letters, kerning }
}

/// The raster turned by `degrees` (clockwise on screen) about its centre, trimmed to its ink.
fn tilt(src: &Raster, degrees: f32) -> Raster {
    if degrees == 0.0 || src.data.is_empty() {
        return src.clone();
    }
    let (sin, cos) = (sine(degrees.to_radians()), cosine(degrees.to_radians()));
    let side = ((src.w * src.w + src.h * src.h) as f32).sqrt().ceil() as usize + 2;
    let half = side as f32 / 2.0;
    let (cx, cy) = (src.w as f32 / 2.0, src.h as f32 / 2.0);
    let mut data = vec![0u8; side * side];
    for oy in 0..side {
        for ox in 0..side {
            let (dx, dy) = (ox as f32 + 0.5 - half, oy as f32 + 0.5 - half);
            // Inverse rotation back into the upright raster.
            let sx = dx * cos + dy * sin + cx - 0.5;
            let sy = -dx * sin + dy * cos + cy - 0.5;
            data[oy * side + ox] = bilinear(src, sx, sy);
        }
    }
    let full = Raster {
        w: side,
        h: side,
        left: src.left + (cx - half).round() as i32,
        top: src.top + (cy - half).round() as i32,
        data,
    };
    trim(full)
}

fn bilinear(src: &Raster, x: f32, y: f32) -> u8 {
    let at = |x: i32, y: i32| -> f32 {
        if x < 0 || y < 0 || x as usize >= src.w || y as usize >= src.h {
            0.0
        } else {
            f32::from(src.data[y as usize * src.w + x as usize])
        }
    };
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let (x0, y0) = (x0 as i32, y0 as i32);
    let top = at(x0, y0) * (1.0 - fx) + at(x0 + 1, y0) * fx;
    let bottom = at(x0, y0 + 1) * (1.0 - fx) + at(x0 + 1, y0 + 1) * fx;
    (top * (1.0 - fy) + bottom * fy).round().clamp(0.0, 255.0) as u8
}

/// Crops a raster to the rows and columns that carry ink.
fn trim(r: Raster) -> Raster {
    let inked = |x: usize, y: usize| r.data[y * r.w + x] > 0;
    let rows: Vec<usize> = (0..r.h)
        .filter(|&y| (0..r.w).any(|x| inked(x, y)))
        .collect();
    let cols: Vec<usize> = (0..r.w)
        .filter(|&x| (0..r.h).any(|y| inked(x, y)))
        .collect();
    let (Some(&y0), Some(&y1), Some(&x0), Some(&x1)) =
        (rows.first(), rows.last(), cols.first(), cols.last())
    else {
        return r;
    };
    let (w, h) = (x1 - x0 + 1, y1 - y0 + 1);
    let mut data = Vec::with_capacity(w * h);
    for y in y0..=y1 {
        data.extend_from_slice(&r.data[y * r.w + x0..y * r.w + x1 + 1]);
    }
    Raster {
        w,
        h,
        left: r.left + x0 as i32,
        top: r.top + y0 as i32,
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_capital_has_ink_at_every_tilt() {
        let atlas = atlas();
        assert_eq!(atlas.letters.len(), 26);
        for (i, letter) in atlas.letters.iter().enumerate() {
            assert!(letter.advance > 10.0, "letter {i}");
            assert_eq!(letter.tilts.len(), TILTS);
            for r in &letter.tilts {
                assert_eq!(r.data.len(), r.w * r.h);
                assert!(
                    r.data.iter().filter(|&&c| c > 128).count() > 40,
                    "letter {i}"
                );
                // Capitals sit on the baseline: ink above it, little below.
                assert!(r.top < -20 && r.top + (r.h as i32) < 12, "letter {i}");
            }
        }
        assert!(atlas.letter(b'a').is_none());
        assert!(atlas.kern(b'A', b'V') < 0.0);
        assert_eq!(atlas.kern(b'1', b'A'), 0.0);
    }
}
