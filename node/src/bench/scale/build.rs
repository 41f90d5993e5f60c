//! Filling the ledger for `hco bench scale`: registrations written straight to the ledger, then
//! one window of acceptances through the issuer's real path (issue, solve, sign, batch verify,
//! seal, group commit), both on all cores.

use anyhow::Context;
use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_oracle::ledger::IdentityRecord;
use hco_oracle::{Ledger, Oracle, Response, SignedRegister, SignedRequest, Timestamp};

/// Seeds of the bench identities start here (distinct from committee keys).
const IDENTITY_SEED: u64 = 1 << 40;

/// The deterministic key of bench identity `i`.
pub fn identity_key(i: u64) -> SigningKey {
    hco_oracle::testing::key(IDENTITY_SEED + i)
}

/// Runs `work` over `0..n` split into contiguous shares, one thread per share.
pub fn on_threads<T: Send>(
    n: u64,
    threads: usize,
    work: impl Fn(std::ops::Range<u64>) -> anyhow::Result<T> + Sync,
) -> anyhow::Result<Vec<T>> {
    let share = n.div_ceil(threads as u64).max(1);
    std::thread::scope(|s| {
        let work = &work;
        let handles: Vec<_> = (0..n)
            .step_by(share as usize)
            .map(|start| s.spawn(move || work(start..(start + share).min(n))))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow::anyhow!("a bench thread panicked"))?
            })
            .collect()
    })
}

/// Writes `n` signed agent registrations (recorded in window 0) to the ledger and makes them
/// durable. The registrations are freshly signed here, so they go to [`Ledger::put_identity`]
/// directly: [`Oracle::register`] would re-verify each one and flush once per call, which is
/// the client path, not the registry's size. The network asks no registration proof of work.
pub fn register(ledger: &Ledger, n: u64, threads: usize, now: Timestamp) -> anyhow::Result<()> {
    on_threads(n, threads, |range| {
        for i in range {
            let record = IdentityRecord {
                register: SignedRegister::new(&identity_key(i), Class::Agent, now),
                window: 0,
            };
            ledger.put_identity(&record)?;
        }
        Ok(())
    })?;
    ledger.make_durable()?;
    Ok(())
}

/// Copies every registration of `from` into `to` (what a second member holds before the
/// window; not timed): pages of the registry as the reconciliation protocol serves it.
pub fn copy_registry(from: &Ledger, to: &Ledger, window: u64) -> anyhow::Result<()> {
    let mut after = None;
    loop {
        let page = from.identities_after(after.as_ref(), PAGE)?;
        for register in &page {
            to.put_identity(&IdentityRecord {
                register: register.clone(),
                window,
            })?;
        }
        match page.last() {
            Some(last) if page.len() == PAGE => after = Some(last.body.id),
            _ => break,
        }
    }
    to.make_durable()?;
    Ok(())
}

/// Registrations per page when copying the registry.
const PAGE: usize = 10_000;

/// Each of the `n` identities requests its challenge of window 0 at `now`, solves it and
/// answers; the responses are verified in batches of `batch` at `now + 2 s`, as the node's
/// batcher does (one batch signature check, one seal, one group commit per batch). Returns how
/// many were accepted.
pub fn record_window(
    oracle: &Oracle,
    n: u64,
    threads: usize,
    batch: usize,
    now: Timestamp,
) -> anyhow::Result<usize> {
    let accepted = on_threads(n, threads, |range| {
        let mut accepted = 0;
        let mut responses = Vec::with_capacity(batch);
        let ids: Vec<u64> = range.collect();
        for chunk in ids.chunks(batch) {
            responses.clear();
            for &i in chunk {
                let key = identity_key(i);
                let issued = oracle
                    .issue(&SignedRequest::new(&key, 0, 0), now)?
                    .map_err(|r| anyhow::anyhow!("issue refused: {r}"))?;
                let answer = oracle
                    .registry()
                    .get(&issued.prompt.family)
                    .and_then(|f| f.solve(&issued.prompt))
                    .context("the issued family has no solver")?;
                responses.push(Response::new(&key, issued.challenge, answer));
            }
            let results = oracle.verify_responses(&responses, now + 2_000)?;
            accepted += results.iter().filter(|r| r.is_ok()).count();
        }
        Ok(accepted)
    })?;
    Ok(accepted.into_iter().sum())
}
