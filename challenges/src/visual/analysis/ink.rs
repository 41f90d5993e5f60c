//! Ink extraction written against the family's clutter: Otsu threshold, thin clutter lines and
//! speckles dropped (ink whose vertical run is under [`MIN_RUN`] pixels, then specks of under
//! [`MIN_SPECK`] connected pixels), and the rotation undone from the ink's second moments.

use image::GrayImage;

/// Shortest vertical run of ink kept as part of a letter (clutter lines are two pixels tall).
const MIN_RUN: usize = 4;
/// Smallest connected piece of ink kept.
const MIN_SPECK: usize = 12;

/// A float map of ink, 1 for ink and 0 for background.
#[derive(Debug, Clone)]
pub struct Ink {
    /// Width in pixels.
    pub w: usize,
    /// Height in pixels.
    pub h: usize,
    /// Row-major values.
    pub v: Vec<f32>,
}

impl Ink {
    /// The value at `(x, y)`, 0 outside.
    pub fn at(&self, x: i64, y: i64) -> f32 {
        if x < 0 || y < 0 || x as usize >= self.w || y as usize >= self.h {
            0.0
        } else {
            self.v[y as usize * self.w + x as usize]
        }
    }

    /// As a black-on-white grey image, for OCR engines.
    pub fn to_image(&self) -> GrayImage {
        let px = self
            .v
            .iter()
            .map(|&v| 255 - (v.clamp(0.0, 1.0) * 255.0) as u8)
            .collect();
        GrayImage::from_raw(self.w as u32, self.h as u32, px)
            .unwrap_or_else(|| GrayImage::new(1, 1))
    }
}

/// The threshold that best separates the histogram into two classes (Otsu).
fn otsu(hist: &[u32; 256]) -> u8 {
    let total: f64 = hist.iter().map(|&c| f64::from(c)).sum();
    let sum: f64 = hist
        .iter()
        .enumerate()
        .map(|(i, &c)| i as f64 * f64::from(c))
        .sum();
    let (mut w0, mut sum0, mut best, mut best_t) = (0.0, 0.0, -1.0, 128u8);
    for (t, &c) in hist.iter().enumerate() {
        w0 += f64::from(c);
        sum0 += t as f64 * f64::from(c);
        let w1 = total - w0;
        if w0 == 0.0 || w1 == 0.0 {
            continue;
        }
        let (m0, m1) = (sum0 / w0, (sum - sum0) / w1);
        let between = w0 * w1 * (m0 - m1) * (m0 - m1);
        if between > best {
            best = between;
            best_t = t as u8;
        }
    }
    best_t
}

/// The cleaned ink of an image, not yet deskewed.
pub fn extract(img: &GrayImage) -> Ink {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let px = img.as_raw();
    let mut hist = [0u32; 256];
    px.iter().for_each(|&p| hist[usize::from(p)] += 1);
    let t = otsu(&hist);
    let mut keep = vec![false; w * h];
    for x in 0..w {
        let mut y = 0;
        while y < h {
            if px[y * w + x] > t {
                y += 1;
                continue;
            }
            let start = y;
            while y < h && px[y * w + x] <= t {
                y += 1;
            }
            if y - start >= MIN_RUN {
                (start..y).for_each(|yy| keep[yy * w + x] = true);
            }
        }
    }
    drop_specks(&mut keep, w, h);
    Ink {
        w,
        h,
        v: keep.iter().map(|&k| if k { 1.0 } else { 0.0 }).collect(),
    }
}

/// Clears 8-connected pieces of fewer than [`MIN_SPECK`] pixels.
fn drop_specks(keep: &mut [bool], w: usize, h: usize) {
    let mut seen = vec![false; w * h];
    let mut stack = Vec::new();
    let mut piece = Vec::new();
    for start in 0..w * h {
        if !keep[start] || seen[start] {
            continue;
        }
        piece.clear();
        stack.push(start);
        seen[start] = true;
        while let Some(i) = stack.pop() {
            piece.push(i);
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            for (dx, dy) in [
                (-1, -1),
                (0, -1),
                (1, -1),
                (-1, 0),
                (1, 0),
                (-1, 1),
                (0, 1),
                (1, 1),
            ] {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                    continue;
                }
                let j = ny as usize * w + nx as usize;
                if keep[j] && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        if piece.len() < MIN_SPECK {
            piece.iter().for_each(|&i| keep[i] = false);
        }
    }
}

/// The ink turned so that its principal axis is horizontal, about its centroid, on a canvas of
/// the same size; also the ink's vertical extent (5 % to 95 % quantiles) after turning.
pub fn deskew(ink: &Ink) -> Option<(Ink, f32, f32)> {
    let pts: Vec<(f32, f32)> = (0..ink.h)
        .flat_map(|y| (0..ink.w).map(move |x| (x, y)))
        .filter(|&(x, y)| ink.v[y * ink.w + x] > 0.5)
        .map(|(x, y)| (x as f32, y as f32))
        .collect();
    if pts.len() < 60 {
        return None;
    }
    let n = pts.len() as f32;
    let (mx, my) = pts
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x / n, b + y / n));
    let (mut m20, mut m02, mut m11) = (0.0f32, 0.0f32, 0.0f32);
    for &(x, y) in &pts {
        m20 += (x - mx) * (x - mx);
        m02 += (y - my) * (y - my);
        m11 += (x - mx) * (y - my);
    }
    let theta = (0.5 * (2.0 * m11).atan2(m20 - m02)).clamp(-0.4, 0.4);
    let (s, c) = theta.sin_cos();
    let (cx, cy) = (ink.w as f32 / 2.0, ink.h as f32 / 2.0);
    let mut v = vec![0.0f32; ink.w * ink.h];
    for y in 0..ink.h {
        for x in 0..ink.w {
            // Output (x, y) centred on the canvas centre ← source turned by +theta.
            let (dx, dy) = (x as f32 - cx, y as f32 - cy);
            let sx = mx + dx * c - dy * s;
            let sy = my + dx * s + dy * c;
            let (x0, y0) = (sx.floor(), sy.floor());
            let (fx, fy) = (sx - x0, sy - y0);
            let (x0, y0) = (x0 as i64, y0 as i64);
            let top = ink.at(x0, y0) * (1.0 - fx) + ink.at(x0 + 1, y0) * fx;
            let bot = ink.at(x0, y0 + 1) * (1.0 - fx) + ink.at(x0 + 1, y0 + 1) * fx;
            v[y * ink.w + x] = top * (1.0 - fy) + bot * fy;
        }
    }
    let turned = Ink {
        w: ink.w,
        h: ink.h,
        v,
    };
    let mut ys: Vec<f32> = (0..turned.h)
        .flat_map(|y| (0..turned.w).map(move |x| (x, y)))
        .filter(|&(x, y)| turned.v[y * turned.w + x] > 0.5)
        .map(|(_, y)| y as f32)
        .collect();
    ys.sort_by(f32::total_cmp);
    let q = |p: f32| ys[((ys.len() - 1) as f32 * p) as usize];
    Some((turned, q(0.03), q(0.97)))
}
