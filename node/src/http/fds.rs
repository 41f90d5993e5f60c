//! The process's file-descriptor limit (`RLIMIT_NOFILE`) and the gateway's connection budget
//! under it: every open connection holds a descriptor, and a gateway that lets connections take
//! them all leaves none for the next client, the ledger or the swarm.

/// The budget when neither a configured cap nor the descriptor limit gives one (no `getrlimit`).
const FALLBACK_BUDGET: u32 = 1024;

/// Raises the soft descriptor limit to the hard one (where it is lower) and returns the soft
/// limit now in force, or `None` when the system does not tell.
#[cfg(unix)]
#[allow(unsafe_code)] // getrlimit/setrlimit on a plain struct of two integers
pub fn raise_nofile() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable `rlimit`; the call writes exactly one.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: `raised` is a valid `rlimit`, only read. A hard limit the kernel refuses as
        // a soft one (e.g. "infinity" beyond `nr_open`) fails the call and changes nothing.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_cur = limit.rlim_max;
        }
    }
    #[allow(clippy::unnecessary_cast)] // `rlim_t` is `u64` on Linux, not on every Unix
    Some(limit.rlim_cur as u64)
}

/// Elsewhere the limit is unknown.
#[cfg(not(unix))]
pub fn raise_nofile() -> Option<u64> {
    None
}

/// The gateway's connection budget: `max_connections` (0: no cap of its own), and never more
/// than the descriptor limit `nofile` less `reserved` (half the limit when the reserve would
/// take it all).
pub fn budget(nofile: Option<u64>, max_connections: u32, reserved: u32) -> u32 {
    let by_fds = nofile.map(|n| {
        let left = if n > u64::from(reserved) * 2 {
            n - u64::from(reserved)
        } else {
            n / 2
        };
        u32::try_from(left).unwrap_or(u32::MAX).max(1)
    });
    match (max_connections, by_fds) {
        (0, Some(fds)) => fds,
        (0, None) => FALLBACK_BUDGET,
        (cap, Some(fds)) => cap.min(fds),
        (cap, None) => cap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_stays_below_the_descriptor_limit() {
        assert_eq!(budget(Some(20_000), 16_384, 1024), 16_384);
        assert_eq!(budget(Some(10_000), 16_384, 1024), 8_976);
        assert_eq!(budget(Some(10_000), 0, 1024), 8_976);
        // A reserve that would take everything leaves half.
        assert_eq!(budget(Some(1024), 16_384, 1024), 512);
        assert_eq!(budget(None, 300, 1024), 300);
        assert_eq!(budget(None, 0, 1024), FALLBACK_BUDGET);
    }

    #[test]
    #[cfg(unix)]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let soft = raise_nofile().expect("a limit");
        assert!(soft >= 64, "{soft}");
        assert_eq!(raise_nofile(), Some(soft), "raising twice changes nothing");
    }
}
