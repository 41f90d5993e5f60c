//! The `hco sim` command line on its own: `cargo run -p hco-sim --example sim -- run configs/sim/paper.toml --out out/paper`.

use clap::Parser;
use hco_sim::cli::{SimCommand, execute};

/// Sybil-cost simulator.
#[derive(Debug, Parser)]
#[command(name = "sim")]
struct Args {
    #[command(subcommand)]
    command: SimCommand,
}

fn main() -> anyhow::Result<()> {
    execute(Args::parse().command)
}
