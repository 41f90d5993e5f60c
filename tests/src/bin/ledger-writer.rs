//! A helper process for the crash test: runs a one-node oracle on a ledger directory, answers
//! challenges for fresh identities in batches, and prints `t id j` for every acceptance once
//! `verify_responses` has returned (that is, once it is acknowledged as durable). It stops by
//! itself after a bounded number of responses or seconds; the test kills it with SIGKILL first.

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::Context;
use hco_challenges::{Class, Registry};
use hco_oracle::{Ledger, Oracle, Response, SignedRegister, SignedRequest, testing};

const MAX_RESPONSES: u64 = 200_000;
const MAX_TIME: Duration = Duration::from_secs(60);

fn main() -> anyhow::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .context("usage: ledger-writer DIR")?;
    let node_key = testing::key(1);
    let params = testing::params_for(&[testing::node_id(&node_key)]);
    let ledger = Ledger::open(dir.as_ref(), params.digest())?;
    let oracle = Oracle::new(params.clone(), Registry::builtin(), node_key, ledger)?;
    let now = params.genesis_ms + 1_000;
    let started = Instant::now();
    let mut stdout = std::io::stdout().lock();
    let mut next = 0u64;
    while next < MAX_RESPONSES && started.elapsed() < MAX_TIME {
        let mut batch = Vec::new();
        for _ in 0..50 {
            let key = testing::key(10_000 + next);
            next += 1;
            oracle
                .register(&SignedRegister::new(&key, Class::Agent, now), now)?
                .map_err(|r| anyhow::anyhow!("{r}"))?;
            let issued = oracle
                .issue(&SignedRequest::new(&key, 0, 0), now)?
                .map_err(|r| anyhow::anyhow!("{r}"))?;
            let family = oracle
                .registry()
                .get(&issued.prompt.family)
                .context("family")?;
            let answer = family.solve(&issued.prompt).context("solver")?;
            batch.push(Response::new(&key, issued.challenge, answer));
        }
        for result in oracle.verify_responses(&batch, now + 500)? {
            let sealed = result.map_err(|r| anyhow::anyhow!("{r}"))?;
            let c = sealed.acceptance.challenge();
            writeln!(stdout, "{} {} {}", c.t, c.id, c.j)?;
        }
        stdout.flush()?;
    }
    Ok(())
}
