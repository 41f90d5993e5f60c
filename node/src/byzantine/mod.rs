//! A test-only faulty committee member: `hco node run --unsafe-byzantine <faults>`, in builds
//! with the `unsafe-byzantine` cargo feature only (the tests turn it on; a default build has no
//! such flag and none of this code). It acts through the service's fault hook
//! ([`crate::service::faults::FaultHook`], installed at start) and a task of its own.
//!
//! It exists so that tests can run a real node process that cheats, and check that the honest
//! members leave everything it vouches for out of the certified active set and name it in the
//! evidence. It is off unless the flag is given, and refused (the node does not start) unless
//! the config looks like a local test network: the HTTP gateway and every libp2p listen address
//! on 127.0.0.0/8 and windows of at most two minutes (room for production's 26 s of beats in
//! the one-person bench). A node running it logs so at start and every window, and says so in
//! `/healthz` (`unsafe_byzantine`).
//!
//! The faults (comma-separated, or `all`):
//! - `wrong-answers`: responses sent to this node are accepted without any check (sealed and
//!   gossiped as acceptances), and each window one of its own sybils is accepted with a wrong
//!   answer to a real challenge.
//! - `mint`: each window an acceptance is made up for a sybil that was never issued a challenge;
//!   once, one for a registered identity whose key the member lacks (signed with another key).
//! - `backdate`: once, an answer accepted past its deadline and a challenge dated before its
//!   window.
//! - `withhold-reveal`: the secrets of odd windows are neither gossiped nor served (even
//!   windows are revealed, so what the member accepted in them can be audited).
//! - `equivocate`: two different signed summaries of each window, gossiped as it closes.
//! - `frame`: once, half-way through a window, a genuine acceptance another member sealed is
//!   gossiped together with one that member never sealed (a sybil's, under a challenge made up
//!   in its name) carrying the same seal signature over this member's own root. Honest members
//!   reject the message; the framed member must not be accused or left out.
//! - `late`: once a window is certified, an acceptance of it is made up for a sybil (dated
//!   inside the window) and gossiped. On its own (the member otherwise honest, so not left out
//!   of the window) this tests that a certified set cannot be changed afterwards.
//!
//! - `own-sybils` (not part of `all`): each window the member answers every try of each of its
//!   sybils itself, right, as modified issuing code would (see [`own_sybils`]).
//! - `reveal-to-one` (not part of `all`): the member's reveals are not gossiped; each is put in
//!   the answer to the first member that asks for the window's reveals, and no other — the
//!   reveal that would once have split the honest members' exclusion lists
//!   (hco_oracle::relay).
//! - `stretch-prompts` (not part of `all`): the touch prompts the member issues are served from
//!   their beat's start and accepted up to a relay round past their deadline, dated inside
//!   their bounds (see [`stretch`]): what one member can give a person it colludes with,
//!   without evidence. It acts in every window.
//!
//! The kinds that honest members reject on receipt (backdated, impersonating) are sent once per
//! process, fewer than the strikes that get a peer banned: the test looks at what the committee
//! certifies, not at the ban. Faults act from window [`FIRST_WINDOW`] on (the first one with
//! commitments under the devnet's parameters).

mod forge;
mod own_sybils;
pub mod stretch;
mod task;

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::bail;
use ed25519_dalek::SigningKey;
use hco_oracle::{Acceptance, Response, VERSION};
use libp2p::PeerId;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::network::protocol::ChallengeReply;
use crate::service::Node;
use crate::service::faults::{FaultHook, Replaced};

/// The first window in which the faults act.
pub const FIRST_WINDOW: u64 = 2;
/// Sybil identities the member registers and signs for.
const SYBILS: u64 = 32;
/// Delay after a window starts before the member misbehaves in it.
const ACT_DELAY_MS: u64 = 1_000;
/// Delay after a window closes before its two extra summaries are gossiped.
const EQUIVOCATE_DELAY_MS: u64 = 300;

/// One selectable fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// Accept answers without checking them.
    WrongAnswers,
    /// Make up acceptances for identities that never answered.
    Mint,
    /// Accept past the deadline; date a challenge before its window.
    Backdate,
    /// Do not reveal odd windows' secrets.
    WithholdReveal,
    /// Sign two summaries of a window.
    Equivocate,
    /// Add to a window after its certificate formed.
    Late,
    /// Pass off an acceptance as another member's with that member's seal signature.
    Frame,
    /// Answer every try of its own sybils itself.
    OwnSybils,
    /// Reveal each window to the first member that asks, and to no other.
    RevealToOne,
    /// Serve its touch prompts from their beat's start and accept them up to a relay round late.
    StretchPrompts,
}

impl Fault {
    const ALL: [Fault; 7] = [
        Fault::WrongAnswers,
        Fault::Mint,
        Fault::Backdate,
        Fault::WithholdReveal,
        Fault::Equivocate,
        Fault::Late,
        Fault::Frame,
    ];
    /// The faults `all` leaves out: each is named on its own.
    const BY_NAME_ONLY: [Fault; 3] = [Fault::OwnSybils, Fault::RevealToOne, Fault::StretchPrompts];

    /// Every fault: `all`'s and the ones named on their own.
    fn known() -> impl Iterator<Item = Fault> {
        Self::ALL.into_iter().chain(Self::BY_NAME_ONLY)
    }

    /// The name used on the command line and in `/healthz`.
    pub fn name(self) -> &'static str {
        match self {
            Fault::WrongAnswers => "wrong-answers",
            Fault::Mint => "mint",
            Fault::Backdate => "backdate",
            Fault::WithholdReveal => "withhold-reveal",
            Fault::Equivocate => "equivocate",
            Fault::Late => "late",
            Fault::Frame => "frame",
            Fault::OwnSybils => "own-sybils",
            Fault::RevealToOne => "reveal-to-one",
            Fault::StretchPrompts => "stretch-prompts",
        }
    }
}

/// Parses `a,b,c` or `all`.
pub fn parse(spec: &str) -> anyhow::Result<BTreeSet<Fault>> {
    let mut out = BTreeSet::new();
    for name in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if name == "all" {
            out.extend(Fault::ALL);
            continue;
        }
        match Fault::known().find(|f| f.name() == name) {
            Some(f) => out.insert(f),
            None => bail!(
                "unknown fault `{name}` for --unsafe-byzantine (known: all, {})",
                Fault::known()
                    .map(Fault::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
    }
    if out.is_empty() {
        bail!("--unsafe-byzantine needs at least one fault");
    }
    Ok(out)
}

/// Refuses a config that does not look like a local test network.
pub fn refuse_production(config: &Config) -> anyhow::Result<()> {
    let mut problems = Vec::new();
    if !config.http.listen.ip().is_loopback() {
        problems.push(format!(
            "http.listen {} is not loopback",
            config.http.listen
        ));
    }
    for addr in &config.p2p.listen {
        let loopback = addr
            .strip_prefix("/ip4/")
            .and_then(|rest| rest.split('/').next())
            .and_then(|ip| ip.parse::<std::net::Ipv4Addr>().ok())
            .is_some_and(|ip| ip.is_loopback());
        if !loopback {
            problems.push(format!("p2p.listen {addr} is not on 127.0.0.0/8"));
        }
    }
    if config.network.window > Duration::from_secs(120) {
        problems.push(format!(
            "network.window {:?} is longer than a test network's (120 s at most)",
            config.network.window
        ));
    }
    if !problems.is_empty() {
        bail!(
            "--unsafe-byzantine is for local test networks only, and this config looks like \
             a real one: {}",
            problems.join("; ")
        );
    }
    Ok(())
}

struct Armed {
    faults: BTreeSet<Fault>,
    key: OnceLock<SigningKey>,
}

static ARMED: OnceLock<Armed> = OnceLock::new();

/// Turns the faults on for this process (after [`refuse_production`] passed).
pub fn enable(faults: BTreeSet<Fault>) {
    let names: Vec<_> = faults.iter().map(|f| f.name()).collect();
    for _ in 0..3 {
        tracing::error!(faults = ?names, "UNSAFE BYZANTINE MODE: this node cheats on purpose (test networks only)");
    }
    let _ = ARMED.set(Armed {
        faults,
        key: OnceLock::new(),
    });
}

/// Whether `fault` is on.
pub fn active(fault: Fault) -> bool {
    ARMED.get().is_some_and(|a| a.faults.contains(&fault))
}

/// Whether the reveal of `t` is kept out of gossip.
fn withholds_reveal(t: u64) -> bool {
    (active(Fault::WithholdReveal) && t % 2 == 1)
        || (active(Fault::RevealToOne) && t >= FIRST_WINDOW)
}

/// With `reveal-to-one`: whether `peer` is the first to ask for the reveals of `t` (it alone
/// gets this member's); otherwise whether the reveal is not withheld.
fn serves_reveal_to(t: u64, peer: &PeerId) -> bool {
    static CHOSEN: std::sync::Mutex<Vec<(u64, PeerId)>> = std::sync::Mutex::new(Vec::new());
    if !(active(Fault::RevealToOne) && t >= FIRST_WINDOW) {
        return !withholds_reveal(t);
    }
    let Ok(mut chosen) = CHOSEN.lock() else {
        return false;
    };
    match chosen.iter().find(|(w, _)| *w == t) {
        Some((_, p)) => p == peer,
        None => {
            chosen.push((t, *peer));
            tracing::warn!(t, %peer, "unsafe byzantine: revealing this window to one member alone");
            true
        }
    }
}

/// The service's fault hook of this process's faults.
struct Hook;

impl FaultHook for Hook {
    fn replace_verification<'a>(&'a self, node: &'a Node, response: &'a Response) -> Replaced<'a> {
        Box::pin(async move {
            match accept_unchecked(node, response).await {
                Some(reply) => Some(reply),
                None => stretch::verify_stretched(node, response).await,
            }
        })
    }

    fn serve_early(&self, node: &Node, opens_at: u64, now: u64) -> Option<u64> {
        stretch::serve_early(node, opens_at, now)
    }

    fn withholds_reveal(&self, t: u64) -> bool {
        withholds_reveal(t)
    }

    fn serves_reveal_to(&self, t: u64, peer: &PeerId) -> bool {
        serves_reveal_to(t, peer)
    }

    fn describe(&self) -> Option<Vec<&'static str>> {
        ARMED
            .get()
            .map(|a| a.faults.iter().map(|f| f.name()).collect())
    }
}

/// When the faults are on: installs their hook in `node` and starts their task (the node key
/// signs what it makes up).
pub fn start(node: &Arc<Node>, key: &SigningKey, shutdown: CancellationToken) {
    let Some(armed) = ARMED.get() else { return };
    let _ = armed.key.set(key.clone());
    node.install_faults(Arc::new(Hook));
    node.supervisor.spawn_critical(
        "unsafe byzantine faults",
        task::run(node.clone(), key.clone(), shutdown),
    );
}

/// With `wrong-answers`: seals `response` as accepted without checking anything, records it
/// here and gossips it. `None` when the fault is off.
async fn accept_unchecked(node: &Node, response: &Response) -> Option<ChallengeReply> {
    if !active(Fault::WrongAnswers) {
        return None;
    }
    let key = ARMED.get()?.key.get()?.clone();
    let acceptance = Acceptance {
        version: VERSION,
        response: response.clone(),
        accepted_at: node.now(),
    };
    let sealed = forge::seal_one(&key, acceptance);
    tracing::warn!(id = %sealed.acceptance.challenge().id, "unsafe byzantine: accepted a response without checking it");
    forge::keep_and_gossip(node, vec![sealed.clone()]).await;
    Some(ChallengeReply::Accepted(Box::new(sealed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_parse_by_name_or_all_and_unknown_ones_are_refused() {
        assert_eq!(
            parse("mint, equivocate").unwrap(),
            [Fault::Mint, Fault::Equivocate].into()
        );
        assert_eq!(parse("all").unwrap().len(), Fault::ALL.len());
        assert!(!parse("all").unwrap().contains(&Fault::StretchPrompts));
        assert_eq!(
            parse("stretch-prompts").unwrap(),
            [Fault::StretchPrompts].into()
        );
        assert!(parse("mint,fly").is_err());
        assert!(parse(" , ").is_err());
    }

    #[test]
    fn a_config_that_is_not_a_loopback_test_network_is_refused() {
        let mut config = Config::default();
        config.http.listen = ([127, 0, 0, 1], 8080).into();
        config.p2p.listen = vec!["/ip4/127.0.0.1/tcp/4001".into()];
        config.network.window = Duration::from_secs(10);
        refuse_production(&config).unwrap();
        let mut public = config.clone();
        public.http.listen = ([0, 0, 0, 0], 8080).into();
        assert!(refuse_production(&public).is_err());
        let mut public = config.clone();
        public.p2p.listen = vec!["/ip4/0.0.0.0/tcp/4001".into()];
        assert!(refuse_production(&public).is_err());
        let mut public = config.clone();
        public.p2p.listen = vec!["/dns4/example.org/tcp/4001".into()];
        assert!(refuse_production(&public).is_err());
        let mut long = config;
        long.network.window = Duration::from_secs(3600);
        let e = refuse_production(&long).unwrap_err().to_string();
        assert!(e.contains("network.window"), "{e}");
    }
}
