//! Success rates with their uncertainty.

use serde::Serialize;

/// `z` for a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval of `successes` out of `tries` at normal quantile `z`, as
/// `(low, high)`; `(0, 1)` when there were no tries.
pub fn wilson(successes: u64, tries: u64, z: f64) -> (f64, f64) {
    if tries == 0 {
        return (0.0, 1.0);
    }
    let n = tries as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At 0 or all successes one end is exactly 0 or 1 (not a rounding error away from it).
    let low = if successes == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let high = if successes >= tries {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (low, high)
}

/// First-try results of one attacker against one family.
#[derive(Debug, Clone, Serialize)]
pub struct Rate {
    /// First tries made.
    pub tries: u64,
    /// Of those, accepted.
    pub successes: u64,
    /// Lower end of the 95 % Wilson interval.
    pub wilson_low: f64,
    /// Upper end of the 95 % Wilson interval.
    pub wilson_high: f64,
    /// Median time from the challenge's issue to the verdict, in milliseconds.
    pub median_ms: u64,
}

impl Rate {
    /// Summarises `tries` outcomes: `(accepted, elapsed_ms)` each.
    pub fn of(outcomes: &[(bool, u64)]) -> Self {
        let tries = outcomes.len() as u64;
        let successes = outcomes.iter().filter(|(ok, _)| *ok).count() as u64;
        let (wilson_low, wilson_high) = wilson(successes, tries, Z95);
        let mut times: Vec<u64> = outcomes.iter().map(|(_, ms)| *ms).collect();
        times.sort_unstable();
        let median_ms = times.get(times.len() / 2).copied().unwrap_or(0);
        Self {
            tries,
            successes,
            wilson_low,
            wilson_high,
            median_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_published_values() {
        // Newcombe (1998), table I: 81/263 → 0.2553–0.3662.
        let (lo, hi) = wilson(81, 263, Z95);
        assert!(
            (lo - 0.2553).abs() < 5e-4 && (hi - 0.3662).abs() < 5e-4,
            "{lo} {hi}"
        );
        // 0 successes still has an upper end: 0/500 → 0 .. 0.0076.
        let (lo, hi) = wilson(0, 500, Z95);
        assert!(lo.abs() < 1e-12, "{lo}");
        assert!((hi - 0.00762).abs() < 2e-4, "{hi}");
        assert_eq!(wilson(0, 0, Z95), (0.0, 1.0));
    }

    #[test]
    fn rate_reports_the_median_time() {
        let r = Rate::of(&[(true, 30), (false, 10), (true, 20)]);
        assert_eq!((r.tries, r.successes, r.median_ms), (3, 2, 20));
        assert!(r.wilson_low < 2.0 / 3.0 && r.wilson_high > 2.0 / 3.0);
    }
}
