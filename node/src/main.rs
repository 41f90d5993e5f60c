//! `hco`: the Human Challenge Oracle node and its tools.

mod api;
mod attack;
mod bench;
#[cfg(feature = "unsafe-byzantine")]
mod byzantine;
mod client;
mod config;
mod corpus;
mod devnet;
mod driver;
mod http;
mod idle;
mod keyfile;
mod metrics;
mod metrics_listener;
mod network;
mod priority;
mod run;
mod service;
mod supervise;
#[cfg(test)]
mod testnet;
mod witness;

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use keyfile::KeyKind;

/// The process's allocator: jemalloc. Under `hco bench http` glibc's allocator took about a
/// tenth of the node's CPU; with jemalloc the node used about 15 % less CPU per acceptance for
/// 10–16 MB more resident memory (measured in one sitting, see "Serving load" in
/// docs/benchmarks.md).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Human Challenge Oracle: per-window, identity-bound challenges that make Sybil identities cost
/// real-time effort, and signed, provable active sets.
#[derive(Debug, Parser)]
#[command(name = "hco", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a committee node.
    #[command(subcommand)]
    Node(NodeCommand),
    /// Node signing keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Identity keys.
    #[command(subcommand)]
    Identity(IdentityCommand),
    /// Talk to a node: register, solve, check proofs.
    #[command(subcommand)]
    Client(client::ClientCommand),
    /// A local committee of nodes on 127.0.0.1.
    #[command(subcommand)]
    Devnet(devnet::DevnetCommand),
    /// The narrative corpus of the agent-admission game.
    #[command(subcommand)]
    Corpus(CorpusCommand),
    /// Benchmarks that print JSON.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// The Sybil-cost simulator: check the paper's bounds and price the attack.
    #[command(subcommand)]
    Sim(hco_sim::cli::SimCommand),
}

#[derive(Debug, Subcommand)]
enum CorpusCommand {
    /// Check a corpus directory: schema, lengths, and script-resistance against baseline solvers.
    Lint {
        /// The directory of narrative set files (JSON).
        dir: PathBuf,
    },
    /// Generate new sets through an OpenAI-compatible chat endpoint; only sets that validate and
    /// pass the linter are written.
    Generate {
        /// Base URL of the API, e.g. http://127.0.0.1:11434/v1.
        #[arg(long)]
        endpoint: String,
        /// Model name.
        #[arg(long)]
        model: String,
        /// Domain (biochemistry, cybersecurity, clinical_trials, food_safety, financial_markets).
        #[arg(long)]
        domain: String,
        /// Sets to request.
        #[arg(long, default_value_t = 1)]
        count: usize,
        /// Where accepted sets are written.
        #[arg(long)]
        out: PathBuf,
        /// Environment variable holding the API key, if the endpoint needs one.
        #[arg(long, default_value = "OPENAI_API_KEY")]
        api_key_env: String,
    },
    /// The human timing model (aCAPTCHA Eq. 6) over a corpus beside a config's round budget τ
    /// and narrative_chain deadline: how far outside the budgets a person is.
    Timing {
        /// A node config whose budgets (and `corpus_dir`) to use; defaults otherwise.
        #[arg(long)]
        config: Option<PathBuf>,
        /// The corpus directory (else the config's `corpus_dir`, else the starter corpus).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum NodeCommand {
    /// Run the node described by a config file (see configs/).
    Run {
        /// The config file.
        #[arg(long)]
        config: PathBuf,
        /// TEST NETWORKS ONLY: make this node a cheating committee member (comma-separated
        /// faults: wrong-answers, mint, backdate, withhold-reveal, equivocate, late, frame, or all). Refused
        /// unless every listen address is loopback and windows are at most a minute. Only in
        /// builds with the `unsafe-byzantine` feature.
        #[cfg(feature = "unsafe-byzantine")]
        #[arg(long, value_name = "FAULTS")]
        unsafe_byzantine: Option<String>,
    },
    /// Give the disk that pruning freed back to the file system: copy the ledger of a stopped
    /// node (every record) into a fresh directory, check the copy, and swap it in. Prints
    /// `{"before_bytes", "after_bytes", "records"}`.
    Compact {
        /// The node's config file (its `node.data_dir` is compacted).
        #[arg(long)]
        config: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Print the public key (node id) of a node key file.
    Show {
        /// The key file.
        #[arg(long)]
        key: PathBuf,
    },
    /// Generate a node signing key (also the node's libp2p identity).
    Gen {
        /// Where to write the key file.
        #[arg(long)]
        out: PathBuf,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, Subcommand)]
enum IdentityCommand {
    /// Print the identity id (public key) of an identity key file.
    Show {
        /// The key file.
        #[arg(long)]
        key: PathBuf,
    },
    /// Generate an identity key.
    New {
        /// Where to write the key file.
        #[arg(long)]
        out: PathBuf,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
    },
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("info,libp2p_gossipsub=error,libp2p_kad=error")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Node(NodeCommand::Run {
            config,
            #[cfg(feature = "unsafe-byzantine")]
            unsafe_byzantine,
        }) => {
            let config = config::Config::load(&config)?;
            config.network.refuse_baseline_only()?;
            #[cfg(feature = "unsafe-byzantine")]
            if let Some(spec) = unsafe_byzantine {
                let faults = byzantine::parse(&spec)?;
                byzantine::refuse_production(&config)?;
                byzantine::enable(faults);
            }
            // This runtime serves clients; the committee's has its own (see `priority`).
            let client_nice = i32::from(config.node.client_nice);
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .on_thread_start(move || priority::lower_priority(client_nice))
                .build()?
                .block_on(run::run(config))
        }
        Command::Node(NodeCommand::Compact { config }) => {
            let config = config::Config::load(&config)?;
            let dir = &config.node.data_dir;
            let done = hco_oracle::ledger::compact(dir)
                .with_context(|| format!("cannot compact the ledger in {}", dir.display()))?;
            println!(
                "{}",
                serde_json::json!({
                    "before_bytes": done.before_bytes,
                    "after_bytes": done.after_bytes,
                    "records": done.records,
                })
            );
            Ok(())
        }
        Command::Keys(KeysCommand::Gen { out, force }) => {
            let key = keyfile::generate(&out, KeyKind::NodeKey, force)?;
            println!("{}", hex::encode(key.verifying_key().to_bytes()));
            Ok(())
        }
        Command::Identity(IdentityCommand::New { out, force }) => {
            let key = keyfile::generate(&out, KeyKind::IdentityKey, force)?;
            println!("{}", hex::encode(key.verifying_key().to_bytes()));
            Ok(())
        }
        Command::Keys(KeysCommand::Show { key }) => {
            let key = keyfile::read(&key, KeyKind::NodeKey)?;
            println!("{}", hex::encode(key.verifying_key().to_bytes()));
            Ok(())
        }
        Command::Identity(IdentityCommand::Show { key }) => {
            let key = keyfile::read(&key, KeyKind::IdentityKey)?;
            println!("{}", hex::encode(key.verifying_key().to_bytes()));
            Ok(())
        }
        Command::Client(cmd) => client::run(cmd),
        Command::Devnet(cmd) => devnet::run(cmd),
        Command::Corpus(CorpusCommand::Lint { dir }) => {
            let config = hco_challenges::narrative::LintConfig::default();
            let report = hco_challenges::narrative::lint_dir(&dir, &config)?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            if !report.passed() {
                anyhow::bail!(
                    "the corpus in {} fails the linter (see the report above)",
                    dir.display()
                );
            }
            Ok(())
        }
        Command::Corpus(CorpusCommand::Generate {
            endpoint,
            model,
            domain,
            count,
            out,
            api_key_env,
        }) => {
            let key = std::env::var(&api_key_env).ok();
            let written =
                corpus::generate(&endpoint, &model, key.as_deref(), &domain, count, &out)?;
            println!(
                "{}",
                serde_json::json!({ "requested": count, "accepted": written })
            );
            Ok(())
        }
        Command::Corpus(CorpusCommand::Timing { config, dir, json }) => {
            let report = corpus::timing::report(config.as_deref(), dir.as_deref())?;
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                print!("{}", corpus::timing::table(&report));
            }
            Ok(())
        }
        Command::Bench(cmd) => bench::run(cmd),
        Command::Sim(hco_sim::cli::SimCommand::Bound {
            config,
            json,
            solve_time,
            touch_ms,
        }) => sim_bound(&config, json, &solve_time, touch_ms),
        Command::Sim(cmd) => hco_sim::cli::execute(cmd),
    }
}

/// `hco sim bound`: the one-person bound of a node config's human policy, from the parameters
/// the node itself would run (the same loader, defaults and validation).
fn sim_bound(
    path: &std::path::Path,
    json: bool,
    solve_time: &[(String, std::time::Duration)],
    touch_ms: u64,
) -> anyhow::Result<()> {
    let config = config::Config::load(path)?;
    // The committee does not enter the bound; a stand-in member lets any config load.
    let mut network = config.network.clone();
    network.committee.clear();
    let params = network.params(hco_oracle::NodeId([0; 32]))?;
    let registry = hco_challenges::Registry::builtin();
    params
        .validate(&registry)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let inputs = hco_sim::bound::ceremony_of(&params, &registry)?;
    println!(
        "{}",
        hco_sim::cli::bound_output(&inputs, json, solve_time, touch_ms)?
    );
    Ok(())
}
