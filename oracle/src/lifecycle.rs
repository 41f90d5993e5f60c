//! An identity's status from its recent windows: the graded lifecycle of proof-of-personhood
//! networks. Consumers read status and expiry, not only one window's bit.

use serde::{Deserialize, Serialize};

use crate::LifecycleParams;

/// Where an identity stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Registered, not yet active, and no window missed yet.
    Pending,
    /// Active in the current or the last completed windows.
    Active,
    /// Missed at least `lapsed_after` windows in a row.
    Lapsed,
    /// Missed at least `suspended_after` windows in a row.
    Suspended,
    /// Missed at least `retired_after` windows in a row.
    Retired,
}

/// The status of an identity and how it was reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IdentityStatus {
    /// The status.
    pub status: Status,
    /// Last window the identity was active in (within the lookback).
    pub last_active: Option<u64>,
    /// Completed windows missed in a row, up to the lookback.
    pub missed: u32,
    /// The last window in which the identity counts as active without solving again.
    pub active_until: Option<u64>,
}

/// Computes the status at window `current` for an identity registered in window `registered`.
/// `was_active(t)` tells whether it was active in window `t`; it is asked about at most
/// `retired_after + 1` windows.
pub fn status(
    params: &LifecycleParams,
    current: u64,
    registered: u64,
    mut was_active: impl FnMut(u64) -> bool,
) -> IdentityStatus {
    let lookback = u64::from(params.retired_after);
    let earliest = registered.max(current.saturating_sub(lookback));
    // The current window counts when already solved; otherwise it is still in progress.
    let last_active = (earliest..=current).rev().find(|&t| was_active(t));
    let missed = match last_active {
        Some(t) if t == current => 0,
        Some(t) => current - t - 1,
        None => current - earliest,
    } as u32;
    let status = if last_active.is_none() && current.saturating_sub(registered) <= 1 && missed == 0
    {
        Status::Pending
    } else if last_active.is_some() && missed < params.lapsed_after {
        Status::Active
    } else if missed < params.suspended_after {
        Status::Lapsed
    } else if missed < params.retired_after {
        Status::Suspended
    } else {
        Status::Retired
    };
    IdentityStatus {
        status,
        last_active,
        missed,
        active_until: last_active.map(|t| t + u64::from(params.lapsed_after)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> LifecycleParams {
        LifecycleParams {
            lapsed_after: 2,
            suspended_after: 4,
            retired_after: 8,
        }
    }

    #[test]
    fn statuses_follow_missed_windows() {
        let active_in = |set: &'static [u64]| move |t: u64| set.contains(&t);
        assert_eq!(status(&p(), 10, 10, active_in(&[])).status, Status::Pending);
        assert_eq!(
            status(&p(), 10, 10, active_in(&[10])).status,
            Status::Active
        );
        assert_eq!(status(&p(), 10, 0, active_in(&[9])).status, Status::Active);
        let s = status(&p(), 10, 0, active_in(&[8]));
        assert_eq!((s.status, s.missed), (Status::Active, 1));
        assert_eq!(s.active_until, Some(10));
        assert_eq!(status(&p(), 10, 0, active_in(&[7])).status, Status::Lapsed);
        assert_eq!(
            status(&p(), 10, 0, active_in(&[5])).status,
            Status::Suspended
        );
        assert_eq!(status(&p(), 20, 0, active_in(&[5])).status, Status::Retired);
        assert_eq!(status(&p(), 20, 0, active_in(&[])).status, Status::Retired);
        assert_eq!(status(&p(), 12, 10, active_in(&[])).status, Status::Lapsed);
    }

    #[test]
    fn lookback_is_bounded() {
        let mut asked = 0;
        status(&p(), 1_000_000, 0, |_| {
            asked += 1;
            false
        });
        assert!(asked <= 9);
    }
}
