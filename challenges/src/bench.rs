//! Family benchmarks (`hco bench families --json`): generation and verification rates, and the
//! success rate of each family's built-in solver (the baseline script, whose success is the
//! family's measured ε_auto; for `proof_of_work` the intended solver).
//!
//! Each family gets a time budget split between generation, verification and baseline trials;
//! every loop is bounded by both its time and a count, so the whole run is bounded.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::{AnswerKey, Family, FamilyParams, Registry, Seed};

/// Most baseline attempts per family.
pub const MAX_BASELINE_TRIALS: u32 = 400;

/// One family's figures.
#[derive(Debug, Clone, Serialize)]
pub struct FamilyBench {
    /// `human` or `agent`.
    pub class: &'static str,
    /// The difficulty measured (the family's default).
    pub difficulty: u32,
    /// Prompts generated per second (one core).
    pub generate_per_s: f64,
    /// Correct answers verified per second (one core).
    pub verify_per_s: f64,
    /// Fraction of baseline attempts that verified.
    pub baseline_success: f64,
    /// Baseline attempts made.
    pub baseline_trials: u32,
    /// For `presence`: the same assertions through the WebAuthn library alone (a state built
    /// once, no challenge binding or counter bookkeeping), the reference `verify_per_s` is
    /// measured against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library_verify_per_s: Option<f64>,
    /// For `attention`: whole streams rendered per second (every frame drawn and PNG-encoded),
    /// the work an issuer does while a person plays the challenge, beyond `generate_per_s`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streams_per_s: Option<f64>,
}

fn seed(i: u64) -> Seed {
    let mut s = [0x5au8; 32];
    s[..8].copy_from_slice(&i.to_le_bytes());
    Seed(s)
}

fn rate(count: u64, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64().max(1e-9)
}

/// Measures one family within `budget`.
pub fn bench_family(family: &dyn Family, params: &FamilyParams, budget: Duration) -> FamilyBench {
    let slice = budget / 3;

    // Warm-up, untimed: tables a family builds on first use (glyph atlases, reference images)
    // are not part of its steady-state rate.
    for i in 0..16 {
        std::hint::black_box(family.generate(&seed(u64::MAX - i), params));
    }

    let start = Instant::now();
    let mut generated = 0u64;
    while start.elapsed() < slice && generated < 5_000_000 {
        for i in 0..64 {
            std::hint::black_box(family.generate(&seed(generated + i), params));
        }
        generated += 64;
    }
    let generate_per_s = rate(generated, start.elapsed());

    let start = Instant::now();
    let mut trials = 0u32;
    let mut solved = 0u32;
    let mut pairs: Vec<(AnswerKey, Vec<u8>)> = Vec::new();
    while trials < MAX_BASELINE_TRIALS && (trials < 10 || start.elapsed() < slice) {
        let g = family.generate(&seed(1_000_000 + u64::from(trials)), params);
        let answer = family.solve(&g.prompt);
        let verified_ok = answer
            .as_ref()
            .is_some_and(|a| family.verify(&g.key, a).is_ok());
        if verified_ok {
            solved += 1;
        }
        if pairs.len() < 64 {
            match (family.reference_answer(&g.key), answer) {
                (Some(r), _) => pairs.push((g.key, r)),
                (None, Some(a)) if verified_ok => pairs.push((g.key, a)),
                _ => {}
            }
        }
        trials += 1;
    }

    let start = Instant::now();
    let mut verified = 0u64;
    if !pairs.is_empty() {
        while start.elapsed() < slice && verified < 50_000_000 {
            for (key, answer) in &pairs {
                std::hint::black_box(family.verify(key, answer).is_ok());
            }
            verified += pairs.len() as u64;
        }
    }
    FamilyBench {
        class: family.class().as_str(),
        difficulty: params.difficulty,
        generate_per_s,
        verify_per_s: rate(verified, start.elapsed()),
        baseline_success: f64::from(solved) / f64::from(trials.max(1)),
        baseline_trials: trials,
        library_verify_per_s: None,
        streams_per_s: (family.name() == crate::attention::NAME)
            .then(|| stream_rate(family, params, slice)),
    }
}

/// Whole attention streams rendered per second within `budget` (at least two).
fn stream_rate(family: &dyn Family, params: &FamilyParams, budget: Duration) -> f64 {
    let start = Instant::now();
    let mut streams = 0u64;
    while streams < 2 || (start.elapsed() < budget && streams < 100_000) {
        let g = family.generate(&seed(2_000_000 + streams), params);
        let Some(live) = crate::attention::Live::from_key(&g.key) else {
            return 0.0;
        };
        for i in 0..live.frames().len() {
            std::hint::black_box(live.render(i));
        }
        streams += 1;
    }
    rate(streams, start.elapsed())
}

/// Measures every family of the registry at its default parameters, `per_family` each.
pub fn bench_families(
    registry: &Registry,
    per_family: Duration,
) -> BTreeMap<&'static str, FamilyBench> {
    registry
        .names()
        .filter_map(|name| {
            let family = registry.get(name)?;
            #[cfg(feature = "soft-authenticator")]
            if name == crate::presence::NAME {
                // Needs an enrolled authenticator: its own loop.
                return crate::presence::bench(per_family).ok().map(|b| (name, b));
            }
            Some((
                name,
                bench_family(family.as_ref(), &family.default_params(), per_family),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_reports_every_family_within_its_budget() {
        let registry = Registry::builtin();
        let start = Instant::now();
        let report = bench_families(&registry, Duration::from_millis(150));
        let json = serde_json::to_value(&report).unwrap();
        for name in [
            "narrative_chain",
            "obfuscated_text_lock",
            "multi_pass_lock",
            "semantic_math_lock",
            "proof_of_work",
            "visual_match",
            "interactive_reasoning",
            "attention",
        ] {
            let f = &json[name];
            assert!(f["generate_per_s"].as_f64().unwrap() > 0.0, "{name}");
            assert!(f["verify_per_s"].as_f64().unwrap() > 0.0, "{name}");
            assert!(f["baseline_success"].is_number(), "{name}");
        }
        assert_eq!(json["proof_of_work"]["baseline_success"], 1.0);
        // The lock families are labelled baselines: their solvers invert the templates.
        for lock in [
            "obfuscated_text_lock",
            "multi_pass_lock",
            "semantic_math_lock",
        ] {
            assert!(report[lock].baseline_success >= 0.95, "{lock}");
        }
        // The simple attention bot answers with a constant reaction time: always rejected.
        assert_eq!(report["attention"].baseline_success, 0.0);
        for (name, f) in &report {
            eprintln!(
                "{name:22} gen/s {:>10.0}  verify/s {:>11.0}  baseline {:.3} ({} trials, difficulty {})",
                f.generate_per_s,
                f.verify_per_s,
                f.baseline_success,
                f.baseline_trials,
                f.difficulty
            );
        }
        assert!(start.elapsed() < Duration::from_secs(30));
    }
}
