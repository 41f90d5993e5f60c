//! Measured automated success flowing in from the benches: `hco bench attack --json` (the
//! in-tree attackers over HTTP, the figure to use) or `hco bench families --json` (each
//! family's built-in baseline solver).
//!
//! The file maps family names to measurements, optionally nested under a top-level
//! `"families"` key. An attack entry, `{"tries": 500, "successes": 12, "wilson_low": 0.013,
//! "wilson_high": 0.041, "attacker": "template", …}`, replaces the family's `eps_auto` with
//! `successes / tries`, or with the upper end of the 95 % interval when [`EpsPick::Upper`] is
//! asked for (the cautious reading: what the measurement does not rule out). A families entry,
//! `{"baseline_success": 0.03, …}`, replaces it with `baseline_success`. Other fields are
//! ignored, and so are families the scenario does not use.

use std::path::Path;

use serde::Serialize;

use super::Scenario;
use super::validate::{ScenarioError, check_prob};

/// Which figure of an attack measurement becomes ε_auto.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EpsPick {
    /// The measured rate, `successes / tries`.
    #[default]
    Point,
    /// The upper end of its 95 % Wilson interval.
    Upper,
}

/// One override that was applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpsOverride {
    /// Family name.
    pub family: String,
    /// Value before.
    pub from: Option<f64>,
    /// Measured value now used.
    pub to: f64,
    /// The measurement's 95 % interval, when the source gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
    /// What measured it: `attack:<attacker>` or `baseline`.
    pub source: String,
}

/// A measured ε, its 95 % interval when known, and its source.
type Measured = (f64, Option<(f64, f64)>, String);

/// One family's measured ε and where it came from, read from a bench entry.
fn measured(
    name: &str,
    entry: &serde_json::Value,
    pick: EpsPick,
) -> Result<Option<Measured>, String> {
    let number = |field: &str| -> Result<Option<f64>, String> {
        match entry.get(field) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| format!("{name}.{field} is not a number")),
        }
    };
    if let (Some(tries), Some(successes)) = (number("tries")?, number("successes")?) {
        if tries < 1.0 || successes < 0.0 || successes > tries {
            return Err(format!(
                "{name}: {successes} successes of {tries} tries is not a measurement"
            ));
        }
        let interval = match (number("wilson_low")?, number("wilson_high")?) {
            (Some(lo), Some(hi)) => Some((lo, hi)),
            _ => None,
        };
        let eps = match (pick, interval) {
            (EpsPick::Upper, Some((_, hi))) => hi,
            (EpsPick::Upper, None) => {
                return Err(format!(
                    "{name}: the upper end was asked for, there is no wilson_high"
                ));
            }
            (EpsPick::Point, _) => successes / tries,
        };
        let attacker = entry
            .get("attacker")
            .and_then(|a| a.as_str())
            .unwrap_or("?");
        return Ok(Some((eps, interval, format!("attack:{attacker}"))));
    }
    Ok(number("baseline_success")?.map(|eps| (eps, None, "baseline".to_owned())))
}

/// Apply the measurements of a bench JSON document to the scenario.
pub fn apply_eps_json(
    scenario: &mut Scenario,
    json: &str,
    path: &Path,
    pick: EpsPick,
) -> Result<Vec<EpsOverride>, ScenarioError> {
    let err = |message: String| ScenarioError::Eps {
        path: path.display().to_string(),
        message,
    };
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| err(format!("not JSON: {e}")))?;
    let root = match value.get("families") {
        Some(inner) if inner.is_object() => inner,
        _ => &value,
    };
    let map = root
        .as_object()
        .ok_or_else(|| err("expected an object of families".to_owned()))?;
    let mut applied = Vec::new();
    for (name, entry) in map {
        let Some(spec) = scenario.families.get_mut(name) else {
            continue;
        };
        let Some((eps, interval, source)) = measured(name, entry, pick).map_err(err)? else {
            continue;
        };
        check_prob(&format!("{name}.baseline_success"), eps).map_err(|e| err(e.to_string()))?;
        applied.push(EpsOverride {
            family: name.clone(),
            from: spec.eps_auto,
            to: eps,
            interval,
            source,
        });
        spec.eps_auto = Some(eps);
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_success_replaces_eps() {
        let mut s = Scenario::default();
        let json = r#"{"visual_match": {"generate_per_s": 10.0, "verify_per_s": 99.0, "baseline_success": 0.03},
                       "proof_of_work": {"baseline_success": 1.0}}"#;
        let applied = apply_eps_json(&mut s, json, Path::new("m.json"), EpsPick::Point).unwrap();
        assert_eq!(applied.len(), 1);
        assert_eq!(applied[0].source, "baseline");
        let fams = s.resolved_families().unwrap();
        let vm = fams.iter().find(|f| f.name == "visual_match").unwrap();
        assert_eq!(vm.eps_auto, 0.03);
    }

    #[test]
    fn attack_measurements_replace_eps_with_the_rate_or_its_upper_end() {
        let json = r#"{"families": {"visual_match": {"tries": 500, "successes": 10,
            "wilson_low": 0.011, "wilson_high": 0.0364, "median_ms": 2100, "attacker": "template"}},
            "end_to_end": {"single": {"identity_windows": 400, "active": 0}}}"#;
        let eps_of = |pick| {
            let mut s = Scenario::default();
            let applied = apply_eps_json(&mut s, json, Path::new("a.json"), pick).unwrap();
            assert_eq!(applied[0].source, "attack:template");
            assert_eq!(applied[0].interval, Some((0.011, 0.0364)));
            let fams = s.resolved_families().unwrap();
            fams.iter()
                .find(|f| f.name == "visual_match")
                .unwrap()
                .eps_auto
        };
        assert_eq!(eps_of(EpsPick::Point), 0.02);
        assert_eq!(eps_of(EpsPick::Upper), 0.0364);
        let mut s = Scenario::default();
        let e = apply_eps_json(
            &mut s,
            r#"{"visual_match": {"tries": 5, "successes": 9}}"#,
            Path::new("a.json"),
            EpsPick::Point,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("not a measurement"), "{e}");
    }

    #[test]
    fn out_of_range_measurement_is_rejected() {
        let mut s = Scenario::default();
        let e = apply_eps_json(
            &mut s,
            r#"{"families": {"presence": {"baseline_success": 2}}}"#,
            Path::new("m.json"),
            EpsPick::Point,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("presence.baseline_success") && e.contains("[0, 1]"),
            "{e}"
        );
    }
}
