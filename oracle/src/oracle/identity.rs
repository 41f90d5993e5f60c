//! Registration and passkey enrolment.

use crate::ledger::{IdentityRecord, LedgerError, PasskeyRecord};
use crate::{IdentityId, Reason, SignedEnrolment, SignedRegister, Timestamp, register_pow};

use super::{Oracle, Outcome};

/// Where a registration came from. Its age is checked (while the network requires a proof of
/// work) when it is sent fresh, by a client or on gossip; not when reconciliation copies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Sent to this node's gateway.
    Client,
    /// Relayed on gossip by a peer.
    Relayed,
    /// Copied from a committee member by reconciliation.
    Reconciled,
}

/// How long after its start a passkey enrolment ceremony is accepted from a client.
pub const ENROLMENT_TTL_MS: u64 = 10 * 60 * 1000;

impl Oracle {
    /// Registers a new identity as it is sent (by a client, or relayed on gossip):
    /// [`Oracle::register`] after refusing a new identity's registration dated before the
    /// previous window while the network requires a proof of work (so proofs cannot be
    /// stockpiled for long; see [`crate::register_pow`]). Reconciliation, which copies old
    /// registrations, uses [`Oracle::register`].
    pub fn register_fresh(&self, reg: &SignedRegister, now: Timestamp) -> Outcome<IdentityRecord> {
        self.register_all(&[(reg.clone(), Origin::Client)], now)
            .map(|mut outcomes| outcomes.remove(0))
    }

    /// Registers an identity (idempotent for the same class): version and signature, not
    /// from the future, the network's proof of work, a profile the network can serve. Not the
    /// registration's age: peers relay and reconcile old registrations through it. Durable
    /// when it returns.
    pub fn register(&self, reg: &SignedRegister, now: Timestamp) -> Outcome<IdentityRecord> {
        self.register_all(&[(reg.clone(), Origin::Reconciled)], now)
            .map(|mut outcomes| outcomes.remove(0))
    }

    /// Registers a batch, each as [`Oracle::register_fresh`] or [`Oracle::register`] by its
    /// origin, with one flush for the whole batch: every stored registration is durable
    /// when it returns. One outcome per registration, in order.
    pub fn register_all(
        &self,
        regs: &[(SignedRegister, Origin)],
        now: Timestamp,
    ) -> Result<Vec<Result<IdentityRecord, Reason>>, LedgerError> {
        let mut outcomes = Vec::with_capacity(regs.len());
        let mut stored = false;
        for (reg, origin) in regs {
            let outcome = match origin {
                Origin::Client | Origin::Relayed => match self.check_age(reg, now)? {
                    Ok(()) => self.store_registration(reg, now, &mut stored)?,
                    Err(reason) => Err(reason),
                },
                Origin::Reconciled => self.store_registration(reg, now, &mut stored)?,
            };
            outcomes.push(outcome);
        }
        if stored {
            self.ledger.make_durable()?;
        }
        Ok(outcomes)
    }

    /// Refuses a new identity's registration dated before the previous window while the
    /// network requires a proof of work.
    fn check_age(
        &self,
        reg: &SignedRegister,
        now: Timestamp,
    ) -> Result<Result<(), Reason>, LedgerError> {
        if self.params.registration_pow_bits > 0 {
            let current = self.params.window_at(now).unwrap_or(0);
            let oldest = self
                .params
                .window_start(current.saturating_sub(register_pow::MAX_AGE_WINDOWS));
            // Re-sending the registration of a known identity stays idempotent.
            if reg.body.created_at < oldest && self.ledger.identity(&reg.body.id)?.is_none() {
                return Ok(Err(Reason::RegistrationProofStale {
                    created_at: reg.body.created_at,
                    oldest,
                }));
            }
        }
        Ok(Ok(()))
    }

    /// Checks and writes one registration without flushing; sets `stored` when it wrote.
    fn store_registration(
        &self,
        reg: &SignedRegister,
        now: Timestamp,
        stored: &mut bool,
    ) -> Outcome<IdentityRecord> {
        let key = match reg.check() {
            Ok(key) => key,
            Err(reason) => return Ok(Err(reason)),
        };
        if reg.body.created_at > now.saturating_add(self.params.max_clock_skew_ms) {
            return Ok(Err(Reason::RegistrationFromFuture {
                created_at: reg.body.created_at,
                now,
            }));
        }
        if let Err(reason) = reg.check_pow(self.params.registration_pow_bits) {
            return Ok(Err(reason));
        }
        let profile = reg.body.profile();
        if profile.visual_opt_out && self.params.families_for(profile, &self.registry).is_empty() {
            return Ok(Err(Reason::NoFamilyForProfile));
        }
        let kept = match self.ledger.identity(&reg.body.id)? {
            Some(existing) => existing,
            None => {
                let record = IdentityRecord {
                    register: reg.clone(),
                    window: self.params.window_at(now).unwrap_or(0),
                };
                let kept = self.ledger.put_identity(&record)?;
                // Whichever write won, it is not yet flushed.
                *stored = true;
                kept
            }
        };
        if kept.register.body.class != reg.body.class {
            // The identity signed both: kept against it (it is issued nothing more here),
            // never held against whoever relayed either.
            if self.ledger.put_conflict(reg)? {
                *stored = true;
            }
            return Ok(Err(Reason::ClassConflict(kept.register.body.class)));
        }
        // The identity's first request of a window needs both; this check parsed the key
        // already, and the record is at hand.
        self.keys.insert(&reg.body.id, key);
        self.profiles
            .insert(&reg.body.id, kept.register.body.profile());
        Ok(Ok(kept))
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

#[cfg(test)]
mod tests {
    use hco_challenges::{Class, Registry};

    use crate::{Ledger, Oracle, SignedRegister, testing};

    const BITS: u32 = 6;

    fn oracle(bits: u32) -> Oracle {
        let key = testing::key(1);
        let mut params = testing::params_for(&[testing::node_id(&key)]);
        params.registration_pow_bits = bits;
        let ledger = Ledger::temporary(params.digest()).unwrap();
        Oracle::new(params, Registry::builtin(), key, ledger).unwrap()
    }

    fn refused(o: &Oracle, reg: &SignedRegister, now: u64) -> &'static str {
        let code = o.register_fresh(reg, now).unwrap().unwrap_err().code();
        assert_eq!(o.ledger().identity(&reg.body.id).unwrap(), None, "{code}");
        code
    }

    #[test]
    fn registration_without_stale_or_weak_proof_is_refused_and_stores_nothing() {
        let o = oracle(BITS);
        let p = o.params().clone();
        let now = p.window_start(5) + 1_000;
        let key = testing::key(40);
        let missing = SignedRegister::new(&key, Class::Agent, now);
        assert_eq!(refused(&o, &missing, now), "registration_proof_missing");
        // A nonce whose hash has fewer than BITS leading zero bits.
        let id = testing::identity_id(&key);
        let weak = (0..)
            .find(|&n| {
                crate::register_pow::leading_zero_bits(&crate::register_pow::hash(&id, now, n))
                    < BITS
            })
            .unwrap();
        let insufficient = SignedRegister::with_nonce(&key, Class::Agent.into(), now, Some(weak));
        assert_eq!(
            refused(&o, &insufficient, now),
            "registration_proof_insufficient"
        );
        // Dated before the previous window: a stockpiled proof.
        let old = p.window_start(3) + 10;
        let stale = SignedRegister::proven(&key, Class::Agent.into(), old, BITS);
        assert_eq!(refused(&o, &stale, now), "registration_proof_stale");
        assert_eq!(o.ledger().identity_count(), 0);
        // Reconciliation re-checks the proof, not the age (it replays old registrations).
        assert_eq!(
            o.register(&missing, now).unwrap().unwrap_err().code(),
            "registration_proof_missing"
        );
        o.register(&stale, now).unwrap().unwrap();
        // A fresh proof from the previous window is accepted from a client.
        let fresh = SignedRegister::proven(
            &testing::key(41),
            Class::Human.into(),
            now - p.window_ms,
            BITS,
        );
        o.register_fresh(&fresh, now).unwrap().unwrap();
        // Re-sending a known identity's registration stays idempotent, however old.
        o.register_fresh(&stale, now).unwrap().unwrap();
        assert_eq!(o.ledger().identity_count(), 2);
    }

    #[test]
    fn a_stored_registration_warms_the_caches_and_a_refused_one_does_not() {
        let o = oracle(0);
        let now = o.params().window_start(1);
        let key = testing::key(43);
        let id = testing::identity_id(&key);
        let mut forged = SignedRegister::new(&key, Class::Agent, now);
        forged.sig.0[0] ^= 1;
        assert_eq!(refused(&o, &forged, now), "bad_identity_signature");
        assert_eq!((o.keys.get(&id), o.profiles.get(&id)), (None, None));
        let reg = SignedRegister::new(&key, Class::Agent, now);
        o.register_fresh(&reg, now).unwrap().unwrap();
        assert_eq!(o.keys.get(&id), Some(key.verifying_key()));
        assert_eq!(o.profiles.get(&id), Some(reg.body.profile()));
        // A conflicting class is refused; the cached profile stays the registered one.
        o.profiles.clear();
        let conflict = SignedRegister::new(&key, Class::Human, now);
        let code = o
            .register_fresh(&conflict, now)
            .unwrap()
            .unwrap_err()
            .code();
        assert_eq!(code, "class_conflict");
        assert_eq!(o.profiles.get(&id), None);
        o.register(&reg, now).unwrap().unwrap();
        assert_eq!(o.profiles.get(&id), Some(reg.body.profile()));
    }

    #[test]
    fn the_proof_is_signed_and_off_at_zero_bits() {
        let o = oracle(BITS);
        let now = o.params().window_start(1);
        let key = testing::key(42);
        let mut moved = SignedRegister::proven(&key, Class::Agent.into(), now, BITS);
        moved.body.pow_nonce = moved.body.pow_nonce.map(|n| n + 1);
        let code = o.register(&moved, now).unwrap().unwrap_err().code();
        assert_eq!(code, "bad_identity_signature");
        let off = oracle(0);
        off.register_fresh(&SignedRegister::new(&key, Class::Agent, 0), now)
            .unwrap()
            .unwrap();
    }
}
