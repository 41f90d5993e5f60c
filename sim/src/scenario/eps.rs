//! Measured automated success flowing in from `hco bench families --json`.
//!
//! The file maps family names to measurements:
//! `{"visual_match": {"generate_per_s": 1e4, "verify_per_s": 1e5, "baseline_success": 0.03}}`
//! (optionally nested under a top-level `"families"` key). Each `baseline_success` replaces that
//! family's `eps_auto`; other fields are ignored, and so are families the scenario does not use.

use std::path::Path;

use serde::Serialize;

use super::Scenario;
use super::validate::{ScenarioError, check_prob};

/// One override that was applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpsOverride {
    /// Family name.
    pub family: String,
    /// Value before.
    pub from: Option<f64>,
    /// Measured value now used.
    pub to: f64,
}

/// Apply the `baseline_success` values of an eps JSON document to the scenario.
pub fn apply_eps_json(
    scenario: &mut Scenario,
    json: &str,
    path: &Path,
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
        let Some(eps) = entry.get("baseline_success") else {
            continue;
        };
        let eps = eps
            .as_f64()
            .ok_or_else(|| err(format!("{name}.baseline_success is not a number")))?;
        check_prob(&format!("{name}.baseline_success"), eps).map_err(|e| err(e.to_string()))?;
        applied.push(EpsOverride {
            family: name.clone(),
            from: spec.eps_auto,
            to: eps,
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
        let applied = apply_eps_json(&mut s, json, Path::new("m.json")).unwrap();
        assert_eq!(applied.len(), 1);
        let fams = s.resolved_families().unwrap();
        let vm = fams.iter().find(|f| f.name == "visual_match").unwrap();
        assert_eq!(vm.eps_auto, 0.03);
    }

    #[test]
    fn out_of_range_measurement_is_rejected() {
        let mut s = Scenario::default();
        let e = apply_eps_json(
            &mut s,
            r#"{"families": {"presence": {"baseline_success": 2}}}"#,
            Path::new("m.json"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("presence.baseline_success") && e.contains("[0, 1]"),
            "{e}"
        );
    }
}
