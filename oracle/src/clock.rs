//! Time, injected. Protocol code never reads the system clock: it takes `now` from a [`Clock`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Milliseconds since the Unix epoch.
pub type Timestamp = u64;

/// A source of the current time.
pub trait Clock: Send + Sync {
    /// The current time in milliseconds since the Unix epoch.
    fn now(&self) -> Timestamp;
}

/// The operating system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[allow(clippy::disallowed_methods)] // the one place that reads the system time
    fn now(&self) -> Timestamp {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
}

/// A clock that moves only when told to: for tests and the simulator.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock showing `now`.
    pub fn new(now: Timestamp) -> Self {
        Self {
            now: Arc::new(AtomicU64::new(now)),
        }
    }

    /// Sets the time.
    pub fn set(&self, now: Timestamp) {
        self.now.store(now, Ordering::SeqCst);
    }

    /// Moves the time forward by `ms`.
    pub fn advance(&self, ms: u64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        self.now.load(Ordering::SeqCst)
    }
}
