//! The one-person attacker over HTTP: `hco bench attack --one-person` starts a node on loopback
//! with production's ceremony (touch prompts on their beats, strict attestation of the bench's
//! own key, a shorter window and slot), registers a dozen identities with one credential each
//! on one key, answers every cognitive step from the answer key, and has one person touch the
//! prompts one at a time. The person keeps at least one identity and no more than the touch
//! bound allows — alone against the node, and against a committee of four whose last member
//! colludes with the person (`--malicious-member`).

use serde_json::Value;

use crate::support::hco;

/// Runs the bench on production's ceremony in a 100 s window with `extra` arguments; its
/// `one_person` report.
fn bench(extra: &[&str]) -> Value {
    let out = hco()
        .args([
            "bench",
            "attack",
            "--json",
            "--one-person",
            "--touch-ms",
            "1000",
            "--identities",
            "12",
            "--windows",
            "1",
            "--window-length",
            "100s",
            "--grace",
            "50s",
            "--slot",
            "40s",
        ])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let mut v: Value = serde_json::from_str(stdout.trim().lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    let r = v["one_person"].take();
    eprintln!("{r}");
    r
}

fn n(r: &Value, field: &str) -> u64 {
    r[field]
        .as_u64()
        .unwrap_or_else(|| panic!("no {field}: {r}"))
}

/// The touch bound `B·(J + r)/(m·touch)` of the ceremony the node ran (B beats that may carry
/// a prompt, each J + r long, m touches per identity-window, a touch a second), and `m`.
fn touch_bound(r: &Value) -> (u64, f64) {
    let c = &r["ceremony"];
    let get = |field: &str| {
        c[field]
            .as_u64()
            .unwrap_or_else(|| panic!("no ceremony.{field}: {r}"))
    };
    let (b, m, reaction, jitter) = (
        get("beats"),
        get("prompt_steps"),
        get("reaction_ms"),
        get("prompt_jitter_ms"),
    );
    assert!(m >= 1 && b >= m, "production has touch prompts: {c}");
    (m, (b * (jitter + reaction)) as f64 / (m * 1000) as f64)
}

#[test]
fn one_person_attacker_is_bounded() {
    let r = &bench(&[]);
    let n = |field: &str| n(r, field);
    assert_eq!((n("held"), n("windows"), n("touch_ms")), (12, 1, 1000));

    let (m, bound) = touch_bound(r);
    assert_eq!(r["touch_bound"].as_f64(), Some(bound), "{r}");

    let active = n("active");
    assert!(active >= 1, "a person keeps at least one identity: {r}");
    assert!(
        active as f64 <= bound.floor(),
        "{active} active is more than the touch bound {bound}: {r}"
    );
    // The node's count agrees with the wilson interval's input and the losses add up.
    let losses: u64 = r["losses_by_code"]
        .as_object()
        .unwrap_or_else(|| panic!("{r}"))
        .values()
        .filter_map(Value::as_u64)
        .sum();
    assert_eq!(active + losses, 12, "{r}");
    assert!(r["losses_by_code"].get("harness_error").is_none(), "{r}");
    // Every cognitive answer and the touched prompts were accepted (one may miss its deadline
    // on a loaded machine): what bounds the person is the touches, not the bench.
    let p = &r["prompts"];
    let touched = p["touched"].as_u64().unwrap_or(0);
    assert!(touched >= m * active, "{r}");
    assert!(p["accepted"].as_u64().unwrap_or(0) + 1 >= touched, "{r}");
    for (family, a) in r["cognitive"].as_object().unwrap_or_else(|| panic!("{r}")) {
        assert_eq!(a["accepted"], a["answered"], "{family}: {r}");
    }
}

/// A committee of four whose last member serves its prompts from their beat's start and accepts
/// them up to a relay round late (`stretch-prompts`), with no evidence: the person keeps more
/// than alone, at most `(B·(J + r) + Δ)/(m·touch)`, and the window is still certified.
#[test]
fn one_person_with_a_malicious_member_is_bounded_by_the_member_bound() {
    let r = &bench(&["--committee", "4", "--malicious-member"]);
    let n = |field: &str| n(r, field);
    assert_eq!((n("held"), n("committee")), (12, 4));
    assert_eq!(r["malicious_member"], true, "{r}");
    let w = &r["by_window"][0];
    assert_eq!(
        w["certified"], true,
        "the honest members certify the window: {r}"
    );
    // The fault leaves nothing to accuse the member of.
    assert_eq!(
        (w["evidence"].as_u64(), w["excluded_members"].as_u64()),
        (Some(0), Some(0)),
        "{r}"
    );
    let (_, honest) = touch_bound(r);
    let bound = r["member_touch_bound"]
        .as_f64()
        .unwrap_or_else(|| panic!("{r}"));
    assert!(bound > honest, "{r}");
    let active = n("active");
    assert!(active >= 1, "a person keeps at least one identity: {r}");
    assert!(
        active as f64 <= bound.floor(),
        "{active} active is more than the member bound {bound}: {r}"
    );
    // Twelve identities overload one person, who touches the member's prompts last (they are
    // due a relay round later): some are answered past their deadline, and still count.
    assert!(r["prompts"]["stretched"].as_u64().unwrap_or(0) >= 1, "{r}");
    assert!(r["losses_by_code"].get("harness_error").is_none(), "{r}");
}
