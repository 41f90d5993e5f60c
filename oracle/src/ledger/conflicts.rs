//! Registration conflicts: an identity that signed a second registration with another class or
//! profile than the one this node kept (to split the committee's views of it, one member at a
//! time). The first contradicting registration is kept next to the record; both are the
//! identity's own signatures, so the conflict is evidence against the identity, not against the
//! member that relayed either.

use super::{Ledger, LedgerError, decode};
use crate::{IdentityId, SignedRegister, codec};

impl Ledger {
    /// Keeps `reg` as the registration that contradicts `id`'s record, unless one is kept
    /// already; true if stored.
    pub fn put_conflict(&self, reg: &SignedRegister) -> Result<bool, LedgerError> {
        let id = reg.body.id;
        Ok(self
            .conflicts
            .compare_and_swap(id.0, None::<&[u8]>, Some(codec::encode(reg)))?
            .is_ok())
    }

    /// The registration that contradicts `id`'s record, if one was seen.
    pub fn conflict(&self, id: &IdentityId) -> Result<Option<SignedRegister>, LedgerError> {
        self.conflicts
            .get(id.0)?
            .map(|v| decode("conflicts", &v))
            .transpose()
    }
}
