//! `hco client solve`: the window's step sequence for one identity. Waits for the identity's
//! slot (within `--max-wait`), asks for each step's challenge, waits for a step not open yet,
//! answers it (the family's built-in solver or `--answer-cmd`) and goes on until the node says
//! the sequence is over.

use std::time::Duration;

use anyhow::Context;
use hco_challenges::{Prompt, Registry};
use hco_oracle::{Clock, IdentityId, Response, SignedRequest, SystemClock, Timestamp};
use serde_json::{Value, json};

use super::{Gateway, run_answer_cmd};
use crate::api::{ChallengeView, VerdictView};
use crate::keyfile::{self, KeyKind};

/// A time as RFC 3339 in UTC, to the millisecond.
fn rfc3339(at: Timestamp) -> String {
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + Duration::from_millis(at)).to_string()
}

/// The slot `[start, end)` named in an `outside_slot` message ("outside the ceremony slot
/// [START, END) (at NOW)"), for a node whose window reply did not name it.
fn slot_in_message(message: &str) -> Option<std::ops::Range<Timestamp>> {
    let (_, rest) = message.split_once('[')?;
    let (inner, _) = rest.split_once(')')?;
    let (start, end) = inner.split_once(',')?;
    Some(start.trim().parse().ok()?..end.trim().parse().ok()?)
}

/// The current window's close and the identity's slot in it, and the node's clock.
struct SolveWindow {
    closes_at: Timestamp,
    /// The identity's ceremony slot in the window (node time).
    slot: Option<std::ops::Range<Timestamp>>,
    /// The node's clock minus this machine's (ms), from the window reply.
    skew: i64,
}

impl SolveWindow {
    /// Now by the node's clock.
    fn now(&self) -> Timestamp {
        SystemClock.now().saturating_add_signed(self.skew)
    }

    /// A node time by this machine's clock (for the HTTP layer's retry deadlines).
    fn local(&self, at: Timestamp) -> Timestamp {
        at.saturating_add_signed(-self.skew)
    }
}

/// What to do about a slot that has not opened by `now` (all node time).
#[derive(Debug, PartialEq, Eq)]
enum SlotWait {
    /// Open (or passed: the node's refusal says so): ask now.
    Ask,
    /// Sleep this long, then ask.
    Sleep(Duration),
    /// It opens only at or after the window's close.
    AfterClose,
    /// It opens after the wait allowed.
    TooFar(Duration),
}

fn slot_wait(
    slot: &std::ops::Range<Timestamp>,
    now: Timestamp,
    closes_at: Timestamp,
    allowed: Duration,
) -> SlotWait {
    if now >= slot.start {
        return SlotWait::Ask;
    }
    if closes_at > 0 && slot.start >= closes_at {
        return SlotWait::AfterClose;
    }
    let wait = Duration::from_millis(slot.start - now);
    if wait > allowed {
        SlotWait::TooFar(wait)
    } else {
        SlotWait::Sleep(wait)
    }
}

/// Runs the window's sequence; true when every step passed.
pub(super) fn solve(
    node: &str,
    key: &std::path::Path,
    answer_cmd: Option<&str>,
    max_wait: Duration,
) -> anyhow::Result<bool> {
    let key = keyfile::read(key, KeyKind::IdentityKey)?;
    let id = IdentityId(key.verifying_key().to_bytes());
    let gw = Gateway::client(node);
    // The slot is waited for until this instant at most (this machine's clock).
    let wait_until = std::time::Instant::now() + max_wait;
    let window = gw.get(&format!("/v1/windows/current?id={id}"))?;
    let received = SystemClock.now();
    let t = window.body["t"]
        .as_u64()
        .context("the node did not report the current window")?;
    let slot = &window.body["slot"];
    let w = SolveWindow {
        closes_at: window.body["closes_at"].as_u64().unwrap_or(0),
        slot: slot["start"]
            .as_u64()
            .zip(slot["end"].as_u64())
            .map(|(start, end)| start..end),
        skew: window.body["now"]
            .as_u64()
            .map_or(0, |now| now as i64 - received as i64),
    };
    let closes_at = w.closes_at;
    let mut j = window.body["identity"]["next_j"].as_u64().unwrap_or(0) as u32;
    // Steps of the class's window and how many have passed: once all have, the window is won
    // and the client stops, rather than asking for one more and hearing, if the window closed
    // meanwhile, `wrong_window`.
    let steps = window.body["identity"]["steps"].as_u64();
    let mut passed = window.body["identity"]["steps_passed"]
        .as_u64()
        .unwrap_or(0);
    // An identity the node does not know is told so at once, not after the slot's wait.
    let registered = !window.body["identity"]["class"].is_null();
    let line = |value: Value| println!("{value}");
    // Waits for the slot if it is still ahead in this window; false when it cannot be waited
    // for (the reason printed as the verdict).
    let wait_for_slot = |slot: &std::ops::Range<Timestamp>, j: u32| -> bool {
        let allowed = wait_until.saturating_duration_since(std::time::Instant::now());
        let verdict = |message: String| {
            line(
                json!({ "verdict": "outside_slot", "message": message, "id": id, "window": t, "j": j }),
            );
        };
        match slot_wait(slot, w.now(), closes_at, allowed) {
            SlotWait::Ask => true,
            SlotWait::Sleep(wait) => {
                line(json!({
                    "waiting": "slot",
                    "window": t,
                    "opens_at": slot.start,
                    "opens_in_s": wait.as_millis().div_ceil(1000) as u64,
                    "at": rfc3339(slot.start),
                    "until": rfc3339(slot.end),
                }));
                std::thread::sleep(wait + Duration::from_millis(50));
                true
            }
            SlotWait::AfterClose => {
                verdict(format!(
                    "this identity's ceremony slot in window {t} opens at {}, after the window closes at {}",
                    rfc3339(slot.start),
                    rfc3339(closes_at)
                ));
                false
            }
            SlotWait::TooFar(wait) => {
                verdict(format!(
                    "this identity's ceremony slot in window {t} opens at {} (until {}), in {} s: beyond --max-wait {}; run again closer to it or raise --max-wait",
                    rfc3339(slot.start),
                    rfc3339(slot.end),
                    wait.as_secs(),
                    humantime::format_duration(max_wait)
                ));
                false
            }
        }
    };
    if registered
        && let Some(slot) = &w.slot
        && !wait_for_slot(slot, j)
    {
        return Ok(false);
    }
    let mut answered_any = false;
    // Refusals as outside the slot while it was still ahead (clocks apart): each waited for once.
    let mut early_refusals = 0;
    loop {
        if answered_any && steps.is_some_and(|steps| passed >= steps) {
            return Ok(true);
        }
        let reply = gw.post_before(
            "/v1/challenges",
            &SignedRequest::new(&key, t, j),
            (closes_at > 0).then(|| w.local(closes_at)),
        )?;
        let opens_at = reply.body["opens_at"].as_u64().unwrap_or(0);
        let view: ChallengeView = match reply.into_result() {
            Ok(v) => v,
            Err((code, message)) => {
                match code.as_str() {
                    // Wait for the step's moment in the slot, then ask again.
                    "step_not_open" => {
                        let now = w.now();
                        if opens_at == 0 || opens_at >= closes_at {
                            line(
                                json!({ "verdict": code, "message": message, "window": t, "j": j }),
                            );
                            return Ok(false);
                        }
                        std::thread::sleep(std::time::Duration::from_millis(
                            opens_at.saturating_sub(now) + 50,
                        ));
                        continue;
                    }
                    // The issuer has no other member's witness of the beat yet (they publish
                    // when it begins): ask again at once, while the window lasts — the
                    // reaction window is already running.
                    "no_slot_witness" if closes_at == 0 || w.now() < closes_at => {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        continue;
                    }
                    "steps_complete" => {
                        // Said only when this run answered nothing: the last verdict stands.
                        if !answered_any {
                            line(
                                json!({ "verdict": code, "message": message, "id": id, "window": t, "j": j }),
                            );
                        }
                        return Ok(true);
                    }
                    "outside_slot" => {
                        let Some(slot) = w.slot.clone().or_else(|| slot_in_message(&message))
                        else {
                            line(
                                json!({ "verdict": code, "message": message, "id": id, "window": t, "j": j }),
                            );
                            return Ok(false);
                        };
                        if w.now() < slot.start && early_refusals < 3 {
                            early_refusals += 1;
                            if !wait_for_slot(&slot, j) {
                                return Ok(false);
                            }
                            continue;
                        }
                        line(json!({
                            "verdict": code,
                            "message": format!(
                                "this identity's ceremony slot in window {t} was from {} to {} and has passed (now {}); window {} starts at {}: run again then",
                                rfc3339(slot.start),
                                rfc3339(slot.end),
                                rfc3339(w.now()),
                                t + 1,
                                window.body["end"].as_u64().map_or_else(|| "the end of this one".to_owned(), rfc3339),
                            ),
                            "id": id,
                            "window": t,
                            "j": j,
                        }));
                        return Ok(false);
                    }
                    _ => {
                        line(
                            json!({ "verdict": code, "message": message, "id": id, "window": t, "j": j }),
                        );
                        return Ok(false);
                    }
                }
            }
        };
        let family = view.prompt.family.clone();
        // Retries of the answer stop before its deadline (and the window's close).
        let deadline = match view.challenge.challenge.deadline {
            0 => closes_at,
            d if closes_at == 0 => d,
            d => d.min(closes_at),
        };
        let answer = answer(&view, answer_cmd)?;
        let response = Response::new(&key, view.challenge, answer);
        answered_any = true;
        let reply = gw.post_before(
            "/v1/responses",
            &response,
            (deadline > 0).then(|| w.local(deadline)),
        )?;
        let verdict_at = reply.body["opens_at"].as_u64();
        match reply.into_result::<VerdictView>() {
            Ok(v) => {
                passed += 1;
                line(
                    json!({ "verdict": v.verdict, "id": v.id, "window": v.window, "j": v.j, "family": v.family, "accepted_at": v.accepted_at }),
                )
            }
            // Told after the window closes (the certificate and the membership proof): the
            // answer is recorded, and the class's only step is answered.
            Err((code, message)) if code == crate::service::withheld::VERDICT_WITHHELD => {
                line(
                    json!({ "verdict": "withheld", "message": message, "id": id, "window": t, "j": j, "family": family, "verdict_at": verdict_at }),
                );
                return Ok(true);
            }
            Err((code, message)) => line(
                json!({ "verdict": code, "message": message, "id": id, "window": t, "j": j, "family": family }),
            ),
        }
        j += 1;
    }
}

fn answer(view: &ChallengeView, answer_cmd: Option<&str>) -> anyhow::Result<Vec<u8>> {
    if let Some(cmd) = answer_cmd {
        let input = json!({ "challenge": view.challenge, "prompt": view.prompt });
        return Ok(run_answer_cmd(cmd, &input)?.into_bytes());
    }
    let prompt = Prompt {
        family: view.prompt.family.clone(),
        text: view.prompt.text.clone(),
        data: match &view.prompt.data {
            Value::String(s) => hex::decode(s).unwrap_or_else(|_| s.as_bytes().to_vec()),
            other => serde_json::to_vec(other)?,
        },
    };
    let registry = Registry::builtin();
    let family = registry.get(&prompt.family).with_context(|| {
        format!(
            "family `{}` is unknown to this client; pass --answer-cmd",
            prompt.family
        )
    })?;
    family.solve(&prompt).with_context(|| {
        format!(
            "family `{}` has no built-in solver; pass --answer-cmd",
            prompt.family
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_slot_ahead_is_waited_for_within_the_window_and_the_allowance() {
        let slot = 100_000..115_000;
        let closes = 150_000;
        assert_eq!(
            slot_wait(&slot, 90_000, closes, 7200 * S),
            SlotWait::Sleep(10 * S)
        );
        assert_eq!(
            slot_wait(&slot, 90_000, closes, 5 * S),
            SlotWait::TooFar(10 * S)
        );
        // Open, or passed (the node's refusal tells): ask.
        assert_eq!(slot_wait(&slot, 100_000, closes, S), SlotWait::Ask);
        assert_eq!(slot_wait(&slot, 120_000, closes, S), SlotWait::Ask);
        // Never past the window's close.
        assert_eq!(
            slot_wait(&slot, 90_000, 100_000, 7200 * S),
            SlotWait::AfterClose
        );
    }

    #[test]
    fn the_slot_is_read_from_an_outside_slot_message() {
        let message = hco_oracle::Reason::OutsideSlot {
            at: 5,
            slot_start: 1_764_292_000_000,
            slot_end: 1_764_292_015_000,
        }
        .to_string();
        assert_eq!(
            slot_in_message(&message),
            Some(1_764_292_000_000..1_764_292_015_000)
        );
        assert_eq!(slot_in_message("outside the slot"), None);
        assert_eq!(rfc3339(1_764_292_000_000), "2025-11-28T01:06:40.000Z");
    }
}
