//! The `scene-cv` attacker's eyes: a computer-vision parser of `interactive_reasoning`
//! pictures written with the renderer's source in hand. It knows the exact palette (ink is
//! any palette colour), the stroke widths, the shapes' geometry (it fits the family's own
//! `inside` tests) and the question rules (one lone kind; then every shape of that kind).
//!
//! Pipeline: ink mask → closing (bridges dashes, stripes and dots) → small enclosed holes
//! filled (outlines become silhouettes) → opening (removes the thin clutter strokes) →
//! connected blobs → blobs too big for one shape split by erosion seeds → each blob's kind
//! by the best overlap with the renderer's silhouettes over sizes and tilts.
//!
//! Self-contained (the image crate and the family's public geometry), so the HTTP tests
//! include it as is.

use hco_challenges::interactive::scene::{HEIGHT, KINDS, Kind, PALETTE, TILTS, WIDTH, inside};

const W: usize = WIDTH as usize;
const H: usize = HEIGHT as usize;

/// A shape the parser found: where to click and what it takes it for.
#[derive(Debug, Clone, Copy)]
pub struct Found {
    /// Click point (the blob's centroid).
    pub x: u16,
    /// Click point.
    pub y: u16,
    /// The kind with the best fit.
    pub kind: Kind,
    /// Its overlap score (intersection over union).
    pub score: f32,
    /// The best score of each kind, in [`KINDS`] order.
    pub scores: [f32; 6],
}

/// Decodes a base64 PNG prompt image.
pub fn decode(b64: &str) -> Option<image::RgbImage> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    Some(
        image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
            .ok()?
            .to_rgb8(),
    )
}

/// Every shape-like blob of the picture, classified.
pub fn parse(img: &image::RgbImage) -> Vec<Found> {
    blobs(img).iter().map(|b| classify(b)).collect()
}

/// Every shape-like blob of the picture (pixel indices), unclassified.
pub fn blobs(img: &image::RgbImage) -> Vec<Vec<usize>> {
    if img.width() as usize != W || img.height() as usize != H {
        return Vec::new();
    }
    let ink: Vec<bool> = img.pixels().map(|p| PALETTE.contains(&p.0)).collect();
    let closed = erode(&dilate(&ink, 2), 2);
    let filled = fill_small_holes(&closed, 2000);
    let opened = dilate(&erode(&filled, 3), 3);
    let mut found = Vec::new();
    for blob in components(&opened, 150) {
        for part in split(&blob) {
            if part.len() >= 150 {
                found.push(part);
            }
        }
    }
    found
}

/// Stage 1: the blob of the kind found exactly once (ties: the best-fitting one).
pub fn solve_first(found: &[Found]) -> Option<Found> {
    let count = |k: Kind| found.iter().filter(|f| f.kind == k).count();
    let lone = found
        .iter()
        .filter(|f| count(f.kind) == 1)
        .max_by(|a, b| a.score.total_cmp(&b.score));
    lone.or_else(|| {
        // No lone kind seen: the least frequent kind's best fit.
        found.iter().min_by(|a, b| {
            (count(a.kind), -a.score)
                .partial_cmp(&(count(b.kind), -b.score))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
    })
    .copied()
}

/// Stage 2: every blob taken for `kind` (two to four: the best fits of that kind).
pub fn solve_second(found: &[Found], kind: Kind) -> Vec<(u16, u16)> {
    let k = KINDS.iter().position(|x| *x == kind).unwrap_or(0);
    let mut same: Vec<&Found> = found.iter().filter(|f| f.kind == kind).collect();
    same.sort_by(|a, b| b.scores[k].total_cmp(&a.scores[k]));
    same.truncate(4);
    if same.len() < 2 {
        let mut rest: Vec<&Found> = found.iter().filter(|f| f.kind != kind).collect();
        rest.sort_by(|a, b| b.scores[k].total_cmp(&a.scores[k]));
        same.extend(rest.into_iter().take(2 - same.len()));
    }
    same.iter().map(|f| (f.x, f.y)).collect()
}

/// The centroid of a blob, as a click.
pub fn centre(blob: &[usize]) -> (u16, u16) {
    let (x, y) = centroid(blob);
    (x.round() as u16, y.round() as u16)
}

/// Max filter with a square of half-width `r`.
fn dilate(m: &[bool], r: usize) -> Vec<bool> {
    morph(m, r, true)
}

/// Min filter with a square of half-width `r` (outside the picture counts as empty).
fn erode(m: &[bool], r: usize) -> Vec<bool> {
    morph(m, r, false)
}

fn morph(m: &[bool], r: usize, max: bool) -> Vec<bool> {
    let pass = |src: &[bool], horizontal: bool| {
        let mut out = vec![false; W * H];
        for y in 0..H {
            for x in 0..W {
                let (c, len) = if horizontal { (x, W) } else { (y, H) };
                let lo = c.saturating_sub(r);
                let hi = (c + r).min(len - 1);
                let edge = c < r || c + r >= len;
                let mut acc = !max;
                for k in lo..=hi {
                    let v = if horizontal {
                        src[y * W + k]
                    } else {
                        src[k * W + x]
                    };
                    if max {
                        acc |= v;
                    } else {
                        acc &= v;
                    }
                }
                out[y * W + x] = if max { acc } else { acc && !edge };
            }
        }
        out
    };
    pass(&pass(m, true), false)
}

/// Fills enclosed empty regions smaller than `limit` pixels.
fn fill_small_holes(m: &[bool], limit: usize) -> Vec<bool> {
    let empty: Vec<bool> = m.iter().map(|v| !v).collect();
    let mut out = m.to_vec();
    for region in components4(&empty) {
        let touches = region
            .iter()
            .any(|&i| i % W == 0 || i % W == W - 1 || i / W == 0 || i / W == H - 1);
        if region.len() < limit && !touches {
            for i in region {
                out[i] = true;
            }
        }
    }
    out
}

fn flood(m: &[bool], eight: bool) -> Vec<Vec<usize>> {
    let mut seen = vec![false; W * H];
    let mut out = Vec::new();
    for start in 0..W * H {
        if !m[start] || seen[start] {
            continue;
        }
        seen[start] = true;
        let mut stack = vec![start];
        let mut region = Vec::new();
        while let Some(i) = stack.pop() {
            region.push(i);
            let (x, y) = ((i % W) as i64, (i / W) as i64);
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    if (dx == 0 && dy == 0) || (!eight && dx != 0 && dy != 0) {
                        continue;
                    }
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx >= W as i64 || ny >= H as i64 {
                        continue;
                    }
                    let j = ny as usize * W + nx as usize;
                    if m[j] && !seen[j] {
                        seen[j] = true;
                        stack.push(j);
                    }
                }
            }
        }
        out.push(region);
    }
    out
}

fn components4(m: &[bool]) -> Vec<Vec<usize>> {
    flood(m, false)
}

/// 8-connected blobs of at least `least` pixels.
fn components(m: &[bool], least: usize) -> Vec<Vec<usize>> {
    flood(m, true)
        .into_iter()
        .filter(|r| r.len() >= least)
        .collect()
}

/// Splits a blob too big for one shape: erodes it until it falls apart into seeds, then gives
/// each pixel to the nearest seed.
fn split(blob: &[usize]) -> Vec<Vec<usize>> {
    // The largest single shape: radius 26, stretched 112 %, a square of side 1.48 r.
    if blob.len() < 1700 {
        return vec![blob.to_vec()];
    }
    let mut m = vec![false; W * H];
    for &i in blob {
        m[i] = true;
    }
    for _ in 0..6 {
        m = erode(&m, 2);
        let seeds = components(&m, 15);
        if seeds.len() >= 2 {
            let centres: Vec<(f32, f32)> = seeds.iter().map(|s| centroid(s)).collect();
            let mut parts = vec![Vec::new(); centres.len()];
            for &i in blob {
                let (x, y) = ((i % W) as f32, (i / W) as f32);
                let nearest = centres
                    .iter()
                    .enumerate()
                    .min_by(|a, b| {
                        let da = (a.1.0 - x).powi(2) + (a.1.1 - y).powi(2);
                        let db = (b.1.0 - x).powi(2) + (b.1.1 - y).powi(2);
                        da.total_cmp(&db)
                    })
                    .map_or(0, |(k, _)| k);
                parts[nearest].push(i);
            }
            return parts;
        }
        if seeds.is_empty() {
            break;
        }
    }
    vec![blob.to_vec()]
}

fn centroid(region: &[usize]) -> (f32, f32) {
    let n = region.len().max(1) as f32;
    let sx: f32 = region.iter().map(|&i| (i % W) as f32).sum();
    let sy: f32 = region.iter().map(|&i| (i / W) as f32).sum();
    (sx / n, sy / n)
}

/// Area of a kind's silhouette at radius 1 (computed once).
fn unit_area(kind: Kind) -> f32 {
    static AREAS: std::sync::OnceLock<Vec<f32>> = std::sync::OnceLock::new();
    let areas = AREAS.get_or_init(|| KINDS.iter().map(|k| measure_area(*k)).collect());
    areas[KINDS.iter().position(|k| *k == kind).unwrap_or(0)]
}

fn measure_area(kind: Kind) -> f32 {
    let n = 200;
    let mut hits = 0;
    for j in 0..n {
        for i in 0..n {
            let (u, v) = (
                (i as f32 + 0.5) / n as f32 * 2.0 - 1.0,
                (j as f32 + 0.5) / n as f32 * 2.0 - 1.0,
            );
            if inside(kind, u, v) {
                hits += 1;
            }
        }
    }
    4.0 * hits as f32 / (n * n) as f32
}

/// The best fit of every kind to the blob: silhouettes at the blob's centroid, sized to its
/// area, over tilts and a few scales; the score is intersection over union.
fn classify(region: &[usize]) -> Found {
    let (cx, cy) = centroid(region);
    let area = region.len() as f32;
    let mut set = vec![false; W * H];
    for &i in region {
        set[i] = true;
    }
    let mut scores = [0f32; 6];
    for (k, &kind) in KINDS.iter().enumerate() {
        let base = (area / unit_area(kind)).sqrt();
        for scale in [0.94f32, 1.0, 1.06] {
            let r = base * scale;
            for &(c, s) in TILTS.iter().step_by(2) {
                let reach = (r * 1.3) as i64 + 2;
                // Template pixels around the origin, then aligned on the blob's centroid.
                let mut pts = Vec::new();
                // Every other pixel each way: a quarter of the work, the same ranking.
                for dy in (-reach..=reach).step_by(2) {
                    for dx in (-reach..=reach).step_by(2) {
                        let (fx, fy) = (dx as f32, dy as f32);
                        let (u, v) = ((fx * c + fy * s) / r, (fy * c - fx * s) / r);
                        if inside(kind, u, v) {
                            pts.push((dx, dy));
                        }
                    }
                }
                if pts.is_empty() {
                    continue;
                }
                let n = pts.len() as f32;
                let mx = pts.iter().map(|p| p.0 as f32).sum::<f32>() / n;
                let my = pts.iter().map(|p| p.1 as f32).sum::<f32>() / n;
                let (ox, oy) = ((cx - mx).round() as i64, (cy - my).round() as i64);
                let inter = pts
                    .iter()
                    .filter(|(dx, dy)| {
                        let (x, y) = (ox + dx, oy + dy);
                        x >= 0
                            && y >= 0
                            && (x as usize) < W
                            && (y as usize) < H
                            && set[y as usize * W + x as usize]
                    })
                    .count() as f32;
                let iou = inter / (n + area / 4.0 - inter);
                scores[k] = scores[k].max(iou);
            }
        }
    }
    let (k, score) = scores
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or((0, 0.0), |(k, s)| (k, *s));
    Found {
        x: cx.round().clamp(0.0, W as f32 - 1.0) as u16,
        y: cy.round().clamp(0.0, H as f32 - 1.0) as u16,
        kind: KINDS[k],
        score,
        scores,
    }
}
