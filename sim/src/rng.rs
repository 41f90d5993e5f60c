//! A small, portable, seedable random number generator and the samplers the engines need.
//!
//! The generator is xoshiro256** seeded through SplitMix64. It is written out here rather than taken
//! from a crate so that a seed means the same stream on every platform and every dependency
//! version: a fixed seed makes every output of a run byte-identical.
//!
//! Streams are counter-based: [`Rng::stream`] derives an independent generator from
//! `(seed, tag, index)`, so window `t` of a run draws the same numbers whichever thread runs it.

/// SplitMix64 step: used to seed xoshiro and to mix stream keys.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stream tags: each part of a run draws from its own stream family.
pub mod tag {
    /// Per-window adversary draws.
    pub const ADVERSARY: u64 = 1;
    /// Per-window honest-population draws.
    pub const HONEST: u64 = 2;
    /// Monte-Carlo estimation of per-cohort honest success.
    pub const COHORT_MC: u64 = 3;
    /// Cost-curve experiment.
    pub const COST: u64 = 4;
    /// Exact engine.
    pub const EXACT: u64 = 5;
    /// How many identities a hired human takes on (Monte Carlo of one person's window).
    pub const LOAD: u64 = 6;
    /// Monte-Carlo check of the one-person bound.
    pub const BOUND: u64 = 7;
}

/// xoshiro256** generator.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator seeded from one 64-bit seed.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Self { s }
    }

    /// An independent stream for `(seed, tag, index)`.
    pub fn stream(seed: u64, tag: u64, index: u64) -> Self {
        let mut k = seed;
        let a = splitmix64(&mut k);
        let mut k2 = a ^ tag.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let b = splitmix64(&mut k2);
        let mut k3 = b ^ index.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7);
        Self::new(splitmix64(&mut k3))
    }

    /// Next raw 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)` with 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `(0, 1]`, safe for `ln`.
    fn uniform_open(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// `true` with probability `p`.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// An index uniform in `0..n` (`n` ≥ 1).
    pub fn index(&mut self, n: usize) -> usize {
        ((self.uniform() * n as f64) as usize).min(n.saturating_sub(1))
    }

    /// Index drawn from a cumulative weight table whose last entry is 1.
    pub fn pick(&mut self, cumulative: &[f64]) -> usize {
        let u = self.uniform();
        cumulative
            .iter()
            .position(|&c| u < c)
            .unwrap_or(cumulative.len().saturating_sub(1))
    }

    /// Standard normal (Box–Muller, one value per call).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform_open();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.uniform_open().ln()
    }

    /// Binomial(n, p). Exact inversion when the variance is small, a normal approximation with
    /// continuity correction (clamped to `[0, n]`) when it is large.
    pub fn binomial(&mut self, n: u64, p: f64) -> u64 {
        if n == 0 || p <= 0.0 {
            return 0;
        }
        if p >= 1.0 {
            return n;
        }
        let flip = p > 0.5;
        let pp = if flip { 1.0 - p } else { p };
        let nf = n as f64;
        let var = nf * pp * (1.0 - pp);
        let x = if var < 50.0 {
            self.binomial_inversion(n, pp)
        } else {
            let draw = (nf * pp + var.sqrt() * self.normal() + 0.5).floor();
            draw.clamp(0.0, nf) as u64
        };
        if flip { n - x } else { x }
    }

    fn binomial_inversion(&mut self, n: u64, p: f64) -> u64 {
        let q = 1.0 - p;
        let s = p / q;
        let a = (n as f64 + 1.0) * s;
        let mut r = q.powf(n as f64);
        let mut u = self.uniform();
        let mut x = 0u64;
        while u > r && x < n {
            u -= r;
            x += 1;
            r *= a / x as f64 - s;
            if r <= 0.0 {
                break;
            }
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(7, 1, 3).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(
            Rng::stream(7, 1, 3).next_u64(),
            Rng::stream(7, 1, 4).next_u64()
        );
        assert_ne!(
            Rng::stream(7, 1, 3).next_u64(),
            Rng::stream(7, 2, 3).next_u64()
        );
    }

    #[test]
    fn xoshiro_matches_reference_output() {
        // Reference: xoshiro256** with state [1, 2, 3, 4] yields 11520 first.
        let mut r = Rng { s: [1, 2, 3, 4] };
        assert_eq!(r.next_u64(), 11520);
        assert_eq!(r.next_u64(), 0);
        assert_eq!(r.next_u64(), 1509978240);
    }

    #[test]
    fn binomial_mean_and_variance_match() {
        let mut r = Rng::new(1);
        for &(n, p) in &[(20u64, 0.3), (1000, 0.9), (100_000, 0.02), (5, 0.5)] {
            let draws: Vec<f64> = (0..4000).map(|_| r.binomial(n, p) as f64).collect();
            let mean = draws.iter().sum::<f64>() / draws.len() as f64;
            let var =
                draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (draws.len() - 1) as f64;
            let (em, ev) = (n as f64 * p, n as f64 * p * (1.0 - p));
            assert!(
                (mean - em).abs() < 4.0 * (ev / 4000.0).sqrt() + 1e-9,
                "n={n} p={p} mean={mean}"
            );
            assert!(
                (var / ev - 1.0).abs() < 0.12,
                "n={n} p={p} var={var} want {ev}"
            );
            assert!(draws.iter().all(|&d| d <= n as f64));
        }
    }

    #[test]
    fn normal_has_unit_variance() {
        let mut r = Rng::new(9);
        let xs: Vec<f64> = (0..20_000).map(|_| r.normal()).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!(mean.abs() < 0.03);
        assert!((var - 1.0).abs() < 0.04);
    }
}
