//! Validation: every impossible value is rejected with the field's name and its allowed range.

use super::{Scenario, SlotMode};

/// Why a scenario cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario {path}: {message}")]
    Io {
        /// File path.
        path: String,
        /// OS error text.
        message: String,
    },
    /// The TOML is malformed, has an unknown field, or a value of the wrong type.
    #[error("invalid scenario TOML: {0}")]
    Parse(String),
    /// A value outside its allowed range.
    #[error("scenario field `{field}` = {value} is out of range: allowed {allowed}")]
    Range {
        /// Dotted field path.
        field: String,
        /// The offending value.
        value: String,
        /// The allowed range, in words.
        allowed: String,
    },
    /// A required value is missing.
    #[error("scenario field `{field}` is missing: {hint}")]
    Missing {
        /// Dotted field path.
        field: String,
        /// What to do about it.
        hint: String,
    },
    /// A field of older scenario files that no longer exists.
    #[error("scenario field `{field}` is gone: use {replacement}")]
    Retired {
        /// The old field.
        field: String,
        /// What replaced it.
        replacement: String,
    },
    /// The ε_auto override file is unusable.
    #[error("cannot use eps override {path}: {message}")]
    Eps {
        /// File path.
        path: String,
        /// What is wrong.
        message: String,
    },
}

fn range(field: &str, value: impl ToString, allowed: &str) -> ScenarioError {
    ScenarioError::Range {
        field: field.to_owned(),
        value: value.to_string(),
        allowed: allowed.to_owned(),
    }
}

/// `value` must be a probability.
pub(crate) fn check_prob(field: &str, value: f64) -> Result<(), ScenarioError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(range(field, value, "[0, 1]"))
    }
}

/// `value` must be finite and positive (or non-negative when `zero_ok`).
pub(crate) fn check_pos(field: &str, value: f64, zero_ok: bool) -> Result<(), ScenarioError> {
    let ok = value.is_finite() && if zero_ok { value >= 0.0 } else { value > 0.0 };
    match (ok, zero_ok) {
        (true, _) => Ok(()),
        (false, true) => Err(range(field, value, "≥ 0")),
        (false, false) => Err(range(field, value, "> 0")),
    }
}

fn check_min(field: &str, value: u64, min: u64) -> Result<(), ScenarioError> {
    if value >= min {
        Ok(())
    } else {
        Err(range(field, value, &format!("≥ {min}")))
    }
}

impl Scenario {
    /// Check every field; the first problem found is returned.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        check_min("windows", self.windows.into(), 1)?;
        check_pos("window_len", self.window_len.as_secs_f64(), false)?;
        if self.steps.is_empty() || self.steps.len() > 16 {
            return Err(range("steps", self.steps.len(), "1 to 16 steps"));
        }
        if self.spares > 16 {
            return Err(range("spares", self.spares, "0 to 16"));
        }
        if self.slots.mode != SlotMode::Open {
            check_pos("slots.len", self.slots.len.as_secs_f64(), false)?;
            if self.slots.len > self.window_len {
                return Err(range(
                    "slots.len",
                    humantime_serde::re::humantime::format_duration(self.slots.len),
                    &format!(
                        "> 0 and ≤ window_len ({})",
                        humantime_serde::re::humantime::format_duration(self.window_len)
                    ),
                ));
            }
        }
        if self.families.is_empty() {
            return Err(ScenarioError::Missing {
                field: "families".to_owned(),
                hint: "list at least one family, or omit the table for the paper's four".to_owned(),
            });
        }
        self.resolved_families()?;
        self.step_pools()?;
        self.validate_honest()?;
        self.validate_adversary()?;
        self.validate_rest()
    }

    fn validate_honest(&self) -> Result<(), ScenarioError> {
        let h = &self.honest;
        check_prob("honest.participation", h.participation)?;
        if h.cohorts.is_empty() {
            return Err(ScenarioError::Missing {
                field: "honest.cohorts".to_owned(),
                hint: "list at least one cohort, or omit it for the defaults".to_owned(),
            });
        }
        for (i, c) in h.cohorts.iter().enumerate() {
            check_prob(&format!("honest.cohorts[{i}].share"), c.share)?;
            check_pos(&format!("honest.cohorts[{i}].speed"), c.speed, false)?;
        }
        let total: f64 = h.cohorts.iter().map(|c| c.share).sum();
        if (total - 1.0).abs() > 1e-6 {
            return Err(range(
                "honest.cohorts[*].share",
                total,
                "shares summing to 1",
            ));
        }
        Ok(())
    }

    fn validate_adversary(&self) -> Result<(), ScenarioError> {
        let a = &self.adversary;
        if a.availability.is_empty() || a.availability[0].from_window != 0 {
            return Err(ScenarioError::Missing {
                field: "adversary.availability".to_owned(),
                hint: "the first piece must start at from_window = 0".to_owned(),
            });
        }
        for (i, p) in a.availability.iter().enumerate() {
            check_prob(&format!("adversary.availability[{i}].swing"), p.swing)?;
            check_min(
                &format!("adversary.availability[{i}].period"),
                p.period.into(),
                1,
            )?;
            if i > 0 && p.from_window <= a.availability[i - 1].from_window {
                return Err(range(
                    &format!("adversary.availability[{i}].from_window"),
                    p.from_window,
                    "strictly increasing from piece to piece",
                ));
            }
        }
        check_pos("adversary.wage_per_hour", a.wage_per_hour, true)?;
        check_pos("adversary.shift", a.shift.as_secs_f64(), false)?;
        check_pos(
            "adversary.automation_cost_per_attempt",
            a.automation_cost_per_attempt,
            true,
        )?;
        check_pos(
            "adversary.reward_per_identity_window",
            a.reward_per_identity_window,
            true,
        )
    }

    fn validate_rest(&self) -> Result<(), ScenarioError> {
        let b = &self.baselines;
        check_pos(
            "baselines.pow_hashes_per_identity",
            b.pow_hashes_per_identity,
            false,
        )?;
        check_pos(
            "baselines.pow_device_hash_rate",
            b.pow_device_hash_rate,
            false,
        )?;
        check_pos("baselines.pow_device_cost", b.pow_device_cost, true)?;
        if !(b.pow_device_lifetime_windows >= 1.0 && b.pow_device_lifetime_windows.is_finite()) {
            return Err(range(
                "baselines.pow_device_lifetime_windows",
                b.pow_device_lifetime_windows,
                "≥ 1",
            ));
        }
        check_pos(
            "baselines.pow_energy_cost_per_hash",
            b.pow_energy_cost_per_hash,
            true,
        )?;
        check_pos("baselines.pos_attack_stake", b.pos_attack_stake, true)?;
        check_pos(
            "baselines.pos_min_stake_per_identity",
            b.pos_min_stake_per_identity,
            true,
        )?;
        check_prob(
            "baselines.pos_interest_per_window",
            b.pos_interest_per_window,
        )?;
        let n = &self.analysis;
        check_min("analysis.cost_points", n.cost_points.into(), 3)?;
        check_min("analysis.cost_windows", n.cost_windows.into(), 1)?;
        check_pos("analysis.tau_z", n.tau_z, true)?;
        check_min("analysis.load_samples", n.load_samples.into(), 50)?;
        check_min("analysis.honest_samples", n.honest_samples.into(), 1000)?;
        for (i, d) in n.deadline_scales.iter().enumerate() {
            check_pos(&format!("analysis.deadline_scales[{i}]"), *d, false)?;
        }
        for (i, d) in n.slot_lens.iter().enumerate() {
            check_pos(&format!("analysis.slot_lens[{i}]"), d.as_secs_f64(), false)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_of(toml: &str) -> String {
        Scenario::from_toml(toml).unwrap_err().to_string()
    }

    #[test]
    fn empty_file_is_the_valid_paper_scenario() {
        let s = Scenario::from_toml("").unwrap();
        assert_eq!(s.families.len(), 4);
    }

    #[test]
    fn messages_name_the_field_and_range() {
        let e = err_of("window_len = \"0s\"");
        assert!(e.contains("`window_len`") && e.contains("> 0"), "{e}");
        let e = err_of("[families.visual_match]\nhuman_success = 1.5");
        assert!(
            e.contains("families.visual_match.human_success") && e.contains("[0, 1]"),
            "{e}"
        );
        let e = err_of("[adversary]\nwage_per_hour = -3.0");
        assert!(
            e.contains("adversary.wage_per_hour") && e.contains("≥ 0"),
            "{e}"
        );
        let e = err_of("steps = []");
        assert!(e.contains("`steps`") && e.contains("1 to 16"), "{e}");
        let e = err_of("steps = [\"presence\", \"captcha\"]");
        assert!(
            e.contains("steps[1]") && e.contains("\"cognitive\" or a family"),
            "{e}"
        );
        let e = err_of("steps = [\"cognitive\"]\n[families.presence]");
        assert!(
            e.contains("steps[0]") && e.contains("no family is left"),
            "{e}"
        );
        let e = err_of("[families.attention]\nmin_solve = \"40s\"");
        assert!(
            e.contains("families.attention.min_solve") && e.contains("< deadline"),
            "{e}"
        );
        let e = err_of("[slots]\nmode = \"global\"\nlen = \"2h\"");
        assert!(e.contains("slots.len") && e.contains("≤ window_len"), "{e}");
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let e = err_of("windoes = 3");
        assert!(e.contains("windoes"), "{e}");
    }

    #[test]
    fn retired_fields_say_what_replaced_them() {
        let e = err_of("challenges_per_window = 3\nsolves_required = 1");
        assert!(
            e.contains("challenges_per_window") && e.contains("`steps`"),
            "{e}"
        );
        let e = err_of("[families.attention]\nweight = 2.0");
        assert!(e.contains("`weight` is gone"), "{e}");
    }

    #[test]
    fn cognitive_steps_draw_from_every_family_but_presence() {
        let pools = Scenario::default().step_pools().unwrap();
        assert_eq!(pools.len(), 3);
        assert!(pools.iter().all(|p| p.families == ["presence"]));
        let s =
            Scenario::from_toml("steps = [\"presence\", \"cognitive\", \"cognitive\"]").unwrap();
        let pools = s.step_pools().unwrap();
        assert_eq!(pools[0].families, ["presence"]);
        assert_eq!(
            pools[1].families,
            ["attention", "interactive_reasoning", "visual_match"]
        );
        let s = Scenario::from_toml("steps = [\"attention\", \"cognitive\"]").unwrap();
        assert_eq!(
            s.step_pools().unwrap()[1].families,
            ["interactive_reasoning", "visual_match"]
        );
    }
}
