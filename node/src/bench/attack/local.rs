//! A node process on loopback, built from a network configuration the bench measures
//! (`configs/single.toml`, `configs/prod.toml`, or one of its families alone), with its own key,
//! ledger and port in a temporary directory, stopped when dropped.

use std::time::{Duration, SystemTime};

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_oracle::{Clock, IdentityId, NodeId, SignedRegister, SystemClock};

use crate::bench::http::KillOnDrop;
use crate::bench::load::wait_healthy;
use crate::client::Gateway;
use crate::config::Config;
use crate::keyfile::{self, KeyKind};

/// A running node and what the attackers need to reach it.
pub struct LocalNode {
    /// Its gateway.
    pub gateway: Gateway,
    /// The configuration it runs.
    pub config: Config,
    _stop: KillOnDrop,
    _dir: tempfile::TempDir,
}

impl LocalNode {
    /// Starts a node on `config`'s network section, alone in its committee. `edit` may change
    /// the configuration first; it is given the node's id (the committee).
    pub fn start(
        mut config: Config,
        edit: impl FnOnce(&mut Config, NodeId) -> anyhow::Result<()>,
    ) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        config.node.key_file = dir.path().join("node.key");
        config.node.data_dir = dir.path().join("ledger");
        config.http.listen = ([127, 0, 0, 1], crate::devnet::free_port()?).into();
        common(&mut config);
        config.p2p.listen = vec!["/ip4/127.0.0.1/tcp/0".into()];
        config.p2p.bootstrap.clear();
        config.network.committee.clear();
        let key = keyfile::generate(&config.node.key_file, KeyKind::NodeKey, false)?;
        edit(&mut config, NodeId(key.verifying_key().to_bytes()))?;
        let path = dir.path().join("node.toml");
        config.save(&path)?;
        let pid = crate::devnet::spawn(&path, &dir.path().join("node.log"))?;
        Self::started(config, pid, dir)
    }

    /// Starts a committee of `n` nodes on `config`'s network section, each member listing the
    /// others as its libp2p bootstrap; the last is started with `last_args` (such as
    /// `--unsafe-byzantine FAULTS`). `edit` may change the shared configuration first; it is
    /// given the committee.
    pub fn start_committee(
        mut config: Config,
        n: usize,
        last_args: &[&str],
        edit: impl FnOnce(&mut Config, &[NodeId]) -> anyhow::Result<()>,
    ) -> anyhow::Result<Vec<Self>> {
        anyhow::ensure!((2..=16).contains(&n), "a committee of 2 to 16 members");
        let dirs: Vec<tempfile::TempDir> = (0..n)
            .map(|_| tempfile::tempdir())
            .collect::<Result<_, _>>()?;
        let keys: Vec<SigningKey> = dirs
            .iter()
            .map(|d| keyfile::generate(&d.path().join("node.key"), KeyKind::NodeKey, false))
            .collect::<anyhow::Result<_>>()?;
        let ports = crate::devnet::distinct_ports(2 * n)?;
        let committee: Vec<NodeId> = keys
            .iter()
            .map(|k| NodeId(k.verifying_key().to_bytes()))
            .collect();
        let p2p = |i: usize| -> anyhow::Result<String> {
            let peer = crate::network::keypair(&keys[i])?.public().to_peer_id();
            Ok(format!(
                "/ip4/127.0.0.1/tcp/{}/p2p/{peer}",
                ports[2 * i + 1]
            ))
        };
        common(&mut config);
        config.network.committee = committee.iter().map(|m| hex::encode(m.0)).collect();
        edit(&mut config, &committee)?;
        let mut members = Vec::with_capacity(n);
        for (i, dir) in dirs.into_iter().enumerate() {
            let mut member = config.clone();
            member.node.key_file = dir.path().join("node.key");
            member.node.data_dir = dir.path().join("ledger");
            member.http.listen = ([127, 0, 0, 1], ports[2 * i]).into();
            member.p2p.listen = vec![format!("/ip4/127.0.0.1/tcp/{}", ports[2 * i + 1])];
            member.p2p.bootstrap = (0..n)
                .filter(|j| *j != i)
                .map(p2p)
                .collect::<anyhow::Result<_>>()?;
            let path = dir.path().join("node.toml");
            member.save(&path)?;
            let args = if i + 1 == n { last_args } else { &[] };
            let pid = crate::devnet::spawn_with(&path, &dir.path().join("node.log"), args)?;
            members.push(Self::started(member, pid, dir)?);
        }
        Ok(members)
    }

    fn started(config: Config, pid: u32, dir: tempfile::TempDir) -> anyhow::Result<Self> {
        let stop = KillOnDrop(pid);
        let url = format!("http://{}", config.http.listen);
        wait_healthy(&url, Duration::from_secs(30))?;
        Ok(Self {
            gateway: Gateway::new(&url),
            config,
            _stop: stop,
            _dir: dir,
        })
    }

    /// The current window and time as the node reports them.
    pub fn current(&self) -> anyhow::Result<(u64, u64)> {
        let url = format!("http://{}", self.config.http.listen);
        crate::bench::load::current(&crate::bench::wire::Wire::new(&url))
    }

    /// Registers `key` as a human identity; the refusal code if any.
    pub fn register_human(&self, key: &SigningKey) -> Result<IdentityId, String> {
        self.register(key, Class::Human)
    }

    /// Registers `key` as an identity of `class`, with the network's registration proof of
    /// work; the refusal code if any.
    pub fn register(&self, key: &SigningKey, class: Class) -> Result<IdentityId, String> {
        let bits = self.config.network.registration_pow_bits;
        let reg = SignedRegister::proven(key, class.into(), SystemClock.now(), bits);
        match self.gateway.post("/v1/identities", &reg) {
            Ok(r) if r.status == 201 => Ok(IdentityId(key.verifying_key().to_bytes())),
            Ok(r) => Err(r.body["code"].as_str().unwrap_or("http_error").to_owned()),
            Err(_) => Err("unreachable".into()),
        }
    }
}

/// What every bench node's configuration changes, alone or in a committee.
fn common(config: &mut Config) {
    config.http.admin = false;
    // Not scraped; a shipped config's fixed metrics port would clash between the bench's nodes.
    config.metrics.listen = None;
    // The attackers play from one loopback address: measure the families, not the limits.
    config.http.limits = crate::config::HttpLimits::unlimited();
    config.agent.max_sessions_per_ip = 0;
    config.network.quorum = 0;
    config.network.issuer_fallback = 0;
    config.agent.enabled = false;
    // The bench plays the human class; a production config's agent class would otherwise
    // refuse the public starter corpus the bench has no private replacement for.
    config.agent.allow_starter_corpus = true;
}

/// A genesis that makes a window begin about now (rounded down to the second), so a run has
/// the whole window ahead of it.
pub fn genesis_now() -> SystemTime {
    let now_s = SystemClock.now() / 1000;
    SystemTime::UNIX_EPOCH + Duration::from_secs(now_s.saturating_sub(1))
}

/// For a `global` or `staggered` slot: a genesis (near now) whose current window places the
/// ceremony slot of identity `probe` to open within `lead` from now, for a committee of `me`
/// alone. Only the genesis windows are searched, where no certificate feeds the beacon yet.
pub fn genesis_with_slot_soon(
    config: &mut Config,
    me: NodeId,
    probe: &IdentityId,
    lead: std::ops::Range<Duration>,
) -> anyhow::Result<()> {
    let now_ms = SystemClock.now();
    let base = genesis_now();
    let window = config.network.window;
    for back in 0..window.as_secs().max(1) {
        config.network.genesis = base - Duration::from_secs(back);
        let params = config.network.params(me)?;
        let Ok(t) = params.window_at(now_ms) else {
            continue;
        };
        let beacon = hco_oracle::window::slot_beacon(t, &params.digest(), &[]);
        let slot = params.slot(t, probe, &beacon);
        let opens_in = slot.start.saturating_sub(now_ms);
        if slot.start > now_ms && lead.contains(&Duration::from_millis(opens_in)) {
            return Ok(());
        }
    }
    anyhow::bail!("no genesis near now opens the slot within {lead:?}")
}
