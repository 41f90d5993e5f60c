//! The faulty member's own misbehaviour, window by window: made-up and wrongly accepted
//! acceptances early in each window, two extra summaries as it closes (see the parent module).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ed25519_dalek::SigningKey;
use hco_oracle::secret::issuer_order;
use hco_oracle::{IdentityId, NetworkParams, Oracle, SealedAcceptance, SignedRegister};
use tokio_util::sync::CancellationToken;

use super::forge::{
    acceptance, claim_rejected_kinds, equivocations, gossip, gossip_registration, gossip_summary,
    keep_and_gossip, made_up, request, seal_one, sybils,
};
use super::{ACT_DELAY_MS, EQUIVOCATE_DELAY_MS, FIRST_WINDOW, Fault, active};
use crate::service::Node;

/// What the member does to a window, in time order within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Early in the window: made-up and wrongly accepted acceptances.
    Act,
    /// Half-way through: another member framed with its own seal signature.
    Frame,
    /// As it closes: two extra summaries.
    Equivocate,
    /// Once it is certified: one more acceptance.
    Late,
}

impl Step {
    const ALL: [Step; 4] = [Step::Act, Step::Frame, Step::Equivocate, Step::Late];

    fn at(self, p: &NetworkParams, t: u64) -> u64 {
        match self {
            Step::Act => p.window_start(t) + ACT_DELAY_MS,
            Step::Frame => p.window_start(t) + p.window_ms / 2,
            Step::Equivocate => p.closes_at(t) + EQUIVOCATE_DELAY_MS,
            Step::Late => p.closes_at(t) + LATE_DELAY_MS,
        }
    }
}

/// After a window closes, when the member starts waiting for its certificate.
const LATE_DELAY_MS: u64 = 2_000;

/// Runs until shutdown.
pub async fn run(node: Arc<Node>, key: SigningKey, shutdown: CancellationToken) {
    let params = node.oracle.params().clone();
    let sybils = sybils(&key, node.now());
    for (_, reg) in &sybils {
        if let Err(e) = node.register(reg.clone()).await {
            tracing::warn!(error = %e, "unsafe byzantine: registering a sybil failed");
        }
    }
    let current = params.window_at(node.now()).unwrap_or(0);
    let mut next = [(current + 1).max(FIRST_WINDOW); Step::ALL.len()];
    loop {
        let (i, at) = (0..Step::ALL.len())
            .map(|i| (i, Step::ALL[i].at(&params, next[i])))
            .min_by_key(|(_, at)| *at)
            .unwrap_or((0, 0));
        let wait = Duration::from_millis(at.saturating_sub(node.now()));
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(wait) => {}
        }
        let t = next[i];
        next[i] += 1;
        match Step::ALL[i] {
            Step::Act => {
                tracing::warn!(t, "unsafe byzantine: misbehaving in this window");
                act(&node, &key, &sybils, t, &shutdown).await;
            }
            Step::Frame if active(Fault::Frame) && !FRAMED.load(Ordering::SeqCst) => {
                if let Some(pair) = frame(&node.oracle, &key, &sybils, t).await {
                    tracing::warn!(t, victim = %pair[0].seal.issuer, "unsafe byzantine: framing a member with its own seal signature");
                    FRAMED.store(true, Ordering::SeqCst);
                    node.publish_acceptances(pair);
                }
            }
            Step::Equivocate if active(Fault::Equivocate) => {
                for s in equivocations(&node.oracle, &key, t) {
                    gossip_summary(&node, &s);
                }
                tracing::warn!(t, "unsafe byzantine: gossiped two made-up summaries");
            }
            Step::Late if active(Fault::Late) => {
                late(&node, &key, &sybils, t, &shutdown).await;
            }
            Step::Frame | Step::Equivocate | Step::Late => {}
        }
    }
}

/// Once this member holds the certificate of `t` (waiting at most a window), makes up an
/// acceptance of `t` for one of its sybils, dated inside the window, and gossips it.
async fn late(
    node: &Arc<Node>,
    key: &SigningKey,
    sybils: &[(SigningKey, SignedRegister)],
    t: u64,
    shutdown: &CancellationToken,
) {
    let o = node.oracle.clone();
    let p = o.params().clone();
    for _ in 0..p.window_ms / 250 {
        let held = {
            let o = o.clone();
            tokio::task::spawn_blocking(move || o.ledger().certificate(t))
                .await
                .ok()
                .and_then(Result::ok)
                .flatten()
                .is_some()
        };
        if held {
            break;
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
    }
    // The last sybil served here: the early steps take the first ones.
    let Some((sybil, reg)) = served_here(&o, sybils, t).pop() else {
        return;
    };
    let family = agent_family(&o);
    let issued_at = p.window_start(t) + ACT_DELAY_MS;
    let c = made_up(&o, reg.body.id, t, &family, issued_at);
    let at = issued_at + 1_500;
    tracing::warn!(t, "unsafe byzantine: adding to a certified window");
    keep_and_gossip(
        node,
        vec![seal_one(key, acceptance(key, sybil, c, b"0", at))],
    )
    .await;
}

/// Whether the framing pair was sent (once per process: honest members reject it, a strike).
static FRAMED: AtomicBool = AtomicBool::new(false);

/// A genuine acceptance another member sealed in `t`, then one that member never sealed — a
/// sybil's, under a challenge made up in its name — carrying the same seal signature over this
/// member's own root, to go out in one message. A receiver that checked each seal signature
/// once per batch keyed by the signature alone recorded the second, and its audit then
/// accused the innocent member and left its window out. `None` while no other member's
/// acceptance of `t` is held here.
async fn frame(
    o: &Arc<Oracle>,
    key: &SigningKey,
    sybils: &[(SigningKey, SignedRegister)],
    t: u64,
) -> Option<Vec<SealedAcceptance>> {
    let genuine = {
        let (o, me) = (o.clone(), o.node_id());
        tokio::task::spawn_blocking(move || {
            o.ledger()
                .acceptances(t)
                .filter_map(Result::ok)
                .find(|s| s.seal.issuer != me)
        })
        .await
        .ok()
        .flatten()?
    };
    let victim = genuine.seal.issuer;
    let (sybil, reg) = sybils
        .iter()
        .find(|(_, r)| issuer_order(&o.params().committee, &r.body.id, t)[0] == victim)?;
    let now = o.params().window_start(t) + o.params().window_ms / 2;
    let mut c = made_up(o, reg.body.id, t, &agent_family(o), now - 1_500);
    c.issuer = victim;
    let mut forged = seal_one(key, acceptance(key, sybil, c, b"0", now));
    forged.seal.issuer = victim;
    forged.seal.sig = genuine.seal.sig;
    Some(vec![genuine, forged])
}

/// The first configured family of the agent class.
fn agent_family(o: &Oracle) -> String {
    o.params()
        .families
        .iter()
        .find(|f| {
            o.registry()
                .get(&f.name)
                .is_some_and(|fam| fam.class() == hco_challenges::Class::Agent)
        })
        .map(|f| f.name.clone())
        .unwrap_or_default()
}

/// The sybils whose assigned issuer in `t` is this member.
fn served_here<'a>(
    o: &Oracle,
    sybils: &'a [(SigningKey, SignedRegister)],
    t: u64,
) -> Vec<&'a (SigningKey, SignedRegister)> {
    sybils
        .iter()
        .filter(|(_, reg)| issuer_order(&o.params().committee, &reg.body.id, t)[0] == o.node_id())
        .collect()
}

/// One window's made-up acceptances.
async fn act(
    node: &Arc<Node>,
    key: &SigningKey,
    sybils: &[(SigningKey, SignedRegister)],
    t: u64,
    shutdown: &CancellationToken,
) {
    if active(Fault::OwnSybils) {
        super::own_sybils::act(node, key, sybils, t).await;
    }
    if ![Fault::WrongAnswers, Fault::Mint, Fault::Backdate]
        .into_iter()
        .any(active)
    {
        return;
    }
    let o = node.oracle.clone();
    let mut mine = served_here(&o, sybils, t).into_iter();
    // Peers that missed a sybil's registration get it again first.
    for (_, reg) in mine.clone() {
        gossip_registration(node, reg);
    }
    // A real challenge to a sybil, to be accepted with a wrong answer; its family is one the
    // policy draws, so the made-up ones use it too.
    let Some((wrong, _)) = mine.next() else {
        tracing::warn!(t, "unsafe byzantine: no sybil of this member in the window");
        return;
    };
    let now = node.now();
    let issued = {
        let (o, req) = (o.clone(), request(wrong, t));
        tokio::task::spawn_blocking(move || o.issue(&req, now)).await
    };
    let Ok(Ok(Ok(issued))) = issued else {
        tracing::warn!(t, ?issued, "unsafe byzantine: could not issue to a sybil");
        return;
    };
    let family = issued.challenge.challenge.family.clone();
    // Let the issue age past any solve-time floor before "accepting".
    tokio::select! {
        _ = shutdown.cancelled() => return,
        _ = tokio::time::sleep(Duration::from_millis(1_500)) => {}
    }
    let now = node.now();
    let start = o.params().window_start(t);
    let issued_at = now.saturating_sub(1_200).max(start);
    let mut accepted: Vec<SealedAcceptance> = Vec::new();
    if active(Fault::WrongAnswers) {
        let a = super::Acceptance {
            version: hco_oracle::VERSION,
            response: hco_oracle::Response::new(wrong, issued.challenge, b"wrong".to_vec()),
            accepted_at: now,
        };
        accepted.push(seal_one(key, a));
    }
    if active(Fault::Mint)
        && let Some((sybil, reg)) = mine.next()
    {
        let c = made_up(&o, reg.body.id, t, &family, issued_at);
        accepted.push(seal_one(key, acceptance(key, sybil, c, b"0", now)));
    }
    let mut rejected = Vec::new();
    let once = (active(Fault::Backdate) || active(Fault::Mint)) && claim_rejected_kinds();
    if once && active(Fault::Backdate) {
        if let Some((sybil, reg)) = mine.next() {
            let c = made_up(&o, reg.body.id, t, &family, issued_at);
            let late = c.deadline + 1;
            rejected.push(seal_one(key, acceptance(key, sybil, c, b"0", late)));
        }
        if let Some((sybil, reg)) = mine.next() {
            let c = made_up(&o, reg.body.id, t, &family, start.saturating_sub(5_000));
            rejected.push(seal_one(key, acceptance(key, sybil, c, b"0", now)));
        }
    }
    if once
        && active(Fault::Mint)
        && let Some(victim) = honest_identity(&o, sybils, t).await
    {
        // Without the victim's key the response is signed with a sybil's.
        let c = made_up(&o, victim, t, &family, issued_at);
        rejected.push(seal_one(key, acceptance(key, &sybils[0].0, c, b"0", now)));
    }
    tracing::warn!(
        t,
        accepted = accepted.len(),
        rejected_kinds = rejected.len(),
        "unsafe byzantine: gossiping made-up acceptances"
    );
    keep_and_gossip(node, accepted).await;
    gossip(node, &rejected);
}

/// A registered identity that is not one of this member's sybils (preferably one it is the
/// issuer of in `t`).
async fn honest_identity(
    o: &Arc<Oracle>,
    sybils: &[(SigningKey, SignedRegister)],
    t: u64,
) -> Option<IdentityId> {
    let mine: Vec<IdentityId> = sybils.iter().map(|(_, r)| r.body.id).collect();
    let o = o.clone();
    tokio::task::spawn_blocking(move || {
        let all = o.ledger().identities_after(None, 1_000).ok()?;
        let others: Vec<IdentityId> = all
            .into_iter()
            .map(|r| r.body.id)
            .filter(|id| !mine.contains(id))
            .collect();
        let here = |id: &IdentityId| issuer_order(&o.params().committee, id, t)[0] == o.node_id();
        others
            .iter()
            .find(|id| here(id))
            .or(others.first())
            .copied()
    })
    .await
    .ok()
    .flatten()
}
