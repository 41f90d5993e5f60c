//! `hco bench …`: benchmarks that print one JSON object, measured against a baseline taken in
//! the same run on the same machine.

pub mod attack;
pub mod flood;
pub mod gossip;
pub mod http;
pub mod http_steps;
pub mod load;
pub mod scale;
pub mod verify;
pub mod wire;

use clap::Subcommand;

/// Benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// The in-tree attackers against each human family over HTTP, and script-held identities
    /// end to end under the development and production configurations.
    Attack(Box<attack::AttackArgs>),
    /// Full response verification (with durable writes) against raw ed25519 verification.
    Verify(verify::VerifyArgs),
    /// A node process under HTTP load from concurrent virtual identities.
    Http(http::HttpArgs),
    /// Gossip propagation: acceptance at the issuer to recording on every devnet node.
    Gossip(gossip::GossipArgs),
    /// A junk-registration flood on loopback: honest verification p99 under it against a
    /// quiet node, and the member's disk before and after pruning the idle identities.
    Flood(flood::FloodArgs),
    /// A member's ledger with N identities and one window: certificate, proofs, audit,
    /// reconciliation, pruning, disk and memory, and the figures carried to 10^7 identities.
    Scale(scale::ScaleArgs),
    /// Every family's generation and verification rates and its baseline solver's success.
    Families {
        /// Print one JSON object keyed by family name.
        #[arg(long)]
        json: bool,
        /// Time spent per family, in milliseconds.
        #[arg(long, default_value_t = 500)]
        millis: u64,
    },
}

/// Runs a benchmark.
pub fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Attack(args) => attack::run(*args),
        BenchCommand::Verify(args) => verify::run(args),
        BenchCommand::Http(args) => http::run(args),
        BenchCommand::Gossip(args) => gossip::run(args),
        BenchCommand::Flood(args) => flood::run(args),
        BenchCommand::Scale(args) => scale::run(args),
        BenchCommand::Families { json, millis } => {
            let report = hco_challenges::bench_families(
                &hco_challenges::Registry::builtin(),
                std::time::Duration::from_millis(millis),
            );
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                println!("{}", serde_json::to_string_pretty(&report)?);
            }
            Ok(())
        }
    }
}

/// Worker threads: all cores unless told otherwise.
pub fn threads(requested: Option<usize>) -> usize {
    requested
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1)
        .max(1)
}
