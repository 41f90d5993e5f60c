//! The flood's honest side: identities registered once, before anything is measured, that then
//! answer one challenge in every window, as a network's members do, while the bench measures
//! the latency of each answer's verification. Registering (and its proof of work) stays out
//! of the measured phases, so the honest clients' own CPU does not blur the comparison.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use ed25519_dalek::SigningKey;
use hco_challenges::Registry;
use hco_oracle::{Clock, SignedRequest, SystemClock};

use crate::bench::load::{challenge_and_respond_signed, current, register_proven};
use crate::bench::wire::Wire;

/// Registers `n` identities from `first_seed` on, over `clients` threads, each with the
/// network's proof of `pow_bits`; returns those the node accepted.
pub fn register(
    url: &str,
    n: u64,
    first_seed: u64,
    clients: usize,
    pow_bits: u32,
) -> Vec<SigningKey> {
    let next = AtomicU64::new(0);
    let keys = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..clients.max(1) {
            s.spawn(|| {
                let gw = Wire::new(url);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let key = hco_oracle::testing::key(first_seed + i);
                    if register_proven(&gw, &key, SystemClock.now(), pow_bits).is_ok()
                        && let Ok(mut keys) = keys.lock()
                    {
                        keys.push(key);
                    }
                }
            });
        }
    });
    keys.into_inner().unwrap_or_default()
}

/// Each of `clients` threads answers, in every window until `stop`, one challenge for each of
/// its share of `keys`, then waits for the next window. Returns the verification latencies
/// (sorted) and the accepted count.
pub fn play(
    url: &str,
    keys: &[SigningKey],
    clients: usize,
    stop: &AtomicBool,
) -> (Vec<Duration>, u64) {
    let clients = clients.max(1);
    let latencies = Mutex::new(Vec::new());
    let accepted = AtomicU64::new(0);
    std::thread::scope(|s| {
        for c in 0..clients {
            let (latencies, accepted) = (&latencies, &accepted);
            s.spawn(move || {
                let gw = Wire::new(url);
                let registry = Registry::builtin();
                let mine: Vec<&SigningKey> = keys.iter().skip(c).step_by(clients).collect();
                let mut measured = Vec::new();
                let mut done_in = None;
                while !stop.load(Ordering::Relaxed) {
                    let Ok((t, _)) = current(&gw) else { continue };
                    if done_in == Some(t) {
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    for key in &mine {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let request = SignedRequest::new(key, t, 0);
                        let trip = challenge_and_respond_signed(&gw, &registry, key, &request);
                        if trip.accepted {
                            accepted.fetch_add(1, Ordering::Relaxed);
                        }
                        measured.extend(trip.respond);
                    }
                    done_in = Some(t);
                }
                if let Ok(mut all) = latencies.lock() {
                    all.extend(measured);
                }
            });
        }
    });
    let mut latencies = latencies.into_inner().unwrap_or_default();
    latencies.sort();
    (latencies, accepted.into_inner())
}
