//! `hco bench scale --identities N`: one committee member's ledger on real sled with `N`
//! registered identities and one window in which every one of them is accepted once, then the
//! window's certificate, proof serving, the audit, reconciliation into a second member, pruning,
//! disk and memory, and those per-identity costs carried to 10^7 identities ([`extrapolate()`]).
//!
//! The committee has 4 members (quorum 3) with `issuer_fallback` 3, so member 1 may issue to
//! every identity and holds the whole window as its own acceptances (its summarize audits
//! nothing); the audit a non-issuing member runs is timed apart on a sample. Members 3 and 4
//! are only keys: they sign the summary member 1 computed, as each computes the same one.
//!
//! - [`build`]: registrations and the window's acceptances;
//! - [`phases`]: the measured phases;
//! - [`extrapolate()`]: the figures at 10^7.

mod build;
mod extrapolate;
mod phases;

use std::time::Instant;

use anyhow::Context;
use clap::Args;
use hco_challenges::Registry;
use hco_oracle::{Ledger, NetworkParams, Oracle, testing};
use serde::Serialize;

use super::load::{peak_rss_mb, quantile_ms};
use extrapolate::{Extrapolation, Inputs, extrapolate, round};

/// Most identities the bench builds (its run time and disk grow linearly).
pub const MAX_IDENTITIES: u64 = 10_000_000;

/// Options of `hco bench scale`.
#[derive(Debug, Args)]
pub struct ScaleArgs {
    /// Registered identities, each accepted once in the window (at most 10^7).
    #[arg(long, default_value_t = 1_000_000)]
    pub identities: u64,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Cores to use while filling the ledger (default: all).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Responses per verification batch (one seal and one group commit each).
    #[arg(long, default_value_t = 1024)]
    pub batch: usize,
    /// Membership proofs served and verified.
    #[arg(long, default_value_t = 20)]
    pub proofs: usize,
    /// Acceptances audited to time the audit.
    #[arg(long, default_value_t = 2000)]
    pub audit_sample: usize,
}

/// What `hco bench scale --json` prints.
#[derive(Debug, Serialize)]
pub struct Report {
    pub identities: u64,
    pub threads: usize,
    pub register_s: f64,
    pub record_s: f64,
    pub accepted: usize,
    pub certify_s: f64,
    pub summarize_s: f64,
    pub active_set_scan_s: f64,
    pub sort_merkle_s: f64,
    pub active: u64,
    pub proof_samples: usize,
    pub proof_us_p50: f64,
    pub proof_us_p99: f64,
    pub proof_verify_us_p50: f64,
    pub audit_us_per_acceptance: f64,
    pub audit_sample: usize,
    pub reconcile_s: f64,
    pub reconciled: usize,
    pub reconcile_reply_bytes: u64,
    pub reconciled_root_matches: bool,
    pub acceptance_bytes: f64,
    pub prune_s: f64,
    pub pruned_records: usize,
    pub prune_identities_s: f64,
    pub pruned_identities: usize,
    pub registry_disk_bytes: u64,
    pub disk_bytes: u64,
    pub disk_bytes_per_identity: f64,
    pub window_disk_bytes_per_identity: f64,
    pub disk_bytes_after_prune: u64,
    pub rss_start_mb: f64,
    pub rss_mb: f64,
    pub rss_end_mb: f64,
    pub ram_mb_per_million: f64,
    /// Fingerprints the issuer's ledger holds in memory for the window's answers and issues
    /// once it is recorded (part of `rss_mb`; see the ledger's `recent` module).
    pub remembered_fingerprints: usize,
    pub extrapolation: Extrapolation,
}

pub fn run(args: ScaleArgs) -> anyhow::Result<()> {
    let report = measure(&args)?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

/// The committee: four members, quorum 3, each may issue to any identity.
fn committee() -> (Vec<ed25519_dalek::SigningKey>, NetworkParams) {
    let keys: Vec<_> = (1..=4).map(testing::key).collect();
    let ids: Vec<_> = keys.iter().map(testing::node_id).collect();
    let mut params = testing::params_for(&ids);
    params.issuer_fallback = ids.len() as u32 - 1;
    (keys, params)
}

fn secs(d: std::time::Duration) -> f64 {
    round(d.as_secs_f64(), 3)
}

/// Runs the bench in a temporary directory (removed on return).
pub fn measure(args: &ScaleArgs) -> anyhow::Result<Report> {
    let n = args.identities;
    anyhow::ensure!(
        (1..=MAX_IDENTITIES).contains(&n),
        "--identities must be between 1 and {MAX_IDENTITIES}"
    );
    let threads = super::threads(args.threads);
    let rss = || peak_rss_mb(std::process::id()).unwrap_or(0.0);
    let rss_start_mb = rss();
    let dir = tempfile::tempdir().context("cannot create a temporary ledger directory")?;
    let (keys, params) = committee();
    let (a_dir, b_dir) = (dir.path().join("a"), dir.path().join("b"));
    let issuer = Oracle::new(
        params.clone(),
        Registry::builtin(),
        keys[0].clone(),
        Ledger::open(&a_dir, params.digest())?,
    )?;
    let now = params.genesis_ms + 1_000;
    let t = 0;

    tracing::info!(n, threads, "registering");
    let start = Instant::now();
    build::register(issuer.ledger(), n, threads, now)?;
    let register_s = secs(start.elapsed());
    let registry_disk_bytes = phases::dir_bytes(&a_dir);

    tracing::info!("recording the window's acceptances");
    let start = Instant::now();
    let accepted = build::record_window(&issuer, n, threads, args.batch.max(1), now)?;
    let record_s = secs(start.elapsed());
    anyhow::ensure!(accepted as u64 == n, "only {accepted} of {n} accepted");
    issuer.ledger().make_durable()?;
    let disk_bytes = phases::dir_bytes(&a_dir);
    let remembered_fingerprints = issuer.ledger().remembered();

    tracing::info!("certifying");
    let close = params.closes_at(t) + 1_000;
    let certified = phases::certify(&issuer, &keys[2..], t, close)?;
    let rss_mb = rss();
    let (scan, merkle, active) = phases::certify_parts(&issuer, t)?;
    anyhow::ensure!(
        certified.certificate.summary.count == n,
        "the certificate counts {} of {n} identities",
        certified.certificate.summary.count
    );

    tracing::info!("serving proofs");
    let samples = args.proofs.clamp(1, n as usize) as u64;
    let sample: Vec<_> = (0..samples)
        .map(|k| testing::identity_id(&build::identity_key(k * n / samples)))
        .collect();
    let (served, verified) = phases::proofs(&issuer, t, &sample)?;
    let (audit_each, audit_sample) =
        phases::audit_sample(&issuer, t, close, args.audit_sample.max(1))?;

    tracing::info!("reconciling into a second member");
    let member = Oracle::new(
        params.clone(),
        Registry::builtin(),
        keys[1].clone(),
        Ledger::open(&b_dir, params.digest())?,
    )?;
    build::copy_registry(issuer.ledger(), member.ledger(), t)?;
    let reconciled = phases::reconcile(&issuer, &member, t, close)?;
    let (mirror, _) = hco_oracle::WindowSummary::of(t, member.active_set(t)?, params.digest());
    let reconciled_root_matches = mirror.root == certified.certificate.summary.root;
    drop(member);

    tracing::info!("pruning");
    let start = Instant::now();
    let pruned = issuer.ledger().prune_before(t + 1)?;
    let prune_s = secs(start.elapsed());
    let start = Instant::now();
    let idle = issuer.ledger().prune_idle_identities(t + 1)?;
    let prune_identities_s = secs(start.elapsed());
    issuer.ledger().make_durable()?;
    let disk_bytes_after_prune = phases::dir_bytes(&a_dir);

    let per = |bytes: u64| round(bytes as f64 / n as f64, 1);
    let acceptance_bytes = round(
        reconciled.acceptance_bytes as f64 / reconciled.recorded.max(1) as f64,
        1,
    );
    let ram_mb_per_million = round((rss_mb - rss_start_mb) * 1e6 / n as f64, 1);
    let inputs = Inputs {
        identities: n,
        steps_per_identity: accepted as f64 / n as f64,
        certify_s: certified.certify.as_secs_f64(),
        audit_us_per_acceptance: round(audit_each.as_secs_f64() * 1e6, 1),
        acceptance_bytes,
        window_disk_bytes_per_identity: per(disk_bytes.saturating_sub(registry_disk_bytes)),
        registry_disk_bytes_per_identity: per(registry_disk_bytes),
        ram_mb_per_million,
        rss_start_mb,
        reconcile_s: reconciled.took.as_secs_f64(),
    };
    Ok(Report {
        identities: n,
        threads,
        register_s,
        record_s,
        accepted,
        certify_s: secs(certified.certify),
        summarize_s: secs(certified.summarize),
        active_set_scan_s: secs(scan),
        sort_merkle_s: secs(merkle),
        active: active as u64,
        proof_samples: sample.len(),
        proof_us_p50: round(quantile_ms(&served, 0.5) * 1e3, 1),
        proof_us_p99: round(quantile_ms(&served, 0.99) * 1e3, 1),
        proof_verify_us_p50: round(quantile_ms(&verified, 0.5) * 1e3, 1),
        audit_us_per_acceptance: inputs.audit_us_per_acceptance,
        audit_sample,
        reconcile_s: secs(reconciled.took),
        reconciled: reconciled.recorded,
        reconcile_reply_bytes: reconciled.key_bytes + reconciled.acceptance_bytes,
        reconciled_root_matches,
        acceptance_bytes,
        prune_s,
        pruned_records: pruned.removed,
        prune_identities_s,
        pruned_identities: idle.removed,
        registry_disk_bytes,
        disk_bytes,
        disk_bytes_per_identity: per(disk_bytes),
        window_disk_bytes_per_identity: inputs.window_disk_bytes_per_identity,
        disk_bytes_after_prune,
        rss_start_mb: round(rss_start_mb, 1),
        rss_mb: round(rss_mb, 1),
        rss_end_mb: round(rss(), 1),
        ram_mb_per_million,
        remembered_fingerprints,
        extrapolation: extrapolate(inputs),
    })
}

#[cfg(test)]
mod tests;
