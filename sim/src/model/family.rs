//! One family's human attempt: a shifted log-normal solve time cut at the deadline.

use crate::rng::Rng;
use crate::scenario::ResolvedFamily;

use super::math::norm_cdf;

/// A family ready for sampling, with its closed-form moments.
#[derive(Debug, Clone)]
pub struct FamilyModel {
    /// Family name.
    pub name: String,
    /// Deadline, seconds.
    pub deadline_s: f64,
    /// Least time from the fetch to an answer, seconds.
    pub min_solve_s: f64,
    /// Mean solve time of a typical human, seconds.
    pub mean_s: f64,
    /// Probability a human answers correctly in time.
    pub p_correct: f64,
    /// Automated success ε_auto.
    pub eps_auto: f64,
    /// Reaction floor, seconds.
    pub min_s: f64,
    ln_mu: f64,
    ln_sigma: f64,
}

/// Moments of one attempt's duration and its success probability.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AttemptMoments {
    /// E\[A\], seconds.
    pub mean: f64,
    /// E\[A²\], seconds².
    pub second: f64,
    /// P(answer correct and in time).
    pub success: f64,
}

impl FamilyModel {
    /// Build from a resolved family.
    pub fn new(f: &ResolvedFamily) -> Self {
        let st = f.solve_time;
        let mean_x = st.mean_s - st.min_s;
        let sd = st.cv * st.mean_s;
        let sigma2 = (1.0 + (sd / mean_x).powi(2)).ln();
        Self {
            name: f.name.clone(),
            deadline_s: f.deadline_s,
            min_solve_s: f.min_solve_s,
            mean_s: st.mean_s,
            p_correct: f.human_success,
            eps_auto: f.eps_auto,
            min_s: st.min_s,
            ln_mu: mean_x.ln() - sigma2 / 2.0,
            ln_sigma: sigma2.sqrt(),
        }
    }

    /// A solve time for a human `speed` times slower than typical.
    pub fn sample_time(&self, rng: &mut Rng, speed: f64) -> f64 {
        speed * (self.min_s + (self.ln_mu + self.ln_sigma * rng.normal()).exp())
    }

    /// One attempt: `(time spent, accepted)`. A human gives up at the deadline.
    pub fn sample_attempt(&self, rng: &mut Rng, speed: f64, deadline_scale: f64) -> (f64, bool) {
        let deadline = self.deadline_s * deadline_scale;
        let t = self.sample_time(rng, speed);
        if t > deadline {
            (deadline, false)
        } else {
            (t, rng.bernoulli(self.p_correct))
        }
    }

    /// Closed-form moments of `A = min(T, deadline)` and of success.
    pub fn moments(&self, speed: f64, deadline_scale: f64) -> AttemptMoments {
        let deadline = self.deadline_s * deadline_scale;
        let d = deadline / speed - self.min_s;
        if d <= 0.0 {
            return AttemptMoments {
                mean: deadline,
                second: deadline * deadline,
                success: 0.0,
            };
        }
        let (mu, s) = (self.ln_mu, self.ln_sigma);
        let z = (d.ln() - mu) / s;
        let tail = 1.0 - norm_cdf(z);
        let m1 = (mu + s * s / 2.0).exp() * norm_cdf(z - s) + d * tail;
        let m2 = (2.0 * mu + 2.0 * s * s).exp() * norm_cdf(z - 2.0 * s) + d * d * tail;
        let c = self.min_s;
        AttemptMoments {
            mean: speed * (c + m1),
            second: speed * speed * (c * c + 2.0 * c * m1 + m2),
            success: self.p_correct * norm_cdf(z),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::paper_family;

    #[test]
    fn sampled_moments_match_closed_form() {
        for name in ["visual_match", "attention"] {
            let fam = FamilyModel::new(&paper_family(name).unwrap());
            for (speed, scale) in [(1.0, 1.0), (2.5, 0.5)] {
                let m = fam.moments(speed, scale);
                let mut rng = Rng::new(3);
                let n = 40_000;
                let (mut s1, mut s2, mut ok) = (0.0, 0.0, 0u32);
                for _ in 0..n {
                    let (a, success) = fam.sample_attempt(&mut rng, speed, scale);
                    s1 += a;
                    s2 += a * a;
                    ok += u32::from(success);
                }
                let n = f64::from(n);
                assert!((s1 / n / m.mean - 1.0).abs() < 0.01, "{name} mean");
                assert!((s2 / n / m.second - 1.0).abs() < 0.03, "{name} second");
                assert!(
                    (f64::from(ok) / n - m.success).abs() < 0.01,
                    "{name} success"
                );
            }
        }
    }

    #[test]
    fn typical_mean_matches_table_3() {
        let fam = FamilyModel::new(&paper_family("interactive_reasoning").unwrap());
        // With a generous deadline the attempt mean is the solve-time mean.
        assert!((fam.moments(1.0, 100.0).mean - 12.0).abs() < 0.01);
    }
}
