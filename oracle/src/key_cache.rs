//! Decompressed identity keys, kept between verifications.
//!
//! Decompressing an ed25519 public key costs about a tenth of a signature check; an identity
//! answers several challenges per window, so the oracle keeps its parsed key. The cache is
//! sharded to keep threads apart and bounded: a full shard is cleared, not grown.

use std::collections::HashMap;
use std::sync::Mutex;

use ed25519_dalek::VerifyingKey;

use crate::IdentityId;

const SHARDS: usize = 16;

/// A bounded, sharded map from identity to parsed key.
#[derive(Debug)]
pub struct KeyCache {
    shards: Vec<Mutex<HashMap<IdentityId, VerifyingKey>>>,
    per_shard: usize,
}

impl KeyCache {
    /// A cache holding up to about `capacity` keys.
    pub fn new(capacity: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            per_shard: capacity.div_ceil(SHARDS).max(1),
        }
    }

    /// The parsed key of `id`, or `None` if the bytes are not a valid point.
    pub fn get(&self, id: &IdentityId) -> Option<VerifyingKey> {
        let shard = &self.shards[id.0[0] as usize % SHARDS];
        if let Some(key) = shard.lock().ok().and_then(|m| m.get(id).copied()) {
            return Some(key);
        }
        let key = VerifyingKey::from_bytes(&id.0).ok()?;
        if let Ok(mut map) = shard.lock() {
            if map.len() >= self.per_shard {
                map.clear();
            }
            map.insert(*id, key);
        }
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
            assert_eq!(cache.get(&id), Some(key.verifying_key()));
        }
        for shard in &cache.shards {
            assert!(shard.lock().unwrap().len() <= 2);
        }
        assert!(
            cache.get(&IdentityId([0xff; 32])).is_none()
                || VerifyingKey::from_bytes(&[0xff; 32]).is_ok()
        );
    }
}
