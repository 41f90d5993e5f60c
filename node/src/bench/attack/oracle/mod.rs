//! `hco bench attack --families narrative_chain --oracle`: the agent-admission game as an
//! answer oracle ([`crate::attack::oracle`]), against a node on loopback running
//! `configs/prod.toml`'s network alone in its committee (the corpus given with `--agent-corpus`,
//! else the public starter one), with a window of `--oracle-window` that holds the whole run.
//!
//! 1. Learning: up to `--oracle-sessions` game sessions, each as a freshly registered agent
//!    identity (so the per-identity limit does not slow it; `POST /v1/agent/sessions` signed by
//!    it, then each round's answer to the endpoint the previous reply named), until the game
//!    refuses a start (`game_sets_spent` once failed sessions retired every question), the learner answering every
//!    round with the candidate it believes in for that question and learning from every reply:
//!    admissions, `not_admitted`, and any per-round signal (a session a wrong answer ends early,
//!    a reply saying whether the last answer was right). It stops early once every question it
//!    saw has a confirmed answer.
//! 2. With what it learnt: `--oracle-admissions` fresh sessions answered from the learnt
//!    beliefs (no more learning), interleaved with as many answered with the reader's first
//!    choice alone (`one_shot`, the control: what the learning adds is the difference), then
//!    `--tries` per-window `narrative_chain` challenges, each a fresh agent identity's first
//!    answer, every part answered with the learnt answer where the game showed the same
//!    question, else with the reader's first choice.
//!
//! Every loop is bounded in count and in time (the learning phase ends by half the window, the
//! rest by nine tenths of it). The figures are first-try rates with 95 % Wilson intervals.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hco_challenges::Class;
use hco_oracle::policy::{Step, WindowPolicy};
use serde_json::{Value, json};

use super::family::timing;
use super::local::{LocalNode, genesis_now};
use crate::attack::oracle::{Given, Learner};
use crate::attack::stats::{Z95, wilson};
use crate::config::Config;

mod challenges;
mod report;

pub use report::{Admissions, Challenges, Options, OracleReport, Tries, WindowReport};

const FAMILY: &str = "narrative_chain";

/// How one session ended.
#[derive(Debug)]
enum Ended {
    Admitted,
    NotAdmitted,
    /// A code before the verdict (early stop on a wrong answer, expiry, refused start…).
    Other(String),
}

/// The answer codes a round may be refused with (the family's rejections).
const ANSWER_CODES: [&str; 4] = [
    "answer_mismatch",
    "missing_answer",
    "invalid_answer_format",
    "wrong_answer",
];

/// Plays one game session: `learn` feeds every reply to the learner, `one_shot` answers the
/// reader's first choices.
fn play_session(
    node: &LocalNode,
    learner: &mut Learner,
    nonce: u64,
    learn: bool,
    one_shot: bool,
) -> Ended {
    let gateway = &node.gateway;
    // A fresh agent identity a session, so no per-identity limit slows the learning.
    let key = hco_oracle::testing::key(60_000_000 + nonce);
    if let Err(c) = node.register(&key, Class::Agent) {
        return Ended::Other(format!("register:{c}"));
    }
    let start = match crate::client::signed_start(gateway, &key) {
        Ok(start) => start,
        Err(_) => return Ended::Other("harness_error".into()),
    };
    let mut reply = match gateway.post("/v1/agent/sessions", &start) {
        Ok(r) if r.status == 201 => r.body,
        Ok(r) => return Ended::Other(format!("start:{}", code(&r.body))),
        Err(_) => return Ended::Other("harness_error".into()),
    };
    let mut given: Vec<Given> = Vec::with_capacity(3);
    for round in 0..3 {
        let (Some(narrative), Some(question), Some(endpoint)) = (
            reply["narrative"].as_str(),
            reply["question"].as_str(),
            reply["answer_endpoint"].as_str(),
        ) else {
            return Ended::Other(format!("unexpected_reply@{}", round + 1));
        };
        let (answer, g) = learner.answer(round, narrative, question, &given, one_shot);
        given.push(g);
        let answer = if answer.is_empty() {
            "none".into()
        } else {
            answer
        };
        let r = match gateway.post(endpoint, &json!({ "answer": answer })) {
            Ok(r) => r,
            Err(_) => return Ended::Other("harness_error".into()),
        };
        if r.status == 200 && r.body["admitted"] == true {
            if learn {
                learner.session_verdict(&given, true);
            }
            return Ended::Admitted;
        }
        if r.status == 200 {
            // A reply that says whether the answer just given was right.
            let said = ["correct", "right", "previous_correct"]
                .iter()
                .find_map(|f| r.body[*f].as_bool());
            if learn {
                if let Some(right) = said {
                    learner.round_signals += 1;
                    learner.round_verdict(g, right);
                } else if learner.early_stops > 0 {
                    // The game was seen to stop on a wrong answer: reaching the next round
                    // says this one was right.
                    learner.round_verdict(g, true);
                }
            }
            reply = r.body;
            continue;
        }
        let c = code(&r.body);
        if c == "not_admitted" {
            if learn {
                learner.session_verdict(&given, false);
            }
            return Ended::NotAdmitted;
        }
        if learn && ANSWER_CODES.contains(&c.as_str()) {
            // The old game: a wrong answer ends the session at its round.
            learner.early_stop(&given, round);
        }
        return Ended::Other(format!("{c}@{}", round + 1));
    }
    Ended::Other("no_verdict".into())
}

fn code(body: &Value) -> String {
    body["code"].as_str().unwrap_or("http_error").to_owned()
}

/// Runs the oracle attack: `opts.windows` windows, each against a fresh node whose current
/// window is the next of the set schedule, one learner throughout.
pub fn run(base: &Config, opts: &Options) -> anyhow::Result<OracleReport> {
    let began = Instant::now();
    let mut learner = Learner::default();
    let mut total = Totals::default();
    let mut by_window = Vec::new();
    // Windows the schedule has sets for (from window 0); a node past them refuses to start.
    let mut probe = base.clone();
    edit(&mut probe, opts, 0);
    let fresh = crate::corpus::operator::AgentCorpus::load(&probe)?
        .schedule
        .windows_left(0)
        .unwrap_or(u64::MAX);
    let windows = opts.windows.clamp(1, fresh.max(1));
    if windows < opts.windows {
        eprintln!("attack: oracle: the corpus's schedule has sets for {windows} windows only");
    }
    for i in 0..windows {
        let tries = opts.tries / windows + u64::from(i < opts.tries % windows);
        match run_window(base, opts, i, tries, &mut learner, &mut total)? {
            Some(w) => by_window.push(w),
            None => break,
        }
    }
    let sessions = total.learning.0 + total.after.0;
    let admissions = total.learning.1 + total.after.1;
    let (wilson_low, wilson_high) = wilson(admissions, sessions, Z95);
    let mut challenges = total.challenges;
    (challenges.wilson_low, challenges.wilson_high) =
        wilson(challenges.successes, challenges.tries, Z95);
    challenges.last_half = Tries::of(challenges.last_half.tries, challenges.last_half.successes);
    let (config, corpus) = match &opts.corpus {
        None => (
            "prod, public starter corpus".to_owned(),
            "starter".to_owned(),
        ),
        Some(dir) => (
            format!("prod, corpus {}", dir.display()),
            dir.display().to_string(),
        ),
    };
    Ok(OracleReport {
        sessions,
        admissions,
        wilson_low,
        wilson_high,
        learning: Admissions::of(total.learning.0, total.learning.1),
        after_learning: Admissions::of(total.after.0, total.after.1),
        one_shot: Admissions::of(total.control.0, total.control.1),
        challenges,
        learned_answers: learner.confirmed() as u64,
        questions_seen: learner.questions() as u64,
        ruled_out: learner.ruled_out() as u64,
        per_round_signals: learner.early_stops + learner.round_signals,
        ended: total.ended,
        by_window,
        config,
        corpus,
        window_ms: opts.window.as_millis() as u64,
        windows_crossed: total.crossed,
        elapsed_ms: began.elapsed().as_millis() as u64,
    })
}

/// The shortest window the bench runs (a window's run must fit in it).
const MIN_WINDOW: Duration = Duration::from_secs(30);

/// The bench node's configuration for window `i` of the schedule: the window begins about
/// now (its genesis lies `i` windows back), slots open, the agent policy `narrative_chain`
/// alone, the game on, the corpus given.
fn edit(c: &mut Config, opts: &Options, i: u64) {
    let window = opts.window.max(MIN_WINDOW);
    c.network.genesis = genesis_now() - window.saturating_mul(u32::try_from(i).unwrap_or(0));
    c.network.window = window;
    c.network.slot_mode = hco_oracle::SlotMode::Open;
    c.network.policy.agent = WindowPolicy {
        steps: vec![Step::Family(FAMILY.to_owned())],
        spares: 0,
    };
    c.agent.enabled = true;
    // What the node accepted but withheld from the script is read from its metrics.
    c.metrics.listen = crate::devnet::free_port()
        .ok()
        .map(|port| ([127, 0, 0, 1], port).into());
    if let Some(dir) = &opts.corpus {
        c.agent.corpus_dir = Some(dir.clone());
        c.agent.allow_starter_corpus = false;
    } else {
        c.agent.allow_starter_corpus = true;
    }
}

/// Sums over the windows.
#[derive(Debug, Default)]
struct Totals {
    learning: (u64, u64),
    after: (u64, u64),
    control: (u64, u64),
    challenges: Challenges,
    ended: BTreeMap<String, u64>,
    crossed: u64,
}

/// Counts a played session into `(sessions, admissions)`; false for a session that did not
/// reach a verdict (refused start, transport error, expiry).
fn count(e: &Ended, into: &mut (u64, u64)) -> bool {
    match e {
        Ended::Admitted => {
            into.0 += 1;
            into.1 += 1;
        }
        Ended::NotAdmitted => into.0 += 1,
        // An early stop on a wrong answer is a played session (and a signal).
        Ended::Other(c) if ANSWER_CODES.iter().any(|a| c.starts_with(a)) => into.0 += 1,
        Ended::Other(_) => return false,
    }
    true
}

/// Window `i` of the schedule against a fresh node; `None` when the schedule has no sets for
/// it (the game refuses every session).
fn run_window(
    base: &Config,
    opts: &Options,
    i: u64,
    tries: u64,
    learner: &mut Learner,
    total: &mut Totals,
) -> anyhow::Result<Option<WindowReport>> {
    let window = opts.window.max(MIN_WINDOW);
    let started = Instant::now();
    let node = LocalNode::start(base.clone(), |c, _| {
        edit(c, opts, i);
        Ok(())
    })?;
    let learn_until = started + window / 2;
    let stop_by = started + window.mul_f64(0.9);
    let timing = timing(&node.config, FAMILY)?;
    let (t, _) = node.current()?;
    let seen_before = learner.questions();
    let tally = |e: &Ended, ended: &mut BTreeMap<String, u64>| {
        let key = match e {
            Ended::Admitted => "admitted".to_owned(),
            Ended::NotAdmitted => "not_admitted".to_owned(),
            Ended::Other(c) => c.clone(),
        };
        *ended.entry(key).or_insert(0) += 1;
    };
    eprintln!(
        "attack: {FAMILY} ← oracle: window {t}, up to {} learning sessions",
        opts.sessions
    );
    let mut learning = (0u64, 0u64);
    let mut nonce = 0u64;
    let mut last_report = Instant::now();
    while learning.0 < opts.sessions && Instant::now() < learn_until {
        nonce += 1;
        let e = play_session(&node, learner, nonce, true, false);
        tally(&e, &mut total.ended);
        if !count(&e, &mut learning) {
            if let Ended::Other(c) = &e
                && c.starts_with("start:")
            {
                eprintln!("attack: oracle: window {t}: session refused ({c})");
                if nonce == 1 {
                    return Ok(None);
                }
                break;
            }
            if nonce > 2 * opts.sessions {
                break;
            }
        }
        let here = learner.questions_from(seen_before);
        if here.0 > 0 && here.0 == here.1 {
            eprintln!("attack: oracle: every question seen has a confirmed answer");
            break;
        }
        if last_report.elapsed() > Duration::from_secs(10) {
            last_report = Instant::now();
            eprintln!(
                "attack: oracle: {} sessions, {} admitted, {} of {} questions confirmed",
                learning.0, learning.1, here.1, here.0
            );
        }
    }
    let (seen, confirmed) = learner.questions_from(seen_before);
    eprintln!(
        "attack: oracle: window {t}: {confirmed} of {seen} questions confirmed in {} sessions \
         ({} admitted)",
        learning.0, learning.1
    );

    // Fresh sessions with what was learnt, interleaved with the one-shot control.
    let (mut after, mut control) = ((0u64, 0u64), (0u64, 0u64));
    for k in 0..opts.admissions.saturating_mul(2) {
        if Instant::now() >= stop_by {
            break;
        }
        nonce += 1;
        let one_shot = k % 2 == 1;
        let e = play_session(&node, learner, nonce, false, one_shot);
        tally(&e, &mut total.ended);
        if !count(&e, if one_shot { &mut control } else { &mut after })
            && matches!(&e, Ended::Other(c) if c.starts_with("start:"))
        {
            // The game serves no more sessions this window (its questions are spent).
            break;
        }
    }

    let challenges = challenges::play_challenges(&node, learner, t, timing, tries, stop_by)?;
    let (t_end, _) = node.current()?;
    if t_end != t {
        total.crossed += 1;
        eprintln!("attack: oracle: the run left window {t} for {t_end}; raise --oracle-window");
    }
    let add = |a: &mut (u64, u64), b: (u64, u64)| {
        a.0 += b.0;
        a.1 += b.1;
    };
    add(&mut total.learning, learning);
    add(&mut total.after, after);
    add(&mut total.control, control);
    let c = &mut total.challenges;
    c.tries += challenges.tries;
    c.successes += challenges.successes;
    c.parts += challenges.parts;
    c.learnt_parts += challenges.learnt_parts;
    c.changed_by_learning += challenges.changed_by_learning;
    c.confirmed_by_verdicts += challenges.confirmed_by_verdicts;
    c.accepted_unseen += challenges.accepted_unseen;
    c.accepted_unseen_unread |= challenges.accepted_unseen_unread;
    c.last_half.tries += challenges.last_half.tries;
    c.last_half.successes += challenges.last_half.successes;
    for (code, n) in &challenges.refusals {
        *c.refusals.entry(code.clone()).or_insert(0) += n;
    }
    Ok(Some(WindowReport {
        window: t,
        learning: Admissions::of(learning.0, learning.1),
        after_learning: Admissions::of(after.0, after.1),
        one_shot: Admissions::of(control.0, control.1),
        challenges: Tries::of(challenges.tries, challenges.successes),
        challenges_last_half: challenges.last_half,
        questions_seen: seen as u64,
        learned_answers: confirmed as u64,
    }))
}
