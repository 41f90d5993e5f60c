//! The node's configuration file (TOML). One struct per section, every field documented and
//! defaulted; durations are humantime strings (`"20s"`, `"5m"`). The `[network]` section must be
//! identical on every committee node: its digest is compared when peers meet.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

/// The whole file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Keys and data.
    pub node: NodeSection,
    /// The HTTP gateway.
    pub http: HttpSection,
    /// The Prometheus metrics listener (off unless configured).
    pub metrics: MetricsSection,
    /// The libp2p swarm.
    pub p2p: P2pSection,
    /// Storage.
    pub ledger: LedgerSection,
    /// Network parameters, identical on every committee node.
    pub network: NetworkSection,
    /// The agent-admission game.
    pub agent: AgentSection,
}

/// `[agent]`: the agent-admission game (aCAPTCHA sessions over HTTP).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentSection {
    /// Serve `/v1/agent/sessions`.
    pub enabled: bool,
    /// Per-round budget τ of effective time.
    #[serde(with = "humantime_serde")]
    pub round_budget: Duration,
    /// Whole-session timeout.
    #[serde(with = "humantime_serde")]
    pub session_timeout: Duration,
    /// Sessions open at once.
    pub max_sessions: usize,
    /// Sessions open at once from one client address (0: no limit beyond `max_sessions`).
    pub max_sessions_per_ip: usize,
    /// Sessions one agent identity may start per window (0: no limit).
    pub max_sessions_per_identity: u32,
    /// Lifetime of an admission credential.
    #[serde(with = "humantime_serde")]
    pub credential_ttl: Duration,
    /// A corpus directory to use instead of the embedded starter corpus.
    pub corpus_dir: Option<PathBuf>,
    /// A file of retired narrative set ids (one per line).
    pub retired_sets: Option<PathBuf>,
    /// Whether the agent class may run on the public starter corpus (or a corpus sharing any of
    /// its narratives): true for development; production sets false, and the node then refuses
    /// to start without a private `corpus_dir`.
    pub allow_starter_corpus: bool,
    /// Warn when the narrative set schedule has fewer fresh windows left than this much time
    /// (`[network.narrative]`; a week by default).
    #[serde(with = "humantime_serde")]
    pub warn_corpus_remaining: Duration,
    /// Withhold the verdict on answers to per-window `narrative_chain` challenges until their
    /// window closes (`service::withheld`): a right and a wrong answer get the same reply, so a
    /// script holding many agent identities cannot learn a window's answers from verdicts.
    /// Every member must set it alike; production does. Needs an agent policy of one step and
    /// no spare (a later try's issue would tell the verdict).
    pub withhold_verdicts: bool,
}

impl Default for AgentSection {
    fn default() -> Self {
        Self {
            enabled: true,
            round_budget: Duration::from_secs(15),
            session_timeout: Duration::from_secs(120),
            max_sessions: 10_000,
            max_sessions_per_ip: 8,
            max_sessions_per_identity: 2,
            credential_ttl: Duration::from_secs(24 * 3600),
            corpus_dir: None,
            retired_sets: None,
            allow_starter_corpus: true,
            warn_corpus_remaining: Duration::from_secs(7 * 24 * 3600),
            withhold_verdicts: false,
        }
    }
}

/// `[node]`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NodeSection {
    /// The node's signing key (also its libp2p identity); created on first start if missing.
    pub key_file: PathBuf,
    /// The ledger directory.
    pub data_dir: PathBuf,
    /// How much lower (in nice steps, 0–19) the threads serving clients run than the
    /// committee's (network, gossip validation): under overload the member keeps up with its
    /// peers first. 0 runs both alike.
    pub client_nice: u8,
}

/// The default of `node.client_nice`: about a third of a committee thread's CPU weight.
pub const CLIENT_NICE: u8 = 5;

impl Default for NodeSection {
    fn default() -> Self {
        Self {
            key_file: "data/node.key".into(),
            data_dir: "data/ledger".into(),
            client_nice: CLIENT_NICE,
        }
    }
}

/// `[http]`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSection {
    /// Listen address of the gateway.
    pub listen: SocketAddr,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// Time limit of one request.
    #[serde(with = "humantime_serde")]
    pub request_timeout: Duration,
    /// A connection that has not sent a whole request head this long after it opened (or after
    /// the first byte of its next head) is closed.
    #[serde(with = "humantime_serde")]
    pub header_read_timeout: Duration,
    /// A kept-alive connection idle this long between two requests is closed.
    #[serde(with = "humantime_serde")]
    pub keep_alive_timeout: Duration,
    /// Test and devnet only: `POST /admin/peers/{node}/block|unblock` edits the libp2p block list.
    pub admin: bool,
    /// Rate and concurrency limits per client address and per identity (`[http.limits]`).
    pub limits: HttpLimits,
}

/// `[metrics]`: where `GET /metrics` (OpenMetrics text) is served — its own listener, never the
/// client gateway (the series describe the node's load and the committee's health). Off by
/// default; bind it to loopback or a private interface, e.g. `listen = "127.0.0.1:9464"`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsSection {
    /// Listen address of the metrics listener; absent or `""`: no metrics listener.
    #[serde(
        deserialize_with = "optional_addr",
        skip_serializing_if = "Option::is_none"
    )]
    pub listen: Option<SocketAddr>,
}

/// An optional socket address, where an empty string means none.
fn optional_addr<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<SocketAddr>, D::Error> {
    let text = String::deserialize(d)?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    text.trim()
        .parse()
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// `[http.limits]`: what one client may ask of the gateway. Clients are told apart by their
/// address (IPv6 by its /64 prefix); a request over a limit is refused with 429 and the code
/// `rate_limited` (or 503 `overloaded` when the whole gateway is busy) and leaves no state.
/// A rate or count of 0 disables that limit.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpLimits {
    /// Sustained requests per second from one client address.
    pub per_ip_rate: u32,
    /// Requests one client address may send at once above its rate.
    pub per_ip_burst: u32,
    /// Requests of one client address handled at the same time.
    pub per_ip_concurrent: u32,
    /// Sustained requests per second naming one identity (registration, enrolment, challenge
    /// requests and responses), whatever their address.
    pub per_identity_rate: u32,
    /// Requests naming one identity accepted at once above its rate.
    pub per_identity_burst: u32,
    /// Requests handled at the same time by the whole gateway; beyond, 503 `overloaded`.
    pub max_concurrent: u32,
    /// New identities this gateway registers per window (its quota of a window's registration
    /// cost); beyond, 429 `registration_quota` until the next window. Registrations arriving
    /// by gossip from other members are not counted.
    pub registrations_per_window: u32,
    /// Reverse proxies in front of the gateway: for a request from one of these addresses the
    /// client is the last address of its `X-Forwarded-For` header. Empty: every client is the
    /// address of its connection.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Open connections from one TCP peer address (IPv6 by /64); beyond, a new connection is
    /// answered 429 `rate_limited` and closed. The peer is the socket's, never a forwarded
    /// address: a trusted proxy is not capped here (it carries many clients), only by the budget.
    pub per_ip_connections: u32,
    /// Open connections for the whole gateway. The budget actually used is the smaller of this
    /// and the process's file-descriptor limit less `reserved_fds` (0 here: that alone); when
    /// it is full, idle connections are closed, oldest first, to admit new ones.
    pub max_connections: u32,
    /// File descriptors kept out of the connection budget for the ledger, the libp2p swarm
    /// and everything else the node opens.
    pub reserved_fds: u32,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            per_ip_rate: 50,
            per_ip_burst: 100,
            per_ip_concurrent: 32,
            per_identity_rate: 5,
            per_identity_burst: 20,
            max_concurrent: 1024,
            registrations_per_window: 100_000,
            trusted_proxies: Vec::new(),
            per_ip_connections: 256,
            max_connections: 16_384,
            reserved_fds: 1024,
        }
    }
}

impl HttpLimits {
    /// No limit at all (load generators on loopback, in-process tests).
    pub fn unlimited() -> Self {
        Self {
            per_ip_rate: 0,
            per_ip_burst: 0,
            per_ip_concurrent: 0,
            per_identity_rate: 0,
            per_identity_burst: 0,
            max_concurrent: 0,
            registrations_per_window: 0,
            trusted_proxies: Vec::new(),
            per_ip_connections: 0,
            max_connections: 0,
            reserved_fds: HttpLimits::default().reserved_fds,
        }
    }
}

impl Default for HttpSection {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            max_body_bytes: 64 * 1024,
            request_timeout: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(10),
            keep_alive_timeout: Duration::from_secs(30),
            admin: false,
            limits: HttpLimits::default(),
        }
    }
}

impl HttpSection {
    /// Refuses settings the gateway cannot run with, naming the field.
    pub fn validate(&self) -> anyhow::Result<()> {
        for (name, value) in [
            ("http.request_timeout", self.request_timeout),
            ("http.header_read_timeout", self.header_read_timeout),
            ("http.keep_alive_timeout", self.keep_alive_timeout),
        ] {
            anyhow::ensure!(
                value >= Duration::from_millis(10),
                "{name} is {value:?}; it must be at least 10ms"
            );
        }
        let l = &self.limits;
        anyhow::ensure!(
            l.max_connections == 0 || l.per_ip_connections <= l.max_connections,
            "http.limits.per_ip_connections ({}) is above http.limits.max_connections ({})",
            l.per_ip_connections,
            l.max_connections
        );
        Ok(())
    }
}

/// `[p2p]`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct P2pSection {
    /// Listen multiaddrs.
    pub listen: Vec<String>,
    /// Peers to dial at start, as multiaddrs ending in `/p2p/<peer id>`.
    pub bootstrap: Vec<String>,
    /// Also listen and dial over QUIC (needs the `quic` build feature).
    pub quic: bool,
    /// Most established connections.
    pub max_connections: u32,
    /// Most established connections per peer.
    pub max_connections_per_peer: u32,
    /// Largest gossip frame (payload and gossipsub envelope); at least
    /// [`crate::network::protocol::MAX_GOSSIP_FRAME`], which is what nodes ever send: gossip
    /// payloads are split to fit the codec's decode limit.
    pub max_message_bytes: usize,
    /// How long a peer stays blocked after misbehaving or advertising other network parameters.
    #[serde(with = "humantime_serde")]
    pub ban_duration: Duration,
    /// Gossip messages per second a peer that is not a committee member may send (refilled
    /// continuously; committee members are not limited here).
    pub observer_gossip_per_second: u32,
    /// Gossip messages such a peer may send at once.
    pub observer_gossip_burst: u32,
    /// Requests per second such a peer may make (challenge and certificate protocols; the
    /// reconciliation protocol answers committee members only).
    pub observer_rpc_per_second: u32,
    /// Requests such a peer may make at once.
    pub observer_rpc_burst: u32,
}

impl Default for P2pSection {
    fn default() -> Self {
        Self {
            listen: vec!["/ip4/127.0.0.1/tcp/0".into()],
            bootstrap: Vec::new(),
            quic: false,
            max_connections: 128,
            max_connections_per_peer: 2,
            max_message_bytes: crate::network::protocol::MAX_GOSSIP_FRAME,
            ban_duration: Duration::from_secs(600),
            observer_gossip_per_second: 2,
            observer_gossip_burst: 10,
            observer_rpc_per_second: 20,
            observer_rpc_burst: 40,
        }
    }
}

/// `[ledger]`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LedgerSection {
    /// Windows of records kept; older ones are pruned (identities are kept, except idle ones).
    pub retention_windows: u64,
    /// Closed windows a restarted node catches up on.
    pub catch_up_windows: u64,
    /// Identities registered this many windows ago that never had a challenge issued nor an
    /// acceptance recorded (nor a passkey) are removed; they may register again. 0: never.
    /// With each gateway's `registrations_per_window`, this bounds the never-active
    /// registrations on disk: at most the committee's summed quotas times (this + 2).
    pub idle_identity_windows: u64,
}

impl Default for LedgerSection {
    fn default() -> Self {
        Self {
            retention_windows: 10_000,
            catch_up_windows: 16,
            idle_identity_windows: 3,
        }
    }
}

impl Config {
    /// With `agent.withhold_verdicts`, the agent policy must be one step and no spare: a try
    /// issued only after another failed (a spare) or passed (a later step) would tell its verdict.
    pub fn check_withheld_verdicts(&self) -> anyhow::Result<()> {
        let policy = &self.network.policy.agent;
        anyhow::ensure!(
            !self.agent.withhold_verdicts || (policy.steps.len() == 1 && policy.spares == 0),
            "agent.withhold_verdicts needs network.policy.agent to be one step with no spare \
             (it has {} steps and {} spares): a later try's issue would tell the verdict",
            policy.steps.len(),
            policy.spares
        );
        Ok(())
    }

    /// Reads and parses a config file; relative paths in it are relative to the file.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "cannot read config {}; see configs/ for examples",
                path.display()
            )
        })?;
        let text = read_attestation_ca_files(text, path)?;
        let mut config: Config =
            toml::from_str(&text).with_context(|| format!("invalid config {}", path.display()))?;
        anyhow::ensure!(
            config.node.client_nice <= 19,
            "invalid config {}: node.client_nice is {}, at most 19",
            path.display(),
            config.node.client_nice
        );
        config
            .http
            .validate()
            .with_context(|| format!("invalid config {}", path.display()))?;
        config
            .check_withheld_verdicts()
            .with_context(|| format!("invalid config {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        for p in [&mut config.node.key_file, &mut config.node.data_dir] {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
        Ok(config)
    }

    /// Writes the config as TOML.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        std::fs::write(path, toml::to_string_pretty(self)?)
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// `[network.presence] attestation_ca_files`: PEM files named relative to the config file,
/// read into `attestation_ca_pem` (after its own entries) so that the network parameters, and
/// their digest, carry the certificates' text. Returns the config text without the key, or
/// unchanged when it has none (its errors then keep their line numbers).
fn read_attestation_ca_files(text: String, path: &Path) -> anyhow::Result<String> {
    const KEY: &str = "attestation_ca_files";
    let Ok(mut table) = toml::from_str::<toml::Table>(&text) else {
        return Ok(text); // the typed parse reports the syntax error
    };
    let Some(presence) = table
        .get_mut("network")
        .and_then(|n| n.get_mut("presence"))
        .and_then(|p| p.as_table_mut())
    else {
        return Ok(text);
    };
    let Some(files) = presence.remove(KEY) else {
        return Ok(text);
    };
    let files: Vec<PathBuf> = files
        .try_into()
        .with_context(|| format!("network.presence.{KEY} must be a list of file paths"))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut pems = Vec::with_capacity(files.len());
    for file in files {
        let file = if file.is_relative() {
            base.join(file)
        } else {
            file
        };
        let pem = std::fs::read_to_string(&file).with_context(|| {
            format!(
                "network.presence.{KEY}: cannot read {} (paths are relative to the config file)",
                file.display()
            )
        })?;
        pems.push(toml::Value::String(pem));
    }
    let list = presence
        .entry("attestation_ca_pem")
        .or_insert_with(|| toml::Value::Array(Vec::new()));
    let Some(list) = list.as_array_mut() else {
        bail!("network.presence.attestation_ca_pem must be a list of PEM texts");
    };
    list.extend(pems);
    Ok(toml::to_string(&table)?)
}

mod network;
#[cfg(test)]
mod tests;

pub use network::{FamilySection, NetworkSection};
