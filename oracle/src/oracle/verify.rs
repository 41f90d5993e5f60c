//! Verification of answers (DESIGN §5.4, §12): checks in a fixed order, identity signatures in
//! one batch, then under the commit lock the replay check and the verdict; the acceptances
//! are sealed and written after the lock (held meanwhile as answered). The first
//! identity-signed answer to a challenge is final: a wrong (or too fast) one is recorded as
//! answered, durably, before the reply, and any later answer is `already_answered`.

use std::collections::{BTreeMap, HashMap, HashSet};

use hco_challenges::{Context, CounterUpdate, Reject};

use crate::ledger::{AnsweredRecord, LedgerError};
use crate::messages::VERSION;
use crate::secret::{derive_challenge, window_secret};
use crate::{
    Acceptance, Digest, IdentityId, Reason, Response, SealedAcceptance, Timestamp,
    seal::seal_batch, sign,
};

use super::commit_log::AnsweredKey;
use super::{Oracle, Outcome};

/// Acceptances decided in a batch, by window, with their place in the batch.
type ByWindow = BTreeMap<u64, Vec<(usize, Acceptance)>>;

/// The challenges of decided acceptances.
fn accepted_keys(by_window: &ByWindow) -> Vec<AnsweredKey> {
    by_window
        .values()
        .flatten()
        .map(|(_, a)| {
            let c = a.challenge();
            (c.t, c.id, c.j)
        })
        .collect()
}

/// A response that passed every check but the identity signature and the replay check.
struct Checked<'a> {
    response: &'a Response,
    /// What the identity must have signed.
    signing_digest: Digest,
    /// The answer's verdict, with the counter it moves (presence).
    answer: Result<Option<CounterUpdate>, Reason>,
    /// A wrong multi-part answer's verdict part by part, when someone observes them.
    parts: Option<Vec<bool>>,
}

impl Oracle {
    /// Verifies one response; see [`Oracle::verify_responses`].
    pub fn verify_response(
        &self,
        response: &Response,
        now: Timestamp,
    ) -> Outcome<SealedAcceptance> {
        let mut results = self.verify_responses(std::slice::from_ref(response), now)?;
        Ok(results
            .pop()
            .unwrap_or(Err(Reason::Malformed("empty batch".into()))))
    }

    /// Verifies responses received at `now`, accepts the valid ones, and returns once their
    /// acceptances (and the answered-markers of wrong answers) are durable. Identity
    /// signatures are checked in one batch; acceptances are sealed with one signature and
    /// flushed with one group commit. A response refused before its answer is judged (late,
    /// unsigned, replayed, …) writes nothing.
    pub fn verify_responses(
        &self,
        responses: &[Response],
        now: Timestamp,
    ) -> Result<Vec<Result<SealedAcceptance, Reason>>, LedgerError> {
        // Commits after this one are found in the commit log under the lock; those before it
        // are seen by the lock-free ledger reads of the prechecks.
        let since = self.last_commit.get();
        let mut results: Vec<Result<Checked<'_>, Reason>> = Vec::with_capacity(responses.len());
        for r in responses {
            results.push(self.precheck(r, now)?);
        }
        // Identity signatures, in one batch.
        let digests: Vec<(usize, Digest)> = results
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.as_ref().ok().map(|c| (i, c.signing_digest)))
            .collect();
        let keys: Vec<_> = digests
            .iter()
            .map(|(i, _)| self.keys.key(&responses[*i].challenge.challenge.id))
            .collect();
        let items: Vec<_> = digests
            .iter()
            .zip(&keys)
            .map(|((i, d), key)| (key.as_ref(), d, &responses[*i].sig))
            .collect();
        for ((i, _), ok) in digests.iter().zip(sign::verify_many_parsed(&items)) {
            if !ok {
                results[*i] = Err(Reason::BadIdentitySignature);
            }
        }
        // Replay check and answer verdict under the commit lock; seal and write after it.
        let mut out: Vec<Option<Result<SealedAcceptance, Reason>>> =
            Vec::with_capacity(responses.len());
        // Per-part verdicts of wrong answers, told to the observer once they are durable.
        let mut observed: Vec<(usize, Vec<bool>)> = Vec::new();
        let (marked, accepted, keys) = {
            let mut log = self.commit.lock().map_err(|_| LedgerError::Poisoned)?;
            // The prechecks read the answered state without the lock: what was answered since
            // is in the log (or, where the log has forgotten, read again under the lock).
            let answered_after = log.answered_since(since);
            match self.commit_checked(results, answered_after, now, &mut out, &mut observed) {
                Ok((marked, accepted)) => {
                    let keys = accepted_keys(&accepted);
                    // Held as answered until written below: the commit is published now.
                    self.unwritten.hold(keys.iter().copied());
                    log.record(marked.iter().chain(&keys).copied(), &self.last_commit);
                    (marked, accepted, keys)
                }
                Err(e) => {
                    // Some writes may have landed: no later batch may trust the log for them.
                    log.forget(&self.last_commit);
                    return Err(e);
                }
            }
        };
        // On a failed write the keys stay held: answered, as far as this node can tell.
        self.write_accepted(accepted, &mut out)?;
        self.unwritten.release(&keys);
        if !keys.is_empty() || !marked.is_empty() {
            self.ledger.make_durable()?;
        }
        if let Some(observer) = self.part_observer.get() {
            for (i, parts) in &observed {
                let c = &responses[*i].challenge.challenge;
                observer(&super::PartVerdicts {
                    family: &c.family,
                    t: c.t,
                    id: &c.id,
                    j: c.j,
                    parts,
                });
            }
        }
        Ok(out
            .into_iter()
            .map(|v| {
                v.unwrap_or_else(|| {
                    Err(Reason::Malformed("internal: acceptance not sealed".into()))
                })
            })
            .collect())
    }

    /// Under the commit lock: the replay check, each answer's verdict, and the writes of the
    /// answered-markers and counters. Fills `out` (in order; an accepted answer's slot stays
    /// empty until sealed) and `observed`; returns the challenges it marked answered wrong and
    /// the acceptances to seal and write, by window.
    fn commit_checked<'a>(
        &self,
        results: Vec<Result<Checked<'a>, Reason>>,
        answered_after: Option<Vec<&HashSet<AnsweredKey>>>,
        now: Timestamp,
        out: &mut Vec<Option<Result<SealedAcceptance, Reason>>>,
        observed: &mut Vec<(usize, Vec<bool>)>,
    ) -> Result<(Vec<AnsweredKey>, ByWindow), LedgerError> {
        let mut marked: Vec<AnsweredKey> = Vec::new();
        let mut by_window = ByWindow::new();
        let mut in_batch = HashSet::new();
        // Counters moved by this batch's presence answers, checked against the ledger and
        // each other here, under the lock, so two assertions cannot both claim one count.
        let mut counters: HashMap<(IdentityId, Vec<u8>), u32> = HashMap::new();
        for (i, checked) in results.into_iter().enumerate() {
            let mut checked = match checked {
                Err(reason) => {
                    out.push(Some(Err(reason)));
                    continue;
                }
                Ok(checked) => checked,
            };
            let c = &checked.response.challenge.challenge;
            let key = (c.t, c.id, c.j);
            let replayed = !in_batch.insert(key)
                || match &answered_after {
                    Some(commits) => commits.iter().any(|keys| keys.contains(&key)),
                    None => self.is_answered(c.t, &c.id, c.j)?,
                };
            if replayed {
                out.push(Some(Err(Reason::AlreadyAnswered)));
                continue;
            }
            let verdict = match checked.answer {
                Ok(update) => self.claim_counter(&c.id, update, &mut counters)?,
                Err(reason) => Err(reason),
            };
            match verdict {
                Ok(()) => {
                    by_window.entry(c.t).or_default().push((
                        i,
                        Acceptance {
                            version: VERSION,
                            response: checked.response.clone(),
                            accepted_at: now,
                        },
                    ));
                    out.push(None); // sealed after the lock
                }
                Err(reason) => {
                    if reason.is_final_answer() {
                        let marker = AnsweredRecord {
                            answered_at: now,
                            code: reason.code().into(),
                        };
                        self.ledger.mark_answered(c.t, &c.id, c.j, &marker)?;
                        marked.push(key);
                        if let Some(parts) = checked.parts.take() {
                            observed.push((i, parts));
                        }
                    }
                    out.push(Some(Err(reason)));
                }
            }
        }
        for ((id, credential), counter) in counters.drain() {
            self.ledger.raise_counter(&id, &credential, counter)?;
        }
        Ok((marked, by_window))
    }

    /// Seals each window's acceptances with one signature and writes them, filling their slots
    /// in `out`. Runs after the commit lock: the replay check has given each its own key.
    fn write_accepted(
        &self,
        by_window: ByWindow,
        out: &mut [Option<Result<SealedAcceptance, Reason>>],
    ) -> Result<(), LedgerError> {
        for (t, entries) in by_window {
            let (indices, acceptances): (Vec<usize>, Vec<Acceptance>) = entries.into_iter().unzip();
            let sealed = seal_batch(&self.key, t, acceptances);
            self.ledger.insert_checked(&sealed)?;
            for (i, s) in indices.into_iter().zip(sealed) {
                out[i] = Some(Ok(s));
            }
        }
        Ok(())
    }

    /// Takes the counter an accepted presence answer moves to, if the network's counter rule
    /// allows it against the stored count and any other claim in the batch.
    fn claim_counter(
        &self,
        id: &IdentityId,
        update: Option<CounterUpdate>,
        claimed: &mut HashMap<(IdentityId, Vec<u8>), u32>,
    ) -> Outcome<()> {
        let Some(update) = update else {
            return Ok(Ok(()));
        };
        let key = (*id, update.credential_id);
        let stored = match claimed.get(&key) {
            Some(c) => *c,
            None => self
                .ledger
                .passkeys(id)?
                .into_iter()
                .find(|r| r.credential_id == key.1)
                .map_or(0, |r| r.counter),
        };
        if let Err(reject) = self.params.presence.counter_ok(stored, update.counter) {
            return Ok(Err(Reason::Answer(reject)));
        }
        claimed.insert(key, update.counter);
        Ok(Ok(()))
    }

    /// Every check before the identity signature and the replay check, and the answer's
    /// verdict (reported after those two).
    fn precheck<'a>(&self, r: &'a Response, now: Timestamp) -> Outcome<Checked<'a>> {
        let c = &r.challenge.challenge;
        if let Err(reason) = crate::messages::check_version(r.version) {
            return Ok(Err(reason));
        }
        // 1. Issuer: ours, checked against our own record of what we issued.
        let challenge_id = match self.check_ours(&r.challenge)? {
            Ok(id) => id,
            Err(reason) => return Ok(Err(reason)),
        };
        // 2–6. Window and grace, slot and step phase, deadline, registration and class, index
        // and family, answer size: the checks every member repeats on our acceptance.
        let envelope = match self.check_envelope(c, &r.answer, now)? {
            Ok(envelope) => envelope,
            Err(reason) => return Ok(Err(reason)),
        };
        let (profile, config, family) = (envelope.profile, envelope.config, envelope.family);
        // An answered challenge is refused below, after the signature check; skip the costly
        // regeneration of its key for floods of answers to it.
        if self.is_answered(c.t, &c.id, c.j)? {
            return Ok(Ok(Checked {
                response: r,
                signing_digest: Response::digest_for(&challenge_id, &r.answer),
                answer: Err(Reason::AlreadyAnswered),
                parts: None,
            }));
        }
        // 7. The verdict on the answer (reported after signature and replay): faster than a
        // person, or wrong against the regenerated key. The envelope matched our record, so
        // only the answer key is needed: no re-signing.
        let mut parts = None;
        let answer = if let Err(too_fast) = super::envelope::solve_time(config, c, now) {
            Err(too_fast)
        } else {
            let w_t = window_secret(&self.node_secret, c.t);
            let passkeys = if family.uses_passkeys() {
                self.passkeys_of(&c.id)?
            } else {
                Vec::new()
            };
            let context = Context {
                challenge_id: &challenge_id.0,
                passkeys: &passkeys,
            };
            match derive_challenge(
                &self.params,
                &self.registry,
                &w_t,
                profile,
                &c.id,
                c.t,
                c.j,
                &c.family,
            ) {
                Ok((_, generated)) => {
                    let verdict = family.verify_in(&generated.key, &r.answer, &context);
                    if verdict == Err(Reject::AnswerMismatch) && self.part_observer.get().is_some()
                    {
                        parts = family.part_verdicts(&generated.key, &r.answer);
                    }
                    verdict.map_err(Reason::Answer)
                }
                Err(reason) => Err(reason),
            }
        };
        Ok(Ok(Checked {
            response: r,
            signing_digest: Response::digest_for(&challenge_id, &r.answer),
            answer,
            parts,
        }))
    }
}
