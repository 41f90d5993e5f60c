//! Offline compaction. sled reuses the space that pruning frees but never gives it back to the
//! file system, so a member that pruned a flood of junk registrations keeps the flood's disk.
//! [`compact`] copies a stopped node's ledger, every tree and record, into a fresh directory
//! beside it, checks the copy against the original (sled's checksum over every tree), and swaps
//! it in. The original is removed only after the swap; a run that fails or is interrupted
//! leaves the original in place (and at worst a stray `*.compacting` directory, removed by the
//! next run).

use std::path::{Path, PathBuf};

use super::LedgerError;

/// Records written to the copy per batch.
const BATCH: usize = 4096;

/// What a compaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compaction {
    /// sled's size on disk before, in bytes.
    pub before_bytes: u64,
    /// The same after.
    pub after_bytes: u64,
    /// Records copied (every tree, the parameters' record included).
    pub records: u64,
}

/// Compacts the ledger in `path` (the node must be stopped: sled's lock refuses a second
/// process). The copy keeps every record, so it opens under the same network parameters.
// sled's batches and checksum lock every sled database in the process (see `one_by_one`):
// harmless here, where no node runs.
#[allow(clippy::disallowed_methods)]
pub fn compact(path: &Path) -> Result<Compaction, LedgerError> {
    let copy_path = sibling(path, "compacting");
    let old_path = sibling(path, "before-compaction");
    for stale in [&copy_path, &old_path] {
        if stale.exists() {
            std::fs::remove_dir_all(stale).map_err(io)?;
        }
    }
    let (before_bytes, after_bytes, records) = {
        let old = super::open_when_free(&sled::Config::new().path(path)).map_err(|e| match e {
            LedgerError::Storage(e) if super::lock_held(&e) => {
                LedgerError::InUse(path.to_path_buf())
            }
            e => e,
        })?;
        let copy = sled::Config::new().path(&copy_path).open()?;
        let mut records = 0u64;
        for name in old.tree_names() {
            let (from, to) = (old.open_tree(&name)?, copy.open_tree(&name)?);
            let mut batch = sled::Batch::default();
            let mut pending = 0;
            for kv in from.iter() {
                let (k, v) = kv?;
                batch.insert(k, v);
                pending += 1;
                records += 1;
                if pending == BATCH {
                    to.apply_batch(std::mem::take(&mut batch))?;
                    pending = 0;
                }
            }
            to.apply_batch(batch)?;
        }
        copy.flush()?;
        if old.checksum()? != copy.checksum()? {
            return Err(LedgerError::Corrupt {
                tree: "(compaction)",
                detail: format!(
                    "the copy in {} does not match the ledger; the ledger was left as it was",
                    copy_path.display()
                ),
            });
        }
        (old.size_on_disk()?, copy.size_on_disk()?, records)
    };
    std::fs::rename(path, &old_path).map_err(io)?;
    std::fs::rename(&copy_path, path).map_err(io)?;
    std::fs::remove_dir_all(&old_path).map_err(io)?;
    Ok(Compaction {
        before_bytes,
        after_bytes,
        records,
    })
}

/// `path` with `.suffix` appended to its last component.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(suffix);
    path.with_file_name(name)
}

fn io(e: std::io::Error) -> LedgerError {
    LedgerError::Storage(sled::Error::Io(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Digest;
    use crate::ledger::{Ledger, open_when_free};

    /// The ledger's database, once the handle dropped just before has let go of it.
    fn reopen(path: &Path) -> sled::Db {
        open_when_free(&sled::Config::new().path(path)).unwrap()
    }

    #[test]
    fn a_pruned_ledger_shrinks_keeps_every_record_and_reopens_under_its_parameters() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger");
        let params = Digest([7; 32]);
        drop(Ledger::open(&path, params).unwrap());
        {
            let db = reopen(&path);
            let tree = db.open_tree("junk").unwrap();
            for i in 0u32..20_000 {
                tree.insert(i.to_be_bytes(), vec![0xAB; 500]).unwrap();
            }
            db.flush().unwrap();
            // Pruned: all but every hundredth.
            for i in (0u32..20_000).filter(|i| i % 100 != 0) {
                tree.remove(i.to_be_bytes()).unwrap();
            }
            db.flush().unwrap();
        }
        // A stray copy from an interrupted run is replaced.
        std::fs::create_dir(sibling(&path, "compacting")).unwrap();
        let done = compact(&path).unwrap();
        assert!(
            done.after_bytes * 2 < done.before_bytes,
            "no space given back: {done:?}"
        );
        assert!(!sibling(&path, "compacting").exists());
        assert!(!sibling(&path, "before-compaction").exists());
        let db = reopen(&path);
        let tree = db.open_tree("junk").unwrap();
        assert_eq!(tree.len(), 200);
        assert_eq!(
            tree.get(9_900u32.to_be_bytes()).unwrap().unwrap().len(),
            500
        );
        assert!(tree.get(9_901u32.to_be_bytes()).unwrap().is_none());
        drop((tree, db));
        // The parameters' record came along: the same network opens it, another is refused.
        drop(Ledger::open(&path, params).unwrap());
        assert!(matches!(
            Ledger::open(&path, Digest([8; 32])),
            Err(LedgerError::ParamsMismatch { .. })
        ));
    }

    #[test]
    fn a_ledger_in_use_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger");
        let _running = sled::open(&path).unwrap();
        assert!(matches!(compact(&path), Err(LedgerError::InUse(p)) if p == path));
        assert!(path.exists());
    }
}
