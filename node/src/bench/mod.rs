//! `hco bench …`: benchmarks that print one JSON object, measured against a baseline taken in
//! the same run on the same machine.

pub mod verify;

use clap::Subcommand;

/// Benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Full response verification (with durable writes) against raw ed25519 verification.
    Verify(verify::VerifyArgs),
}

/// Runs a benchmark.
pub fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Verify(args) => verify::run(args),
    }
}

/// Worker threads: all cores unless told otherwise.
pub fn threads(requested: Option<usize>) -> usize {
    requested
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1)
        .max(1)
}
