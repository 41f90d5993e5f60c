//! `hco bench scale` at a small size: every phase runs on real sled and the report is whole
//! and consistent (no timing is asserted).

use super::*;

fn args(identities: u64) -> ScaleArgs {
    ScaleArgs {
        identities,
        json: true,
        threads: Some(2),
        batch: 256,
        proofs: 10,
        audit_sample: 200,
    }
}

#[test]
fn a_small_run_reports_every_figure() {
    let n = 2_000;
    let report = measure(&args(n)).unwrap();
    let json: serde_json::Value = serde_json::to_value(&report).unwrap();
    for field in [
        "certify_s",
        "disk_bytes_per_identity",
        "rss_mb",
        "register_s",
        "record_s",
        "proof_us_p50",
        "proof_us_p99",
        "reconcile_s",
        "prune_s",
        "disk_bytes",
    ] {
        let value = json[field].as_f64();
        assert!(
            value.is_some_and(|v| v > 0.0),
            "{field} is {:?}",
            json[field]
        );
    }
    assert_eq!(report.accepted as u64, n);
    assert_eq!(report.active, n);
    assert_eq!(report.reconciled as u64, n);
    assert!(report.reconciled_root_matches);
    assert_eq!(report.proof_samples, 10);
    assert!(report.proof_us_p99 >= report.proof_us_p50);
    assert_eq!(report.audit_sample, 200);
    // Window records (issued and accepted per identity, summaries, the certificate, the
    // reveal) are removed, then every identity, idle once its window is gone.
    assert!(report.pruned_records as u64 >= 2 * n);
    assert_eq!(report.pruned_identities as u64, n);
    assert!(report.disk_bytes > report.registry_disk_bytes);
    assert!(report.acceptance_bytes > 100.0);
    assert!(report.rss_mb >= report.rss_start_mb);
    let committees = json["extrapolation"]["committees"].as_array().unwrap();
    let members: Vec<_> = committees.iter().map(|c| c["members"].as_u64()).collect();
    assert_eq!(members, [Some(4), Some(16)]);
    for c in committees {
        assert!(c["time_to_certificate_s"].as_f64().unwrap() > 0.0);
        assert!(c["gossip_in_bytes_per_member"].as_f64().unwrap() > 0.0);
        assert!(c["disk_bytes_per_window"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn sizes_out_of_bounds_are_refused() {
    for n in [0, MAX_IDENTITIES + 1] {
        let err = measure(&args(n)).unwrap_err().to_string();
        assert!(err.contains("--identities"), "{err}");
    }
}
