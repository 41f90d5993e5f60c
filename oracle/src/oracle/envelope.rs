//! The checks of an answered challenge that need no issuer secret, shared by the issuer
//! ([`Oracle::verify_responses`], with `at` its own clock) and by every other member recording
//! the issuer's acceptance ([`Oracle::record_remote`], with `at` the signed receipt time).
//!
//! A member that records another's acceptance thus re-runs everything the issuer ran except
//! what depends on the window secret `w_t` (the prompt, the answer key, the exact opening
//! moment inside the step's phase); those are left to the audit once `w_t` is revealed.
//!
//! The issuer's own first check, that an envelope is one it issued ([`Oracle::check_ours`]),
//! is here too: every path that takes an answer (final, staged, live) starts with it.

use std::ops::Range;
use std::sync::Arc;

use hco_challenges::Family;

use crate::{Challenge, Digest, FamilyConfig, Profile, Reason, SignedChallenge, Timestamp};

use super::{Oracle, Outcome};

/// What the checks found out: the identity's registered profile and the family's config.
pub(super) struct Envelope<'p> {
    /// The identity's registered profile.
    pub profile: Profile,
    /// The configuration of the challenge's family.
    pub config: &'p FamilyConfig,
    /// The family itself.
    pub family: &'p Arc<dyn Family>,
}

impl Oracle {
    /// Checks that `signed` is an envelope this node issued, byte for byte, against its record
    /// of the issue rather than by the signature (which is checked only to name the refusal);
    /// returns the envelope's id.
    pub(super) fn check_ours(&self, signed: &SignedChallenge) -> Outcome<Digest> {
        let c = &signed.challenge;
        if c.issuer != self.node {
            return Ok(Err(match signed.check_signature() {
                Ok(()) => Reason::NotAssignedIssuer { assigned: c.issuer },
                Err(reason) => reason,
            }));
        }
        let challenge_id = c.challenge_id();
        if !self
            .ledger
            .issued_matches(c.t, &c.id, c.j, &challenge_id, &signed.sig)?
        {
            return Ok(Err(match signed.check_signature() {
                Ok(()) => Reason::UnknownChallenge,
                Err(reason) => reason,
            }));
        }
        Ok(Ok(challenge_id))
    }

    /// Checks challenge `c`, answered with `answer` and received at `at`, in the issuer's
    /// order: the window is open (or in grace) at `at`; `c` was issued inside the identity's
    /// slot; `at` is within `[issued_at, deadline]`; the identity is registered; `j` is in
    /// range for its class's policy; the family is enabled, of the identity's class and one
    /// its policy can draw; the deadline is `issued_at` plus the family's response time; the
    /// issue is not before the step's phase opened; a touch prompt of a global slot carries
    /// another member's witness of its beat; the answer fits the family and is not a stage request.
    /// The human-speed floor is [`solve_time`], reported separately.
    pub(super) fn check_envelope(
        &self,
        c: &Challenge,
        answer: &[u8],
        at: Timestamp,
    ) -> Outcome<Envelope<'_>> {
        if let Err(reason) = self.params.window_open(c.t, at) {
            return Ok(Err(reason));
        }
        let slot = self.slot(c.t, &c.id)?;
        if let Err(reason) = within(&slot, c.issued_at) {
            return Ok(Err(reason));
        }
        if at > c.deadline {
            return Ok(Err(Reason::ChallengeExpired {
                now: at,
                deadline: c.deadline,
            }));
        }
        if at < c.issued_at {
            return Ok(Err(Reason::Malformed(format!(
                "received at {at}, before the challenge was issued ({})",
                c.issued_at
            ))));
        }
        let Some(profile) = self.profile_of(&c.id)? else {
            return Ok(Err(Reason::UnknownIdentity));
        };
        Ok(self.check_family(c, answer, profile, &slot))
    }

    /// The registration-dependent half of [`Oracle::check_envelope`].
    pub(super) fn check_family(
        &self,
        c: &Challenge,
        answer: &[u8],
        profile: Profile,
        slot: &Range<Timestamp>,
    ) -> Result<Envelope<'_>, Reason> {
        let tries = self.params.policy(profile.class).tries();
        if c.j >= tries {
            return Err(Reason::IndexOutOfRange { j: c.j, k: tries });
        }
        let (Some(family), Some(config)) =
            (self.registry.get(&c.family), self.params.family(&c.family))
        else {
            return Err(Reason::UnknownFamily(c.family.clone()));
        };
        if family.class() != profile.class {
            return Err(Reason::WrongClass {
                registered: profile.class,
                required: family.class(),
            });
        }
        let drawable = self
            .params
            .step_of_family(profile.class, &c.family)
            .is_some_and(|step| {
                self.params
                    .step_families(&step, profile, &self.registry)
                    .iter()
                    .any(|f| f.name == c.family)
            });
        if !drawable {
            return Err(Reason::UnknownFamily(c.family.clone()));
        }
        let expected = c.issued_at.saturating_add(config.deadline_ms);
        if c.deadline != expected {
            return Err(Reason::DeadlineMismatch {
                deadline: c.deadline,
                expected,
            });
        }
        // Public checks of the opening (the seed's exact moment is audited after the reveal):
        // a challenge is not issued before its phase, a touch prompt only on its beat.
        let window = match self.params.prompt_reaction_ms(&c.family, &self.registry) {
            Some(reaction_ms) => self.params.beat(slot, profile.class, c.j, reaction_ms),
            None => self.params.phase(slot, profile.class, c.j),
        };
        if c.issued_at < window.start {
            return Err(Reason::StepNotOpen {
                opens_at: window.start,
            });
        }
        if self.params.is_prompt(&c.family, &self.registry) && c.issued_at >= window.end {
            return Err(Reason::OffBeat {
                issued_at: c.issued_at,
                beat_end: window.end,
            });
        }
        self.check_witness(c, window.start)?;
        if answer.len() > family.max_answer_len() {
            return Err(Reason::AnswerTooLarge {
                len: answer.len(),
                max: family.max_answer_len(),
            });
        }
        // A signed stage request is not a final answer (and must not end the challenge).
        if family.stages() > 1 && super::parse_stage_answer(answer).is_some() {
            return Err(Reason::Malformed(
                "a stage answer sent as a final answer".into(),
            ));
        }
        Ok(Envelope {
            profile,
            config,
            family,
        })
    }
}

/// `at` lies inside `slot`.
fn within(slot: &Range<Timestamp>, at: Timestamp) -> Result<(), Reason> {
    if slot.contains(&at) {
        Ok(())
    } else {
        Err(Reason::OutsideSlot {
            at,
            slot_start: slot.start,
            slot_end: slot.end,
        })
    }
}

/// The human-speed floor: `at` is at least the family's `min_solve_ms` after issue.
pub(super) fn solve_time(
    config: &FamilyConfig,
    c: &Challenge,
    at: Timestamp,
) -> Result<(), Reason> {
    let elapsed_ms = at.saturating_sub(c.issued_at);
    if elapsed_ms < config.min_solve_ms {
        Err(Reason::TooFast {
            elapsed_ms,
            min_ms: config.min_solve_ms,
        })
    } else {
        Ok(())
    }
}

/// Whether a rejection of a remote acceptance proves the sender wrong, rather than that this
/// node lacks something it may still receive: a registration (gossip or sync pending) or the
/// certificates that place the slots (the beacon). An acceptance of a window already summarized
/// here, or a prompt's that arrives after its slot allows, may be an honest issuer's that gossip
/// delivered late: refused, not blamed. The node strikes
/// the sender only for the former; it records neither.
pub fn blames_sender(reason: &Reason) -> bool {
    !matches!(
        reason,
        Reason::UnknownIdentity
            | Reason::ClassConflict(_)
            | Reason::WrongClass { .. }
            | Reason::OutsideSlot { .. }
            | Reason::StepNotOpen { .. }
            | Reason::WindowSummarized { .. }
            | Reason::LateAcceptance { .. }
    )
}
