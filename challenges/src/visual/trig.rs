//! Sine and cosine from IEEE basic arithmetic only, so rendering is identical on every
//! platform (the platform `libm` may differ in the last bit).

/// `sin(x)` for any finite `x`: range reduction and an odd polynomial, accurate to about 1e-6
/// and identical on every platform.
pub(crate) fn sine(x: f32) -> f32 {
    use std::f64::consts::{PI, TAU};
    let mut x = f64::from(x) % TAU;
    if x > PI {
        x -= TAU;
    } else if x < -PI {
        x += TAU;
    }
    // Fold into [-π/2, π/2], where the polynomial converges fast.
    if x > PI / 2.0 {
        x = PI - x;
    } else if x < -PI / 2.0 {
        x = -PI - x;
    }
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    for k in 1..8 {
        term *= -x2 / f64::from((2 * k) * (2 * k + 1));
        sum += term;
    }
    sum as f32
}

/// `cos(x)`.
pub(crate) fn cosine(x: f32) -> f32 {
    sine(x + std::f32::consts::FRAC_PI_2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_platform_sine() {
        for i in -2000..2000 {
            let x = i as f32 * 0.01;
            assert!((sine(x) - x.sin()).abs() < 1e-5, "{x}");
            assert!((cosine(x) - x.cos()).abs() < 1e-5, "{x}");
        }
    }
}
