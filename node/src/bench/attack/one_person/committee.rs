//! The network the one person plays against: one node alone, or a committee of `n` node
//! processes (`--committee N`), the last of which may be a malicious member colluding with the
//! person (`--malicious-member`: `hco node run --unsafe-byzantine stretch-prompts`, which
//! serves its touch prompts from their beat's start and accepts them up to a relay round past
//! their deadline, without evidence).
//!
//! The person talks to the first member's gateway, which forwards every request to its issuer;
//! the bench holds every member's key (to regenerate cognitive answers, the model's stand-in).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_challenges::presence::{Passkey, Presence};
use hco_oracle::secret::{node_secret, window_secret};
use hco_oracle::{
    Clock, Digest, IdentityId, NetworkParams, NodeId, SignedEnrolment, SignedRegister, SystemClock,
};
use serde::Serialize;

use crate::bench::attack::device::Device;
use crate::bench::attack::local::LocalNode;
use crate::config::Config;
use crate::keyfile::{self, KeyKind};

/// The fault the malicious member runs.
const FAULT: &str = "stretch-prompts";

/// The members, their keys and the colluding one.
pub(super) struct Members {
    /// The nodes; the first is the person's gateway (always honest).
    pub(super) nodes: Vec<LocalNode>,
    keys: BTreeMap<NodeId, SigningKey>,
    /// The malicious member, when there is one.
    pub(super) stretching: Option<NodeId>,
}

/// How a window came out at the honest members.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WindowOutcome {
    /// The window.
    pub t: u64,
    /// Active identities by the first member: its certificate's count when it holds one,
    /// else its ledger's.
    pub active: u64,
    /// Whether the first member holds the window's certificate.
    pub certified: bool,
    /// Members the first member left out of the window.
    pub excluded_members: usize,
    /// Evidence it holds for the window.
    pub evidence: usize,
}

impl Members {
    /// Starts the network of `config` with `n` members (`edit` places the genesis, given the
    /// committee), the last malicious when `malicious`.
    pub(super) fn start(
        config: Config,
        n: usize,
        malicious: bool,
        edit: impl FnOnce(&mut Config, NodeId) -> anyhow::Result<()>,
    ) -> anyhow::Result<Self> {
        anyhow::ensure!((1..=16).contains(&n), "--committee must be 1 to 16");
        anyhow::ensure!(
            !malicious || n >= 2,
            "--malicious-member needs a committee of at least 2 (--committee)"
        );
        let nodes = if n == 1 {
            vec![LocalNode::start(config, edit)?]
        } else {
            let args: &[&str] = if malicious {
                malicious_member_args()?
            } else {
                &[]
            };
            LocalNode::start_committee(config, n, args, |config, committee| {
                edit(config, committee[0])
            })?
        };
        let mut keys = BTreeMap::new();
        let mut last = None;
        for node in &nodes {
            let key = keyfile::read(&node.config.node.key_file, KeyKind::NodeKey)?;
            let id = NodeId(key.verifying_key().to_bytes());
            keys.insert(id, key);
            last = Some(id);
        }
        let stretching = last.filter(|_| malicious);
        Ok(Self {
            nodes,
            keys,
            stretching,
        })
    }

    /// The person's gateway.
    pub(super) fn gateway(&self) -> &LocalNode {
        &self.nodes[0]
    }

    /// Every member's secret of window `t`, by member.
    pub(super) fn secrets(&self, t: u64) -> BTreeMap<NodeId, Digest> {
        self.keys
            .iter()
            .map(|(id, key)| (*id, window_secret(&node_secret(key), t)))
            .collect()
    }

    /// Waits until every member knows every identity of `ids` and a passkey for each.
    pub(super) fn wait_known(&self, ids: &[IdentityId], limit: Duration) -> anyhow::Result<()> {
        let start = Instant::now();
        for node in &self.nodes[1..] {
            for id in ids {
                loop {
                    let r = node.gateway.get(&format!("/v1/identities/{id}/passkeys"));
                    let known = r.is_ok_and(|r| {
                        r.body["passkeys"].as_array().is_some_and(|p| !p.is_empty())
                    });
                    if known {
                        break;
                    }
                    anyhow::ensure!(
                        start.elapsed() < limit,
                        "member at {} did not learn identity {id} and its passkey within {limit:?}",
                        node.config.http.listen
                    );
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
        Ok(())
    }

    /// Window `t` at the first member, once it is certified (a committee: waiting up to the
    /// summaries' rounds and `limit` more) — or its ledger's count when it never is.
    pub(super) fn outcome(
        &self,
        params: &NetworkParams,
        t: u64,
        limit: Duration,
    ) -> anyhow::Result<WindowOutcome> {
        let gateway = &self.gateway().gateway;
        if self.nodes.len() > 1 {
            super::game::sleep_until(params.closes_at(t));
        }
        let until = Instant::now() + limit;
        loop {
            let w = gateway.get(&format!("/v1/windows/{t}"))?.body;
            let certified = w["certified"] == true;
            if certified || self.nodes.len() == 1 || Instant::now() >= until {
                let local = w["active_count_local"]
                    .as_u64()
                    .ok_or_else(|| anyhow::anyhow!("the node did not report window {t}: {w}"))?;
                let root = &w["certificate_root"];
                let certified_count = w["summaries"].as_array().and_then(|s| {
                    s.iter()
                        .find(|s| &s["root"] == root)
                        .and_then(|s| s["count"].as_u64())
                });
                let count = |field: &str| w[field].as_array().map_or(0, Vec::len);
                return Ok(WindowOutcome {
                    t,
                    active: certified_count.filter(|_| certified).unwrap_or(local),
                    certified,
                    excluded_members: count("excluded_members"),
                    evidence: count("evidence"),
                });
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Members {
    /// Registers every identity and enrols a credential of `device` for each, at every member
    /// (gossip alone would do, once the members' mesh has formed); their passkeys.
    pub(super) fn enrol_all(
        &self,
        keys: &[SigningKey],
        presence: &Presence,
        device: &Device,
    ) -> anyhow::Result<Vec<Passkey>> {
        let nodes = &self.nodes[..];
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 8);
        let chunk = keys.len().div_ceil(threads);
        let results: Vec<anyhow::Result<Vec<Passkey>>> = std::thread::scope(|s| {
            let handles: Vec<_> = keys
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .map(|key| enrol_one(nodes, key, presence, device))
                            .collect::<anyhow::Result<Vec<Passkey>>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("an enrolment thread panicked")))
                })
                .collect()
        });
        let mut out = Vec::with_capacity(keys.len());
        for part in results {
            out.extend(part?);
        }
        Ok(out)
    }
}

fn enrol_one(
    nodes: &[LocalNode],
    key: &SigningKey,
    presence: &Presence,
    device: &Device,
) -> anyhow::Result<Passkey> {
    let first = &nodes[0];
    let bits = first.config.network.registration_pow_bits;
    let reg = SignedRegister::proven(key, Class::Human.into(), SystemClock.now(), bits);
    let id = reg.body.id;
    let now = SystemClock.now();
    let credential = device.enrol(presence, &id.0, now)?;
    // The node checks it the same way; this copy is the key the assertions are made with.
    let passkey = presence
        .enrol(&id.0, now, &credential)
        .map_err(|e| anyhow::anyhow!("the bench key's enrolment: {e}"))?;
    let enrolment = SignedEnrolment::new(key, now, String::from_utf8(credential)?);
    for (i, node) in nodes.iter().enumerate() {
        // A member that already has it from gossip may say so (409): only the first must take it.
        let fine = |status: u16| (200..300).contains(&status) || (i > 0 && status == 409);
        let reply = node.gateway.post("/v1/identities", &reg)?;
        anyhow::ensure!(fine(reply.status), "registration refused: {}", reply.body);
        let reply = node
            .gateway
            .post(&format!("/v1/identities/{id}/passkeys"), &enrolment)?;
        anyhow::ensure!(fine(reply.status), "enrolment refused: {}", reply.body);
    }
    Ok(passkey)
}

/// The arguments that make the last member malicious, in a build that has the fault.
#[cfg(feature = "unsafe-byzantine")]
fn malicious_member_args() -> anyhow::Result<&'static [&'static str]> {
    Ok(&["--unsafe-byzantine", FAULT])
}

#[cfg(not(feature = "unsafe-byzantine"))]
fn malicious_member_args() -> anyhow::Result<&'static [&'static str]> {
    anyhow::bail!(
        "--malicious-member starts a member with `--unsafe-byzantine {FAULT}`, a test-only fault: \
         build with `--features unsafe-byzantine`"
    )
}

/// How far past a prompt's deadline the malicious member still accepts it, as the bench
/// counts it (less a margin so the answer reaches it in time), milliseconds.
#[cfg(feature = "unsafe-byzantine")]
pub(super) fn stretch_ms(params: &NetworkParams) -> u64 {
    params
        .relay_round_ms
        .saturating_sub(crate::byzantine::stretch::GOSSIP_MARGIN_MS + 150)
}

#[cfg(not(feature = "unsafe-byzantine"))]
pub(super) fn stretch_ms(_params: &NetworkParams) -> u64 {
    0
}
