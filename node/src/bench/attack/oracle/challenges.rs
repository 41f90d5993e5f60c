//! The per-window `narrative_chain` challenges of the oracle bench: fresh agent identities
//! each answer their window's challenge once, from what the learner knows, and the learner
//! learns from every verdict (one joint verdict per identity a window, no question retired).

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hco_challenges::Class;

use super::super::family::issue;
use super::super::local::LocalNode;
use super::{Challenges, Tries};
use crate::attack::oracle::Learner;
use crate::attack::session::Timing;
use crate::attack::stats::{Z95, wilson};
use crate::attack::{Session, Verdict};
use crate::service::withheld::VERDICT_WITHHELD;

/// `hco_responses_accepted_total{family="narrative_chain"}` from the node's metrics listener
/// at `addr`; `None` when it does not answer.
fn accepted_by_metrics(addr: std::net::SocketAddr) -> Option<u64> {
    let texts = crate::bench::load::scrape(&[format!("http://{addr}")]);
    if texts.iter().all(String::is_empty) {
        return None;
    }
    let name = "hco_responses_accepted_total{family=\"narrative_chain\"}";
    Some(crate::bench::load::sum_of(&texts, name) as u64)
}

/// `tries` fresh agent identities each answer their window-`t` challenge once, from what
/// `learner` learnt — and it learns from every verdict: a per-window challenge's verdict on
/// three answers is the same signal as a game session's, with no question retired (prod gives
/// an agent identity one challenge a window, so a script's verdicts a window are the agent
/// identities it holds).
pub(super) fn play_challenges(
    node: &LocalNode,
    learner: &mut Learner,
    t: u64,
    timing: Timing,
    tries: u64,
    stop_by: Instant,
) -> anyhow::Result<Challenges> {
    let confirmed_before = learner.confirmed();
    // What the game showed, before the challenges' own verdicts teach anything.
    let game = learner.seen_keys();
    let shared = Mutex::new(std::mem::take(learner));
    let next = AtomicU64::new(0);
    let out = Mutex::new(Challenges::default());
    let threads = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(2, 8);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= tries || Instant::now() >= stop_by {
                        break;
                    }
                    let key = hco_oracle::testing::key(80_000_000 + t * 1_000_000 + i);
                    let result = one_challenge(node, &shared, &game, &key, t, timing);
                    let Ok(mut c) = out.lock() else {
                        break;
                    };
                    c.tries += 1;
                    let late = i >= tries / 2;
                    c.last_half.tries += u64::from(late);
                    match result {
                        Ok((verdict, parts, learnt, changed)) => {
                            c.parts += parts;
                            c.learnt_parts += learnt;
                            c.changed_by_learning += u64::from(changed);
                            match verdict {
                                Verdict::Accepted => {
                                    c.successes += 1;
                                    c.last_half.successes += u64::from(late);
                                }
                                Verdict::Rejected(code) => {
                                    *c.refusals.entry(code).or_insert(0) += 1;
                                }
                            }
                        }
                        Err(e) => {
                            tracing::debug!(error = %e, "oracle challenge try failed");
                            *c.refusals.entry("harness_error".into()).or_insert(0) += 1;
                        }
                    }
                }
            });
        }
    });
    *learner = shared.into_inner().unwrap_or_default();
    let mut c = out.into_inner().unwrap_or_default();
    // Verdicts withheld until the close: the node's own count says how many were right.
    let withheld = c.refusals.get(VERDICT_WITHHELD).copied().unwrap_or(0);
    if withheld > 0 {
        match node.config.metrics.listen.and_then(accepted_by_metrics) {
            Some(accepted) => {
                c.accepted_unseen = accepted.saturating_sub(c.successes).min(withheld);
                c.successes += c.accepted_unseen;
            }
            // Not counted: said, not taken for zero.
            None => c.accepted_unseen_unread = true,
        }
    }
    (c.wilson_low, c.wilson_high) = wilson(c.successes, c.tries, Z95);
    c.last_half = Tries::of(c.last_half.tries, c.last_half.successes);
    c.confirmed_by_verdicts = (learner.confirmed() - confirmed_before) as u64;
    Ok(c)
}

/// One fresh identity's challenge: its verdict, parts, parts whose question the game showed
/// (`game`), and whether the answers differ from the reader's first choices. The learner picks
/// the answers as for a game session and learns from the verdict.
fn one_challenge(
    node: &LocalNode,
    learner: &Mutex<Learner>,
    game: &HashSet<String>,
    key: &ed25519_dalek::SigningKey,
    t: u64,
    timing: Timing,
) -> anyhow::Result<(Verdict, u64, u64, bool)> {
    node.register(key, Class::Agent)
        .map_err(|code| anyhow::anyhow!("registration refused: {code}"))?;
    let view = issue(node, key, t, 0)?;
    let session = Session {
        gateway: &node.gateway,
        key,
        view,
        timing,
        issued: Instant::now(),
    };
    let parts = crate::attack::agent::parts(&session.prompt().text);
    let (reader, _) = Learner::default().chain_answers(&parts);
    let (answers, given, learnt) = {
        let mut l = learner
            .lock()
            .map_err(|_| anyhow::anyhow!("learner poisoned"))?;
        let learnt = parts
            .iter()
            .filter(|(_, q)| game.contains(&crate::attack::oracle::key(q)))
            .count();
        if parts.len() == 3 {
            let mut given = Vec::with_capacity(3);
            let mut answers = Vec::with_capacity(3);
            for (round, (n, q)) in parts.iter().enumerate() {
                let (a, g) = l.answer(round, n, q, &given, false);
                given.push(g);
                answers.push(if a.is_empty() { "none".to_owned() } else { a });
            }
            (answers, given, learnt)
        } else {
            (l.chain_answers(&parts).0, Vec::new(), learnt)
        }
    };
    session.wait_min_solve(Duration::from_millis(50));
    let verdict = session.respond(&serde_json::to_vec(&answers)?)?;
    if given.len() == 3
        && let Ok(mut l) = learner.lock()
    {
        match &verdict {
            Verdict::Accepted => l.session_verdict(&given, true),
            Verdict::Rejected(code) if code == "answer_mismatch" => {
                l.session_verdict(&given, false);
            }
            Verdict::Rejected(_) => {}
        }
    }
    Ok((
        verdict,
        parts.len() as u64,
        learnt as u64,
        answers != reader,
    ))
}
