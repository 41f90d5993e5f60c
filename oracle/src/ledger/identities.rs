//! Identities (their registrations) and the passkeys they enrolled.

use super::{IdentityRecord, Ledger, LedgerError, PasskeyRecord, decode};
use crate::{IdentityId, SignedRegister, codec};

impl Ledger {
    /// The registration of `id`.
    pub fn identity(&self, id: &IdentityId) -> Result<Option<IdentityRecord>, LedgerError> {
        self.identities
            .get(id.0)?
            .map(|v| decode("identities", &v))
            .transpose()
    }

    /// Whether `id` is registered (no decode).
    pub fn has_identity(&self, id: &IdentityId) -> Result<bool, LedgerError> {
        Ok(self.identities.contains_key(id.0)?)
    }

    /// Stores a registration unless one exists; returns the stored record.
    pub fn put_identity(&self, record: &IdentityRecord) -> Result<IdentityRecord, LedgerError> {
        let id = record.register.body.id;
        match self
            .identities
            .compare_and_swap(id.0, None::<&[u8]>, Some(codec::encode(record)))?
        {
            Ok(()) => Ok(record.clone()),
            Err(current) => match current.current {
                Some(bytes) => decode("identities", &bytes),
                None => Ok(record.clone()),
            },
        }
    }

    /// Registrations with ids after `after`, in id order, at most `limit`.
    pub fn identities_after(
        &self,
        after: Option<&IdentityId>,
        limit: usize,
    ) -> Result<Vec<SignedRegister>, LedgerError> {
        let range = match after {
            Some(id) => self.identities.range::<&[u8], _>((
                std::ops::Bound::Excluded(&id.0[..]),
                std::ops::Bound::Unbounded,
            )),
            None => self.identities.iter(),
        };
        range
            .take(limit)
            .map(|r| decode::<IdentityRecord>("identities", &r?.1).map(|rec| rec.register))
            .collect()
    }

    /// Number of registered identities.
    pub fn identity_count(&self) -> usize {
        self.identities.len()
    }

    // Passkeys.

    fn passkey_key(id: &IdentityId, credential_id: &[u8]) -> Vec<u8> {
        [&id.0[..], credential_id].concat()
    }

    /// The passkeys `id` enrolled, in credential-id order.
    pub fn passkeys(&self, id: &IdentityId) -> Result<Vec<PasskeyRecord>, LedgerError> {
        self.passkeys
            .scan_prefix(id.0)
            .map(|r| decode("passkeys", &r?.1))
            .collect()
    }

    /// Passkey records after the record of `(id, credential id)` `after`, in key order, at most
    /// `limit` (registry synchronisation between nodes).
    pub fn passkeys_after(
        &self,
        after: Option<(&IdentityId, &[u8])>,
        limit: usize,
    ) -> Result<Vec<PasskeyRecord>, LedgerError> {
        let range = match after {
            Some((id, credential)) => self.passkeys.range::<Vec<u8>, _>((
                std::ops::Bound::Excluded(Self::passkey_key(id, credential)),
                std::ops::Bound::Unbounded,
            )),
            None => self.passkeys.iter(),
        };
        range
            .take(limit)
            .map(|r| decode("passkeys", &r?.1))
            .collect()
    }

    /// Stores an enrolled passkey unless its credential is already enrolled (by this identity
    /// or another); true if stored. The credential index is claimed first, so two identities
    /// racing for one credential cannot both enrol it.
    pub fn put_passkey(&self, record: &PasskeyRecord) -> Result<bool, LedgerError> {
        let id = record.enrolment.body.id;
        let claimed = self.credentials.compare_and_swap(
            &record.credential_id,
            None::<&[u8]>,
            Some(&id.0[..]),
        )?;
        if let Err(current) = claimed
            && current.current.as_deref() != Some(&id.0[..])
        {
            return Ok(false);
        }
        let key = Self::passkey_key(&id, &record.credential_id);
        Ok(self
            .passkeys
            .compare_and_swap(key, None::<&[u8]>, Some(codec::encode(record)))?
            .is_ok())
    }

    /// The identity that enrolled the credential `credential_id`, if any.
    pub fn credential_owner(
        &self,
        credential_id: &[u8],
    ) -> Result<Option<IdentityId>, LedgerError> {
        Ok(self
            .credentials
            .get(credential_id)?
            .and_then(|v| IdentityId::from_slice(&v)))
    }

    /// Raises a credential's stored counter to `counter` (never lowers it).
    pub fn raise_counter(
        &self,
        id: &IdentityId,
        credential_id: &[u8],
        counter: u32,
    ) -> Result<(), LedgerError> {
        let key = Self::passkey_key(id, credential_id);
        self.passkeys.fetch_and_update(&key, |old| {
            let mut record: PasskeyRecord = decode("passkeys", old?).ok()?;
            record.counter = record.counter.max(counter);
            Some(codec::encode(&record))
        })?;
        Ok(())
    }
}
