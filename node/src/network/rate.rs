//! Token buckets per key (a peer): how many messages or requests a peer may send at once
//! (`burst`) and per second after that. A bucket that has refilled is dropped by [`Buckets::prune`]
//! (it would behave the same as a new one), so the map holds only peers that sent something in
//! the last `burst / per_second` seconds, and reconnecting does not buy a fresh burst.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::Instant;

/// One bucket per key.
#[derive(Debug)]
pub struct Buckets<K> {
    per_second: f64,
    burst: f64,
    buckets: HashMap<K, (f64, Instant)>,
}

impl<K: Hash + Eq> Buckets<K> {
    /// Buckets of `burst` tokens refilled at `per_second` (at least 1).
    pub fn new(per_second: u32, burst: u32) -> Self {
        Self {
            per_second: f64::from(per_second.max(1)),
            burst: f64::from(burst.max(1)),
            buckets: HashMap::new(),
        }
    }

    /// Takes a token from `key`'s bucket at `now`; false when it is empty.
    pub fn allow(&mut self, key: K, now: Instant) -> bool {
        let (tokens, last) = self.buckets.entry(key).or_insert((self.burst, now));
        let refill = now.saturating_duration_since(*last).as_secs_f64() * self.per_second;
        *tokens = (*tokens + refill).min(self.burst);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Drops the buckets that are full again at `now`.
    pub fn prune(&mut self, now: Instant) {
        let (per_second, burst) = (self.per_second, self.burst);
        self.buckets.retain(|_, (tokens, last)| {
            *tokens + now.saturating_duration_since(*last).as_secs_f64() * per_second < burst
        });
    }

    /// Keys with a bucket.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_burst_then_the_refill_rate() {
        let mut b = Buckets::new(2, 5);
        let t0 = Instant::now();
        assert_eq!((0..10).filter(|_| b.allow("p", t0)).count(), 5);
        // Half a second refills one token at 2 per second.
        let t1 = t0 + Duration::from_millis(500);
        assert!(b.allow("p", t1));
        assert!(!b.allow("p", t1));
        // A long pause refills to the burst, no more.
        let t2 = t1 + Duration::from_secs(60);
        assert_eq!((0..10).filter(|_| b.allow("p", t2)).count(), 5);
    }

    #[test]
    fn keys_are_independent_and_refilled_buckets_are_pruned() {
        let mut b = Buckets::new(1, 1);
        let now = Instant::now();
        assert!(b.allow(1, now));
        assert!(!b.allow(1, now));
        assert!(b.allow(2, now + Duration::from_millis(500)));
        assert_eq!(b.len(), 2);
        // At 1.2 s key 1 has refilled, key 2 (spent at 0.5 s) has not.
        b.prune(now + Duration::from_millis(1200));
        assert_eq!(b.len(), 1);
        assert!(!b.allow(2, now + Duration::from_millis(1200)));
        b.prune(now + Duration::from_secs(10));
        assert_eq!(b.len(), 0);
    }
}
