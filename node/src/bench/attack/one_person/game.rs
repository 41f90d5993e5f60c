//! One window's play: every identity asks for its steps in turn, the model answers the
//! cognitive ones and the person touches the prompts.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Mutex;
use std::time::Duration;

use ed25519_dalek::SigningKey;
use hco_challenges::presence::{Passkey, Presence};
use hco_challenges::{Class, Registry};
use hco_oracle::secret::issuers_of;
use hco_oracle::{
    Clock, Digest, IdentityId, NetworkParams, NodeId, Profile, Response, SignedRequest, SystemClock,
};

use super::person::Person;
use super::report::Tally;
use crate::api::{ChallengeView, VerdictView};
use crate::bench::attack::device::Device;
use crate::bench::attack::local::LocalNode;

/// Requests one identity may make in a window (waits on `step_not_open` included).
const MAX_REQUESTS: u32 = 256;
/// A later answer than the floor by this much, milliseconds, so as not to be `too_fast`.
const FLOOR_MARGIN_MS: u64 = 30;

/// One window's play.
pub(super) struct Game<'a> {
    pub(super) node: &'a LocalNode,
    pub(super) params: &'a NetworkParams,
    pub(super) registry: &'a Registry,
    pub(super) presence: &'a Presence,
    pub(super) device: &'a Device,
    pub(super) person: &'a Person,
    pub(super) tally: &'a Mutex<Tally>,
    /// Every member's secret of the window (the model's stand-in regenerates answers).
    pub(super) w_t: BTreeMap<NodeId, Digest>,
    /// The malicious member colluding with the person, if any.
    pub(super) stretching: Option<NodeId>,
    /// How far past a prompt's deadline that member accepts it, as the person counts it.
    pub(super) stretch_ms: u64,
    pub(super) t: u64,
    pub(super) slot: Range<u64>,
    pub(super) closes_at: u64,
    /// Identities `0..serve` are served.
    pub(super) serve: usize,
}

/// How one identity's window ended.
pub(super) struct Ended {
    active: bool,
    /// The refusal that left too few tries, else the node's last code.
    loss: String,
}

impl Game<'_> {
    fn tally(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every identity plays the window; the person serves them.
    pub(super) fn play(&self, keys: &[SigningKey], passkeys: &[Passkey]) {
        self.person.join(keys.len());
        // The last answer comes by the slot's end plus the longest deadline.
        let longest = self
            .params
            .families
            .iter()
            .map(|f| f.deadline_ms)
            .max()
            .unwrap_or(0);
        let until = self.slot.end + longest + 5_000;
        std::thread::scope(|s| {
            s.spawn(|| self.person.serve(until));
            for (who, (key, passkey)) in keys.iter().zip(passkeys).enumerate() {
                s.spawn(move || {
                    let ended = self.identity(who, key, passkey).unwrap_or_else(|e| {
                        tracing::warn!(error = %e, "one person: identity-window failed");
                        Ended {
                            active: false,
                            loss: "harness_error".into(),
                        }
                    });
                    self.person.leave();
                    if !ended.active {
                        *self.tally().losses.entry(ended.loss).or_insert(0) += 1;
                    }
                });
            }
        });
    }

    /// One identity's window, as `hco client solve` plays it.
    fn identity(&self, who: usize, key: &SigningKey, passkey: &Passkey) -> anyhow::Result<Ended> {
        let id = IdentityId(key.verifying_key().to_bytes());
        let policy = self.params.policy(Class::Human);
        let (steps, spares) = (policy.steps.len(), policy.spares as usize);
        sleep_until(self.slot.start);
        let (mut j, mut passed) = (0u32, 0usize);
        let mut failures: Vec<String> = Vec::new();
        for _ in 0..MAX_REQUESTS {
            if passed >= steps {
                return Ok(Ended {
                    active: true,
                    loss: String::new(),
                });
            }
            if SystemClock.now() >= self.closes_at {
                break;
            }
            let reply = self
                .node
                .gateway
                .post("/v1/challenges", &SignedRequest::new(key, self.t, j))?;
            let opens_at = reply.body["opens_at"].as_u64().unwrap_or(0);
            let view: ChallengeView = match reply.into_result() {
                Ok(view) => view,
                Err((code, _)) if code == "step_not_open" && opens_at < self.closes_at => {
                    // The colluding member serves its prompts from the beat's start.
                    let early = if self.stretched(&id, j) {
                        self.params.prompt_jitter_ms
                    } else {
                        0
                    };
                    sleep_until(opens_at.saturating_sub(early).max(SystemClock.now() + 1) + 1);
                    continue;
                }
                // Asked as the beat begins, before the witness reached the issuer.
                Err((code, _)) if code == "no_slot_witness" => {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                Err((code, _)) => {
                    return Ok(Ended {
                        active: false,
                        loss: loss(&failures, spares).unwrap_or(code),
                    });
                }
            };
            let family = view.prompt.family.clone();
            let c = &view.challenge.challenge;
            let (issued_at, deadline) = (c.issued_at, c.deadline);
            let floor = issued_at + self.params.min_solve_ms(&family) + FLOOR_MARGIN_MS;
            let verdict = if self.params.is_prompt(&family, self.registry) {
                self.tally().prompts.issued += 1;
                let spares_left = spares.saturating_sub(failures.len());
                let served = who < self.serve;
                if !served {
                    self.tally().prompts.unserved += 1;
                }
                let due = if Some(c.issuer) == self.stretching {
                    deadline + self.stretch_ms
                } else {
                    deadline
                };
                if served && self.person.ask(due, who, passed, spares_left) {
                    let assertion =
                        self.device
                            .assert(self.presence, &c.challenge_id().0, passkey)?;
                    sleep_until(floor);
                    let late = SystemClock.now() > deadline;
                    let verdict = self.respond(key, view.challenge.clone(), assertion)?;
                    let mut tally = self.tally();
                    tally.prompts.accepted += u64::from(verdict.is_none());
                    tally.prompts.stretched += u64::from(verdict.is_none() && late);
                    verdict
                } else {
                    // Not answered: it expires (a try used) before the next may be asked.
                    sleep_until(due + 1);
                    Some("challenge_expired".to_owned())
                }
            } else {
                let answer =
                    self.model_answer(&view.challenge.challenge.issuer, &id, j, &family)?;
                sleep_until(floor);
                let verdict = self.respond(key, view.challenge.clone(), answer)?;
                let mut tally = self.tally();
                let e = tally.cognitive.entry(family).or_default();
                e.answered += 1;
                e.accepted += u64::from(verdict.is_none());
                verdict
            };
            match verdict {
                None => passed += 1,
                Some(code) => failures.push(code),
            }
            j += 1;
        }
        Ok(Ended {
            active: passed >= steps,
            loss: loss(&failures, spares).unwrap_or_else(|| "too_many_requests".into()),
        })
    }

    /// The model's answer to challenge `j` of `id`: the family's reference answer from the
    /// regenerated answer key.
    fn model_answer(
        &self,
        issuer: &NodeId,
        id: &IdentityId,
        j: u32,
        family: &str,
    ) -> anyhow::Result<Vec<u8>> {
        let w_t = self
            .w_t
            .get(issuer)
            .ok_or_else(|| anyhow::anyhow!("challenge ({}, {j}) from a stranger", self.t))?;
        let profile = Profile {
            class: Class::Human,
            visual_opt_out: false,
        };
        let (config, generated) = hco_oracle::derive_challenge(
            self.params,
            self.registry,
            w_t,
            profile,
            id,
            self.t,
            j,
            family,
        )
        .map_err(|e| anyhow::anyhow!("regenerating ({}, {j}): {e}", self.t))?;
        self.registry
            .get(&config.name)
            .and_then(|f| f.reference_answer(&generated.key))
            .ok_or_else(|| anyhow::anyhow!("family `{family}` has no reference answer"))
    }

    /// Whether try `j` of `id` is the colluding member's to issue.
    fn stretched(&self, id: &IdentityId, j: u32) -> bool {
        self.stretching
            .is_some_and(|m| issuers_of(self.params, id, self.t, j).first() == Some(&m))
    }

    /// Signs and sends `answer`; `None` if accepted, else the refusal code.
    fn respond(
        &self,
        key: &SigningKey,
        challenge: hco_oracle::SignedChallenge,
        answer: Vec<u8>,
    ) -> anyhow::Result<Option<String>> {
        let response = Response::new(key, challenge, answer);
        Ok(self
            .node
            .gateway
            .post("/v1/responses", &response)?
            .into_result::<VerdictView>()
            .err()
            .map(|(code, _)| code))
    }
}

/// The failure that left too few tries: the one past the spares.
fn loss(failures: &[String], spares: usize) -> Option<String> {
    failures.get(spares).cloned()
}

pub(super) fn sleep_until(at: u64) {
    let now = SystemClock.now();
    if at > now {
        std::thread::sleep(Duration::from_millis(at - now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loss_is_the_failure_past_the_spares() {
        let f = ["challenge_expired".to_owned(), "answer_mismatch".to_owned()];
        assert_eq!(loss(&f[..1], 1), None);
        assert_eq!(loss(&f, 1).as_deref(), Some("answer_mismatch"));
        assert_eq!(loss(&f, 0).as_deref(), Some("challenge_expired"));
    }
}
