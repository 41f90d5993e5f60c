//! `hco bench verify`: (a) raw ed25519-dalek single verifications per second, against (b) full
//! verification of valid responses per second — decode, issuer check, identity signature,
//! replay check, family verify and a durable ledger write — both on all cores.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use hco_challenges::{Class, Registry};
use hco_oracle::{Ledger, Oracle, Response, SignedRegister, SignedRequest, codec, testing};
use serde::Serialize;

/// Options of `hco bench verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Responses to verify (each from its own identity).
    #[arg(long, default_value_t = 20_000)]
    pub responses: usize,
    /// Responses per verification batch (one batch signature check, one seal, one group commit).
    #[arg(long, default_value_t = 1024)]
    pub batch: usize,
    /// Cores to use (default: all): the raw baseline runs one thread per core.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Verification workers (default: one more than the cores). More workers than cores let one batch be
    /// checked while another waits for its flush, as a server's concurrent requests do.
    #[arg(long)]
    pub workers: Option<usize>,
}

#[derive(Debug, Serialize)]
struct Report {
    raw_ed25519_verifies_per_s: f64,
    responses_per_s: f64,
    ratio: f64,
    threads: usize,
    workers: usize,
    responses: usize,
    batch: usize,
    durable_flushes: u64,
    /// Cores the baseline kept busy on average while it ran (CPU time over wall time).
    raw_cores_busy: f64,
    /// Cores the pipeline kept busy on average: below `threads`, it waited (flushes, the
    /// commit lock) rather than computed.
    pipeline_cores_busy: f64,
    family: &'static str,
}

pub fn run(args: VerifyArgs) -> anyhow::Result<()> {
    let threads = super::threads(args.threads);
    let workers = args.workers.unwrap_or(threads + 1).max(1);
    let n = args.responses.max(workers * ROUNDS);
    let batch = args.batch.max(1);

    tracing::info!(n, threads, workers, "preparing signatures and responses");
    let signatures = raw_items(n);
    let dir = tempfile::tempdir().context("cannot create a temporary ledger directory")?;
    let node_key = testing::key(1);
    let params = testing::params_for(&[testing::node_id(&node_key)]);
    let ledger = Ledger::open(dir.path(), params.digest())?;
    let oracle = Oracle::new(params.clone(), Registry::builtin(), node_key, ledger)?;
    let now = params.genesis_ms + 1_000;
    let encoded = prepare_responses(&oracle, n, now)?;
    // The challenges were issued before the ceremony: their records are on disk before it
    // starts, so the pipeline's flushes carry only its own writes.
    oracle.ledger().make_durable()?;
    let flushes_before = oracle.ledger().flush_count();

    // Baseline and pipeline alternate in rounds, so a change in machine load between the two
    // measurements shows up in both rather than skewing the ratio.
    tracing::info!(rounds = ROUNDS, "measuring");
    let (mut raw_time, mut full_time) = (Duration::ZERO, Duration::ZERO);
    let (mut raw_cpu, mut full_cpu) = (0.0, 0.0);
    let (mut raw_ok, mut accepted) = (0, 0);
    let per_round = n.div_ceil(ROUNDS);
    for (sigs, responses) in signatures.chunks(per_round).zip(encoded.chunks(per_round)) {
        let (start, cpu) = (Instant::now(), own_cpu_seconds());
        raw_ok += raw_verify(sigs, threads);
        raw_time += start.elapsed();
        raw_cpu += own_cpu_seconds() - cpu;
        let (start, cpu) = (Instant::now(), own_cpu_seconds());
        accepted += verify_pipeline(&oracle, responses, workers, batch, now + 2_000)?;
        full_time += start.elapsed();
        full_cpu += own_cpu_seconds() - cpu;
    }
    anyhow::ensure!(raw_ok == n, "only {raw_ok} of {n} raw signatures verified");
    anyhow::ensure!(
        accepted == n,
        "only {accepted} of {n} valid responses were accepted"
    );
    let raw = raw_ok as f64 / raw_time.as_secs_f64();
    let full = accepted as f64 / full_time.as_secs_f64();

    let report = Report {
        raw_ed25519_verifies_per_s: raw.round(),
        responses_per_s: full.round(),
        ratio: (full / raw * 1000.0).round() / 1000.0,
        threads,
        workers,
        responses: n,
        batch,
        durable_flushes: oracle.ledger().flush_count() - flushes_before,
        raw_cores_busy: (raw_cpu / raw_time.as_secs_f64() * 100.0).round() / 100.0,
        pipeline_cores_busy: (full_cpu / full_time.as_secs_f64() * 100.0).round() / 100.0,
        family: "proof_of_work",
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

const ROUNDS: usize = 5;

/// CPU time this process has used so far (0 where the platform does not say).
fn own_cpu_seconds() -> f64 {
    super::load::cpu_seconds(std::process::id()).unwrap_or(0.0)
}

/// Decodes and verifies encoded responses with `workers` threads taking batches from one queue,
/// as a server's verifiers take whatever has arrived; returns how many were accepted (each
/// acknowledged only once durable).
fn verify_pipeline(
    oracle: &Oracle,
    encoded: &[Vec<u8>],
    workers: usize,
    batch: usize,
    now: u64,
) -> anyhow::Result<usize> {
    let batches: Vec<&[Vec<u8>]> = encoded.chunks(batch).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| -> anyhow::Result<usize> {
                    let mut accepted = 0;
                    while let Some(chunk) = batches.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let responses: Vec<Response> = chunk
                            .iter()
                            .filter_map(|b| Response::decode(b).ok())
                            .collect();
                        let results = oracle.verify_responses(&responses, now)?;
                        accepted += results.iter().filter(|r| r.is_ok()).count();
                    }
                    Ok(accepted)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow::anyhow!("a bench thread panicked"))?
            })
            .sum::<anyhow::Result<usize>>()
    })
}

type RawItem = (VerifyingKey, [u8; 32], Signature);

/// Distinct keys, messages and signatures for the baseline.
fn raw_items(n: usize) -> Vec<RawItem> {
    (0..n as u64)
        .map(|i| {
            let key = SigningKey::from_bytes(blake3::hash(&i.to_le_bytes()).as_bytes());
            let msg = *blake3::hash(&(i + 1).to_le_bytes()).as_bytes();
            (key.verifying_key(), msg, key.sign(&msg))
        })
        .collect()
}

/// Single `verify_strict` calls, one thread per core; returns how many verified.
fn raw_verify(items: &[RawItem], threads: usize) -> usize {
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(items.len().div_ceil(threads).max(1))
            .map(|share| {
                s.spawn(move || {
                    share
                        .iter()
                        .filter(|(k, m, sig)| k.verify_strict(m, sig).is_ok())
                        .count()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(0))
            .sum::<usize>()
    })
}

/// Registers `n` agent identities, issues each a challenge, solves it and encodes the response.
fn prepare_responses(oracle: &Oracle, n: usize, now: u64) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n as u64 {
        let key = testing::key(1_000_000 + i);
        oracle
            .register(&SignedRegister::new(&key, Class::Agent, now), now)?
            .map_err(|r| anyhow::anyhow!("registration refused: {r}"))?;
        let issued = oracle
            .issue(&SignedRequest::new(&key, 0, 0), now)?
            .map_err(|r| anyhow::anyhow!("issue refused: {r}"))?;
        let family = oracle
            .registry()
            .get(&issued.prompt.family)
            .context("issued an unknown family")?;
        let answer = family
            .solve(&issued.prompt)
            .context("the family has no solver")?;
        out.push(codec::encode(&Response::new(
            &key,
            issued.challenge,
            answer,
        )));
    }
    Ok(out)
}
