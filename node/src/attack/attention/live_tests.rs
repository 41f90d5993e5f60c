//! The attackers over real HTTP: the node's own `run` serving a one-family network on loopback
//! (human policy: one drawn step, `attention` only), a fresh identity per try, each attacker
//! playing its first try through the stream with the network's real deadline. Tries run
//! concurrently; CPU-bound reading queues through [`crate::attack::compute`].

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use hco_oracle::{Class, Clock, SignedRegister, SignedRequest, SystemClock};

use super::{BlindClick, FrameCv, ScheduleReader};
use crate::api::ChallengeView;
use crate::attack::session::Timing;
use crate::attack::stats::Rate;
use crate::attack::{Attack, Session, Verdict};
use crate::client::Gateway;

/// A node serving only `attention`, in this process; its URL. The runtime lives on its own
/// thread for the rest of the test process.
fn start_node(dir: &std::path::Path) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let path = dir.join("node.toml");
    std::fs::write(
        &path,
        format!(
            "[node]\nkey_file = \"node.key\"\ndata_dir = \"ledger\"\n\
             [http]\nlisten = \"127.0.0.1:{port}\"\n\
             [network]\nwindow = \"1h\"\ngrace = \"1m\"\n\
             [network.policy.human]\nsteps = [\"cognitive\"]\nspares = 0\n\
             [[network.families]]\nname = \"attention\"\ndeadline = \"40s\"\ndifficulty = 2\n"
        ),
    )
    .unwrap();
    let config = crate::config::Config::load(&path).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let _ = rt.block_on(crate::run::run(config));
    });
    let url = format!("http://127.0.0.1:{port}");
    let gw = Gateway::new(&url);
    let start = Instant::now();
    while gw.get("/healthz").map_or(true, |r| r.status != 200) {
        assert!(start.elapsed() < Duration::from_secs(30), "no node");
        std::thread::sleep(Duration::from_millis(50));
    }
    url
}

/// One first try of `attack` by a new identity: `(accepted, ms from issue to verdict, code)`.
fn first_try(url: &str, attack: &dyn Attack) -> (bool, u64, String) {
    let gw = Gateway::new(url);
    let key = SigningKey::generate(&mut rand::rng());
    let reg = SignedRegister::new(&key, Class::Human, SystemClock.now());
    assert_eq!(gw.post("/v1/identities", &reg).unwrap().status, 201);
    let id = hex::encode(key.verifying_key().to_bytes());
    let window = gw
        .get(&format!("/v1/windows/current?id={id}"))
        .unwrap()
        .body;
    let t = window["t"].as_u64().unwrap();
    let view: ChallengeView = loop {
        let reply = gw
            .post("/v1/challenges", &SignedRequest::new(&key, t, 0))
            .unwrap();
        if let Some(at) = reply.body["opens_at"].as_u64() {
            std::thread::sleep(Duration::from_millis(
                at.saturating_sub(SystemClock.now()) + 20,
            ));
            continue;
        }
        break reply.into_result().unwrap();
    };
    let c = &view.challenge.challenge;
    let timing = Timing {
        deadline: Duration::from_millis(c.deadline.saturating_sub(c.issued_at)),
        min_solve: Duration::from_millis(4000),
    };
    let mut session = Session {
        gateway: &gw,
        key: &key,
        view,
        timing,
        issued: Instant::now(),
    };
    let verdict = attack
        .play(&mut session)
        .unwrap_or_else(|e| Verdict::Rejected(format!("error: {e}")));
    let ms = session.issued.elapsed().as_millis() as u64;
    match verdict {
        Verdict::Accepted => (true, ms, "accepted".into()),
        Verdict::Rejected(code) => (false, ms, code),
    }
}

/// `tries` first tries, `at_once` at a time; the rate and the verdict codes.
fn rate(
    url: &str,
    attack: &dyn Attack,
    tries: usize,
    at_once: usize,
) -> (Rate, BTreeMap<String, u32>) {
    let mut outcomes = Vec::new();
    let mut codes = BTreeMap::new();
    for round in (0..tries).collect::<Vec<_>>().chunks(at_once) {
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = round
                .iter()
                .map(|_| s.spawn(|| first_try(url, attack)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (ok, ms, code) in results {
            outcomes.push((ok, ms));
            *codes.entry(code).or_insert(0) += 1;
        }
    }
    (Rate::of(&outcomes), codes)
}

/// Every attacker's first tries over HTTP; none passes often. About two minutes in a debug
/// build (the stream plays 14 s; frame reading is unoptimised code there).
#[test]
fn attackers_over_http_rarely_pass() {
    let dir = tempfile::tempdir().unwrap();
    let url = start_node(dir.path());
    let started = Instant::now();
    let attackers: [(&dyn Attack, usize, usize); 3] = [
        (&FrameCv, 30, 6),
        (&ScheduleReader, 10, 10),
        (&BlindClick, 10, 10),
    ];
    for (attack, tries, at_once) in attackers {
        let (r, codes) = rate(&url, attack, tries, at_once);
        eprintln!(
            "attention {} over HTTP: {}/{} (Wilson 95 % {:.3}–{:.3}), median {} ms, codes {codes:?}",
            attack.name(),
            r.successes,
            r.tries,
            r.wilson_low,
            r.wilson_high,
            r.median_ms
        );
        assert!(!codes.keys().any(|c| c.starts_with("error")), "{codes:?}");
        assert!(r.successes * 10 <= r.tries, "{}: {codes:?}", attack.name());
    }
    assert!(started.elapsed() < Duration::from_secs(600));
}
