//! The elastic part of a distortion: a smooth random displacement field that bends each letter
//! differently (a rigid or affine template of a letter no longer fits it), while strokes stay
//! connected and a person reads the letter as a wobbly one.
//!
//! Each axis's displacement is a sum of [`TERMS`] products `a·sin(x/λx+φ)·sin(y/λy+ψ)` with
//! wavelengths of about a letter's size, so the field varies across the word and within a
//! letter. Products of a column table and a row table make it a few multiply-adds a pixel.

use super::geometry::{HEIGHT, WIDTH, unit};
use super::trig::sine;
use crate::SeedStream;

/// Sinusoid products per axis.
const TERMS: usize = 2;

/// Per-axis tables: displacement at `(x, y)` is `Σ cols[k][x]·rows[k][y]`.
pub(crate) struct Field {
    dx: [(Vec<f32>, Vec<f32>); TERMS],
    dy: [(Vec<f32>, Vec<f32>); TERMS],
}

impl Field {
    /// A field whose two terms per axis reach together at most `amplitude` pixels.
    pub fn new(s: &mut SeedStream, amplitude: f32) -> Self {
        let mut axis = || -> [(Vec<f32>, Vec<f32>); TERMS] {
            std::array::from_fn(|_| {
                let a = amplitude / TERMS as f32 * (0.7 + 0.3 * unit(s));
                let cols = wave(s, WIDTH, 18.0, 40.0, a);
                let rows = wave(s, HEIGHT, 20.0, 50.0, 1.0);
                (cols, rows)
            })
        };
        let dx = axis();
        let dy = axis();
        Field { dx, dy }
    }

    /// An upper bound on the displacement's size along either axis.
    pub fn reach(&self) -> f32 {
        let bound = |terms: &[(Vec<f32>, Vec<f32>); TERMS]| {
            terms
                .iter()
                .map(|(c, r)| {
                    let m = |v: &[f32]| v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
                    m(c) * m(r)
                })
                .sum::<f32>()
        };
        bound(&self.dx).max(bound(&self.dy))
    }

    /// The displacement at output pixel `(x, y)`.
    #[inline]
    pub fn at(&self, x: usize, y: usize) -> (f32, f32) {
        let sum = |terms: &[(Vec<f32>, Vec<f32>); TERMS]| {
            terms.iter().map(|(c, r)| c[x] * r[y]).sum::<f32>()
        };
        (sum(&self.dx), sum(&self.dy))
    }
}

/// `n` samples of `amplitude·sin(2π·i/λ + φ)`, `λ` uniform in `[min, max)` pixels.
fn wave(s: &mut SeedStream, n: u32, min: f32, max: f32, amplitude: f32) -> Vec<f32> {
    let tau = std::f32::consts::TAU;
    let lambda = min + (max - min) * unit(s);
    let phase = tau * unit(s);
    (0..n)
        .map(|i| amplitude * sine(tau * i as f32 / lambda + phase))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Seed;

    #[test]
    fn the_field_is_bounded_and_varies() {
        let mut s = Seed([7; 32]).stream();
        let f = Field::new(&mut s, 4.0);
        let mut max = 0.0f32;
        let mut values = Vec::new();
        for y in 0..HEIGHT as usize {
            for x in 0..WIDTH as usize {
                let (dx, dy) = f.at(x, y);
                max = max.max(dx.abs()).max(dy.abs());
                values.push(dx);
            }
        }
        assert!(max <= 4.0 + 1e-3, "{max}");
        assert!(max > 1.0, "{max}");
        let mean = values.iter().sum::<f32>() / values.len() as f32;
        assert!(values.iter().any(|v| (v - mean).abs() > 0.5));
    }
}
