//! The gateway's per-client limits over real HTTP: clients on distinct loopback addresses
//! (127.0.0.2, .3, …) against one node. A flood from one client is refused with 429
//! `rate_limited` while another client is still served; one client cannot hold more than its
//! share of agent-game sessions; requests naming one identity are limited whatever their
//! address; the gateway registers a bounded number of new identities a window.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use hco_oracle::{Class, Clock, SignedRegister, SignedRequest};
use serde_json::{Value, json};

use crate::support::{Single, agent_start, register_agent};

/// One HTTP/1.1 request from the loopback address `127.0.0.{from}`: status, head, JSON body.
async fn http(
    node: &Single,
    from: u8,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, String, Value) {
    let (status, head, body) = http_text(node, from, method, path, body).await;
    (
        status,
        head,
        serde_json::from_str(&body).unwrap_or(Value::Null),
    )
}

/// One HTTP/1.1 request from `127.0.0.{from}`: status, head (lower case) and body text.
async fn http_text(
    node: &Single,
    from: u8,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, String, String) {
    let port: u16 = node.url.rsplit(':').next().unwrap().parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::from((Ipv4Addr::new(127, 0, 0, from), 0)))
        .unwrap();
    let stream = socket
        .connect(SocketAddr::from(([127, 0, 0, 1], port)))
        .await
        .unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: hco\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    // The exchange itself over the blocking socket, with a read timeout.
    let mut stream = stream.into_std().unwrap();
    let reply = tokio::task::spawn_blocking(move || {
        stream.set_nonblocking(false).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).expect("the node answers");
        reply
    })
    .await
    .unwrap();
    let reply = String::from_utf8_lossy(&reply).into_owned();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_lowercase(), body.to_owned())
}

async fn window_of(node: &Single) -> u64 {
    let (_, _, window) = http(node, 19, "GET", "/v1/windows/current", None).await;
    window["t"].as_u64().expect("the current window")
}

fn now_ms() -> u64 {
    hco_oracle::SystemClock.now()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_client_gets_429_while_another_is_served() {
    let node = Single::start(
        "[http.limits]\nper_ip_rate = 1\nper_ip_burst = 5\nper_identity_rate = 1\nper_identity_burst = 3\n\
         registrations_per_window = 1\n\
         [agent]\nmax_sessions_per_ip = 2\n[network]\ndevelopment = true\n",
    );
    // The flood: 30 requests at once from 127.0.0.2 (the burst is 5, one more a second).
    let flood = (0..30).map(|_| http(&node, 2, "GET", "/v1/windows/current", None));
    let replies = futures::future::join_all(flood).await;
    let refused: Vec<_> = replies.iter().filter(|(s, _, _)| *s == 429).collect();
    let served = replies.iter().filter(|(s, _, _)| *s == 200).count();
    assert_eq!(refused.len() + served, 30, "only 200 or 429: {replies:?}");
    assert!(
        refused.len() >= 20,
        "most of the flood is refused: {served} served"
    );
    let (_, head, body) = refused[0];
    assert_eq!(body["code"], "rate_limited", "{body}");
    assert!(head.contains("retry-after: "), "{head}");
    // Another client is still served.
    let (status, _, body) = http(&node, 3, "GET", "/v1/windows/current", None).await;
    assert_eq!(status, 200, "{body}");

    // One identity, many addresses: its burst of 3 signed requests, then 429.
    let key = hco_oracle::testing::key(77);
    let reg = serde_json::to_value(SignedRegister::new(&key, Class::Agent, now_ms())).unwrap();
    let t = window_of(&node).await;
    let (status, _, body) = http(&node, 10, "POST", "/v1/identities", Some(&reg)).await;
    assert_eq!(status, 201, "{body}");
    let mut codes = Vec::new();
    for (j, from) in (12..16).enumerate() {
        let req = serde_json::to_value(SignedRequest::new(&key, t, j as u32)).unwrap();
        let (status, _, body) = http(&node, from, "POST", "/v1/challenges", Some(&req)).await;
        codes.push((status, body["code"].as_str().unwrap_or("").to_owned()));
    }
    assert_ne!(codes[0].0, 429, "{codes:?}");
    assert_ne!(codes[1].0, 429, "{codes:?}");
    assert_eq!(
        codes[2..],
        [
            (429, "rate_limited".to_owned()),
            (429, "rate_limited".to_owned())
        ]
    );
    // A forged request naming the identity is not charged to it (nor served).
    let mut forged = SignedRequest::new(&key, t, 0);
    forged.sig.0[0] ^= 1;
    let (status, _, body) = http(&node, 16, "POST", "/v1/challenges", Some(&json!(forged))).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("bad_identity_signature"))
    );

    // The gateway's registrations of a window: one, taken; a second identity waits for the
    // next window (the test's window is a minute long), a known one is not a new registration.
    let other = serde_json::to_value(SignedRegister::new(
        &hco_oracle::testing::key(78),
        Class::Agent,
        now_ms(),
    ))
    .unwrap();
    let (status, _, body) = http(&node, 18, "POST", "/v1/identities", Some(&other)).await;
    if window_of(&node).await == t {
        assert_eq!(
            (status, body["code"].as_str()),
            (429, Some("registration_quota"))
        );
    }

    let metrics = crate::support::metrics_text(&node.metrics_url);
    assert!(
        metrics.contains(r#"hco_rejections_total{reason="rate_limited",family="none"}"#),
        "{metrics}"
    );
}

/// Agent-game sessions: two open per address, then 429 `too_many_sessions`, while another
/// address still starts one; one identity starts two a window, from any address, then 429
/// `identity_session_limit`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn game_sessions_are_limited_per_address_and_per_identity() {
    let node = Single::start(
        "[agent]\nmax_sessions_per_ip = 2\n[network]\ndevelopment = true\n\
         [network.narrative]\nsets_per_window = 10\nreuse = true\n",
    );
    let url = node.url.clone();
    let starts: Vec<Value> = tokio::task::spawn_blocking(move || {
        (0..4)
            .map(|i| {
                let key = register_agent(&url, 500 + i);
                serde_json::to_value(agent_start(&url, &key)).unwrap()
            })
            .collect()
    })
    .await
    .unwrap();
    for start in &starts[..2] {
        let (status, _, body) = http(&node, 4, "POST", "/v1/agent/sessions", Some(start)).await;
        assert_eq!(status, 201, "{body}");
    }
    let (status, _, body) = http(&node, 4, "POST", "/v1/agent/sessions", Some(&starts[2])).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (429, Some("too_many_sessions"))
    );
    let (status, _, body) = http(&node, 5, "POST", "/v1/agent/sessions", Some(&starts[3])).await;
    assert_eq!(status, 201, "{body}");

    // The identity of the fourth start, from new addresses: its second start is served, its
    // third is not.
    let url = node.url.clone();
    let key = tokio::task::spawn_blocking(move || register_agent(&url, 503))
        .await
        .unwrap();
    let again = |url: String| {
        let key = key.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                serde_json::to_value(agent_start(&url, &key)).unwrap()
            })
            .await
            .unwrap()
        }
    };
    let (status, _, body) = http(
        &node,
        6,
        "POST",
        "/v1/agent/sessions",
        Some(&again(node.url.clone()).await),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, _, body) = http(
        &node,
        7,
        "POST",
        "/v1/agent/sessions",
        Some(&again(node.url.clone()).await),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (429, Some("identity_session_limit")),
        "{body}"
    );
}
