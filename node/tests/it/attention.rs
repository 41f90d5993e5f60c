//! The `attention` stream over real HTTP against a node process: a scripted person who knows
//! the plan (the test holds the node's key file) opens the stream, reads the frames as they
//! come, clicks each cue 560–772 ms after its frame arrives and answers with the sealed log;
//! the node's own times are checked against the plan. Every misuse of the endpoints is refused
//! with its code and changes nothing.

use std::io::BufRead;
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use hco_challenges::attention::{Live, Log, RTT_CAP_MS, STREAM_PATH};
use hco_oracle::{Class, Response, SignedChallenge, SignedRegister, SignedRequest, sign};
use serde_json::{Value, json};

use crate::browser::{node_with, regenerate};
use crate::support::{Single, agent, get, post};

/// A registered identity with its first challenge issued.
struct Player {
    node: Single,
    key: SigningKey,
    signed: SignedChallenge,
    live: Live,
}

fn player(deadline: &str) -> Player {
    let node = node_with("attention", deadline, 1);
    let key = SigningKey::from_bytes(&rand::random());
    let reg = SignedRegister::new(&key, Class::Human, now());
    assert_eq!(post(&node.url, "/v1/identities", &reg).0, 201);
    let id = hex::encode(key.verifying_key().to_bytes());
    let t = get(&node.url, &format!("/v1/windows/current?id={id}")).unwrap()["t"]
        .as_u64()
        .unwrap();
    let (status, view) = post(&node.url, "/v1/challenges", &SignedRequest::new(&key, t, 0));
    assert_eq!(status, 200, "{view}");
    let signed: SignedChallenge = serde_json::from_value(view["challenge"].clone()).unwrap();
    let (generated, _) = regenerate(&node, &id, t, 0, "attention");
    let live = Live::from_key(&generated.key).unwrap();
    Player {
        node,
        key,
        signed,
        live,
    }
}

fn now() -> u64 {
    use hco_oracle::Clock;
    hco_oracle::SystemClock.now()
}

fn open_body(p: &Player) -> Value {
    let digest = hco_oracle::stream_digest(&p.signed.challenge.challenge_id());
    json!({ "challenge": p.signed, "sig": sign::sign(&p.key, &digest) })
}

fn click(url: &str, path: &str, x: u32, y: u32) -> (u16, Value) {
    post(url, path, &json!({ "x": x, "y": y }))
}

/// Server-sent events of `path`, as `(event, data)`, as they arrive.
fn events(url: &str, path: &str) -> impl Iterator<Item = (String, Value)> {
    let long: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let response = long.get(&format!("{url}{path}")).call().unwrap();
    assert_eq!(response.status(), 200);
    let mut lines = std::io::BufReader::new(response.into_body().into_reader()).lines();
    std::iter::from_fn(move || {
        let mut event = String::new();
        loop {
            let line = lines.next()?.ok()?;
            if let Some(v) = line.strip_prefix("event: ") {
                event = v.to_owned();
            } else if let Some(v) = line.strip_prefix("data: ") {
                return Some((event.clone(), serde_json::from_str(v).unwrap()));
            }
        }
    })
}

#[test]
fn a_person_with_the_plan_passes_on_server_times_and_misuse_is_refused() {
    let p = player("60s");
    let url = p.node.url.clone();
    let (status, opened) = post(&url, STREAM_PATH, &open_body(&p));
    assert_eq!(status, 201, "{opened}");
    let (ev, clicks) = (
        opened["events"].as_str().unwrap().to_owned(),
        opened["clicks"].as_str().unwrap().to_owned(),
    );
    // Once per challenge.
    let (status, again) = post(&url, STREAM_PATH, &open_body(&p));
    assert_eq!(
        (status, again["code"].as_str()),
        (409, Some("stream_already_opened"))
    );
    assert_eq!(click(&url, &clicks, 10, 10).1["code"], "nothing_released");

    let mut answer = None;
    let pairs = std::thread::scope(|s| {
        let mut stamped = Vec::new();
        for (event, data) in events(&url, &ev) {
            if event == "log" {
                answer = Some(data["answer"].as_str().unwrap().to_owned());
                break;
            }
            let i = data["i"].as_u64().unwrap() as usize;
            assert!(data["png"].as_str().unwrap().len() > 1000);
            if i == 0 {
                // The stream plays once; nothing is released yet.
                let twice = agent().get(&format!("{url}{ev}")).call().unwrap();
                assert_eq!(twice.status(), 409);
                assert_eq!(click(&url, &clicks, 10, 10).1["code"], "nothing_released");
                continue;
            }
            let Some(target) = (i % 2 == 1)
                .then(|| &p.live.plan.events[i / 2])
                .and_then(|e| e.target.map(|t| e.glyphs[t]))
            else {
                continue;
            };
            let (url, clicks, seen) = (&url, &clicks, Instant::now());
            let handle = s.spawn(move || {
                // A person's reaction varies: 560–772 ms.
                let delay = Duration::from_millis(560 + 53 * (i as u64 % 5));
                std::thread::sleep(delay.saturating_sub(seen.elapsed()));
                let first = click(url, clicks, target.x, target.y);
                let second = click(url, clicks, target.x, target.y);
                (first, second)
            });
            stamped.push(handle);
        }
        stamped
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    let answer = answer.expect("the stream ends with its log");
    for ((status, first), (_, second)) in pairs {
        assert_eq!(status, 200, "{first}");
        assert_eq!(second["code"], "already_clicked");
    }
    assert_eq!(click(&url, &clicks, 10, 10).1["code"], "stream_closed");

    // The node's own times: releases on the plan's, each click 560–772 ms after its frame.
    let log: Log = serde_json::from_str(&answer).unwrap();
    assert_eq!(log.releases.len(), p.live.plan.events.len());
    for (r, e) in log.releases.iter().zip(&p.live.plan.events) {
        assert!(
            (e.at_ms..e.at_ms + 150).contains(r),
            "released {r}, planned {}",
            e.at_ms
        );
    }
    assert_eq!(log.clicks.len(), p.live.plan.target_count());
    for c in &log.clicks {
        let release = log.releases.iter().rev().find(|r| **r <= c.at).unwrap();
        let reaction = c.at - release - c.rtt.min(RTT_CAP_MS);
        assert!((540..950).contains(&reaction), "{reaction} ms");
    }
    let response = Response::new(&p.key, p.signed.clone(), answer.into_bytes());
    let (status, verdict) = post(&url, "/v1/responses", &response);
    assert_eq!(status, 200, "{verdict}");
    // Answered: the stream cannot be opened again.
    let (status, after) = post(&url, STREAM_PATH, &open_body(&p));
    assert_eq!(
        (status, after["code"].as_str()),
        (409, Some("already_answered"))
    );
}

#[test]
fn bad_requests_to_the_stream_endpoints_have_codes() {
    let p = player("60s");
    let url = p.node.url.clone();
    let code = |(status, body): (u16, Value)| (status, body["code"].as_str().unwrap().to_owned());
    // Signed by someone else, a forged envelope, a malformed or oversized body.
    let mut body = open_body(&p);
    body["sig"] = json!(sign::sign(
        &SigningKey::from_bytes(&[9; 32]),
        &hco_oracle::stream_digest(&p.signed.challenge.challenge_id())
    ));
    assert_eq!(
        code(post(&url, STREAM_PATH, &body)),
        (400, "bad_identity_signature".into())
    );
    let mut forged = open_body(&p);
    forged["challenge"]["challenge"]["deadline"] = json!(p.signed.challenge.deadline + 60_000);
    assert_eq!(code(post(&url, STREAM_PATH, &forged)).0, 400);
    assert_eq!(
        code(post(&url, STREAM_PATH, &json!({ "x": 1 }))),
        (400, "malformed".into())
    );
    let big = json!({ "challenge": "x".repeat(9000), "sig": "00" });
    assert_eq!(
        code(post(&url, STREAM_PATH, &big)),
        (413, "message_too_large".into())
    );
    // Nothing was opened by those: the real open still works, once.
    let (status, opened) = post(&url, STREAM_PATH, &open_body(&p));
    assert_eq!(status, 201, "{opened}");
    let clicks = opened["clicks"].as_str().unwrap();
    let unknown = format!("{STREAM_PATH}/{}/clicks", "ab".repeat(16));
    assert_eq!(
        code(click(&url, &unknown, 1, 1)),
        (404, "unknown_stream".into())
    );
    let missing = agent()
        .get(&format!("{url}{STREAM_PATH}/{}/events", "ab".repeat(16)))
        .call()
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(
        code(post(&url, clicks, &json!({ "x": 1 }))),
        (400, "malformed".into())
    );
    assert_eq!(
        code(click(&url, clicks, 5000, 1)),
        (400, "malformed".into())
    );
    let long = json!({ "x": 1, "y": 1, "pad": "x".repeat(200) });
    assert_eq!(
        code(post(&url, clicks, &long)),
        (413, "message_too_large".into())
    );
    // A stream that cannot finish before the deadline is not started.
    let short = player("12s");
    assert_eq!(
        code(post(&short.node.url, STREAM_PATH, &open_body(&short))),
        (422, "stream_too_late".into())
    );
}
