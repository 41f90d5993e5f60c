//! The visual attackers over real HTTP: `hco bench attack` starts a node on loopback whose
//! human policy is one `visual_match` step, and every visual attacker plays 30 fresh
//! identities' first tries against the real deadline and minimum solve time.

use crate::support::hco_json;

#[test]
fn visual_attackers_fail_over_http() {
    let (ok, v) = hco_json(&[
        "bench",
        "attack",
        "--json",
        "--families",
        "visual_match",
        "--tries",
        "30",
        "--identity-windows",
        "0",
    ]);
    assert!(ok, "{v}");
    let attackers = v["families"]["visual_match"]["attackers"]
        .as_object()
        .unwrap_or_else(|| panic!("{v}"));
    for name in ["template", "tesseract", "blind-guess"] {
        let a = &attackers[name];
        eprintln!("{name}: {a}");
        assert_eq!(a["tries"], 30, "{v}");
        // Answers in time: the refusals are wrong answers, not expiries.
        let mismatches = a["refusals"]["answer_mismatch"].as_u64().unwrap_or(0);
        assert!(mismatches >= 27, "{name} answered too few in time: {a}");
        assert!(a["successes"].as_u64().unwrap() <= 1, "{name}: {a}");
    }
}
