//! Occlusion and noise drawn over a rendered word: blobs of background erasing parts of
//! letters, decoy strokes as thick as the letters' own (a stroke-width filter cannot tell them
//! from letter parts), thin clutter lines struck through the word, and speckles.

use image::{GrayImage, Luma};
use imageproc::drawing::{
    draw_antialiased_line_segment_mut, draw_filled_circle_mut, draw_filled_ellipse_mut,
};
use imageproc::pixelops::interpolate;

use super::geometry::{HEIGHT, Strength, WIDTH, spread, unit};
use super::trig::sine;
use crate::SeedStream;

/// Draws the clutter of `strength` around the word centred at `centre` with half-extent
/// `half`, drawn at `zoom`, on background columns `bg` with ink `fg`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn clutter(
    img: &mut GrayImage,
    s: &mut SeedStream,
    strength: &Strength,
    centre: (f32, f32),
    half: (f32, f32),
    zoom: f32,
    bg: &[u8],
    fg: u8,
) {
    let (half_w, half_h) = half;
    for _ in 0..strength.blobs {
        let x = centre.0 + spread(s, half_w * 0.9);
        let y = centre.1 + spread(s, half_h * 0.5);
        let (rx, ry) = (s.range(2, 3 + strength.blobs as i64), s.range(2, 4));
        let colour = bg[(x.max(0.0) as usize).min(WIDTH as usize - 1)];
        draw_filled_ellipse_mut(
            img,
            (x as i32, y as i32),
            rx as i32,
            ry as i32,
            Luma([colour]),
        );
    }
    // Decoys: short bent strokes of the letters' stem width, over the word.
    let radius = (2.8 * zoom).max(1.5);
    for _ in 0..strength.decoys {
        let (x0, y0) = (
            centre.0 + spread(s, half_w * 0.9),
            centre.1 + spread(s, half_h * 0.6),
        );
        let length = 10.0 + 10.0 * unit(s);
        let (dx, dy) = (spread(s, 1.0), spread(s, 1.0));
        let norm = (dx * dx + dy * dy).sqrt().max(0.1);
        let bend = spread(s, 6.0);
        let steps = (length / (radius * 0.5)).ceil() as i32;
        for i in 0..=steps {
            let t = i as f32 / steps as f32;
            let (x, y) = (
                x0 + dx / norm * length * t - dy / norm * bend * sine(std::f32::consts::PI * t),
                y0 + dy / norm * length * t + dx / norm * bend * sine(std::f32::consts::PI * t),
            );
            draw_filled_circle_mut(img, (x as i32, y as i32), radius as i32, Luma([fg]));
        }
    }
    for _ in 0..strength.lines {
        let (y0, y1) = (
            centre.1 + spread(s, half_h * 0.8),
            centre.1 + spread(s, half_h * 0.8),
        );
        let bow = spread(s, 10.0);
        let segments = 8;
        let at = |i: i32| {
            let t = i as f32 / segments as f32;
            let x = -4.0 + (WIDTH as f32 + 8.0) * t;
            let y = y0 + (y1 - y0) * t + bow * sine(std::f32::consts::PI * t);
            (x as i32, y as i32)
        };
        for i in 0..segments {
            for thick in 0..2 {
                let (a, b) = (at(i), at(i + 1));
                draw_antialiased_line_segment_mut(
                    img,
                    (a.0, a.1 + thick),
                    (b.0, b.1 + thick),
                    Luma([fg]),
                    interpolate,
                );
            }
        }
    }
    for _ in 0..strength.speckles {
        let (x, y) = (
            s.below(u64::from(WIDTH - 1)),
            s.below(u64::from(HEIGHT - 1)),
        );
        let v = if s.chance(50) {
            fg.saturating_add(s.below(40) as u8)
        } else {
            bg[x as usize]
        };
        let size = 1 + s.below(2);
        for dy in 0..size {
            for dx in 0..size {
                img.put_pixel((x + dx) as u32, (y + dy) as u32, Luma([v]));
            }
        }
    }
}
