//! Every committed scenario loads; bad ones fail naming the field and its range.

use hco_sim::scenario::Scenario;

#[test]
fn committed_scenarios_are_valid() {
    let dir = crate::config("");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            Scenario::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert!(
        n >= 3,
        "expected the example scenarios in {}",
        dir.display()
    );
}

#[test]
fn paper_toml_is_the_default_scenario() {
    let file = Scenario::load(&crate::config("paper.toml")).unwrap();
    let default = Scenario::default();
    assert_eq!(
        file.resolved_families().unwrap(),
        default.resolved_families().unwrap()
    );
    let (mut a, mut b) = (
        serde_json::to_value(&file).unwrap(),
        serde_json::to_value(&default).unwrap(),
    );
    a["families"] = serde_json::Value::Null;
    b["families"] = serde_json::Value::Null;
    assert_eq!(a, b);
}

#[test]
fn impossible_values_name_field_and_range() {
    let cases = [
        ("windows = 0", "windows", "≥ 1"),
        ("window_len = \"0s\"", "window_len", "> 0"),
        (
            "[honest]\nparticipation = 1.2",
            "honest.participation",
            "[0, 1]",
        ),
        (
            "[adversary]\nautomation_cost_per_attempt = -0.1",
            "adversary.automation_cost_per_attempt",
            "≥ 0",
        ),
        (
            "[families.presence]\neps_auto = -0.5",
            "families.presence.eps_auto",
            "[0, 1]",
        ),
        (
            "[baselines]\npow_device_hash_rate = 0.0",
            "baselines.pow_device_hash_rate",
            "> 0",
        ),
        (
            "[[adversary.availability]]\nfrom_window = 0\nhumans = 5\nswing = 2.0",
            "adversary.availability[0].swing",
            "[0, 1]",
        ),
    ];
    for (toml, field, range) in cases {
        let err = Scenario::from_toml(toml).unwrap_err().to_string();
        assert!(
            err.contains(field) && err.contains(range),
            "{toml:?} gave {err}"
        );
    }
}

#[test]
fn a_missing_value_says_what_to_add() {
    let err = Scenario::from_toml("[families.my_family]\nhuman_success = 0.9").unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("families.my_family.deadline") && msg.contains("missing"),
        "{msg}"
    );
}
