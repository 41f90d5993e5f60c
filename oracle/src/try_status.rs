//! The status of one try of an identity-window, as the member that may have issued it reports
//! it to the issuer of a later try (`ChallengeRpc::Status` on the wire; the rules are in the
//! ledger-backed `oracle::tries`). A wire type, so it builds without the ledger.

use serde::{Deserialize, Serialize};

use crate::{SealedAcceptance, Timestamp};

/// What a member reports of one try it may have issued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TryStatus {
    /// This member did not issue it.
    NotIssued,
    /// Issued, not answered, deadline not passed.
    Open {
        /// Its deadline.
        deadline: Timestamp,
    },
    /// Answered wrongly or not in time.
    Failed,
    /// Accepted: the sealed acceptance.
    Passed(Box<SealedAcceptance>),
}
