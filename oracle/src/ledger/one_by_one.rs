//! Multi-key writes, one key at a time, never through sled's batches.
//!
//! sled 0.34's `Tree::apply_batch` (like its `checksum`) takes a lock that is global to the
//! process (every tree of every database in it) exclusively. It waits for any flush in
//! progress, which holds that lock shared through its fsync; while it waits and while it
//! applies, every other read and write in the process waits behind it. From the first such call
//! on, every sled operation in the process also goes through that lock. A batch of
//! acceptances therefore stalled each concurrent precheck, gossip check and HTTP read behind
//! an fsync, and a prune of a million records stalled the whole node while it ran.
//!
//! The ledger needs no atomic batch. Each record stands alone (an acceptance carries its own
//! seal and inclusion proof; a removal or a prune can be repeated), and nothing is
//! acknowledged before [`super::Ledger::make_durable`]. A crash that keeps part of a batch
//! leaves records that are each valid, as when a reply is lost after the flush. So these
//! helpers write the keys one by one, in key order, under sled's shared lock only. Offline
//! compaction, which runs with no node in the process, is the one place that still batches.

/// Inserts every `(key, value)`, in key order.
pub(super) fn insert_all<K: AsRef<[u8]> + Ord>(
    tree: &sled::Tree,
    mut writes: Vec<(K, Vec<u8>)>,
) -> Result<(), sled::Error> {
    writes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (key, value) in writes {
        tree.insert(key, value)?;
    }
    Ok(())
}

/// Removes every key; returns how many were there.
pub(super) fn remove_all<K: AsRef<[u8]>>(
    tree: &sled::Tree,
    keys: impl IntoIterator<Item = K>,
) -> Result<usize, sled::Error> {
    let mut removed = 0;
    for key in keys {
        if tree.remove(key)?.is_some() {
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_land_and_removals_count_only_what_was_there() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let tree = db.open_tree("t").unwrap();
        insert_all(&tree, vec![(vec![3u8], vec![30]), (vec![1], vec![10])]).unwrap();
        assert_eq!(tree.get([1u8]).unwrap().unwrap().as_ref(), &[10]);
        assert_eq!(tree.get([3u8]).unwrap().unwrap().as_ref(), &[30]);
        assert_eq!(remove_all(&tree, [[1u8], [2u8]]).unwrap(), 1);
        assert_eq!(tree.len(), 1);
    }
}
