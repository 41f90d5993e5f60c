//! The audit (DESIGN §5.6). After window `t` closes each issuer publishes its window secret
//! `w_t` ([`SignedReveal`]). Anyone can then regenerate every prompt and answer key of the
//! window and check every acceptance; an issuer that accepted a wrong, late or forged answer is
//! caught with its own sealed acceptance as evidence.

use std::collections::{BTreeMap, HashMap};

use hco_challenges::Registry;
use serde::{Deserialize, Serialize};

pub use crate::reveal::{Reveal, SignedReveal};
use crate::seal::BatchSeal;
use crate::{Digest, NetworkParams, NodeId, Profile, SealedAcceptance, derive_challenge, sign};

/// What is wrong with an acceptance its issuer sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "violation")]
#[non_exhaustive]
pub enum Violation {
    /// The issuer was not allowed to issue for this identity and window.
    NotAssignedIssuer,
    /// The identity's signature on the response does not verify.
    ForgedResponse,
    /// The envelope names another family than the seed selects.
    FamilyMismatch,
    /// The regenerated prompt differs from the signed digest (or the revealed secret is wrong).
    PromptMismatch,
    /// The deadline is not `issued_at + Δresp`.
    DeadlineMismatch,
    /// Accepted after the deadline or after the window closed.
    Late,
    /// Issued outside the identity's ceremony slot.
    OutsideSlot,
    /// Issued before the challenge's opening moment in the slot.
    IssuedBeforeOpening,
    /// Accepted sooner after issue than the family's minimum human solve time.
    TooFast,
    /// The answer does not verify against the regenerated key.
    WrongAnswer {
        /// The family's reason code.
        code: String,
    },
    /// A touch prompt issued after its opening moment on the beat (its reaction window moved).
    OffBeat,
}

impl Violation {
    /// A stable snake_case name (a wrong answer adds the family's code after a colon).
    pub fn code(&self) -> String {
        match self {
            Violation::NotAssignedIssuer => "not_assigned_issuer".into(),
            Violation::ForgedResponse => "forged_response".into(),
            Violation::FamilyMismatch => "family_mismatch".into(),
            Violation::PromptMismatch => "prompt_mismatch".into(),
            Violation::DeadlineMismatch => "deadline_mismatch".into(),
            Violation::Late => "late".into(),
            Violation::OutsideSlot => "outside_slot".into(),
            Violation::IssuedBeforeOpening => "issued_before_opening".into(),
            Violation::TooFast => "too_fast".into(),
            Violation::WrongAnswer { code } => format!("wrong_answer:{code}"),
            Violation::OffBeat => "off_beat".into(),
        }
    }
}

/// One acceptance that does not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The sealed acceptance: the issuer's own signature is the evidence.
    pub evidence: SealedAcceptance,
    /// What is wrong.
    pub violation: Violation,
}

/// The result of auditing one window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditReport {
    /// Acceptances checked.
    pub checked: usize,
    /// Acceptances whose issuer has not revealed, so they could not be checked.
    pub unrevealed: usize,
    /// Acceptances that do not hold.
    pub findings: Vec<Finding>,
    /// Acceptances whose seal does not hold, as `(identity, j)`: not the named issuer's
    /// signature, so evidence against nobody (anyone can write a bad seal), and never counted.
    pub unsealed: Vec<(crate::IdentityId, u32)>,
}

/// What the audit knows of an identity: its registered profile (which families it draws) and
/// its enrolled passkeys (presence answers are checked against them).
#[derive(Debug, Clone)]
pub struct Audited {
    /// Class and visual opt-out.
    pub profile: crate::Profile,
    /// Enrolled passkeys.
    pub passkeys: Vec<hco_challenges::presence::Passkey>,
}

/// Audits the acceptances of window `t`. `reveals` maps issuers to their checked window
/// secrets; `identity` gives what is registered for each identity; `beacon` is the window's
/// slot beacon ([`crate::window::slot_beacon`]), which placed the slots.
///
/// Each distinct seal's signature is verified once and the identities' signatures in one
/// batch; large windows are split over the machine's cores. The report lists findings in the
/// order of `acceptances` whatever the split.
pub fn audit_window(
    params: &NetworkParams,
    registry: &Registry,
    t: u64,
    beacon: &Digest,
    reveals: &BTreeMap<NodeId, Digest>,
    identity: impl Fn(&crate::IdentityId) -> Option<Audited> + Sync,
    acceptances: &[SealedAcceptance],
) -> AuditReport {
    let mut report = AuditReport::default();
    let mut todo: Vec<(&SealedAcceptance, &Digest)> = Vec::with_capacity(acceptances.len());
    for sealed in acceptances {
        let c = sealed.acceptance.challenge();
        if c.t != t {
            continue;
        }
        match reveals.get(&c.issuer) {
            Some(secret) => todo.push((sealed, secret)),
            None => report.unrevealed += 1,
        }
    }
    report.checked = todo.len();
    let window = Window {
        params,
        registry,
        beacon,
    };
    let parts = parallelism(todo.len());
    let verdicts: Vec<Verdict> = if parts == 1 {
        window.check_part(&todo, &identity)
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = todo
                .chunks(todo.len().div_ceil(parts))
                .map(|part| s.spawn(|| window.check_part(part, &identity)))
                .collect();
            handles
                .into_iter()
                // A part that panicked panics the audit, as one thread would.
                .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    };
    for ((sealed, _), verdict) in todo.iter().zip(verdicts) {
        match verdict {
            Verdict::Holds => {}
            Verdict::Unsealed => {
                let c = sealed.acceptance.challenge();
                report.unsealed.push((c.id, c.j));
            }
            Verdict::Violates(violation) => report.findings.push(Finding {
                evidence: (*sealed).clone(),
                violation,
            }),
        }
    }
    report
}

/// Acceptances below which the audit stays on the calling thread.
const PARALLEL_FROM: usize = 256;

/// Threads for auditing `n` acceptances.
fn parallelism(n: usize) -> usize {
    if n < PARALLEL_FROM {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |c| c.get().min(n / PARALLEL_FROM).max(1))
}

/// The audit's verdict on one acceptance.
#[derive(Debug)]
enum Verdict {
    Holds,
    Unsealed,
    Violates(Violation),
}

/// What every acceptance of a window is checked against.
struct Window<'a> {
    params: &'a NetworkParams,
    registry: &'a Registry,
    beacon: &'a Digest,
}

impl Window<'_> {
    /// Verdicts on `part`, in order: seals (each distinct seal's signature once), identity
    /// signatures (one batch), then the rest one by one.
    fn check_part(
        &self,
        part: &[(&SealedAcceptance, &Digest)],
        identity: &(impl Fn(&crate::IdentityId) -> Option<Audited> + Sync),
    ) -> Vec<Verdict> {
        let mut seals: HashMap<&BatchSeal, bool> = HashMap::new();
        let sealed_ok: Vec<bool> = part
            .iter()
            .map(|(s, _)| {
                s.check_inclusion().is_ok()
                    && *seals
                        .entry(&s.seal)
                        .or_insert_with(|| s.seal.check_signature().is_ok())
            })
            .collect();
        let digests: Vec<Digest> = part
            .iter()
            .map(|(s, _)| s.acceptance.response.signing_digest())
            .collect();
        let items: Vec<_> = part
            .iter()
            .zip(&digests)
            .map(|((s, _), d)| {
                let a = &s.acceptance;
                (&a.challenge().id.0, d, &a.response.sig)
            })
            .collect();
        // A batch equation may pass a weak key's signature; an identity with such a key was
        // never registered, and an unregistered identity is a forged response below anyway.
        let signed_ok = sign::verify_many(&items);
        part.iter()
            .zip(sealed_ok.into_iter().zip(signed_ok))
            .map(|((sealed, secret), (sealed_ok, signed_ok))| {
                if !sealed_ok {
                    return Verdict::Unsealed;
                }
                let known = identity(&sealed.acceptance.challenge().id);
                match self.check_one(secret, signed_ok, known, sealed) {
                    None => Verdict::Holds,
                    Some(violation) => Verdict::Violates(violation),
                }
            })
            .collect()
    }

    /// The checks after the seal of one acceptance; `signed` tells whether the identity's
    /// signature verified.
    fn check_one(
        &self,
        secret: &Digest,
        signed: bool,
        known: Option<Audited>,
        sealed: &SealedAcceptance,
    ) -> Option<Violation> {
        let (params, registry) = (self.params, self.registry);
        let a = &sealed.acceptance;
        let c = a.challenge();
        if crate::secret::check_issuer(params, &c.issuer, &c.id, c.t, c.j).is_err() {
            return Some(Violation::NotAssignedIssuer);
        }
        if !signed {
            return Some(Violation::ForgedResponse);
        }
        // An identity of unknown class cannot have been challenged legitimately.
        let Some(known) = known else {
            return Some(Violation::ForgedResponse);
        };
        // The issuer's record of the identity may hold another class or profile than ours
        // when the identity registered twice at two members (a split): the challenge is
        // regenerated under each profile its family admits, ours first.
        let family_class = registry.get(&c.family).map(|f| f.class());
        let candidates = std::iter::once(known.profile).chain(
            family_class
                .into_iter()
                .flat_map(|class| [false, true].map(|opt_out| Profile::new(class, opt_out)))
                .filter(|p| *p != known.profile),
        );
        let mut first_violation = None;
        let mut matched = None;
        for profile in candidates {
            let violation = match derive_challenge(
                params, registry, secret, profile, &c.id, c.t, c.j, &c.family,
            ) {
                Err(_) => Violation::FamilyMismatch,
                Ok((config, _)) if config.name != c.family => Violation::FamilyMismatch,
                Ok((_, generated)) if generated.prompt.digest() != c.prompt_digest.0 => {
                    Violation::PromptMismatch
                }
                Ok(found) => {
                    matched = Some((profile, found));
                    break;
                }
            };
            first_violation.get_or_insert(violation);
        }
        let Some((profile, (config, generated))) = matched else {
            return first_violation;
        };
        if c.deadline != c.issued_at.saturating_add(config.deadline_ms) {
            return Some(Violation::DeadlineMismatch);
        }
        if a.accepted_at > c.deadline || params.window_open(c.t, a.accepted_at).is_err() {
            return Some(Violation::Late);
        }
        let slot = params.slot(c.t, &c.id, self.beacon);
        if !slot.contains(&c.issued_at) {
            return Some(Violation::OutsideSlot);
        }
        let seed = crate::secret::challenge_seed(secret, &c.id, c.t, c.j);
        let prompt = params.prompt_reaction_ms(&c.family, registry);
        let opens_at = crate::secret::opening(params, &slot, profile.class, c.j, prompt, &seed);
        if c.issued_at < opens_at {
            return Some(Violation::IssuedBeforeOpening);
        }
        // A touch prompt is issued on its beat, never later: a later `issued_at` would move
        // the reaction window.
        if prompt.is_some() && c.issued_at != opens_at {
            return Some(Violation::OffBeat);
        }
        if a.accepted_at.saturating_sub(c.issued_at) < config.min_solve_ms {
            return Some(Violation::TooFast);
        }
        let family = registry.get(&config.name)?;
        let context = hco_challenges::Context {
            challenge_id: &c.challenge_id().0,
            passkeys: &known.passkeys,
        };
        if let Err(reject) = family.verify_in(&generated.key, &a.response.answer, &context) {
            // A credential this auditor does not hold while it holds as many as a member
            // keeps (the identity enrolled more, at several members at once, and each kept
            // the first it saw) cannot be checked here: that is no evidence against the
            // issuer, which checked it against its own.
            if reject == hco_challenges::Reject::UnknownCredential
                && known.passkeys.len() >= hco_challenges::presence::MAX_PASSKEYS
            {
                return None;
            }
            return Some(Violation::WrongAnswer {
                code: reject.code().to_owned(),
            });
        }
        None
    }
}
