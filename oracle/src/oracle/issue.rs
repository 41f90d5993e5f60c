//! Issuance (DESIGN §5.1–5.2, §12): the window's step sequence. Challenge `j` is issued only
//! after `j − 1` was answered or expired, serves the first step not yet passed, takes its family
//! from the step (a drawn step: from the seed), and opens at a seed-derived moment of its phase
//! of the slot. A repeated request returns the same challenge with the same deadline.

use hco_challenges::Prompt;

use crate::ledger::{IssuedRecord, LedgerError};
use crate::messages::Profile;
use crate::messages::VERSION;
use crate::policy::{Outcome as StepOutcome, next_step};
use crate::secret::{
    challenge_seed, check_issuer, derive_challenge, draw_family, generate, opening, window_secret,
};
use crate::{Challenge, Digest, IdentityId, Reason, SignedChallenge, SignedRequest, Timestamp};

use super::tries::EarlierTries;
use super::{CheckedRequest, Oracle, Outcome};

/// A challenge as sent to the identity: the signed envelope and the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedChallenge {
    /// The signed envelope (the identity returns it with its answer).
    pub challenge: SignedChallenge,
    /// What to solve.
    pub prompt: Prompt,
}

struct RequestParts {
    id: IdentityId,
    t: u64,
    j: u32,
}

impl Oracle {
    /// Issues challenge `(id, t, j)`. A repeated request returns the same challenge with the
    /// same deadline; `j` must be the next index of the identity's sequence otherwise. Nothing
    /// is stored for a rejected request.
    pub fn issue(&self, req: &SignedRequest, now: Timestamp) -> Outcome<IssuedChallenge> {
        if let Err(reason) = self.check_signature_of(req) {
            return Ok(Err(reason));
        }
        self.issue_signed(req, now, &EarlierTries::new())
    }

    /// [`Oracle::issue`] for a request whose signature was checked already.
    pub fn issue_checked(&self, req: &CheckedRequest, now: Timestamp) -> Outcome<IssuedChallenge> {
        self.issue_signed(req.request(), now, &EarlierTries::new())
    }

    /// [`Oracle::issue_checked`] with what the other members reported of the earlier tries
    /// this member does not hold ([`Oracle::earlier_tries_to_ask`]); one not reported counts
    /// as failed.
    pub fn issue_after(
        &self,
        req: &CheckedRequest,
        now: Timestamp,
        earlier: &EarlierTries,
    ) -> Outcome<IssuedChallenge> {
        self.issue_signed(req.request(), now, earlier)
    }

    /// Issuance once the request's signature is known to be good.
    fn issue_signed(
        &self,
        req: &SignedRequest,
        now: Timestamp,
        earlier: &EarlierTries,
    ) -> Outcome<IssuedChallenge> {
        let RequestParts { id, t, j } = match self.check_request(req, now)? {
            Ok(parts) => parts,
            Err(reason) => return Ok(Err(reason)),
        };
        // The cached profile answers for a registered identity without reading its record.
        let Some(profile) = self.profile_of(&id)? else {
            return Ok(Err(Reason::UnknownIdentity));
        };
        // One scan of the identity's issues in `t` answers both questions: was `j` issued
        // already (then the same challenge is rebuilt), and which step comes next.
        let issued = self.ledger.issued_in(t, &id)?;
        if let Some((_, existing)) = issued.iter().find(|(k, _)| *k == j) {
            return Ok(self.reissue(&id, profile, t, j, existing));
        }
        match self.issue_next(&id, profile, t, j, now, &issued, earlier)? {
            Ok(issued) => Ok(Ok(issued)),
            Err(reason) => Ok(Err(reason)),
        }
    }

    /// Issues the next challenge of the sequence, if `j` is next and may be issued now;
    /// `issued` is what this member issued to `id` in `t` so far, in order, and `earlier`
    /// what the others reported of theirs.
    #[allow(clippy::too_many_arguments)]
    fn issue_next(
        &self,
        id: &IdentityId,
        profile: Profile,
        t: u64,
        j: u32,
        now: Timestamp,
        issued: &[(u32, IssuedRecord)],
        earlier: &EarlierTries,
    ) -> Outcome<IssuedChallenge> {
        let id = *id;
        // An identity that registered with two classes (at two members) is issued nothing.
        if self.ledger.conflict(&id)?.is_some() {
            return Ok(Err(Reason::ClassConflict(profile.class)));
        }
        let policy = self.params.policy(profile.class);
        // One issuer per window: the tries are this member's, in order. Rotating issuers:
        // a try is never issued before one this member issued later.
        let next = if self.params.rotate_issuers {
            issued.last().map_or(0, |(k, _)| k + 1)
        } else {
            issued.len() as u32
        };
        if j != next && !(self.params.rotate_issuers && j > next) {
            return Ok(Err(Reason::OutOfSequence { j, next }));
        }
        let mut outcomes = Vec::with_capacity(j as usize);
        for k in 0..j {
            let Some((_, rec)) = issued.iter().find(|(i, _)| *i == k) else {
                outcomes.push(self.earlier_outcome(&id, t, k, earlier)?);
                continue;
            };
            outcomes.push(if self.ledger.is_accepted(t, &id, k)? {
                StepOutcome::Passed
            } else if self.ledger.answered(t, &id, k)?.is_some() || now > rec.deadline {
                StepOutcome::Failed
            } else {
                StepOutcome::Open
            });
        }
        let step = match next_step(policy, &outcomes) {
            Ok(index) => &policy.steps[index],
            Err(reason) => return Ok(Err(reason)),
        };
        let slot = self.slot(t, &id)?;
        if !slot.contains(&now) {
            return Ok(Err(Reason::OutsideSlot {
                at: now,
                slot_start: slot.start,
                slot_end: slot.end,
            }));
        }
        let w_t = window_secret(&self.node_secret, t);
        let seed = challenge_seed(&w_t, &id, t, j);
        // A touch prompt opens on its beat and is issued there, whenever it is fetched: asked
        // late, it comes with its reaction window already running (or over: a missed prompt,
        // one try used).
        let prompt = match step {
            crate::Step::Family(name) => self.params.prompt_reaction_ms(name, &self.registry),
            crate::Step::Drawn => None,
        };
        let opens_at = opening(&self.params, &slot, profile.class, j, prompt, &seed);
        let beat_start = prompt.map(|r| self.params.beat(&slot, profile.class, j, r).start);
        if now < opens_at {
            return Ok(Err(Reason::StepNotOpen { opens_at }));
        }
        let issued_at = if prompt.is_some() { opens_at } else { now };
        // A touch prompt of a global slot carries another member's witness that its beat has
        // begun, so its id (the WebAuthn challenge) cannot be known before (crate::witness).
        let witness = match (step, beat_start) {
            (crate::Step::Family(name), Some(at)) if self.needs_witness(name) => {
                match self.pick_witness(t, at)? {
                    Ok(w) => Some(w),
                    Err(reason) => return Ok(Err(reason)),
                }
            }
            _ => None,
        };
        let generated =
            match draw_family(&self.params, &self.registry, profile, step, &w_t, &id, t, j)
                .and_then(|config| Ok((config, generate(&self.registry, config, &seed, t)?)))
            {
                Ok(drawn) => drawn,
                Err(reason) => return Ok(Err(reason)),
            };
        let (config, generated) = generated;
        let issued = self.sign_envelope(
            &id,
            t,
            j,
            &config.name,
            issued_at,
            config.deadline_ms,
            generated.prompt,
            witness,
        );
        let fresh = IssuedRecord {
            issued_at,
            deadline: issued.challenge.challenge.deadline,
            family: config.name.clone(),
            challenge_id: issued.challenge.challenge.challenge_id(),
            sig: issued.challenge.sig,
            witness,
        };
        let kept = self.ledger.put_issued(t, &id, j, &fresh)?;
        if kept == fresh {
            Ok(Ok(issued))
        } else {
            // Another request for the same (id, t, j) won the race: return its challenge.
            Ok(self.reissue(&id, profile, t, j, &kept))
        }
    }

    /// The challenge first issued as `existing`, rebuilt byte for byte (signatures are
    /// deterministic).
    fn reissue(
        &self,
        id: &IdentityId,
        profile: Profile,
        t: u64,
        j: u32,
        existing: &IssuedRecord,
    ) -> Result<IssuedChallenge, Reason> {
        let w_t = window_secret(&self.node_secret, t);
        let (config, generated) = derive_challenge(
            &self.params,
            &self.registry,
            &w_t,
            profile,
            id,
            t,
            j,
            &existing.family,
        )?;
        Ok(self.sign_envelope(
            id,
            t,
            j,
            &config.name,
            existing.issued_at,
            config.deadline_ms,
            generated.prompt,
            existing.witness,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn sign_envelope(
        &self,
        id: &IdentityId,
        t: u64,
        j: u32,
        family: &str,
        issued_at: Timestamp,
        deadline_ms: u64,
        prompt: Prompt,
        witness: Option<crate::witness::SlotWitness>,
    ) -> IssuedChallenge {
        let challenge = Challenge {
            version: VERSION,
            issuer: self.node,
            id: *id,
            t,
            j,
            family: family.into(),
            issued_at,
            deadline: issued_at.saturating_add(deadline_ms),
            prompt_digest: Digest(prompt.digest()),
            witness,
        };
        IssuedChallenge {
            challenge: SignedChallenge::new(&self.key, challenge),
            prompt,
        }
    }

    /// The request's window, index and issuer (its signature was checked before).
    fn check_request(&self, req: &SignedRequest, now: Timestamp) -> Outcome<RequestParts> {
        let b = &req.body;
        let checks = || -> Result<RequestParts, Reason> {
            let current = self.params.window_at(now)?;
            if b.t != current {
                return Err(Reason::WrongWindow { t: b.t, current });
            }
            Ok(RequestParts {
                id: b.id,
                t: b.t,
                j: b.j,
            })
        };
        let parts = match checks() {
            Ok(parts) => parts,
            Err(reason) => return Ok(Err(reason)),
        };
        // The index range depends on the identity's class.
        if let Some(profile) = self.profile_of(&parts.id)? {
            let policy = self.params.policy(profile.class);
            let tries = policy.tries();
            if parts.j >= tries {
                // Past the last try: a window whose steps all passed says so, as it does
                // before the last try (a client stops there rather than failing).
                let passed = self.ledger.solves(parts.t, &parts.id)? as usize;
                return Ok(Err(if passed >= policy.steps.len() {
                    Reason::StepsComplete
                } else {
                    Reason::IndexOutOfRange {
                        j: parts.j,
                        k: tries,
                    }
                }));
            }
        }
        if let Err(reason) = check_issuer(&self.params, &self.node, &parts.id, parts.t, parts.j) {
            return Ok(Err(reason));
        }
        Ok(Ok(parts))
    }

    /// The index of the next challenge `id` may request in window `t` and the number of steps
    /// it passed there (for status pages and clients).
    /// With rotating issuers it counts the tries this member issued or knows accepted; one
    /// another member issued and failed is not known here.
    pub fn progress(&self, t: u64, id: &IdentityId) -> Result<(u32, u32), LedgerError> {
        let issued = self.ledger.issued_in(t, id)?;
        if !self.params.rotate_issuers {
            return Ok((issued.len() as u32, self.ledger.solves(t, id)?));
        }
        let accepted = self.ledger.accepted_indices(t, id)?;
        let next = issued
            .last()
            .map(|(k, _)| k + 1)
            .into_iter()
            .chain(accepted.last().map(|k| k + 1))
            .max()
            .unwrap_or(0);
        Ok((next, accepted.len() as u32))
    }
}
