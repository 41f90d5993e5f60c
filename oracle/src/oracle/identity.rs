//! Registration and passkey enrolment.

use crate::ledger::{IdentityRecord, LedgerError, PasskeyRecord};
use crate::{IdentityId, Reason, SignedEnrolment, SignedRegister, Timestamp};

use super::{Oracle, Outcome};

/// How long after its start a passkey enrolment ceremony is accepted from a client.
pub const ENROLMENT_TTL_MS: u64 = 10 * 60 * 1000;

impl Oracle {
    /// Registers an identity (idempotent for the same class). Durable when it returns.
    pub fn register(&self, reg: &SignedRegister, now: Timestamp) -> Outcome<IdentityRecord> {
        if let Err(reason) = reg.check() {
            return Ok(Err(reason));
        }
        if reg.body.created_at > now.saturating_add(self.params.max_clock_skew_ms) {
            return Ok(Err(Reason::RegistrationFromFuture {
                created_at: reg.body.created_at,
                now,
            }));
        }
        let profile = reg.body.profile();
        if profile.visual_opt_out && self.params.families_for(profile, &self.registry).is_empty() {
            return Ok(Err(Reason::NoFamilyForProfile));
        }
        if let Some(existing) = self.ledger.identity(&reg.body.id)? {
            return Ok(if existing.register.body.class == reg.body.class {
                Ok(existing)
            } else {
                Err(Reason::ClassConflict(existing.register.body.class))
            });
        }
        let record = IdentityRecord {
            register: reg.clone(),
            window: self.params.window_at(now).unwrap_or(0),
        };
        let stored = self.ledger.put_identity(&record)?;
        self.ledger.make_durable()?;
        Ok(if stored.register.body.class == reg.body.class {
            Ok(stored)
        } else {
            Err(Reason::ClassConflict(stored.register.body.class))
        })
    }

    /// The presence family's relying party (enrolment options for clients).
    pub fn presence(&self) -> &hco_challenges::presence::Presence {
        self.presence.presence()
    }

    /// The passkeys `id` enrolled, as stored.
    pub fn passkeys(&self, id: &IdentityId) -> Result<Vec<PasskeyRecord>, LedgerError> {
        self.ledger.passkeys(id)
    }

    /// Enrols a passkey for the presence family from a client: the identity's signature, a
    /// fresh ceremony (`created_at` within the clock skew of `now` and not older than the
    /// ceremony timeout), a registered human identity, the passkey limit, then the WebAuthn
    /// registration under the network's policy. Idempotent for the same credential. Durable
    /// when it returns.
    pub fn enrol_passkey(&self, e: &SignedEnrolment, now: Timestamp) -> Outcome<PasskeyRecord> {
        let created_at = e.body.created_at;
        if created_at > now.saturating_add(self.params.max_clock_skew_ms) {
            return Ok(Err(Reason::RegistrationFromFuture { created_at, now }));
        }
        let oldest = now.saturating_sub(ENROLMENT_TTL_MS + self.params.max_clock_skew_ms);
        if created_at < oldest {
            return Ok(Err(Reason::EnrolmentStale { created_at, now }));
        }
        self.record_enrolment(e)
    }

    /// Records a passkey enrolment relayed by a peer (or a client, after the freshness check):
    /// everything [`Oracle::enrol_passkey`] checks except the time.
    pub fn record_enrolment(&self, e: &SignedEnrolment) -> Outcome<PasskeyRecord> {
        if let Err(reason) = e.check() {
            return Ok(Err(reason));
        }
        let id = e.body.id;
        let Some(profile) = self.profile_of(&id)? else {
            return Ok(Err(Reason::UnknownIdentity));
        };
        if profile.class != hco_challenges::Class::Human {
            return Ok(Err(Reason::WrongClass {
                registered: profile.class,
                required: hco_challenges::Class::Human,
            }));
        }
        let passkey = match self.presence.presence().enrol(
            &id.0,
            e.body.created_at,
            e.body.credential.as_bytes(),
        ) {
            Ok(passkey) => passkey,
            Err(reject) => return Ok(Err(Reason::Answer(reject))),
        };
        let existing = self.ledger.passkeys(&id)?;
        if let Some(same) = existing.iter().find(|r| r.credential_id == passkey.id()) {
            return Ok(Ok(same.clone()));
        }
        // One credential, one identity: an authenticator cannot stand behind many identities
        // with the same credential.
        if self
            .ledger
            .credential_owner(passkey.id())?
            .is_some_and(|owner| owner != id)
        {
            return Ok(Err(Reason::CredentialInUse));
        }
        if existing.len() >= hco_challenges::presence::MAX_PASSKEYS {
            return Ok(Err(Reason::TooManyPasskeys {
                max: hco_challenges::presence::MAX_PASSKEYS,
            }));
        }
        let record = PasskeyRecord {
            enrolment: e.clone(),
            credential_id: passkey.id().to_vec(),
            passkey: passkey.encode(),
            counter: passkey.counter(),
        };
        if !self.ledger.put_passkey(&record)? {
            // Another identity claimed the credential between the check and the write.
            return Ok(Err(Reason::CredentialInUse));
        }
        self.ledger.make_durable()?;
        Ok(Ok(record))
    }
}
