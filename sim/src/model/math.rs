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

/// How an identity fares in one window under a step policy when each try at step `i`
/// succeeds with probability `p[i]`: tries come one by one, each serving the first step not
/// yet passed (the first answer is final: no retry of a challenge, and the family of a drawn
/// step is the issuer's, so `p[i]` is the mean over the step's pool); the window passes when
/// every step passed, and ends when a failure exceeds the spares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdentityOdds {
    /// P(every step passes within steps + spares tries).
    pub active: f64,
    /// Expected tries used.
    pub attempts: f64,
    /// Variance of the tries used.
    pub attempts_var: f64,
}

impl IdentityOdds {
    /// Exact odds by dynamic programming over (steps passed, failures so far).
    pub fn new(p: &[f64], spares: u32) -> Self {
        let (steps, spares) = (p.len(), spares as usize);
        // prob[i][f]: probability of reaching i passed steps with f failures, still going.
        let mut prob = vec![vec![0.0f64; spares + 2]; steps + 1];
        prob[0][0] = 1.0;
        let (mut active, mut e1, mut e2) = (0.0, 0.0, 0.0);
        for i in 0..=steps {
            for f in 0..=spares + 1 {
                let pr = prob[i][f];
                if pr == 0.0 {
                    continue;
                }
                if i == steps || f > spares {
                    let n = (i + f) as f64;
                    if i == steps {
                        active += pr;
                    }
                    e1 += pr * n;
                    e2 += pr * n * n;
                    continue;
                }
                prob[i + 1][f] += pr * p[i];
                prob[i][f + 1] += pr * (1.0 - p[i]);
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
    fn one_step_with_spares_is_geometric() {
        let o = IdentityOdds::new(&[0.2], 2);
        assert!((o.active - (1.0 - 0.8f64.powi(3))).abs() < 1e-12);
        // E[min(Geom, 3)] = (1 - q^3) / p.
        assert!((o.attempts - (1.0 - 0.8f64.powi(3)) / 0.2).abs() < 1e-12);
    }

    #[test]
    fn no_spares_needs_every_try() {
        let o = IdentityOdds::new(&[0.5, 0.5], 0);
        assert!((o.active - 0.25).abs() < 1e-12);
        assert!((o.attempts - 1.5).abs() < 1e-12);
    }

    #[test]
    fn a_step_no_script_can_pass_keeps_it_inactive() {
        // presence (ε = 0) then two perfect cognitive steps, any number of spares.
        for spares in [0, 1, 5] {
            let o = IdentityOdds::new(&[0.0, 1.0, 1.0], spares);
            assert_eq!(o.active, 0.0);
            assert_eq!(o.attempts, f64::from(spares + 1));
        }
    }

    #[test]
    fn dp_matches_a_monte_carlo_of_draws_without_retries() {
        // Three steps: a fixed family, then two drawn uniformly from a pool of three with
        // different success; one spare. Each try draws its own family (no shopping), and a
        // wrong answer is final for that challenge (no retry).
        let pool = [0.20, 0.25, 0.0];
        let fixed = 0.9;
        let spares = 1;
        let mean = pool.iter().sum::<f64>() / 3.0;
        let o = IdentityOdds::new(&[fixed, mean, mean], spares);
        let mut rng = crate::rng::Rng::new(17);
        let n = 400_000;
        let (mut active, mut tries) = (0u32, 0u64);
        for _ in 0..n {
            let (mut passed, mut failed) = (0, 0);
            while passed < 3 && failed <= spares {
                let p = if passed == 0 {
                    fixed
                } else {
                    pool[rng.index(pool.len())]
                };
                tries += 1;
                if rng.bernoulli(p) {
                    passed += 1;
                } else {
                    failed += 1;
                }
            }
            active += u32::from(passed == 3);
        }
        let mc = f64::from(active) / f64::from(n);
        let se = (o.active * (1.0 - o.active) / f64::from(n)).sqrt();
        assert!(
            (mc - o.active).abs() < 4.0 * se + 1e-9,
            "{mc} vs {}",
            o.active
        );
        let mc_tries = tries as f64 / f64::from(n);
        assert!(
            (mc_tries - o.attempts).abs() < 0.01,
            "{mc_tries} vs {}",
            o.attempts
        );
        // The closed form for this case: all three pass with at most one failure.
        let (a, b) = (fixed, mean);
        let exact = a * b * b * (1.0 + (1.0 - a) + 2.0 * (1.0 - b));
        assert!((o.active - exact).abs() < 1e-12, "{exact} vs {}", o.active);
    }
}
