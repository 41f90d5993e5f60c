//! One family against each of its attackers: a node whose policy for the family's class is that
//! family alone (one step, no spare), a fresh identity of that class per try, and the first
//! answer's verdict.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hco_challenges::Class;
use hco_oracle::SignedRequest;
use hco_oracle::policy::{Step, WindowPolicy};

use super::local::{LocalNode, genesis_now};
use crate::api::ChallengeView;
use crate::attack::session::Timing;
use crate::attack::stats::Rate;
use crate::attack::{Attack, Session};
use crate::config::Config;

/// What one attacker achieved, with the refusal codes of its failed tries.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AttackerRate {
    /// The first-try figures.
    #[serde(flatten)]
    pub rate: Rate,
    /// Failed tries by reason code (`answer_mismatch`, `too_fast`, `harness_error`…).
    pub refusals: std::collections::BTreeMap<String, u64>,
}

/// The deadline and minimum solve time the network sets for `family`.
pub fn timing(config: &Config, family: &str) -> anyhow::Result<Timing> {
    let me = hco_oracle::NodeId([0; 32]);
    let params = config.network.params(me)?;
    let f = params
        .family(family)
        .ok_or_else(|| anyhow::anyhow!("family `{family}` is not enabled in the configuration"))?;
    Ok(Timing {
        deadline: Duration::from_millis(f.deadline_ms),
        min_solve: Duration::from_millis(f.min_solve_ms),
    })
}

/// The deadline the bench gives a family the configuration does not enable (the lock
/// families): their attackers answer in microseconds, so it does not change what is measured.
const UNCONFIGURED_DEADLINE: Duration = Duration::from_secs(10);

/// Enables `family` at `difficulty` in `config`, keeping its configured deadline where it has
/// one.
pub fn set_difficulty(config: &mut Config, family: &str, difficulty: u32) {
    let families = &mut config.network.families;
    match families.iter_mut().find(|f| f.name == family) {
        Some(section) => section.difficulty = difficulty,
        None => families.push(crate::config::FamilySection {
            name: family.to_owned(),
            deadline: UNCONFIGURED_DEADLINE,
            difficulty,
            min_solve: None,
        }),
    }
}

/// The class a family serves.
pub fn class_of(family: &str) -> anyhow::Result<Class> {
    hco_challenges::Registry::builtin()
        .get(family)
        .map(|f| f.class())
        .ok_or_else(|| anyhow::anyhow!("unknown family `{family}`"))
}

/// Runs `tries` first tries of `attack` against a node running `base` with `family` as the
/// only step of its class; `edit` may change the node's configuration further.
pub fn measure(
    base: &Config,
    family: &str,
    attack: &dyn Attack,
    tries: u64,
    edit: impl FnOnce(&mut Config),
) -> anyhow::Result<AttackerRate> {
    let class = class_of(family)?;
    let node = LocalNode::start(base.clone(), |c, _| {
        c.network.genesis = genesis_now();
        c.network.window = c.network.window.max(Duration::from_secs(3 * 3600));
        c.network.slot_mode = hco_oracle::SlotMode::Open;
        let only = WindowPolicy {
            steps: vec![Step::Family(family.to_owned())],
            spares: 0,
        };
        match class {
            Class::Human => c.network.policy.human = only,
            Class::Agent => c.network.policy.agent = only,
        }
        edit(c);
        Ok(())
    })?;
    let timing = timing(&node.config, family)?;
    let t = node.current()?.0;
    let next = AtomicU64::new(0);
    let outcomes = Mutex::new(Vec::with_capacity(tries as usize));
    let refusals = Mutex::new(std::collections::BTreeMap::new());
    let threads = attack.concurrency().clamp(1, 64);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= tries {
                        break;
                    }
                    let key = hco_oracle::testing::key(50_000_000 + i);
                    let (accepted, ms, code) = match one_try(&node, &key, class, t, timing, attack)
                    {
                        Ok((verdict, ms)) => match verdict {
                            crate::attack::Verdict::Accepted => (true, ms, None),
                            crate::attack::Verdict::Rejected(code) => (false, ms, Some(code)),
                        },
                        Err(e) => {
                            tracing::debug!(error = %e, "attack try failed");
                            (false, 0, Some("harness_error".to_owned()))
                        }
                    };
                    if let Ok(mut o) = outcomes.lock() {
                        o.push((accepted, ms));
                    }
                    if let (Some(code), Ok(mut r)) = (code, refusals.lock()) {
                        *r.entry(code).or_insert(0u64) += 1;
                    }
                }
            });
        }
    });
    let outcomes = outcomes.into_inner().unwrap_or_default();
    Ok(AttackerRate {
        rate: Rate::of(&outcomes),
        refusals: refusals.into_inner().unwrap_or_default(),
    })
}

/// Registers a fresh identity, gets its challenge and lets the attacker play it.
fn one_try(
    node: &LocalNode,
    key: &ed25519_dalek::SigningKey,
    class: Class,
    t: u64,
    timing: Timing,
    attack: &dyn Attack,
) -> anyhow::Result<(crate::attack::Verdict, u64)> {
    node.register(key, class)
        .map_err(|code| anyhow::anyhow!("registration refused: {code}"))?;
    let view = issue(node, key, t, 0)?;
    let issued = Instant::now();
    let mut session = Session {
        gateway: &node.gateway,
        key,
        view,
        timing,
        issued,
    };
    let verdict = attack.play(&mut session)?;
    Ok((verdict, issued.elapsed().as_millis() as u64))
}

/// Requests challenge `(t, j)`; the node's refusal as an error.
pub fn issue(
    node: &LocalNode,
    key: &ed25519_dalek::SigningKey,
    t: u64,
    j: u32,
) -> anyhow::Result<ChallengeView> {
    node.gateway
        .post("/v1/challenges", &SignedRequest::new(key, t, j))?
        .into_result::<ChallengeView>()
        .map_err(|(code, message)| anyhow::anyhow!("challenge refused: {code}: {message}"))
}
