//! One gateway connection's phase, from the requests on it and the bytes it receives: *busy*
//! while a request is handled or its response (a stream included) is being sent; otherwise
//! *fresh* (opened, no request finished yet), *reading a head* (bytes of its next request
//! arrived) or *idle* (kept alive between two requests). The registry ([`super::conns`]) reads
//! the phase to close connections at their timeouts or to make room, and tells the connection's
//! task to close through [`Conn::closing`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::limits::ClientKey;

/// No head is being read.
const NONE: u64 = u64::MAX;

/// Why a connection was closed or refused (the metric's `reason` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// No whole request head in time.
    HeaderTimeout = 1,
    /// Idle too long between requests.
    IdleTimeout,
    /// Closed to make room for a new connection.
    Shed,
    /// The gateway is stopping.
    Shutdown,
    /// Refused: its address has as many connections as it may.
    PerIpLimit,
    /// Refused: the budget is full of busy connections.
    BudgetFull,
}

impl Reason {
    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            Reason::HeaderTimeout => "header_timeout",
            Reason::IdleTimeout => "idle_timeout",
            Reason::Shed => "shed",
            Reason::Shutdown => "shutdown",
            Reason::PerIpLimit => "per_ip_limit",
            Reason::BudgetFull => "budget_full",
        }
    }
}

/// One open connection.
pub struct Conn {
    pub(super) id: u64,
    /// The address it counts against, when capped.
    pub(super) key: Option<ClientKey>,
    epoch: Instant,
    opened_ms: u64,
    in_flight: AtomicU32,
    served: AtomicU64,
    idle_since_ms: AtomicU64,
    head_since_ms: AtomicU64,
    reason: AtomicU8,
    close: Notify,
}

impl Conn {
    /// Connection `id`, counted against `key`, opened now (`epoch` is the registry's clock).
    pub(super) fn new(id: u64, key: Option<ClientKey>, epoch: Instant) -> Self {
        let now = epoch.elapsed().as_millis() as u64;
        Self {
            id,
            key,
            epoch,
            opened_ms: now,
            in_flight: AtomicU32::new(0),
            served: AtomicU64::new(0),
            idle_since_ms: AtomicU64::new(now),
            head_since_ms: AtomicU64::new(NONE),
            reason: AtomicU8::new(0),
            close: Notify::new(),
        }
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Bytes arrived: outside a request they are the next request's head.
    pub fn on_read(&self) {
        if self.in_flight.load(Ordering::Relaxed) == 0
            && self.head_since_ms.load(Ordering::Relaxed) == NONE
        {
            self.head_since_ms.store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// A request is being handled, until the guard (held by its response body) drops.
    pub fn begin(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.head_since_ms.store(NONE, Ordering::Relaxed);
        Busy(self.clone())
    }

    /// Whether a request is in progress.
    pub fn busy(&self) -> bool {
        self.in_flight.load(Ordering::Relaxed) > 0
    }

    /// Resolves once the gateway has decided to close the connection.
    pub async fn closing(&self) -> Reason {
        self.close.notified().await;
        self.told().unwrap_or(Reason::Shutdown)
    }

    /// Why the gateway closes the connection, once it has decided to.
    pub(super) fn told(&self) -> Option<Reason> {
        Some(match self.reason.load(Ordering::Relaxed) {
            0 => return None,
            1 => Reason::HeaderTimeout,
            2 => Reason::IdleTimeout,
            3 => Reason::Shed,
            _ => Reason::Shutdown,
        })
    }

    /// Tells the connection's task to close it.
    pub(super) fn tell(&self, reason: Reason) {
        self.reason.store(reason as u8, Ordering::Relaxed);
        self.close.notify_one();
    }

    /// Not busy: since when it has waited in its phase, and which timeout ends the phase
    /// (`HeaderTimeout` after `header`, or `IdleTimeout` after `idle`).
    pub(super) fn phase(
        &self,
        header: Duration,
        idle: Duration,
    ) -> Option<(u64, Reason, Duration)> {
        if self.busy() {
            return None;
        }
        let head = self.head_since_ms.load(Ordering::Relaxed);
        Some(match self.served.load(Ordering::Relaxed) {
            0 => (self.opened_ms, Reason::HeaderTimeout, header),
            _ if head == NONE => {
                let since = self.idle_since_ms.load(Ordering::Relaxed);
                (since, Reason::IdleTimeout, idle)
            }
            _ => (head, Reason::HeaderTimeout, header),
        })
    }
}

/// A request in progress on a connection.
pub struct Busy(Arc<Conn>);

impl Drop for Busy {
    fn drop(&mut self) {
        let conn = &self.0;
        conn.idle_since_ms.store(conn.now_ms(), Ordering::Relaxed);
        conn.served.fetch_add(1, Ordering::Relaxed);
        conn.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}
