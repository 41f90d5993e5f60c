//! Small numerical helpers: the normal CDF and the odds of an identity's window.

/// Complementary error function (Numerical Recipes `erfcc`, relative error < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Standard normal CDF.
pub fn norm_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// How an identity fares in one window when each challenge succeeds with probability `p`:
/// challenges are answered one by one until `r` succeed or success becomes impossible.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdentityOdds {
    /// P(at least `r` of `k` succeed).
    pub active: f64,
    /// Expected challenges answered.
    pub attempts: f64,
    /// Variance of the challenges answered.
    pub attempts_var: f64,
}

impl IdentityOdds {
    /// Odds for `k` challenges, `r` needed, per-challenge success `p`.
    pub fn new(k: u32, r: u32, p: f64) -> Self {
        let allowed_failures = k - r; // the (k-r+1)-th failure ends the window
        // prob[s][f]: probability of having reached (s successes, f failures) while still going.
        let (r, fl) = (r as usize, allowed_failures as usize);
        let mut prob = vec![vec![0.0f64; fl + 2]; r + 1];
        prob[0][0] = 1.0;
        let (mut active, mut e1, mut e2) = (0.0, 0.0, 0.0);
        for s in 0..=r {
            for f in 0..=fl + 1 {
                let pr = prob[s][f];
                if pr == 0.0 {
                    continue;
                }
                let n = (s + f) as f64;
                if s == r || f == fl + 1 {
                    if s == r {
                        active += pr;
                    }
                    e1 += pr * n;
                    e2 += pr * n * n;
                    continue;
                }
                prob[s + 1][f] += pr * p;
                prob[s][f + 1] += pr * (1.0 - p);
            }
        }
        Self {
            active,
            attempts: e1,
            attempts_var: (e2 - e1 * e1).max(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norm_cdf_known_values() {
        assert!((norm_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((norm_cdf(1.96) - 0.975_002_1).abs() < 1e-6);
        assert!((norm_cdf(-3.0) - 0.001_349_9).abs() < 1e-6);
    }

    #[test]
    fn odds_for_one_of_k_are_geometric() {
        let o = IdentityOdds::new(3, 1, 0.2);
        assert!((o.active - (1.0 - 0.8f64.powi(3))).abs() < 1e-12);
        // E[min(Geom, 3)] = (1 - q^3) / p.
        assert!((o.attempts - (1.0 - 0.8f64.powi(3)) / 0.2).abs() < 1e-12);
        // Successes per attempt equal p when r = 1.
        assert!((o.active / o.attempts - 0.2).abs() < 1e-12);
    }

    #[test]
    fn odds_for_all_of_k() {
        let o = IdentityOdds::new(2, 2, 0.5);
        assert!((o.active - 0.25).abs() < 1e-12);
        assert!((o.attempts - 1.5).abs() < 1e-12);
    }
}
