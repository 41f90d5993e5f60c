//! What one client may ask of the gateway: a rate and a number of requests in flight per client
//! address, a rate per identity, and a ceiling on requests in flight for the whole gateway.
//!
//! Clients are told apart by their address as the socket reports it (an IPv6 address by its
//! /64 prefix, which one host usually holds whole). A request over a limit is answered at once,
//! before its body is read, with 429 `rate_limited` (and `Retry-After`) or 503 `overloaded`,
//! and leaves nothing behind. The per-identity rate is charged only for requests whose identity
//! signature checks, so nobody can spend another identity's allowance.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use hco_oracle::IdentityId;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::rtt::ConnInfo;
use super::{ApiError, AppState};
use crate::config::HttpLimits;

/// A client as the limits see it: its IPv4 address (IPv6-mapped), or its IPv6 /64 prefix.
pub type ClientKey = [u8; 16];

/// Checks between two sweeps of the limiters' idle entries.
const SWEEP_EVERY: u64 = 4096;

/// The key of a client address.
pub fn client_key(ip: IpAddr) -> ClientKey {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4.to_ipv6_mapped().octets();
            }
            let mut key = v6.octets();
            key[8..].fill(0);
            key
        }
    }
}

/// The gateway's limits and their state.
pub struct Limits {
    trusted_proxies: Vec<IpAddr>,
    per_ip: Option<DefaultKeyedRateLimiter<ClientKey>>,
    per_identity: Option<DefaultKeyedRateLimiter<IdentityId>>,
    per_ip_concurrent: u32,
    in_flight: Mutex<HashMap<ClientKey, u32>>,
    global: Option<Arc<Semaphore>>,
    checks: AtomicU64,
    registrations_per_window: u32,
    /// The window of the last registration and the gateway's registrations in it.
    registrations: Mutex<(u64, u32)>,
}

fn limiter<K: std::hash::Hash + Eq + Clone>(
    rate: u32,
    burst: u32,
) -> Option<DefaultKeyedRateLimiter<K>> {
    let rate = NonZeroU32::new(rate)?;
    let burst = NonZeroU32::new(burst).unwrap_or(rate);
    Some(RateLimiter::keyed(
        Quota::per_second(rate).allow_burst(burst),
    ))
}

fn rate_limited(what: &str, wait: Duration) -> ApiError {
    let mut e = ApiError::new(
        "rate_limited",
        format!(
            "too many requests from this {what}; retry in {} ms",
            wait.as_millis().max(1)
        ),
    );
    e.retry_after_ms = Some(wait.as_millis().max(1) as u64);
    e
}

impl Limits {
    /// Limits as configured (0 disables one).
    pub fn new(config: &HttpLimits) -> Self {
        Self {
            trusted_proxies: config.trusted_proxies.clone(),
            per_ip: limiter(config.per_ip_rate, config.per_ip_burst),
            per_identity: limiter(config.per_identity_rate, config.per_identity_burst),
            per_ip_concurrent: config.per_ip_concurrent,
            in_flight: Mutex::new(HashMap::new()),
            global: (config.max_concurrent > 0)
                .then(|| Arc::new(Semaphore::new(config.max_concurrent as usize))),
            checks: AtomicU64::new(0),
            registrations_per_window: config.registrations_per_window,
            registrations: Mutex::new((0, 0)),
        }
    }

    /// Takes one of window `t`'s registrations, or refuses with 429 `registration_quota`.
    pub fn take_registration(&self, t: u64) -> Result<(), ApiError> {
        let quota = self.registrations_per_window;
        if quota == 0 {
            return Ok(());
        }
        let mut taken = self.registrations.lock().map_err(ApiError::internal)?;
        if taken.0 != t {
            *taken = (t, 0);
        }
        if taken.1 >= quota {
            return Err(ApiError::new(
                "registration_quota",
                format!(
                    "this gateway registers at most {quota} identities a window; retry in the next window"
                ),
            ));
        }
        taken.1 += 1;
        Ok(())
    }

    /// Gives back a registration taken for a request that registered nothing new.
    pub fn return_registration(&self, t: u64) {
        if let Ok(mut taken) = self.registrations.lock()
            && taken.0 == t
        {
            taken.1 = taken.1.saturating_sub(1);
        }
    }

    /// No limits (in-process tests).
    #[cfg(test)]
    pub fn unlimited() -> Self {
        Self::new(&HttpLimits::unlimited())
    }

    /// Forgets the entries of clients and identities whose allowance is whole again, now and
    /// then, so the limiters' memory follows the recent clients rather than all clients ever.
    fn sweep_now_and_then(&self) {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY != SWEEP_EVERY - 1 {
            return;
        }
        for limiter in self.per_ip.iter() {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        for limiter in self.per_identity.iter() {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }

    /// Charges one request to `client`'s rate.
    pub fn check_client(&self, client: &ClientKey) -> Result<(), ApiError> {
        self.sweep_now_and_then();
        match &self.per_ip {
            Some(limiter) => limiter.check_key(client).map_err(|not_until| {
                rate_limited(
                    "address",
                    not_until.wait_time_from(DefaultClock::default().now()),
                )
            }),
            None => Ok(()),
        }
    }

    /// Charges a request naming `identity` to its rate when `signed` (called only when the
    /// limit is on) says the identity's signature checks; a request that does not goes on
    /// uncharged, to be refused with its own code.
    pub fn charge_identity(
        &self,
        identity: &IdentityId,
        signed: impl FnOnce() -> bool,
    ) -> Result<(), ApiError> {
        if self.per_identity.is_none() || !signed() {
            return Ok(());
        }
        self.check_identity(identity)
    }

    /// Charges one request to `identity`'s rate.
    pub fn check_identity(&self, identity: &IdentityId) -> Result<(), ApiError> {
        self.sweep_now_and_then();
        match &self.per_identity {
            Some(limiter) => limiter.check_key(identity).map_err(|not_until| {
                rate_limited(
                    "identity",
                    not_until.wait_time_from(DefaultClock::default().now()),
                )
            }),
            None => Ok(()),
        }
    }

    /// A place among `client`'s requests in flight, held until the guard drops.
    pub fn enter(self: &Arc<Self>, client: ClientKey) -> Result<InFlight, ApiError> {
        if self.per_ip_concurrent == 0 {
            return Ok(InFlight(None));
        }
        let mut map = self.in_flight.lock().map_err(ApiError::internal)?;
        let n = map.entry(client).or_default();
        if *n >= self.per_ip_concurrent {
            let mut e = ApiError::new(
                "rate_limited",
                format!(
                    "this address already has {} requests in progress; wait for one to finish",
                    self.per_ip_concurrent
                ),
            );
            e.retry_after_ms = Some(100);
            return Err(e);
        }
        *n += 1;
        Ok(InFlight(Some((self.clone(), client))))
    }

    /// A place among the gateway's requests in flight.
    pub fn admit(&self) -> Result<Option<OwnedSemaphorePermit>, ApiError> {
        match &self.global {
            None => Ok(None),
            Some(s) => s.clone().try_acquire_owned().map(Some).map_err(|_| {
                ApiError::new(
                    "overloaded",
                    "the gateway is handling as many requests as it may; retry shortly",
                )
            }),
        }
    }

    /// Requests of `client` in flight (for tests).
    #[cfg(test)]
    pub fn in_flight(&self, client: &ClientKey) -> u32 {
        self.in_flight
            .lock()
            .map(|m| m.get(client).copied().unwrap_or(0))
            .unwrap_or(0)
    }
}

/// One request in flight of one client; its place is freed when dropped.
pub struct InFlight(Option<(Arc<Limits>, ClientKey)>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let Some((limits, client)) = self.0.take() else {
            return;
        };
        if let Ok(mut map) = limits.in_flight.lock()
            && let Some(n) = map.get_mut(&client)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                map.remove(&client);
            }
        }
    }
}

/// The client of a request as the limits saw it; handlers find it among the extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client(pub ClientKey);

impl Limits {
    /// The client of a request from `peer`: `peer` itself, or for a trusted proxy the last
    /// address its `X-Forwarded-For` names (the one the proxy itself added).
    pub fn client_of(&self, peer: IpAddr, headers: &axum::http::HeaderMap) -> ClientKey {
        if !self.trusted_proxies.contains(&peer) {
            return client_key(peer);
        }
        headers
            .get_all("x-forwarded-for")
            .iter()
            .next_back()
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit(',').next())
            .and_then(|last| last.trim().parse::<IpAddr>().ok())
            .map_or_else(|| client_key(peer), client_key)
    }
}

/// The middleware: the client's rate, its requests in flight, then the gateway's.
pub async fn enforce(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let limits = &state.limits;
    let client = request
        .extensions()
        .get::<ConnectInfo<ConnInfo>>()
        .map(|ConnectInfo(c)| limits.client_of(c.peer.ip(), request.headers()));
    if let Some(client) = client {
        request.extensions_mut().insert(Client(client));
    }
    let admitted = (|| {
        let slot = match client {
            Some(client) => {
                limits.check_client(&client)?;
                Some(limits.enter(client)?)
            }
            None => None,
        };
        Ok::<_, ApiError>((slot, limits.admit()?))
    })();
    match admitted {
        Ok(held) => {
            let response = next.run(request).await;
            drop(held);
            response
        }
        Err(e) => {
            state.node.metrics.reject(&e.code, None);
            e.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use super::*;

    fn limits(rate: u32, burst: u32, concurrent: u32) -> Arc<Limits> {
        Arc::new(Limits::new(&HttpLimits {
            per_ip_rate: rate,
            per_ip_burst: burst,
            per_ip_concurrent: concurrent,
            per_identity_rate: rate,
            per_identity_burst: burst,
            max_concurrent: 2,
            ..HttpLimits::default()
        }))
    }

    #[test]
    fn ipv6_clients_are_told_apart_by_their_64_prefix() {
        let a: Ipv6Addr = "2001:db8:1:2::1".parse().unwrap();
        let b: Ipv6Addr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let c: Ipv6Addr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(client_key(a.into()), client_key(b.into()));
        assert_ne!(client_key(a.into()), client_key(c.into()));
        let v4 = Ipv4Addr::new(127, 0, 0, 2);
        assert_eq!(
            client_key(v4.into()),
            client_key(v4.to_ipv6_mapped().into())
        );
        assert_ne!(
            client_key(v4.into()),
            client_key(Ipv4Addr::new(127, 0, 0, 3).into())
        );
    }

    #[test]
    fn a_burst_then_refusals_for_one_client_only() {
        let l = limits(1, 3, 0);
        let (a, b) = ([1; 16], [2; 16]);
        for _ in 0..3 {
            l.check_client(&a).unwrap();
        }
        let e = l.check_client(&a).unwrap_err();
        assert_eq!(e.code, "rate_limited");
        assert!(e.retry_after_ms.is_some_and(|ms| ms > 0 && ms <= 1000));
        l.check_client(&b).unwrap();
        let id = IdentityId([7; 32]);
        for _ in 0..3 {
            l.check_identity(&id).unwrap();
        }
        assert_eq!(l.check_identity(&id).unwrap_err().code, "rate_limited");
        l.check_identity(&IdentityId([8; 32])).unwrap();
    }

    #[test]
    fn requests_in_flight_are_bounded_per_client_and_freed_on_drop() {
        let l = limits(0, 0, 2);
        let (a, b) = ([1; 16], [2; 16]);
        let first = l.enter(a).unwrap();
        let second = l.enter(a).unwrap();
        assert_eq!(
            l.enter(a).err().map(|e| e.code),
            Some("rate_limited".into())
        );
        assert_eq!(l.in_flight(&a), 2, "a refused request holds no place");
        let other = l.enter(b).unwrap();
        drop(first);
        let third = l.enter(a).unwrap();
        drop((second, third, other));
        assert_eq!(l.in_flight(&a), 0);
        assert!(
            l.in_flight.lock().unwrap().is_empty(),
            "no entry left behind"
        );
        // The gateway's own ceiling.
        let p1 = l.admit().unwrap();
        let _p2 = l.admit().unwrap();
        assert_eq!(l.admit().unwrap_err().code, "overloaded");
        drop(p1);
        l.admit().unwrap();
    }

    #[test]
    fn registrations_have_a_quota_per_window() {
        let l = Limits::new(&HttpLimits {
            registrations_per_window: 2,
            ..HttpLimits::default()
        });
        l.take_registration(5).unwrap();
        l.take_registration(5).unwrap();
        assert_eq!(
            l.take_registration(5).unwrap_err().code,
            "registration_quota"
        );
        l.return_registration(5);
        l.take_registration(5).unwrap();
        assert!(l.take_registration(5).is_err());
        // The next window has its own quota.
        l.take_registration(6).unwrap();
    }

    #[test]
    fn a_trusted_proxy_names_the_client() {
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let l = Limits::new(&HttpLimits {
            trusted_proxies: vec![proxy],
            ..HttpLimits::default()
        });
        let mut headers = axum::http::HeaderMap::new();
        headers.insert("x-forwarded-for", "1.1.1.1, 192.0.2.7".parse().unwrap());
        let client: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(l.client_of(proxy, &headers), client_key(client));
        // From anyone else the header is the client's own word: ignored.
        let other: IpAddr = "198.51.100.1".parse().unwrap();
        assert_eq!(l.client_of(other, &headers), client_key(other));
        // A trusted proxy that names no client is the client.
        let empty = axum::http::HeaderMap::new();
        assert_eq!(l.client_of(proxy, &empty), client_key(proxy));
    }

    #[test]
    fn zero_disables_every_limit() {
        let l = Arc::new(Limits::unlimited());
        for _ in 0..10_000 {
            l.check_client(&[1; 16]).unwrap();
            l.check_identity(&IdentityId([1; 32])).unwrap();
        }
        let held: Vec<_> = (0..1000).map(|_| l.enter([1; 16]).unwrap()).collect();
        assert!(l.admit().unwrap().is_none());
        drop(held);
    }
}
