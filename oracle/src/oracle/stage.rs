//! Staged answers of multi-stage families ([`hco_challenges::Family::stages`]): the answer to
//! the first stages of a challenge, identity-signed like any answer, unlocks the next stage's
//! prompt. The same checks as a final answer come first (issuer record, then the secret-free
//! envelope of `envelope.rs`: window, slot, deadline, identity, step, family, size; then
//! identity signature, not answered); a wrong partial answer
//! is then final exactly as a wrong answer is (recorded as answered), and a right one gets the
//! next prompt, re-derived from the seed: nothing is stored.
//!
//! The signed answer bytes are `stage {k}:{partial answer}` for the answer to stages `1..=k`,
//! so a stage request is never mistaken for a final answer, and a final answer never for a
//! stage request.

use hco_challenges::Prompt;

use crate::ledger::AnsweredRecord;
use crate::messages::check_version;
use crate::secret::{challenge_seed, derive_challenge, window_secret};
use crate::{Reason, Response, Timestamp};

use super::{Oracle, Outcome};

/// How a stage request's signed answer starts.
pub const STAGE_PREFIX: &[u8] = b"stage ";

/// Splits a stage request's answer `stage {k}:{partial}` into `k` and the partial answer.
pub fn parse_stage_answer(answer: &[u8]) -> Option<(usize, &[u8])> {
    let rest = answer.strip_prefix(STAGE_PREFIX)?;
    let colon = rest.iter().position(|b| *b == b':')?;
    let digits = &rest[..colon];
    if digits.is_empty() || digits.len() > 2 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let k = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some((k, &rest[colon + 1..]))
}

impl Oracle {
    /// Checks the partial answer carried by `r` (see the module docs) received at `now`;
    /// returns the number and prompt of the stage it unlocks. Durable when it returns.
    pub fn answer_stage(&self, r: &Response, now: Timestamp) -> Outcome<(usize, Prompt)> {
        let c = &r.challenge.challenge;
        if let Err(reason) = check_version(r.version) {
            return Ok(Err(reason));
        }
        let Some((k, partial)) = parse_stage_answer(&r.answer) else {
            return Ok(Err(Reason::Malformed(
                "a stage answer reads `stage {k}:{answer to stages 1..=k}`".into(),
            )));
        };
        let challenge_id = match self.check_ours(&r.challenge)? {
            Ok(id) => id,
            Err(reason) => return Ok(Err(reason)),
        };
        // The checks of a final answer that need no secret, on the partial answer.
        let (profile, family) = match self.check_envelope(c, partial, now)? {
            Ok(envelope) => (envelope.profile, envelope.family.clone()),
            Err(reason) => return Ok(Err(reason)),
        };
        if k == 0 || k >= family.stages() {
            return Ok(Err(Reason::NoSuchStage {
                stage: k,
                stages: family.stages(),
            }));
        }
        let key = self.keys.key(&c.id);
        let digest = Response::digest_for(&challenge_id, &r.answer);
        if !crate::sign::verify_many_parsed(&[(key.as_ref(), &digest, &r.sig)])[0] {
            return Ok(Err(Reason::BadIdentitySignature));
        }
        if self.is_answered(c.t, &c.id, c.j)? {
            return Ok(Err(Reason::AlreadyAnswered));
        }
        let w_t = window_secret(&self.node_secret, c.t);
        let (config, generated) = match derive_challenge(
            &self.params,
            &self.registry,
            &w_t,
            profile,
            &c.id,
            c.t,
            c.j,
            &c.family,
        ) {
            Ok(derived) => derived,
            Err(reason) => return Ok(Err(reason)),
        };
        if let Err(reject) = family.check_stage(&generated.key, k, partial) {
            let mut log = self
                .commit
                .lock()
                .map_err(|_| crate::LedgerError::Poisoned)?;
            if self.is_answered(c.t, &c.id, c.j)? {
                return Ok(Err(Reason::AlreadyAnswered));
            }
            let reason = Reason::Answer(reject);
            let marker = AnsweredRecord {
                answered_at: now,
                code: reason.code().into(),
            };
            self.ledger.mark_answered(c.t, &c.id, c.j, &marker)?;
            log.record([(c.t, c.id, c.j)], &self.last_commit);
            self.ledger.make_durable()?;
            return Ok(Err(reason));
        }
        let seed = challenge_seed(&w_t, &c.id, c.t, c.j);
        match family.stage_prompt(&seed, &config.family_params(), k + 1) {
            Some(prompt) => Ok(Ok((k + 1, prompt))),
            None => Ok(Err(Reason::NoSuchStage {
                stage: k,
                stages: family.stages(),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_stage_answer;

    #[test]
    fn stage_answers_parse_strictly() {
        assert_eq!(
            parse_stage_answer(b"stage 1:10,20"),
            Some((1, &b"10,20"[..]))
        );
        assert_eq!(parse_stage_answer(b"stage 12:"), Some((12, &b""[..])));
        for bad in [
            &b"stage :1"[..],
            b"stage 123:1",
            b"stage x:1",
            b"stage 1",
            b"1,2",
            b"",
        ] {
            assert_eq!(parse_stage_answer(bad), None, "{bad:?}");
        }
    }
}
