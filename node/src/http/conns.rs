//! The gateway's open connections: a cap per TCP peer address, a budget for all, and the
//! closes — at the header-read and keep-alive timeouts, and of idle connections when the
//! budget is full. Each connection's phase is kept by its [`Conn`]; a busy one (a request in
//! progress) is never closed here. When the budget is full a new connection makes room by
//! closing the non-busy connections that have waited longest in their phase (opened and
//! silent, idle since their last response, or part-way through a head since its first byte);
//! with none to close it is refused. Nothing here waits: a closed connection is told so and its
//! task drops the socket.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tokio_util::sync::CancellationToken;

pub use super::conn::{Busy, Conn, Reason};
use super::limits::{ClientKey, client_key};

/// What the registry enforces.
#[derive(Debug, Clone)]
pub struct ConnLimits {
    /// Open connections per TCP peer address (IPv6 by /64); 0: no cap.
    pub per_ip: u32,
    /// Open connections in all.
    pub budget: u32,
    /// Time to send a whole request head.
    pub header_read_timeout: Duration,
    /// Time a kept-alive connection may idle between requests.
    pub keep_alive_timeout: Duration,
    /// Peers not capped per address (reverse proxies carrying many clients).
    pub trusted_proxies: Vec<IpAddr>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

/// The registry's metrics.
#[derive(Clone, Default)]
pub struct ConnMetrics {
    open: Gauge,
    budget: Gauge,
    closed: Family<ReasonLabel, Counter>,
}

impl ConnMetrics {
    /// Registers `hco_http_connections`, `hco_http_connection_budget` and
    /// `hco_http_connections_closed_total{reason}`.
    pub fn new(r: &mut Registry) -> Self {
        let m = Self::default();
        let r = r.sub_registry_with_prefix("hco");
        r.register(
            "http_connections",
            "Open gateway connections",
            m.open.clone(),
        );
        let help = "Gateway connections allowed at once (configured cap and descriptor limit)";
        r.register("http_connection_budget", help, m.budget.clone());
        let help = "Gateway connections closed or refused by the gateway, by reason";
        r.register("http_connections_closed", help, m.closed.clone());
        m
    }
}

struct Inner {
    next: u64,
    open: HashMap<u64, Arc<Conn>>,
    per_ip: HashMap<ClientKey, u32>,
}

/// The registry.
pub struct Conns {
    limits: ConnLimits,
    epoch: Instant,
    inner: Mutex<Inner>,
    metrics: ConnMetrics,
}

/// A connection's place in the registry, given back when dropped.
pub struct Registered {
    conns: Arc<Conns>,
    /// The connection.
    pub conn: Arc<Conn>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut inner = self.conns.lock();
        self.conns.forget(&mut inner, self.conn.id);
    }
}

impl Conns {
    /// An empty registry.
    pub fn new(limits: ConnLimits, metrics: ConnMetrics) -> Arc<Self> {
        metrics.budget.set(i64::from(limits.budget));
        Arc::new(Self {
            limits,
            epoch: Instant::now(),
            inner: Mutex::new(Inner {
                next: 0,
                open: HashMap::new(),
                per_ip: HashMap::new(),
            }),
            metrics,
        })
    }

    fn phase(&self, conn: &Conn) -> Option<(u64, Reason, Duration)> {
        let l = &self.limits;
        conn.phase(l.header_read_timeout, l.keep_alive_timeout)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Open connections.
    pub fn open(&self) -> usize {
        self.lock().open.len()
    }

    /// Takes a place for a connection from `peer`, making room if the budget is full.
    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Registered, Reason> {
        let capped = self.limits.per_ip > 0 && !self.limits.trusted_proxies.contains(&peer);
        let key = capped.then(|| client_key(peer));
        let mut inner = self.lock();
        let refused = if key.is_some_and(|k| inner.per_ip.get(&k) >= Some(&self.limits.per_ip)) {
            Some(Reason::PerIpLimit)
        } else if inner.open.len() >= self.limits.budget as usize {
            (self.shed(&mut inner, self.shed_batch()) == 0).then_some(Reason::BudgetFull)
        } else {
            None
        };
        if let Some(reason) = refused {
            self.count(reason);
            return Err(reason);
        }
        let id = inner.next;
        inner.next += 1;
        let conn = Arc::new(Conn::new(id, key, self.epoch));
        if let Some(key) = key {
            *inner.per_ip.entry(key).or_default() += 1;
        }
        inner.open.insert(id, conn.clone());
        self.metrics.open.set(inner.open.len() as i64);
        Ok(Registered {
            conns: self.clone(),
            conn,
        })
    }

    /// Closes up to `n` non-busy connections, longest waiting first; returns how many.
    fn shed(&self, inner: &mut Inner, n: usize) -> usize {
        let mut idle: Vec<(u64, u64)> = inner
            .open
            .values()
            .filter_map(|c| self.phase(c).map(|(since, ..)| (since, c.id)))
            .collect();
        let n = n.min(idle.len());
        if n < idle.len() {
            idle.select_nth_unstable(n);
        }
        for &(.., id) in &idle[..n] {
            self.close(inner, id, Reason::Shed);
        }
        n
    }

    /// Makes room when the process is out of descriptors (accept failed).
    pub fn shed_for_descriptors(&self) -> usize {
        let mut inner = self.lock();
        self.shed(&mut inner, self.shed_batch())
    }

    /// Closes the connections past their timeouts, the longest waiting first and at most
    /// [`Self::sweep_batch`] of them (a flood opened at once expires at once: its closes are
    /// spread over a few sweeps rather than taking the gateway's threads in one burst; until
    /// closed, they are the first a full budget sheds). Returns how many were closed.
    pub fn sweep(&self) -> usize {
        let now = self.now_ms();
        let mut inner = self.lock();
        let mut expired: Vec<(u64, u64, Reason)> = inner
            .open
            .values()
            .filter_map(|c| {
                let (since, reason, limit) = self.phase(c)?;
                (now.saturating_sub(since) >= limit.as_millis() as u64)
                    .then_some((since, c.id, reason))
            })
            .collect();
        let n = expired.len().min(self.sweep_batch());
        if n < expired.len() {
            expired.select_nth_unstable_by_key(n, |&(since, id, _)| (since, id));
        }
        for &(_, id, reason) in &expired[..n] {
            self.close(&mut inner, id, reason);
        }
        n
    }

    /// Most connections one sweep closes.
    fn sweep_batch(&self) -> usize {
        self.shed_batch().max(64)
    }

    /// Connections closed at once to make room in a full budget.
    fn shed_batch(&self) -> usize {
        (self.limits.budget as usize / 128).max(1)
    }

    /// Sweeps twenty times a second (more often for timeouts under two seconds) until `stop`:
    /// small, frequent batches of closes keep the delay they add to the requests queued behind
    /// them short (a budget of 16,384 closes 128 a sweep, 2,560 a second).
    pub async fn run_sweeper(self: Arc<Self>, stop: CancellationToken) {
        let shortest = self
            .limits
            .header_read_timeout
            .min(self.limits.keep_alive_timeout);
        let every = (shortest / 40).clamp(Duration::from_millis(10), Duration::from_millis(50));
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {
                    self.sweep();
                }
            }
        }
    }

    /// Tells every connection to close (busy ones after their request); they leave the
    /// registry as their tasks end.
    pub fn close_all(&self) {
        for conn in self.lock().open.values() {
            conn.tell(Reason::Shutdown);
        }
    }

    fn close(&self, inner: &mut Inner, id: u64, reason: Reason) {
        if let Some(conn) = self.forget(inner, id) {
            self.count(reason);
            conn.tell(reason);
        }
    }

    fn forget(&self, inner: &mut Inner, id: u64) -> Option<Arc<Conn>> {
        let conn = inner.open.remove(&id)?;
        if let Some(key) = conn.key
            && let Some(n) = inner.per_ip.get_mut(&key)
        {
            *n -= 1;
            if *n == 0 {
                inner.per_ip.remove(&key);
            }
        }
        self.metrics.open.set(inner.open.len() as i64);
        Some(conn)
    }

    fn count(&self, reason: Reason) {
        let label = ReasonLabel {
            reason: reason.label(),
        };
        self.metrics.closed.get_or_create(&label).inc();
    }
}

#[cfg(test)]
#[path = "conns_tests.rs"]
mod tests;
