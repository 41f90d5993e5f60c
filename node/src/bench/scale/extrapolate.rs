//! The figures of `hco bench scale` carried from the measured size to 10^7 identities and a
//! committee of 4 or 16 members, from per-identity costs measured in the same run.
//!
//! Formulas (`r = 10^7 / N`, `M` members, one acceptance per active identity per step):
//! - `certify_s = certify_s(N) · r`: the ledger scan and the Merkle tree are linear, the sort
//!   `N log N` (a small share at 10^6); the quorum's summary checks are `M`-independent in
//!   practice (`quorum − 1` signature checks);
//! - `audit_s = audit_us · 10^7 · (M − 1) / M`: each member audits the acceptances the others
//!   issued when it summarizes, one at a time (the audit loop is sequential);
//! - `time_to_certificate_s = certify_s + audit_s` (after the window closes and the reveals are
//!   in);
//! - `gossip_in_bytes_per_member = 10^7 · steps · acceptance_bytes · (M − 1) / M`: each member
//!   receives every acceptance it did not issue once; a gossip mesh relays duplicates on top
//!   (a floor, not a ceiling);
//! - `gossip_out_bytes_per_member = 10^7 · steps · acceptance_bytes / M · (M − 1)`: an issuer's
//!   own acceptances sent once to each other member;
//! - `disk_bytes_per_window = window_disk_bytes_per_identity · 10^7` and
//!   `registry_disk_bytes = registry_disk_bytes_per_identity · 10^7`: every member keeps every
//!   acceptance and registration, whatever `M`;
//! - `rss_mb = ram_mb_per_million · 10 + rss_start_mb`;
//! - `reconcile_s = reconcile_s(N) · r`: a member catching up a whole window from a peer.

use serde::Serialize;

/// The identities extrapolated to.
pub const TARGET: f64 = 1e7;

/// Committee sizes extrapolated to.
pub const COMMITTEES: [u32; 2] = [4, 16];

/// Measured inputs of the extrapolation.
#[derive(Debug, Clone, Serialize)]
pub struct Inputs {
    pub identities: u64,
    pub steps_per_identity: f64,
    pub certify_s: f64,
    pub audit_us_per_acceptance: f64,
    pub acceptance_bytes: f64,
    pub window_disk_bytes_per_identity: f64,
    pub registry_disk_bytes_per_identity: f64,
    pub ram_mb_per_million: f64,
    pub rss_start_mb: f64,
    pub reconcile_s: f64,
}

/// The figures for one committee size.
#[derive(Debug, Clone, Serialize)]
pub struct Committee {
    pub members: u32,
    pub certify_s: f64,
    pub audit_s: f64,
    pub time_to_certificate_s: f64,
    pub gossip_in_bytes_per_member: f64,
    pub gossip_out_bytes_per_member: f64,
    pub disk_bytes_per_window: f64,
    pub registry_disk_bytes: f64,
    pub rss_mb: f64,
    pub reconcile_s: f64,
}

/// The extrapolation to [`TARGET`] identities.
#[derive(Debug, Clone, Serialize)]
pub struct Extrapolation {
    pub identities: f64,
    pub inputs: Inputs,
    pub committees: Vec<Committee>,
}

/// Carries `inputs` to [`TARGET`] identities for each of [`COMMITTEES`].
pub fn extrapolate(inputs: Inputs) -> Extrapolation {
    let r = TARGET / inputs.identities.max(1) as f64;
    let acceptances = TARGET * inputs.steps_per_identity;
    let committees = COMMITTEES
        .iter()
        .map(|&members| {
            let m = f64::from(members);
            let others = (m - 1.0) / m;
            let certify_s = inputs.certify_s * r;
            let audit_s = inputs.audit_us_per_acceptance * 1e-6 * TARGET * others;
            Committee {
                members,
                certify_s: round(certify_s, 2),
                audit_s: round(audit_s, 1),
                time_to_certificate_s: round(certify_s + audit_s, 1),
                gossip_in_bytes_per_member: (acceptances * inputs.acceptance_bytes * others)
                    .round(),
                gossip_out_bytes_per_member: (acceptances / m
                    * inputs.acceptance_bytes
                    * (m - 1.0))
                    .round(),
                disk_bytes_per_window: (inputs.window_disk_bytes_per_identity * TARGET).round(),
                registry_disk_bytes: (inputs.registry_disk_bytes_per_identity * TARGET).round(),
                rss_mb: round(inputs.ram_mb_per_million * 10.0 + inputs.rss_start_mb, 0),
                reconcile_s: round(inputs.reconcile_s * r, 1),
            }
        })
        .collect();
    Extrapolation {
        identities: TARGET,
        inputs,
        committees,
    }
}

/// `x` rounded to `places` decimals.
pub fn round(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Inputs {
        Inputs {
            identities: 1_000_000,
            steps_per_identity: 1.0,
            certify_s: 2.0,
            audit_us_per_acceptance: 100.0,
            acceptance_bytes: 1000.0,
            window_disk_bytes_per_identity: 3000.0,
            registry_disk_bytes_per_identity: 500.0,
            ram_mb_per_million: 300.0,
            rss_start_mb: 10.0,
            reconcile_s: 60.0,
        }
    }

    #[test]
    fn figures_follow_the_documented_formulas() {
        let e = extrapolate(inputs());
        assert_eq!(e.committees.len(), 2);
        let four = &e.committees[0];
        assert_eq!(four.members, 4);
        assert_eq!(four.certify_s, 20.0);
        assert_eq!(four.audit_s, 750.0);
        assert_eq!(four.time_to_certificate_s, 770.0);
        assert_eq!(four.gossip_in_bytes_per_member, 7.5e9);
        assert_eq!(four.gossip_out_bytes_per_member, 7.5e9);
        assert_eq!(four.disk_bytes_per_window, 3e10);
        assert_eq!(four.registry_disk_bytes, 5e9);
        assert_eq!(four.rss_mb, 3010.0);
        assert_eq!(four.reconcile_s, 600.0);
        let sixteen = &e.committees[1];
        assert_eq!(sixteen.audit_s, 937.5);
        assert_eq!(sixteen.gossip_in_bytes_per_member, 9.375e9);
        // Storage does not depend on the committee: every member keeps everything.
        assert_eq!(sixteen.disk_bytes_per_window, four.disk_bytes_per_window);
    }
}
