//! The measured phases of `hco bench scale`, each through the oracle's and ledger's own API:
//! certification, proof serving, the audit, reconciliation of the window and pruning.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use ed25519_dalek::SigningKey;
use hco_oracle::audit::{Audited, audit_window};
use hco_oracle::{
    IdentityId, LightVerifier, Oracle, SealedAcceptance, SignedSummary, Timestamp,
    WindowCertificate, WindowSummary, codec,
};

use crate::network::protocol::{MAX_FETCH, MAX_KEYS, ReconcileReply};

/// What forming the certificate took.
pub struct Certified {
    pub certificate: WindowCertificate,
    /// This member's summarize (reveal, audit of others' acceptances, active-set scan, sort,
    /// Merkle root, signature, durable write) plus the quorum's summaries checked and assembled.
    pub certify: Duration,
    /// The summarize call alone.
    pub summarize: Duration,
}

/// Member `oracle` summarizes window `t` at `now`; the other members in `peers` (enough for a
/// quorum with it) sign the same summary, as each computes it from the same window, and their
/// summaries are added, which assembles and stores the certificate.
pub fn certify(
    oracle: &Oracle,
    peers: &[SigningKey],
    t: u64,
    now: Timestamp,
) -> anyhow::Result<Certified> {
    let start = Instant::now();
    let mine = oracle
        .summarize(t, now)?
        .map_err(|r| anyhow::anyhow!("summarize refused: {r}"))?;
    let summarize = start.elapsed();
    let mut certificate = None;
    for key in peers {
        let theirs = SignedSummary::new(key, mine.summary.clone());
        certificate = oracle
            .add_summary(&theirs)?
            .map_err(|r| anyhow::anyhow!("summary refused: {r}"))?;
    }
    let certify = start.elapsed();
    let certificate = certificate.context("no quorum of summaries formed a certificate")?;
    Ok(Certified {
        certificate,
        certify,
        summarize,
    })
}

/// The two halves of certification timed apart: the ledger scan that derives the active set,
/// and sorting it with its Merkle root.
pub fn certify_parts(oracle: &Oracle, t: u64) -> anyhow::Result<(Duration, Duration, usize)> {
    let start = Instant::now();
    let active = oracle.active_set(t)?;
    let scan = start.elapsed();
    let count = active.len();
    let start = Instant::now();
    let _ = WindowSummary::of(t, active, oracle.params().digest());
    Ok((scan, start.elapsed(), count))
}

/// Serves the membership proof of each identity in `sample` as the HTTP handler does
/// ([`Oracle::membership`]) and verifies it with the light verifier; returns the serving and
/// verifying times, sorted.
pub fn proofs(
    oracle: &Oracle,
    t: u64,
    sample: &[IdentityId],
) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)> {
    let verifier = LightVerifier::new(oracle.params().committee.clone(), oracle.params().quorum)?
        .with_params(oracle.params().digest());
    let (mut served, mut verified) = (Vec::new(), Vec::new());
    for id in sample {
        let start = Instant::now();
        let (cert, proof) = oracle
            .membership(t, id)?
            .context("an active identity has no membership proof")?;
        served.push(start.elapsed());
        let start = Instant::now();
        verifier.verify_membership(&cert, id, &proof)?;
        verified.push(start.elapsed());
    }
    served.sort();
    verified.sort();
    Ok((served, verified))
}

/// Audits the first `limit` acceptances of window `t` with the real audit (as a member that
/// did not issue them does when it summarizes), against the issuer's revealed secret; returns
/// the time per acceptance and how many were checked.
pub fn audit_sample(
    issuer: &Oracle,
    t: u64,
    now: Timestamp,
    limit: usize,
) -> anyhow::Result<(Duration, usize)> {
    let reveal = issuer
        .reveal(t, now)?
        .map_err(|r| anyhow::anyhow!("reveal refused: {r}"))?
        .reveal;
    let reveals = BTreeMap::from([(reveal.reveal.node, reveal.reveal.secret)]);
    let sample: Vec<SealedAcceptance> = issuer
        .ledger()
        .acceptances(t)
        .take(limit)
        .collect::<Result<_, _>>()?;
    let beacon = issuer.beacon(t)?;
    let ledger = issuer.ledger();
    let start = Instant::now();
    let report = audit_window(
        issuer.params(),
        issuer.registry(),
        t,
        &beacon,
        &reveals,
        |id| {
            let profile = ledger.identity(id).ok().flatten()?.register.body.profile();
            Some(Audited {
                profile,
                passkeys: Vec::new(),
            })
        },
        &sample,
    );
    let took = start.elapsed();
    anyhow::ensure!(
        report.findings.is_empty() && report.checked == sample.len(),
        "the audit of honest acceptances found {} violations in {} checked",
        report.findings.len(),
        report.checked
    );
    Ok((took / report.checked.max(1) as u32, report.checked))
}

/// Bytes and acceptances moved by a reconciliation.
pub struct Reconciled {
    pub took: Duration,
    pub recorded: usize,
    /// Encoded keys pages sent by the serving member.
    pub key_bytes: u64,
    /// Encoded acceptance replies sent by the serving member.
    pub acceptance_bytes: u64,
}

/// Reconciles window `t` from `from` into `to` with the ledger-side work of the node's
/// reconciliation (`service::sync`): `to` lists the keys it holds, pages through `from`'s keys
/// ([`MAX_KEYS`] a page), fetches the missing acceptances from `from`'s ledger ([`MAX_FETCH`]
/// a request) and records each fetched batch at `now` with [`Oracle::record_remote`]. The libp2p
/// request-response hop in between is left out; the replies' encoded size is counted.
pub fn reconcile(from: &Oracle, to: &Oracle, t: u64, now: Timestamp) -> anyhow::Result<Reconciled> {
    let start = Instant::now();
    let ours: HashSet<(IdentityId, u32)> = to.ledger().accepted_keys(t)?.into_iter().collect();
    let (mut recorded, mut key_bytes, mut acceptance_bytes) = (0, 0u64, 0u64);
    let mut after = None;
    loop {
        // As the serving member does: one key past the page tells whether more follow.
        let mut page = from.ledger().accepted_keys_after(t, after, MAX_KEYS + 1)?;
        let more = page.len() > MAX_KEYS;
        page.truncate(MAX_KEYS);
        let last = page.last().copied();
        let reply = ReconcileReply::Keys { keys: page, more };
        key_bytes += codec::encode(&reply).len() as u64;
        let ReconcileReply::Keys { keys: page, .. } = reply else {
            anyhow::bail!("a keys reply changed kind")
        };
        let missing: Vec<_> = page.into_iter().filter(|k| !ours.contains(k)).collect();
        for chunk in missing.chunks(MAX_FETCH) {
            let mut batch = Vec::with_capacity(chunk.len());
            for (id, j) in chunk {
                if let Some(a) = from.ledger().accepted(t, id, *j)? {
                    batch.push(a);
                }
            }
            let receipts = from.receipts_for(&batch);
            let reply = ReconcileReply::Acceptances(batch, receipts);
            acceptance_bytes += codec::encode(&reply).len() as u64;
            let ReconcileReply::Acceptances(batch, receipts) = reply else {
                anyhow::bail!("an acceptances reply changed kind")
            };
            recorded += to
                .record_relayed(&batch, &receipts, hco_oracle::relay::Heard::ByRequest, now)?
                .map_err(|r| anyhow::anyhow!("reconciled acceptances refused: {r}"))?
                .fresh;
        }
        match last {
            Some(last) if more => after = Some(last),
            _ => break,
        }
    }
    Ok(Reconciled {
        took: start.elapsed(),
        recorded,
        key_bytes,
        acceptance_bytes,
    })
}

/// Bytes under `dir` (file lengths, recursively; 0 for what cannot be read).
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
