//! The scene model of `interactive_reasoning`: shapes of six kinds scattered over a cluttered
//! picture, each with its own size, tilt, colour and drawing style, so that a shape's kind is
//! in its outline as a person sees it, not in a colour or an area a threshold reads.
//!
//! Everything here is integer or table driven (no `sin`/`cos`), so every platform lays out and
//! draws the same pixels from the same seed.

use crate::SeedStream;

/// Picture size in pixels.
pub const WIDTH: u32 = 360;
/// Picture height in pixels.
pub const HEIGHT: u32 = 270;

/// What a person names the shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A round disc or ring.
    Circle,
    /// A three-cornered shape.
    Triangle,
    /// A four-cornered shape with equal sides.
    Square,
    /// A five-pointed star.
    Star,
    /// A plus sign.
    Cross,
    /// A heart.
    Heart,
}

/// Every kind.
pub const KINDS: [Kind; 6] = [
    Kind::Circle,
    Kind::Triangle,
    Kind::Square,
    Kind::Star,
    Kind::Cross,
    Kind::Heart,
];

/// How a shape is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Solid.
    Filled,
    /// A thick outline.
    Outline,
    /// A thick outline broken into dashes.
    Dashed,
    /// Stripes of its two colours.
    Hatched,
    /// A thin outline filled with dots.
    Dotted,
    /// Split in two halves, one of each colour.
    TwoTone,
}

/// Every style.
pub const STYLES: [Style; 6] = [
    Style::Filled,
    Style::Outline,
    Style::Dashed,
    Style::Hatched,
    Style::Dotted,
    Style::TwoTone,
];

/// Tilts a shape may have: `(cos, sin)` of -24°..=24° in steps of 6°.
pub const TILTS: [(f32, f32); 9] = [
    (0.91355, -0.40674),
    (0.95106, -0.30902),
    (0.97815, -0.20791),
    (0.99452, -0.10453),
    (1.0, 0.0),
    (0.99452, 0.10453),
    (0.97815, 0.20791),
    (0.95106, 0.30902),
    (0.91355, 0.40674),
];

/// Colours of shapes and clutter alike, exact (no shape has a colour of its own): no kind owns
/// a colour, and a colour does not single out a shape.
pub const PALETTE: [[u8; 3]; 6] = [
    [205, 45, 45],
    [35, 100, 205],
    [35, 145, 65],
    [225, 135, 25],
    [135, 55, 175],
    [60, 60, 60],
];

/// One shape.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Its kind.
    pub kind: Kind,
    /// How it is drawn.
    pub style: Style,
    /// Centre, in pixels.
    pub x: i32,
    /// Centre, in pixels.
    pub y: i32,
    /// Radius, in pixels.
    pub r: i32,
    /// Index into [`TILTS`].
    pub tilt: usize,
    /// Horizontal and vertical stretch, in percent (a little squashed or drawn out).
    pub stretch: (i32, i32),
    /// Colour.
    pub colour: [u8; 3],
    /// Second colour (hatched and two-tone styles).
    pub colour2: [u8; 3],
    /// Outline thickness, in pixels.
    pub band: i32,
    /// Hatch direction, dot offset or split direction (0..4).
    pub pattern: u8,
}

/// A clutter stroke: a quadratic curve from `a` to `b` bent through `c`.
#[derive(Debug, Clone, Copy)]
pub struct Stroke {
    /// Start, control and end points.
    pub points: [(i32, i32); 3],
    /// Width, in pixels.
    pub width: i32,
    /// Colour.
    pub colour: [u8; 3],
    /// Drawn over the shapes (else under).
    pub over: bool,
}

/// A whole picture and the shape the question points at.
#[derive(Debug, Clone)]
pub struct Scene {
    /// Background colour.
    pub background: [u8; 3],
    /// Pale background patches: centre, radius, colour.
    pub patches: Vec<(i32, i32, i32, [u8; 3])>,
    /// Shapes, in drawing order.
    pub shapes: Vec<Shape>,
    /// Clutter.
    pub strokes: Vec<Stroke>,
    /// Indices of the shapes that answer the question.
    pub targets: Vec<usize>,
}

/// Shuffles `counts` (a kind and how many of it) into a list of `n` kinds; returns the list and
/// the positions of the first kind's shapes.
fn shuffle_kinds(s: &mut SeedStream, counts: &[(Kind, usize)]) -> (Vec<Kind>, Vec<usize>) {
    let mut all: Vec<Kind> = Vec::new();
    for &(k, c) in counts {
        all.extend(std::iter::repeat_n(k, c));
    }
    s.shuffle(&mut all);
    let first = counts[0].0;
    let targets = (0..all.len()).filter(|&i| all[i] == first).collect();
    (all, targets)
}

/// Spreads `total` shapes over `kinds`, each at least `least` times.
fn spread(s: &mut SeedStream, kinds: &[Kind], total: usize, least: usize) -> Vec<(Kind, usize)> {
    let mut counts: Vec<(Kind, usize)> = kinds.iter().map(|k| (*k, least)).collect();
    let mut left = total.saturating_sub(least * kinds.len());
    while left > 0 {
        let i = s.below(kinds.len() as u64) as usize;
        counts[i].1 += 1;
        left -= 1;
    }
    counts
}

/// Stage one: one kind appears once, three others two or more times each. `n` shapes.
/// Returns the scene (its one target is the lone shape) and the lone kind.
pub fn first(s: &mut SeedStream, n: usize) -> (Scene, Kind) {
    let mut pool = KINDS.to_vec();
    s.shuffle(&mut pool);
    let lone = pool[0];
    let mut counts = vec![(lone, 1)];
    counts.extend(spread(s, &pool[1..4], n - 1, 2));
    let (kinds, targets) = shuffle_kinds(s, &counts);
    (layout(s, &kinds, targets), lone)
}

/// Stage two: a new picture with two to four shapes of `lone`'s kind among shapes of every
/// other kind (each at least once): its targets are all the shapes of that kind.
pub fn second(s: &mut SeedStream, n: usize, lone: Kind) -> Scene {
    let others: Vec<Kind> = KINDS.iter().copied().filter(|k| *k != lone).collect();
    let same = s.range(2, 4) as usize;
    let mut counts = vec![(lone, same)];
    counts.extend(spread(s, &others, n - same, 1));
    let (kinds, targets) = shuffle_kinds(s, &counts);
    layout(s, &kinds, targets)
}

/// Places and styles the shapes, adds background patches and clutter.
fn layout(s: &mut SeedStream, kinds: &[Kind], targets: Vec<usize>) -> Scene {
    let tint = s.range(0, 12) as u8;
    let background = [246 - tint, 244, 236 + tint / 2];
    let patches = (0..s.range(3, 5))
        .map(|_| {
            let c = PALETTE[s.below(PALETTE.len() as u64) as usize];
            let pale = c.map(|v| (v as u16 * 3 / 10 + 175) as u8);
            (
                s.range(0, WIDTH as i64) as i32,
                s.range(0, HEIGHT as i64) as i32,
                s.range(35, 85) as i32,
                pale,
            )
        })
        .collect();
    let mut shapes: Vec<Shape> = Vec::with_capacity(kinds.len());
    for &kind in kinds {
        let r = s.range(15, 26) as i32;
        let mut spot = (0, 0);
        for attempt in 0..300 {
            let x = s.range(i64::from(r) + 4, i64::from(WIDTH as i32 - r - 4)) as i32;
            let y = s.range(i64::from(r) + 4, i64::from(HEIGHT as i32 - r - 4)) as i32;
            // Neighbours may overlap a little; later attempts accept more overlap.
            let room = if attempt < 200 { 74 } else { 60 };
            spot = (x, y);
            let clear = shapes.iter().all(|o| {
                let (dx, dy) = (o.x - x, o.y - y);
                let min = (o.r + r) * room / 100;
                dx * dx + dy * dy >= min * min
            });
            if clear {
                break;
            }
        }
        shapes.push(Shape {
            kind,
            style: STYLES[s.below(STYLES.len() as u64) as usize],
            x: spot.0,
            y: spot.1,
            r,
            tilt: s.below(TILTS.len() as u64) as usize,
            stretch: (s.range(88, 112) as i32, s.range(88, 112) as i32),
            colour: pick(s),
            colour2: pick(s),
            band: s.range(3, 5) as i32,
            pattern: s.below(4) as u8,
        });
    }
    let strokes = (0..s.range(7, 10))
        .map(|i| {
            let mut p = || {
                (
                    s.range(-20, i64::from(WIDTH) + 20) as i32,
                    s.range(-20, i64::from(HEIGHT) + 20) as i32,
                )
            };
            let a = p();
            let c = p();
            let b = p();
            Stroke {
                points: [a, c, b],
                width: s.range(2, 4) as i32,
                colour: pick(s),
                over: i % 2 == 0,
            }
        })
        .collect();
    Scene {
        background,
        patches,
        shapes,
        strokes,
        targets,
    }
}

fn pick(s: &mut SeedStream) -> [u8; 3] {
    PALETTE[s.below(PALETTE.len() as u64) as usize]
}

/// Whether the point `(u, v)`, in the shape's own frame scaled to its radius, is inside `kind`.
pub fn inside(kind: Kind, u: f32, v: f32) -> bool {
    match kind {
        Kind::Circle => u * u + v * v <= 0.72,
        Kind::Square => u.abs() <= 0.74 && v.abs() <= 0.74,
        Kind::Triangle => v <= 0.62 && v >= -0.92 + 1.78 * u.abs(),
        Kind::Cross => (u.abs() <= 0.3 && v.abs() <= 0.9) || (v.abs() <= 0.3 && u.abs() <= 0.9),
        Kind::Star => in_polygon(&STAR, u, v),
        Kind::Heart => {
            let (x, y) = (u * 1.2, 0.3 - v * 1.2);
            let a = x * x + y * y - 1.0;
            a * a * a - x * x * y * y * y <= 0.0
        }
    }
}

/// A five-pointed star of outer radius 0.95 and inner radius 0.4, point up.
const STAR: [(f32, f32); 10] = [
    (0.0, -0.95),
    (0.2351, -0.3236),
    (0.9035, -0.2936),
    (0.3804, 0.1236),
    (0.5584, 0.7686),
    (0.0, 0.4),
    (-0.5584, 0.7686),
    (-0.3804, 0.1236),
    (-0.9035, -0.2936),
    (-0.2351, -0.3236),
];

fn in_polygon(points: &[(f32, f32)], x: f32, y: f32) -> bool {
    let mut inside = false;
    let mut j = points.len() - 1;
    for i in 0..points.len() {
        let (xi, yi) = points[i];
        let (xj, yj) = points[j];
        if (yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi {
            inside = !inside;
        }
        j = i;
    }
    inside
}
