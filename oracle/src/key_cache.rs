//! Small facts about identities kept in memory between verifications: the parsed public key
//! and the registered class.
//!
//! Decompressing an ed25519 public key costs about a tenth of a signature check, and reading
//! the registration back from the ledger costs a lookup and a decode. Storing a registration
//! (from a client, gossip or reconciliation) caches both, since its check parsed the key and the
//! record is at hand; otherwise an identity's first request of a window fills them, and its
//! answer finds them warm. The maps are sharded to keep threads apart and bounded: a full
//! shard is cleared, not grown. Both facts never change for an identity (a class conflict is
//! refused), so a cached value is never stale.

use std::collections::HashMap;
use std::sync::Mutex;

use ed25519_dalek::VerifyingKey;

use crate::IdentityId;

const SHARDS: usize = 16;

/// A bounded, sharded map from identity to a small value.
#[derive(Debug)]
pub struct IdentityCache<V> {
    shards: Vec<Mutex<HashMap<IdentityId, V>>>,
    per_shard: usize,
}

impl<V: Copy> IdentityCache<V> {
    /// A cache holding up to about `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            per_shard: capacity.div_ceil(SHARDS).max(1),
        }
    }

    fn shard(&self, id: &IdentityId) -> &Mutex<HashMap<IdentityId, V>> {
        &self.shards[id.0[0] as usize % SHARDS]
    }

    /// The cached value of `id`.
    pub fn get(&self, id: &IdentityId) -> Option<V> {
        self.shard(id).lock().ok().and_then(|m| m.get(id).copied())
    }

    /// Forgets every entry (after identities were removed from the ledger).
    pub fn clear(&self) {
        for shard in &self.shards {
            if let Ok(mut map) = shard.lock() {
                map.clear();
            }
        }
    }

    /// Caches a value for `id`.
    pub fn insert(&self, id: &IdentityId, value: V) {
        if let Ok(mut map) = self.shard(id).lock() {
            if map.len() >= self.per_shard {
                map.clear();
            }
            map.insert(*id, value);
        }
    }
}

/// Parsed identity keys.
pub type KeyCache = IdentityCache<VerifyingKey>;

impl KeyCache {
    /// The parsed key of `id`, or `None` if the bytes are not a valid point.
    pub fn key(&self, id: &IdentityId) -> Option<VerifyingKey> {
        if let Some(key) = self.get(id) {
            return Some(key);
        }
        let key = VerifyingKey::from_bytes(&id.0).ok()?;
        self.insert(id, key);
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_correct() {
        let cache = KeyCache::new(32);
        for i in 0..200u64 {
            let key = crate::testing::key(i);
            let id = crate::testing::identity_id(&key);
            assert_eq!(cache.key(&id), Some(key.verifying_key()));
            assert_eq!(cache.key(&id), Some(key.verifying_key()));
        }
        for shard in &cache.shards {
            assert!(shard.lock().unwrap().len() <= 2);
        }
        let classes: IdentityCache<hco_challenges::Class> = IdentityCache::new(4);
        let id = IdentityId([3; 32]);
        assert_eq!(classes.get(&id), None);
        classes.insert(&id, hco_challenges::Class::Human);
        assert_eq!(classes.get(&id), Some(hco_challenges::Class::Human));
    }
}
