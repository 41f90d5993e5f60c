//! The node's configuration file (TOML). One struct per section, every field documented and
//! defaulted; durations are humantime strings (`"20s"`, `"5m"`). The `[network]` section must be
//! identical on every committee node: its digest is compared when peers meet.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use hco_challenges::narrative::ScheduleParams;
use hco_oracle::{ClassPolicies, FamilyConfig, LifecycleParams, NetworkParams, NodeId, SlotMode};
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

/// One enabled family.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilySection {
    /// Registry name.
    pub name: String,
    /// Response deadline after issue.
    #[serde(with = "humantime_serde")]
    pub deadline: Duration,
    /// Family-defined hardness.
    pub difficulty: u32,
    /// Answers sooner than this after issue are `too_fast`; left out, the family's default
    /// (its least human solve time; 0 for agent families).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_solve: Option<Duration>,
}

/// `[network]`: what every committee node must share.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkSection {
    /// Start of window 0 (RFC 3339).
    #[serde(with = "humantime_serde")]
    pub genesis: SystemTime,
    /// Window length.
    #[serde(with = "humantime_serde")]
    pub window: Duration,
    /// Answers to a window's challenges are accepted until its end plus this.
    #[serde(with = "humantime_serde")]
    pub grace: Duration,
    /// The step sequence of each class per window: `[network.policy.human]` and
    /// `[network.policy.agent]`, each with `steps` (family names, or `"cognitive"` for a family
    /// the seed draws from the class's other enabled families) and `spares`.
    pub policy: ClassPolicies,
    /// `open`, `global` or `staggered`.
    pub slot_mode: SlotMode,
    /// Slot length for `global` and `staggered`.
    #[serde(with = "humantime_serde")]
    pub slot: Duration,
    /// How far past its beat a touch prompt (a `presence` challenge in a `global` or
    /// `staggered` slot) may open, drawn per identity; see docs/protocol.md.
    #[serde(with = "humantime_serde")]
    pub prompt_jitter: Duration,
    /// Enabled families.
    pub families: Vec<FamilySection>,
    /// Lifecycle thresholds in missed windows.
    pub lifecycle: LifecycleParams,
    /// Committee node ids (hex). Empty: this node alone (a development setup).
    pub committee: Vec<String>,
    /// Matching summaries needed for a certificate (0: a majority of the committee).
    pub quorum: u32,
    /// Issuers after the assigned one that may serve a request.
    pub issuer_fallback: u32,
    /// Each try of an identity-window at another member (see `NetworkParams::rotate_issuers`).
    pub rotate_issuers: bool,
    /// Allowed clock difference for registration timestamps.
    #[serde(with = "humantime_serde")]
    pub max_clock_skew: Duration,
    /// The relay round of the reveal rule: a relayed message reaches every honest member within
    /// it, clock differences included (see docs/protocol.md, "Whose reveal counts"). A window
    /// is summarized 2 + f rounds after it closes, f = committee size − quorum. 0 (the
    /// default): an eighth of the window, at most 5 s and at least 100 ms.
    #[serde(with = "humantime_serde")]
    pub relay_round: Duration,
    /// Leading zero bits of the proof of work each registration carries (0: none). Every
    /// step doubles a registration's expected cost; see docs/operator.md.
    pub registration_pow_bits: u32,
    /// The WebAuthn relying party of the `presence` family (`rp_id`, `origins`,
    /// `user_verification`, `attestation`, `attestation_ca_pem`, `aaguids`,
    /// `allow_zero_counter`; `attestation_ca_files` names PEM files read into
    /// `attestation_ca_pem` when the file is loaded).
    pub presence: hco_challenges::presence::PresencePolicy,
    /// `[network.narrative]`: which narrative sets each window uses (`start_window`,
    /// `sets_per_window`, `reuse`); see docs/operator.md. `reuse` (the default, for development)
    /// is refused on any corpus but the public starter corpus.
    pub narrative: ScheduleParams,
    /// A development network, said explicitly (false unless set): only then may the agent
    /// class be served by labelled baselines alone (`proof_of_work`, the lock families), which
    /// a script passes, as on a devnet. A start-time check of this node
    /// ([`NetworkSection::refuse_baseline_only`]); not part of the parameters' digest.
    pub development: bool,
}

impl Default for NetworkSection {
    fn default() -> Self {
        Self {
            genesis: UNIX_EPOCH + Duration::from_secs(1_767_225_600), // 2026-01-01T00:00:00Z
            window: Duration::from_secs(60),
            grace: Duration::from_secs(20),
            policy: ClassPolicies::default(),
            slot_mode: SlotMode::Open,
            slot: Duration::ZERO,
            prompt_jitter: Duration::from_secs(1),
            families: vec![
                FamilySection {
                    name: "proof_of_work".into(),
                    deadline: Duration::from_secs(10),
                    difficulty: 12,
                    min_solve: None,
                },
                FamilySection {
                    name: "arithmetic_reasoning".into(),
                    deadline: Duration::from_secs(15),
                    difficulty: 3,
                    min_solve: None,
                },
            ],
            lifecycle: LifecycleParams::default(),
            committee: Vec::new(),
            quorum: 0,
            issuer_fallback: 0,
            rotate_issuers: false,
            max_clock_skew: Duration::from_secs(30),
            relay_round: Duration::ZERO,
            registration_pow_bits: 0,
            presence: Default::default(),
            narrative: ScheduleParams {
                reuse: true,
                ..ScheduleParams::default()
            },
            development: false,
        }
    }
}

impl Config {
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

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

impl NetworkSection {
    /// The protocol parameters, with `me` as the committee when none is configured.
    pub fn params(&self, me: NodeId) -> anyhow::Result<NetworkParams> {
        let committee: Vec<NodeId> = if self.committee.is_empty() {
            vec![me]
        } else {
            self.committee
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    s.parse()
                        .map_err(|e| anyhow::anyhow!("network.committee[{i}]: {e}"))
                })
                .collect::<anyhow::Result<_>>()?
        };
        let n = committee.len() as u32;
        let registry = hco_challenges::Registry::builtin();
        let genesis = self
            .genesis
            .duration_since(UNIX_EPOCH)
            .context("network.genesis must be after 1970")?;
        let params = NetworkParams {
            genesis_ms: ms(genesis),
            window_ms: ms(self.window),
            grace_ms: ms(self.grace),
            policies: self.policy.clone(),
            slot_mode: self.slot_mode,
            slot_ms: ms(self.slot),
            prompt_jitter_ms: ms(self.prompt_jitter),
            families: self
                .families
                .iter()
                .map(|f| FamilyConfig {
                    name: f.name.clone(),
                    deadline_ms: ms(f.deadline),
                    difficulty: f.difficulty,
                    min_solve_ms: f.min_solve.map(ms).unwrap_or_else(|| {
                        registry
                            .get(&f.name)
                            .map_or(0, |family| family.min_human_solve_ms())
                    }),
                })
                .collect(),
            lifecycle: self.lifecycle,
            quorum: if self.quorum == 0 {
                n / 2 + 1
            } else {
                self.quorum
            },
            committee,
            issuer_fallback: self.issuer_fallback,
            rotate_issuers: self.rotate_issuers,
            max_clock_skew_ms: ms(self.max_clock_skew),
            relay_round_ms: if self.relay_round.is_zero() {
                (ms(self.window) / 8).clamp(100, 5_000)
            } else {
                ms(self.relay_round)
            },
            registration_pow_bits: self.registration_pow_bits,
            presence: self.presence.clone(),
            // The corpus root and retirement digest are filled in by the node once it has
            // loaded its corpus (`AgentCorpus::narrative_params`).
            narrative: hco_oracle::NarrativeParams {
                schedule: self.narrative,
                ..Default::default()
            },
        };
        if !params.committee.contains(&me) {
            bail!(
                "this node ({me}) is not in network.committee; add its id (hco keys show) or use another key"
            );
        }
        Ok(params)
    }

    /// Refuses, outside a network that says it is a development one (`development = true`),
    /// an agent policy whose steps can only take labelled baselines
    /// ([`NetworkParams::baseline_only`]): a script with the source would keep every agent
    /// identity active. The error names the class, its steps and the families.
    pub fn refuse_baseline_only(&self) -> anyhow::Result<()> {
        if self.development {
            return Ok(());
        }
        // The committee does not enter the policy; a stand-in member lets any config load.
        let mut network = self.clone();
        network.committee.clear();
        let params = network.params(NodeId([0; 32]))?;
        let registry = hco_challenges::Registry::builtin();
        let class = hco_oracle::Class::Agent;
        if !params.baseline_only(class, &registry) {
            return Ok(());
        }
        let families: Vec<&str> = params
            .policy_families(class, &registry)
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        let steps: Vec<String> = params
            .policy(class)
            .steps
            .iter()
            .cloned()
            .map(String::from)
            .collect();
        bail!(
            "network.policy.agent: the agent class's steps {steps:?} can only take labelled \
             baselines ({}), which a script with the source passes, so agent identities would \
             prove nothing. Enable `narrative_chain` and let a step take it (as \
             configs/prod.toml does), or, on a development network only, set `[network] \
             development = true`",
            families.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let mut out = Vec::new();
        for dir in [root.clone(), root.join("devnet")] {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "toml") {
                    out.push(path);
                }
            }
        }
        out
    }

    #[test]
    fn every_shipped_config_loads_and_its_parameters_validate() {
        let paths = shipped();
        assert!(paths.len() >= 6, "{paths:?}");
        for path in paths {
            let config =
                Config::load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
            let me = match config.network.committee.first() {
                Some(first) => first.parse().unwrap(),
                None => NodeId([7; 32]),
            };
            let params = config
                .network
                .params(me)
                .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
            params
                .validate(&hco_challenges::Registry::builtin())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            config
                .network
                .refuse_baseline_only()
                .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
        }
    }

    /// Production with the lock families as the agent class's only families (`narrative_chain`
    /// dropped): a script passes every agent step, so the node refuses to start, naming the
    /// class and the families, unless the config says it is a development network.
    #[test]
    fn an_agent_policy_of_baselines_alone_is_refused_outside_development() {
        let prod = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/prod.toml");
        let shipped = Config::load(&prod).unwrap();
        shipped.network.refuse_baseline_only().unwrap();
        let locks = [
            "obfuscated_text_lock",
            "multi_pass_lock",
            "semantic_math_lock",
        ];
        for steps in [["cognitive"], ["multi_pass_lock"]] {
            let mut c = shipped.clone();
            c.network.families.retain(|f| f.name != "narrative_chain");
            c.network.families.extend(locks.map(|name| FamilySection {
                name: name.into(),
                deadline: Duration::from_secs(45),
                difficulty: 1,
                min_solve: None,
            }));
            c.network.policy.agent.steps = steps.map(|s| s.to_string().into()).to_vec();
            // The parameters themselves are valid: only the start-time check refuses them.
            let mut network = c.network.clone();
            network.committee.clear();
            let params = network.params(NodeId([7; 32])).unwrap();
            params
                .validate(&hco_challenges::Registry::builtin())
                .unwrap();
            let err = format!("{:#}", c.network.refuse_baseline_only().unwrap_err());
            assert!(
                err.contains("network.policy.agent")
                    && err.contains("agent class")
                    && err.contains("multi_pass_lock")
                    && err.contains("development = true"),
                "{steps:?}: {err}"
            );
            // A named step takes that family only; a drawn one any of the three.
            let drawn = locks.iter().filter(|l| err.contains(*l)).count();
            assert_eq!(drawn, if steps[0] == "cognitive" { 3 } else { 1 }, "{err}");
            c.network.development = true;
            c.network.refuse_baseline_only().unwrap();
        }
        // Without any agent family the class is not served at all: nothing to refuse.
        let mut c = shipped.clone();
        c.network.families.retain(|f| f.name != "narrative_chain");
        c.network.policy.agent.steps = vec!["cognitive".to_string().into()];
        c.network.refuse_baseline_only().unwrap();
    }

    #[test]
    fn devnet_configs_agree_on_the_network() {
        let digests: std::collections::BTreeSet<_> = (0..4)
            .map(|i| {
                let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join(format!("../configs/devnet/node{i}.toml"));
                let c = Config::load(&path).unwrap();
                c.network
                    .params(c.network.committee[i].parse().unwrap())
                    .unwrap()
                    .digest()
            })
            .collect();
        assert_eq!(digests.len(), 1, "devnet nodes would refuse each other");
    }

    #[test]
    fn unknown_fields_and_bad_values_are_errors_that_name_them() {
        let err = toml::from_str::<Config>("[http]\nlisen = \"x\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("lisen"), "{err}");
        let c: Config = toml::from_str("[network]\nwindow = \"0s\"").unwrap();
        let err = c
            .network
            .params(NodeId([7; 32]))
            .unwrap()
            .validate(&hco_challenges::Registry::builtin())
            .unwrap_err();
        assert_eq!(err.field, "window_ms");
    }

    #[test]
    fn the_metrics_listener_is_off_unless_configured() {
        let off = |text: &str| toml::from_str::<Config>(text).unwrap().metrics.listen;
        assert_eq!(off(""), None);
        assert_eq!(off("[metrics]\nlisten = \"\"\n"), None);
        assert_eq!(
            off("[metrics]\nlisten = \"127.0.0.1:9464\"\n"),
            Some(([127, 0, 0, 1], 9464).into())
        );
        let err = toml::from_str::<Config>("[metrics]\nlisten = \"nowhere\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("listen"), "{err}");
        assert!(toml::from_str::<Config>("[metrics]\npath = \"/m\"\n").is_err());
        // What `save` writes reads back the same, on or off.
        for listen in [None, Some(([127, 0, 0, 1], 9464).into())] {
            let mut c = Config::default();
            c.metrics.listen = listen;
            let back: Config = toml::from_str(&toml::to_string_pretty(&c).unwrap()).unwrap();
            assert_eq!(back.metrics.listen, listen);
        }
    }

    #[test]
    fn a_client_nice_beyond_the_systems_range_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("node.toml");
        std::fs::write(&path, "[node]\nclient_nice = 20\n").unwrap();
        let err = format!("{:#}", Config::load(&path).unwrap_err());
        assert!(err.contains("node.client_nice"), "{err}");
        std::fs::write(&path, "[node]\nclient_nice = 19\n").unwrap();
        assert_eq!(Config::load(&path).unwrap().node.client_nice, 19);
        std::fs::write(&path, "").unwrap();
        assert_eq!(Config::load(&path).unwrap().node.client_nice, CLIENT_NICE);
    }

    #[test]
    fn http_connection_settings_have_defaults_and_bad_ones_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("node.toml");
        std::fs::write(&path, "").unwrap();
        let http = Config::load(&path).unwrap().http;
        assert_eq!(http.header_read_timeout, Duration::from_secs(10));
        assert_eq!(http.keep_alive_timeout, Duration::from_secs(30));
        assert_eq!(http.limits.per_ip_connections, 256);
        for (text, field) in [
            (
                "[http]\nheader_read_timeout = \"0s\"\n",
                "http.header_read_timeout",
            ),
            (
                "[http]\nkeep_alive_timeout = \"0s\"\n",
                "http.keep_alive_timeout",
            ),
            (
                "[http.limits]\nper_ip_connections = 10\nmax_connections = 5\n",
                "http.limits.per_ip_connections",
            ),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = format!("{:#}", Config::load(&path).unwrap_err());
            assert!(err.contains(field), "{err}");
        }
    }

    #[test]
    fn attestation_ca_files_are_read_relative_to_the_config_into_the_params() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("roots")).unwrap();
        let yubico = include_str!("../../configs/attestation/yubico-2026-11.pem");
        std::fs::write(dir.path().join("roots/yubico.pem"), yubico).unwrap();
        let path = dir.path().join("node.toml");
        let presence = "[network.presence]\nattestation = \"strict\"\n";
        std::fs::write(
            &path,
            format!("{presence}attestation_ca_files = [\"roots/yubico.pem\"]\n"),
        )
        .unwrap();
        let config = Config::load(&path).unwrap();
        assert_eq!(config.network.presence.attestation_ca_pem, vec![yubico]);
        let params = config.network.params(NodeId([7; 32])).unwrap();
        hco_challenges::presence::Presence::new(params.presence.clone()).unwrap();
        assert!(!params.presence.accepts_software_authenticators());

        // The digest covers the certificates' text: another file, another network.
        let other = include_str!("../../configs/attestation/apple-2026-11.pem");
        std::fs::write(dir.path().join("roots/yubico.pem"), other).unwrap();
        let changed = Config::load(&path).unwrap().network.params(NodeId([7; 32]));
        assert_ne!(changed.unwrap().digest(), params.digest());

        // A missing file is an error that names the key and the file.
        std::fs::write(
            &path,
            format!("{presence}attestation_ca_files = [\"roots/missing.pem\"]\n"),
        )
        .unwrap();
        let err = format!("{:#}", Config::load(&path).unwrap_err());
        assert!(
            err.contains("attestation_ca_files") && err.contains("missing.pem"),
            "{err}"
        );
    }

    /// A person who opted out of visual families registers wherever their class has a
    /// non-visual family (presence is one), so each step of the policy must leave them a family
    /// too: a drawn step with none refuses them `no_family_for_profile` every window.
    #[test]
    fn every_step_of_every_shipped_policy_has_a_family_for_both_profiles() {
        use hco_oracle::{Class, Profile};
        let registry = hco_challenges::Registry::builtin();
        let mut missing = Vec::new();
        for path in shipped() {
            let config = Config::load(&path).unwrap();
            let me = match config.network.committee.first() {
                Some(first) => first.parse().unwrap(),
                None => NodeId([7; 32]),
            };
            let params = config.network.params(me).unwrap();
            for class in [Class::Human, Class::Agent] {
                // A class without an enabled family is not served at all.
                if params
                    .families_for(Profile::new(class, false), &registry)
                    .is_empty()
                {
                    continue;
                }
                for no_visual in [false, true] {
                    let profile = Profile::new(class, no_visual);
                    for (i, step) in params.policy(class).steps.iter().enumerate() {
                        if params.step_families(step, profile, &registry).is_empty() {
                            missing.push(format!(
                                "{}: {} step {i} ({}) with visual_opt_out = {no_visual}",
                                path.file_name().unwrap().to_string_lossy(),
                                class.as_str(),
                                String::from(step.clone()),
                            ));
                        }
                    }
                }
            }
        }
        assert!(missing.is_empty(), "steps without a family: {missing:#?}");
    }
}
