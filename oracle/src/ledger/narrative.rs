//! Narrative sets already used: set id → the window that first used it (tree
//! `narrative_sets`, never pruned). The node records each window's slice of the set schedule
//! as the window opens, and at start refuses a schedule that would show a recorded set again
//! in a later window (see `hco_challenges::narrative::SetSchedule::reused`).

use std::collections::BTreeMap;

use super::{Ledger, LedgerError};

/// Longest set id recorded, in bytes (ids come from corpus file names and fields).
pub const MAX_SET_ID_LEN: usize = 1024;

impl Ledger {
    /// Records that window `t` uses `sets`, keeping the first window of a set already
    /// recorded; returns how many sets were new. Ids over [`MAX_SET_ID_LEN`] bytes are skipped.
    pub fn record_sets_used<S: AsRef<str>>(
        &self,
        t: u64,
        sets: &[S],
    ) -> Result<usize, LedgerError> {
        let mut fresh = 0;
        for id in sets.iter().map(AsRef::as_ref) {
            if id.len() > MAX_SET_ID_LEN {
                continue;
            }
            let swapped = self.narrative_sets.compare_and_swap(
                id.as_bytes(),
                None::<&[u8]>,
                Some(&t.to_be_bytes()[..]),
            )?;
            if swapped.is_ok() {
                fresh += 1;
            }
        }
        Ok(fresh)
    }

    /// Every recorded set with the window that first used it.
    pub fn sets_used(&self) -> Result<BTreeMap<String, u64>, LedgerError> {
        let mut out = BTreeMap::new();
        for entry in self.narrative_sets.iter() {
            let (key, value) = entry?;
            let corrupt = |detail: &str| LedgerError::Corrupt {
                tree: "narrative_sets",
                detail: detail.to_owned(),
            };
            let id = std::str::from_utf8(&key).map_err(|_| corrupt("a set id is not UTF-8"))?;
            let window: [u8; 8] = value
                .as_ref()
                .try_into()
                .map_err(|_| corrupt("a window is not 8 bytes"))?;
            out.insert(id.to_owned(), u64::from_be_bytes(window));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Digest;

    #[test]
    fn the_first_window_of_a_set_is_kept_across_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        {
            let ledger = Ledger::open(dir.path(), Digest::ZERO).unwrap();
            assert_eq!(ledger.record_sets_used(4, &["a", "b"]).unwrap(), 2);
            assert_eq!(ledger.record_sets_used(5, &["b", "c"]).unwrap(), 1);
            let too_long = "x".repeat(MAX_SET_ID_LEN + 1);
            assert_eq!(ledger.record_sets_used(6, &[too_long]).unwrap(), 0);
            ledger.make_durable().unwrap();
        }
        let ledger = Ledger::open(dir.path(), Digest::ZERO).unwrap();
        let used = ledger.sets_used().unwrap();
        assert_eq!(
            used.into_iter().collect::<Vec<_>>(),
            vec![("a".into(), 4), ("b".into(), 4), ("c".into(), 5)]
        );
    }
}
