//! `hco devnet up|down`: a local committee on 127.0.0.1, each node its own process, keys,
//! config and ledger under one directory. Short windows and `proof_of_work` for agent identities,
//! so a whole round trip works with no person.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};
use clap::Subcommand;
use serde::{Deserialize, Serialize};

use crate::client::Gateway;
use crate::config::{Config, FamilySection};
use crate::keyfile::{self, KeyKind};

/// Devnet commands.
#[derive(Debug, Subcommand)]
pub enum DevnetCommand {
    /// Create and start a local committee in the background; prints each node's HTTP URL.
    Up {
        /// Committee size.
        #[arg(long, default_value_t = 4)]
        nodes: usize,
        /// Directory for keys, configs, ledgers and logs.
        #[arg(long)]
        dir: PathBuf,
        /// Window length (at most 30 s is sensible for a devnet).
        #[arg(long, default_value = "20s", value_parser = humantime::parse_duration)]
        window: Duration,
        /// Enable the test-only admin endpoints (peer block list).
        #[arg(long)]
        admin: bool,
        /// TEST ONLY: the last node cheats with these faults (see `hco node run
        /// --unsafe-byzantine`; builds with the `unsafe-byzantine` feature only).
        #[cfg(feature = "unsafe-byzantine")]
        #[arg(long, value_name = "FAULTS")]
        unsafe_byzantine: Option<String>,
        #[command(flatten)]
        shape: Shape,
    },
    /// Stop the devnet started in DIR.
    Down {
        /// The devnet directory.
        #[arg(long)]
        dir: PathBuf,
    },
}

/// The devnet's window policy beyond its defaults.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Shape {
    /// Cognitive steps per window for both classes (one spare try on top).
    #[arg(long, default_value_t = 1)]
    pub steps: usize,
    /// Each try of an identity-window at another member (`network.rotate_issuers`).
    #[arg(long)]
    pub rotate_issuers: bool,
    /// People's steps are this many `presence` touch prompts (4 s to touch, a software passkey
    /// will do) with one spare, in a global slot that ends 2 s after the grace period; 0 keeps
    /// the drawn cognitive steps and an open window.
    #[arg(long, default_value_t = 0)]
    pub prompts: usize,
}

/// What `up` records in `DIR/devnet.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DevnetNode {
    /// Node id (hex).
    pub node: String,
    /// HTTP URL (the client gateway).
    pub http: String,
    /// URL of the metrics listener (`GET /metrics` there); empty in a devnet.json written
    /// before nodes had one.
    #[serde(default)]
    pub metrics: String,
    /// Config file.
    pub config: PathBuf,
    /// Process id.
    pub pid: u32,
}

/// Runs a devnet command.
pub fn run(cmd: DevnetCommand) -> anyhow::Result<()> {
    match cmd {
        DevnetCommand::Up {
            nodes,
            dir,
            window,
            admin,
            #[cfg(feature = "unsafe-byzantine")]
            unsafe_byzantine,
            shape,
        } => {
            #[cfg(not(feature = "unsafe-byzantine"))]
            let unsafe_byzantine: Option<String> = None;
            let nodes = up_with(
                &dir,
                nodes,
                window,
                admin,
                unsafe_byzantine.as_deref(),
                &shape,
            )?;
            let mut out = std::io::stdout().lock();
            for n in &nodes {
                // A closed pipe (`| head -1`) is not an error for a command that is done.
                let _ = std::io::Write::write_all(&mut out, format!("{}\n", n.http).as_bytes());
            }
            Ok(())
        }
        DevnetCommand::Down { dir } => down(&dir),
    }
}

/// `n` distinct free ports on 127.0.0.1, all held open until every one is chosen.
///
/// They are drawn below the kernel's ephemeral range where it says what that is (Linux:
/// `net.ipv4.ip_local_port_range`), so that between their release here and the node binding
/// them the kernel does not give one to another process's outgoing connection or `bind(0)`:
/// with other programs on the machine making loopback connections (other devnets, a browser),
/// a port chosen by `bind(0)` and released was seen taken before the node could bind it.
/// Elsewhere, the kernel's choice (`bind(0)`).
pub fn distinct_ports(n: usize) -> anyhow::Result<Vec<u16>> {
    let mut held: Vec<TcpListener> = Vec::with_capacity(n);
    if let Some((low, high)) = quiet_ports() {
        // A random start (std's per-process hash keys), never zero.
        let mut state = {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
                | 1
        };
        for _ in 0..64 * n.max(1) {
            if held.len() == n {
                break;
            }
            // xorshift64: an even spread over the range is all this needs.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let port = low + (state % u64::from(high - low)) as u16;
            if let Ok(l) = TcpListener::bind(("127.0.0.1", port)) {
                held.push(l);
            }
        }
    }
    while held.len() < n {
        held.push(TcpListener::bind("127.0.0.1:0")?);
    }
    held.iter().map(|l| Ok(l.local_addr()?.port())).collect()
}

/// Ports below the ephemeral range, `10000..low`, when the kernel says where that range
/// starts and leaves at least a thousand below it.
fn quiet_ports() -> Option<(u16, u16)> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let low: u16 = range.split_whitespace().next()?.parse().ok()?;
    (low >= 11_000).then_some((10_000, low))
}

/// A free TCP port on 127.0.0.1 (see [`distinct_ports`]).
pub fn free_port() -> anyhow::Result<u16> {
    Ok(distinct_ports(1)?[0])
}

/// Writes configs for `n` nodes into `dir` and starts them.
pub fn up(dir: &Path, n: usize, window: Duration, admin: bool) -> anyhow::Result<Vec<DevnetNode>> {
    up_with(dir, n, window, admin, None, &Shape::default())
}

/// [`up`], the last node started with `--unsafe-byzantine FAULTS` when given.
pub fn up_with(
    dir: &Path,
    n: usize,
    window: Duration,
    admin: bool,
    byzantine: Option<&str>,
    shape: &Shape,
) -> anyhow::Result<Vec<DevnetNode>> {
    if !(1..=16).contains(&n) {
        bail!("--nodes must be in 1..=16");
    }
    if !(1..=8).contains(&shape.steps) {
        bail!("--steps must be in 1..=8");
    }
    if shape.prompts > 3 {
        bail!("--prompts must be in 0..=3");
    }
    if dir.join("devnet.json").exists() {
        bail!(
            "{} already holds a devnet; run `hco devnet down --dir {}` first or choose another --dir",
            dir.display(),
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let dir = dir.canonicalize()?;
    let mut keys = Vec::new();
    for i in 0..n {
        let path = dir.join(format!("node{i}.key"));
        let key = if path.exists() {
            keyfile::read(&path, KeyKind::NodeKey)?
        } else {
            keyfile::generate(&path, KeyKind::NodeKey, false)?
        };
        keys.push((path, key));
    }
    // Per node: the gateway, libp2p and the metrics listener.
    let ports = distinct_ports(3 * n)?;
    let ports: Vec<(u16, u16, u16)> = ports.chunks(3).map(|p| (p[0], p[1], p[2])).collect();
    let peer_addr = |i: usize| -> anyhow::Result<String> {
        let peer = crate::network::keypair(&keys[i].1)?.public().to_peer_id();
        Ok(format!("/ip4/127.0.0.1/tcp/{}/p2p/{peer}", ports[i].1))
    };
    let committee: Vec<String> = keys
        .iter()
        .map(|(_, k)| hex::encode(k.verifying_key().to_bytes()))
        .collect();
    // Genesis a little in the past, on a whole second, shared by all nodes.
    let now = SystemTime::now_from_epoch_secs()?;
    let mut network = crate::config::NetworkSection {
        genesis: SystemTime::UNIX_EPOCH + Duration::from_secs(now),
        window,
        grace: (window / 3).max(Duration::from_secs(3)),
        committee: committee.clone(),
        rotate_issuers: shape.rotate_issuers,
        // Loopback: a relayed message arrives in milliseconds; 1.5 s leaves room for a node
        // loaded by the tests beside it.
        relay_round: Duration::from_millis(1500),
        development: true, // agents run on proof_of_work alone
        ..Default::default()
    };
    for policy in [&mut network.policy.human, &mut network.policy.agent] {
        policy.steps = vec![hco_oracle::Step::Drawn; shape.steps];
    }
    let deadline = (network.grace - Duration::from_secs(1)).max(Duration::from_secs(2));
    network.families = vec![
        FamilySection {
            name: "proof_of_work".into(),
            deadline,
            difficulty: 8,
            min_solve: None,
        },
        FamilySection {
            name: "arithmetic_reasoning".into(),
            deadline,
            difficulty: 3,
            // Devnet windows are seconds long: no human-speed floor.
            min_solve: Some(Duration::ZERO),
        },
    ];
    if shape.prompts > 0 {
        touch_prompts(&mut network, shape.prompts)?;
    }
    let mut out = Vec::new();
    for i in 0..n {
        let mut config = Config::default();
        config.node.key_file = keys[i].0.clone();
        config.node.data_dir = dir.join(format!("node{i}"));
        config.http.listen = ([127, 0, 0, 1], ports[i].0).into();
        config.http.admin = admin;
        config.metrics.listen = Some(([127, 0, 0, 1], ports[i].2).into());
        // Load generators and tests drive a devnet from one loopback address.
        config.http.limits = crate::config::HttpLimits::unlimited();
        config.agent.max_sessions_per_ip = 0;
        // Short windows: keep never-active identities an hour, not three windows.
        config.ledger.idle_identity_windows = 3600 / window.as_secs().max(1);
        config.p2p.listen = vec![format!("/ip4/127.0.0.1/tcp/{}", ports[i].1)];
        config.p2p.bootstrap = (0..n)
            .filter(|j| *j != i)
            .map(peer_addr)
            .collect::<anyhow::Result<_>>()?;
        config.network = network.clone();
        let path = dir.join(format!("node{i}.toml"));
        config.save(&path)?;
        let extra: Vec<&str> = match byzantine {
            Some(faults) if i + 1 == n => vec!["--unsafe-byzantine", faults],
            _ => Vec::new(),
        };
        let pid = spawn_with(&path, &dir.join(format!("node{i}.log")), &extra)?;
        out.push(DevnetNode {
            node: committee[i].clone(),
            http: format!("http://127.0.0.1:{}", ports[i].0),
            metrics: format!("http://127.0.0.1:{}", ports[i].2),
            config: path,
            pid,
        });
    }
    std::fs::write(dir.join("devnet.json"), serde_json::to_vec_pretty(&out)?)?;
    for node in &out {
        wait_healthy(&node.http, Duration::from_secs(20))?;
    }
    Ok(out)
}

/// People's steps become `prompts` presence touch prompts and a spare, in a global slot as
/// long as the window leaves after the grace period, less 2 s of room for its placement.
fn touch_prompts(
    network: &mut crate::config::NetworkSection,
    prompts: usize,
) -> anyhow::Result<()> {
    const REACTION: Duration = Duration::from_secs(4);
    const JITTER: Duration = Duration::from_millis(500);
    let slot = network
        .window
        .saturating_sub(network.grace)
        .saturating_sub(Duration::from_secs(2));
    let beats = (REACTION + JITTER) * (prompts as u32 + 1);
    if slot < beats {
        bail!(
            "--window {:?} leaves a {slot:?} slot, too short for {} beats of {:?}; use a longer window",
            network.window,
            prompts + 1,
            REACTION + JITTER
        );
    }
    network.slot_mode = hco_oracle::SlotMode::Global;
    network.slot = slot;
    network.prompt_jitter = JITTER;
    network.policy.human.steps = vec![hco_oracle::Step::Family("presence".into()); prompts];
    network.policy.human.spares = 1;
    network.families.push(FamilySection {
        name: "presence".into(),
        deadline: REACTION,
        difficulty: 1,
        min_solve: Some(Duration::ZERO),
    });
    Ok(())
}

/// Starts `hco node run --config PATH` in the background, logging to `log`.
pub fn spawn(config: &Path, log: &Path) -> anyhow::Result<u32> {
    spawn_with(config, log, &[])
}

/// [`spawn`] with extra arguments to `hco node run`.
pub fn spawn_with(config: &Path, log: &Path, extra: &[&str]) -> anyhow::Result<u32> {
    let exe = std::env::current_exe()?;
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let mut cmd = Command::new(exe);
    cmd.args(["node", "run", "--config"])
        .arg(config)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    Ok(cmd.spawn().context("cannot start a node process")?.id())
}

fn wait_healthy(url: &str, limit: Duration) -> anyhow::Result<()> {
    let gw = Gateway::new(url);
    let start = Instant::now();
    while start.elapsed() < limit {
        if gw.get("/healthz").is_ok_and(|r| r.status == 200) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bail!(
        "the node at {url} did not become healthy in {limit:?}; see its log in the devnet directory"
    )
}

fn signal(pid: u32, sig: &str) -> bool {
    Command::new("kill")
        .args([sig, &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn alive(pid: u32) -> bool {
    signal(pid, "-0")
}

/// Stops every node of the devnet in `dir` (SIGTERM, then SIGKILL after 10 s).
pub fn down(dir: &Path) -> anyhow::Result<()> {
    let path = dir.join("devnet.json");
    let nodes: Vec<DevnetNode> = serde_json::from_slice(
        &std::fs::read(&path)
            .with_context(|| format!("no devnet in {} (missing devnet.json)", dir.display()))?,
    )?;
    for n in &nodes {
        signal(n.pid, "-TERM");
    }
    let start = Instant::now();
    while nodes.iter().any(|n| alive(n.pid)) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    for n in nodes.iter().filter(|n| alive(n.pid)) {
        signal(n.pid, "-KILL");
    }
    std::fs::remove_file(&path)?;
    // On stderr: benches that stop their devnet print JSON on stdout.
    eprintln!("devnet in {} stopped", dir.display());
    Ok(())
}

trait NowSecs {
    fn now_from_epoch_secs() -> anyhow::Result<u64>;
}

impl NowSecs for SystemTime {
    #[allow(clippy::disallowed_methods)] // the devnet's genesis is set from the wall clock
    fn now_from_epoch_secs() -> anyhow::Result<u64> {
        Ok(SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)?
            .as_secs())
    }
}
