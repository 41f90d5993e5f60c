//! The baseline solver of `visual_match`: template matching against clean renderings of the
//! candidate labels in the same font, the attack the paper's 𝓘-enumeration argument expects.
//!
//! An image becomes a feature grid: Otsu threshold, thin clutter lines and speckles dropped
//! (vertical runs of ink under four pixels), the ink's
//! orientation estimated from its second moments and undone, its robust bounding box binned
//! into a 48×16 density grid, blurred and normalised. The label whose clean rendering gives
//! the most correlated grid wins. PIX compares against the six offered labels. For MATCHA the
//! clean reference is recognised exactly (the bot renders every label itself and looks the
//! image up), and the distorted word is judged "same" when the reference ranks among the
//! [`SAME_RANK`] best of all labels of its length. It knows the label list and the renderer,
//! as the paper's adversary does; it does not know the seed.

use std::collections::HashMap;
use std::sync::OnceLock;

use image::GrayImage;

use super::encode::{clean_base64, decode_base64_png, labels};
use super::geometry::{HEIGHT, WIDTH};
use super::render::clean;
use super::{MATCHA_ROUNDS, VisualData};

/// Largest prompt payload the baseline reads.
const MAX_DATA: usize = 1 << 20;
/// Grid size of the features.
const FW: usize = 48;
const FH: usize = 16;
/// Shortest vertical run of ink kept as part of a letter.
const MIN_RUN: usize = 4;
/// A MATCHA pair is called "same" when the reference is among this many best labels.
pub(crate) const SAME_RANK: usize = 3;

type Features = Vec<f32>;

/// The baseline's answer to a prompt's data, or `None` when it cannot read it.
pub(crate) fn solve(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() > MAX_DATA {
        return None;
    }
    let data: VisualData = serde_json::from_slice(data).ok()?;
    match data.mode.as_str() {
        "pix" => {
            let f = features(&decode_base64_png(data.images.first()?)?)?;
            let best = data
                .choices
                .iter()
                .filter_map(|c| Some((c, correlate(&f, template(index_of(c)?)?))))
                .max_by(|a, b| a.1.total_cmp(&b.1))?;
            Some(best.0.clone().into_bytes())
        }
        "matcha" => {
            let mut answer = Vec::with_capacity(MATCHA_ROUNDS);
            for pair in data.images.chunks_exact(2) {
                let reference = recognise_clean(&pair[0])?;
                let f = features(&decode_base64_png(&pair[1])?)?;
                let len = labels()[reference].len();
                let own = correlate(&f, template(reference)?);
                let better = labels()
                    .iter()
                    .enumerate()
                    .filter(|&(i, w)| i != reference && w.len() == len)
                    .filter_map(|(i, _)| template(i))
                    .filter(|t| correlate(&f, t) > own)
                    .count();
                answer.push(if better < SAME_RANK { b'S' } else { b'D' });
            }
            Some(answer)
        }
        _ => None,
    }
}

fn index_of(label: &str) -> Option<usize> {
    labels().binary_search_by(|l| l.as_str().cmp(label)).ok()
}

/// The label whose clean rendering is exactly this image, by table look-up.
fn recognise_clean(b64: &str) -> Option<usize> {
    static TABLE: OnceLock<HashMap<&'static str, usize>> = OnceLock::new();
    let table = TABLE.get_or_init(|| (0..labels().len()).map(|i| (clean_base64(i), i)).collect());
    table.get(b64).copied()
}

/// The features of label `index`'s clean rendering, computed once.
fn template(index: usize) -> Option<&'static Features> {
    static CACHE: OnceLock<Vec<OnceLock<Option<Features>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| (0..labels().len()).map(|_| OnceLock::new()).collect());
    cache
        .get(index)?
        .get_or_init(|| features(&clean(&labels()[index])))
        .as_ref()
}

fn correlate(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
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

fn quantile(sorted: &[f32], q: f32) -> f32 {
    sorted[((sorted.len() - 1) as f32 * q) as usize]
}

/// The normalised density grid of an image's ink, deskewed; `None` if there is hardly any.
fn features(img: &GrayImage) -> Option<Features> {
    let (w, h) = (WIDTH as usize, HEIGHT as usize);
    let px = img.as_raw();
    if px.len() != w * h {
        return None;
    }
    let mut hist = [0u32; 256];
    for &p in px {
        hist[usize::from(p)] += 1;
    }
    let t = otsu(&hist);
    // Clutter lines and speckles are at most three pixels tall; letter strokes are thicker.
    // Keep dark pixels whose vertical run is at least `MIN_RUN` long.
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
    let mut pts = Vec::new();
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            if keep[y * w + x] {
                let around = (y - 1..=y + 1)
                    .flat_map(|yy| (x - 1..=x + 1).map(move |xx| (xx, yy)))
                    .filter(|&(xx, yy)| keep[yy * w + xx])
                    .count();
                if around > 3 {
                    pts.push((x as f32, y as f32));
                }
            }
        }
    }
    if pts.len() < 40 {
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
    let theta = (0.5 * (2.0 * m11).atan2(m20 - m02)).clamp(-0.5, 0.5);
    let (s, c) = theta.sin_cos();
    let rotated: Vec<(f32, f32)> = pts
        .iter()
        .map(|&(x, y)| {
            let (dx, dy) = (x - mx, y - my);
            (dx * c + dy * s, -dx * s + dy * c)
        })
        .collect();
    let mut us: Vec<f32> = rotated.iter().map(|p| p.0).collect();
    let mut vs: Vec<f32> = rotated.iter().map(|p| p.1).collect();
    us.sort_by(f32::total_cmp);
    vs.sort_by(f32::total_cmp);
    let (u0, u1) = (quantile(&us, 0.01), quantile(&us, 0.99) + 1e-3);
    let (v0, v1) = (quantile(&vs, 0.02), quantile(&vs, 0.98) + 1e-3);
    let mut grid = vec![0.0f32; FW * FH];
    for (u, v) in rotated {
        if u < u0 || u > u1 || v < v0 || v > v1 {
            continue;
        }
        let gx = (((u - u0) / (u1 - u0) * FW as f32) as usize).min(FW - 1);
        let gy = (((v - v0) / (v1 - v0) * FH as f32) as usize).min(FH - 1);
        grid[gy * FW + gx] += 1.0;
    }
    Some(normalise(blur(&grid)))
}

fn blur(grid: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0f32; FW * FH];
    for y in 0..FH {
        for x in 0..FW {
            let mut acc = 0.0;
            for yy in y.saturating_sub(1)..=(y + 1).min(FH - 1) {
                for xx in x.saturating_sub(1)..=(x + 1).min(FW - 1) {
                    acc += grid[yy * FW + xx];
                }
            }
            out[y * FW + x] = acc;
        }
    }
    out
}

fn normalise(mut v: Vec<f32>) -> Features {
    let mean = v.iter().sum::<f32>() / v.len() as f32;
    v.iter_mut().for_each(|x| *x -= mean);
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}
