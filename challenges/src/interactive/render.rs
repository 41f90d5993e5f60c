//! Draws a [`Scene`] into an RGB picture and encodes it as PNG: pale patches, clutter under the
//! shapes, the shapes in their styles, clutter over them.

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ImageEncoder, RgbImage};

use super::scene::{HEIGHT, Kind, Scene, Shape, Stroke, Style, TILTS, WIDTH, inside};

/// The scene as PNG bytes.
pub fn png(scene: &Scene) -> Vec<u8> {
    let img = draw(scene);
    let mut out = Vec::with_capacity(48 * 1024);
    let encoder = PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Sub);
    // Writing into a Vec cannot fail for an image of the declared size.
    let _ = encoder.write_image(img.as_raw(), WIDTH, HEIGHT, image::ExtendedColorType::Rgb8);
    out
}

/// The scene as pixels.
pub fn draw(scene: &Scene) -> RgbImage {
    let mut img = RgbImage::from_pixel(WIDTH, HEIGHT, image::Rgb(scene.background));
    for &(cx, cy, r, colour) in &scene.patches {
        disc(&mut img, cx, cy, r, colour);
    }
    for stroke in scene.strokes.iter().filter(|s| !s.over) {
        curve(&mut img, stroke);
    }
    for shape in &scene.shapes {
        draw_shape(&mut img, shape);
    }
    for stroke in scene.strokes.iter().filter(|s| s.over) {
        curve(&mut img, stroke);
    }
    img
}

fn put(img: &mut RgbImage, x: i32, y: i32, colour: [u8; 3]) {
    if x >= 0 && y >= 0 && (x as u32) < WIDTH && (y as u32) < HEIGHT {
        img.put_pixel(x as u32, y as u32, image::Rgb(colour));
    }
}

/// The pixels with `dx² + dy² <= r²` around `(cx, cy)`, filled a row span at a time.
fn disc(img: &mut RgbImage, cx: i32, cy: i32, r: i32, colour: [u8; 3]) {
    let (w, h) = (WIDTH as i32, HEIGHT as i32);
    for y in (cy - r).max(0)..=(cy + r).min(h - 1) {
        let rest = r * r - (y - cy) * (y - cy);
        // The widest `dx` with `dx² <= rest`.
        let mut m = f64::from(rest).sqrt() as i32;
        while m * m > rest {
            m -= 1;
        }
        while (m + 1) * (m + 1) <= rest {
            m += 1;
        }
        let (x0, x1) = ((cx - m).max(0), (cx + m).min(w - 1));
        if x0 > x1 {
            continue;
        }
        let row = (y * w) as usize * 3;
        let span = &mut img.as_mut()[row + x0 as usize * 3..row + (x1 as usize + 1) * 3];
        for px in span.chunks_exact_mut(3) {
            px.copy_from_slice(&colour);
        }
    }
}

/// A quadratic Bézier curve, stamped with small discs.
fn curve(img: &mut RgbImage, s: &Stroke) {
    let [(ax, ay), (cx, cy), (bx, by)] = s.points;
    let steps = 160;
    let half = s.width / 2;
    for i in 0..=steps {
        // Integer de Casteljau in 1/steps units.
        let (t, u) = (i, steps - i);
        let x = (u * u * ax + 2 * u * t * cx + t * t * bx) / (steps * steps);
        let y = (u * u * ay + 2 * u * t * cy + t * t * by) / (steps * steps);
        for dy in -half..=s.width - half - 1 {
            for dx in -half..=s.width - half - 1 {
                put(img, x + dx, y + dy, s.colour);
            }
        }
    }
}

/// Whether pixel `(px, py)` is painted by `shape`.
pub fn covers(shape: &Shape, px: i32, py: i32) -> bool {
    paint(shape, px, py).is_some()
}

/// The colour `shape` paints pixel `(px, py)` with, if any.
pub fn paint(shape: &Shape, px: i32, py: i32) -> Option<[u8; 3]> {
    let frame = Frame::of(shape);
    let (dx, dy) = ((px - shape.x) as f32 + 0.5, (py - shape.y) as f32 + 0.5);
    let (u, v) = frame.uv(dx, dy);
    paint_at(shape, px, py, u, v)
}

/// A shape's own frame: pixel offsets to `(u, v)`, turned by its tilt and scaled to its radius
/// and stretch (the reciprocals computed once per shape, not per pixel).
struct Frame {
    /// `∂u/∂dx`, `∂u/∂dy`.
    du: (f32, f32),
    /// `∂v/∂dx`, `∂v/∂dy`.
    dv: (f32, f32),
}

impl Frame {
    fn of(shape: &Shape) -> Self {
        let (c, s) = TILTS[shape.tilt];
        let r = shape.r as f32;
        let (rx, ry) = (
            r * shape.stretch.0 as f32 / 100.0,
            r * shape.stretch.1 as f32 / 100.0,
        );
        Self {
            du: (c / rx, s / rx),
            dv: (-s / ry, c / ry),
        }
    }

    fn uv(&self, dx: f32, dy: f32) -> (f32, f32) {
        (
            dx * self.du.0 + dy * self.du.1,
            dx * self.dv.0 + dy * self.dv.1,
        )
    }
}

/// [`paint`] with the pixel's frame coordinates `(u, v)` already known.
fn paint_at(shape: &Shape, px: i32, py: i32, u: f32, v: f32) -> Option<[u8; 3]> {
    if !inside(shape.kind, u, v) {
        return None;
    }
    let r = shape.r as f32;
    let (dx, dy) = ((px - shape.x) as f32 + 0.5, (py - shape.y) as f32 + 0.5);
    let (one, two) = (Some(shape.colour), Some(shape.colour2));
    let band = match shape.style {
        Style::Filled => return one,
        Style::TwoTone => {
            let side = match shape.pattern {
                0 => dx,
                1 => dy,
                2 => dx + dy,
                _ => dx - dy,
            };
            return if side < 0.0 { one } else { two };
        }
        Style::Hatched => {
            let t = match shape.pattern {
                0 => px + py,
                1 => px - py,
                2 => px,
                _ => py,
            };
            return if t.rem_euclid(8) < 4 { one } else { two };
        }
        Style::Outline | Style::Dashed => shape.band as f32,
        Style::Dotted => 1.6,
    };
    let k = r / (r - band).max(1.0);
    // A cross's arms keep their outline at the ends too.
    let on_edge = !inside(shape.kind, u * k, v * k)
        || (shape.kind == Kind::Cross && !inside(shape.kind, u * 1.08, v * 1.08));
    match shape.style {
        Style::Outline if on_edge => one,
        Style::Dashed if on_edge => {
            ((px.div_euclid(5) + py.div_euclid(5)).rem_euclid(3) != 0).then_some(shape.colour)
        }
        Style::Dotted if on_edge => one,
        Style::Dotted => {
            let o = i32::from(shape.pattern);
            ((px + o).rem_euclid(6) < 3 && (py + o).rem_euclid(6) < 3).then_some(shape.colour2)
        }
        _ => None,
    }
}

fn draw_shape(img: &mut RgbImage, shape: &Shape) {
    let frame = Frame::of(shape);
    let reach = shape.r * 6 / 5 + 2;
    for py in shape.y - reach..=shape.y + reach {
        let dy = (py - shape.y) as f32 + 0.5;
        for px in shape.x - reach..=shape.x + reach {
            let dx = (px - shape.x) as f32 + 0.5;
            let (u, v) = frame.uv(dx, dy);
            if let Some(colour) = paint_at(shape, px, py, u, v) {
                put(img, px, py, colour);
            }
        }
    }
}
