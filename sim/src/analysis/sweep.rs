//! Honest false rejects under each deadline and slot length (accessibility).
//!
//! For every slot length (or the whole window when slots are `open`) and every deadline
//! multiplier, each cohort's chance of getting through a window is estimated by Monte Carlo
//! and weighted by the cohort shares.

use serde::Serialize;

use crate::model::Model;
use crate::rng::{Rng, tag};
use crate::scenario::{Scenario, SlotMode};

/// One cell of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Slot length in seconds (the window length for `open`).
    pub slot_s: f64,
    /// Deadline multiplier applied to every family.
    pub deadline_scale: f64,
    /// Share of participating honest users who miss the window.
    pub false_reject: f64,
    /// The same share per cohort, in cohort order.
    pub by_cohort: Vec<f64>,
}

/// Run the sweep.
pub fn false_reject_sweep(s: &Scenario, model: &Model, seed: u64) -> Vec<SweepPoint> {
    let slots: Vec<f64> = match s.slots.mode {
        SlotMode::Open => vec![s.window_len.as_secs_f64()],
        _ => s
            .analysis
            .slot_lens
            .iter()
            .map(|d| d.as_secs_f64())
            .collect(),
    };
    let mut out = Vec::new();
    for (i, &slot_s) in slots.iter().enumerate() {
        for (j, &scale) in s.analysis.deadline_scales.iter().enumerate() {
            let mut rng = Rng::stream(seed, tag::COHORT_MC, 1 + ((i as u64) << 16) + j as u64);
            let by_cohort: Vec<f64> = model
                .cohorts
                .iter()
                .map(|c| {
                    1.0 - model.honest_active(
                        &mut rng,
                        c.speed,
                        scale,
                        slot_s,
                        s.analysis.honest_samples,
                    )
                })
                .collect();
            let false_reject = model
                .cohorts
                .iter()
                .zip(&by_cohort)
                .map(|(c, f)| c.share * f)
                .sum();
            out.push(SweepPoint {
                slot_s,
                deadline_scale: scale,
                false_reject,
                by_cohort,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longer_deadlines_and_slots_reject_fewer() {
        let mut s = Scenario::default();
        s.analysis.honest_samples = 4000;
        let model = Model::new(&s, 1).unwrap();
        let pts = false_reject_sweep(&s, &model, 1);
        let at = |slot: f64, scale: f64| {
            pts.iter()
                .find(|p| p.slot_s == slot && p.deadline_scale == scale)
                .unwrap()
                .false_reject
        };
        assert!(at(300.0, 0.5) > at(300.0, 2.0) + 0.02);
        assert!(at(60.0, 1.0) > at(600.0, 1.0) + 0.02);
        // Slow cohorts bear more of the rejects.
        let p = pts
            .iter()
            .find(|p| p.slot_s == 60.0 && p.deadline_scale == 0.5)
            .unwrap();
        assert!(p.by_cohort[2] > p.by_cohort[0]);
    }
}
