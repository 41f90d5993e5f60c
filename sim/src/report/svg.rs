//! A thin layer over plotters' SVG backend: one chart of line and point series with a legend.
//! Text is emitted as SVG `<text>`, so no font files are needed to draw.

use std::path::Path;

use plotters::prelude::*;

use crate::error::SimError;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A polyline through the points.
    Line,
    /// A dot per point.
    Dots,
}

/// One series of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Colour.
    pub color: RGBColor,
    /// Line or dots.
    pub mark: Mark,
    /// Points `(x, y)`.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A series.
    pub fn new(
        label: impl Into<String>,
        color: RGBColor,
        mark: Mark,
        points: Vec<(f64, f64)>,
    ) -> Self {
        Self {
            label: label.into(),
            color,
            mark,
            points,
        }
    }
}

/// Palette.
pub const HCO: RGBColor = RGBColor(31, 119, 180);
/// Palette.
pub const ALERT: RGBColor = RGBColor(214, 39, 40);
/// Palette.
pub const BOUND: RGBColor = RGBColor(44, 44, 44);
/// Palette.
pub const POW: RGBColor = RGBColor(255, 127, 14);
/// Palette.
pub const POS: RGBColor = RGBColor(44, 160, 44);
/// Palette for several lines.
pub const CYCLE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn bounds(series: &[Series]) -> (f64, f64, f64, f64) {
    let pts = series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| p.0.is_finite() && p.1.is_finite());
    let (mut x0, mut x1, mut y0, mut y1) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let pad = |lo: f64, hi: f64| {
        let span = if hi > lo { hi - lo } else { 1.0 };
        (
            lo - if lo < 0.0 { 0.05 * span } else { 0.0 },
            hi + 0.05 * span,
        )
    };
    let (x0, x1) = pad(x0, x1);
    let (y0, y1) = pad(y0, y1);
    (x0, x1, y0, y1)
}

/// Draw a chart into `path`.
pub fn chart(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<(), SimError> {
    let err = |e: &dyn std::fmt::Display| SimError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (x0, x1, y0, y1) = bounds(series);
    let mut ch = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| err(&e))?;
    ch.configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .light_line_style(WHITE)
        .draw()
        .map_err(|e| err(&e))?;
    for s in series {
        let color = s.color;
        let pts = s
            .points
            .iter()
            .copied()
            .filter(|p| p.0.is_finite() && p.1.is_finite());
        let anno = match s.mark {
            Mark::Line => ch
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(|e| err(&e))?,
            Mark::Dots => ch
                .draw_series(pts.map(|p| Circle::new(p, 3, color.filled())))
                .map_err(|e| err(&e))?,
        };
        anno.label(s.label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 4), (x + 16, y + 4)], color.filled()));
    }
    ch.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}
