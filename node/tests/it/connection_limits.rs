//! The gateway's connection limits over real sockets, against one node: a connection that sends
//! no request head in time is closed, as is one idle too long between requests; one address
//! holds a bounded number of connections; a full connection budget closes idle connections so
//! that a new client is served.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::support::{Single, metric};

/// A connection from the loopback address `127.0.0.{from}` to the node.
async fn connect(node: &Single, from: u8) -> TcpStream {
    let port: u16 = node.url.rsplit(':').next().unwrap().parse().unwrap();
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::from((Ipv4Addr::new(127, 0, 0, from), 0)))
        .unwrap();
    socket
        .connect(SocketAddr::from(([127, 0, 0, 1], port)))
        .await
        .unwrap()
}

/// One kept-alive `GET path` on `stream`: the status and body, or `None` when the connection
/// was closed (or gave no whole answer within 5 s).
async fn get(stream: &mut TcpStream, path: &str) -> Option<(u16, String)> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: hco\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let read = async {
        let mut reply = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 {
                return None;
            }
            reply.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&reply).into_owned();
            let Some((head, body)) = text.split_once("\r\n\r\n") else {
                continue;
            };
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.to_lowercase()
                        .strip_prefix("content-length:")
                        .map(str::to_owned)
                })
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if body.len() >= length {
                let status = head.split(' ').nth(1)?.parse().ok()?;
                return Some((status, body.to_owned()));
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .ok()?
}

/// Waits (at most `limit`) for the node to close `stream`; returns how long that took. Whatever
/// the node wrote before closing is skipped.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = [0u8; 1024];
    tokio::time::timeout(limit, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return start.elapsed(),
                Ok(_) => {}
            }
        }
    })
    .await
    .ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_without_a_request_head_in_time_or_idle_too_long_is_closed() {
    let node = Single::start(
        "header_read_timeout = \"1s\"\nkeep_alive_timeout = \"2s\"\n[network]\ndevelopment = true\n",
    );
    let mut silent = connect(&node, 2).await;
    let mut slow = connect(&node, 2).await;
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: h")
        .await
        .unwrap();
    let mut kept = connect(&node, 3).await;
    assert_eq!(get(&mut kept, "/healthz").await.map(|r| r.0), Some(200));

    let waited = closed_within(&mut silent, Duration::from_secs(5)).await;
    let waited = waited.expect("a silent connection is closed");
    assert!(waited >= Duration::from_millis(800), "{waited:?}");
    let slow_waited = closed_within(&mut slow, Duration::from_secs(2)).await;
    assert!(slow_waited.is_some(), "a head sent too slowly is cut off");
    // The kept-alive connection idles for its own, longer timeout, and works until then.
    assert_eq!(get(&mut kept, "/healthz").await.map(|r| r.0), Some(200));
    let idle = closed_within(&mut kept, Duration::from_secs(5)).await;
    let idle = idle.expect("an idle kept-alive connection is closed");
    assert!(idle >= Duration::from_millis(1500), "{idle:?}");

    let closed = |reason: &str| {
        metric(
            &node.metrics_url,
            &format!("hco_http_connections_closed_total{{reason=\"{reason}\"}}"),
        )
    };
    assert!(closed("header_timeout") >= 2.0 && closed("idle_timeout") >= 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_over_its_connection_cap_is_refused_while_its_open_ones_work() {
    let node =
        Single::start("[http.limits]\nper_ip_connections = 3\n[network]\ndevelopment = true\n");
    let mut open = Vec::new();
    for _ in 0..3 {
        let mut c = connect(&node, 2).await;
        assert_eq!(get(&mut c, "/healthz").await.map(|r| r.0), Some(200));
        open.push(c);
    }
    // A fourth from the same address: answered 429 (or cut off) and closed.
    let mut fourth = connect(&node, 2).await;
    match get(&mut fourth, "/healthz").await {
        None => {}
        Some((status, body)) => {
            assert_eq!(status, 429, "{body}");
            assert!(body.contains("rate_limited"), "{body}");
        }
    }
    assert!(
        closed_within(&mut fourth, Duration::from_secs(2))
            .await
            .is_some()
    );
    // The open ones still work, and another address is not affected.
    assert_eq!(
        get(&mut open[0], "/v1/windows/current").await.map(|r| r.0),
        Some(200)
    );
    let mut other = connect(&node, 3).await;
    assert_eq!(get(&mut other, "/healthz").await.map(|r| r.0), Some(200));
    // A closed connection gives its place back.
    drop(open.pop());
    let start = Instant::now();
    loop {
        let mut again = connect(&node, 2).await;
        if get(&mut again, "/healthz").await.map(|r| r.0) == Some(200) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "the place was not given back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        metric(
            &node.metrics_url,
            "hco_http_connections_closed_total{reason=\"per_ip_limit\"}"
        ) >= 1.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_connection_budget_sheds_idle_connections_for_new_clients() {
    let node = Single::start(
        "[http.limits]\nper_ip_connections = 0\nmax_connections = 8\n[network]\ndevelopment = true\n",
    );
    // Eight silent connections fill the budget (from one address: no per-address cap here).
    let mut idle = Vec::new();
    for _ in 0..8 {
        idle.push(connect(&node, 2).await);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // New clients are served, each making room, and keep their connections.
    let mut honest = Vec::new();
    for from in 3..8 {
        let mut c = connect(&node, from).await;
        let reply = get(&mut c, "/v1/windows/current").await;
        assert_eq!(reply.map(|r| r.0), Some(200), "client 127.0.0.{from}");
        honest.push(c);
    }
    // The silent connections that had waited longest were the ones closed; the clients' own,
    // idle since their answers, still work.
    for (i, c) in idle.iter_mut().enumerate().take(5) {
        let closed = closed_within(c, Duration::from_secs(1)).await;
        assert!(closed.is_some(), "silent connection {i} was shed");
    }
    let last = closed_within(&mut idle[7], Duration::from_millis(200)).await;
    assert!(last.is_none(), "the youngest silent connection is kept");
    for c in &mut honest {
        assert_eq!(get(c, "/healthz").await.map(|r| r.0), Some(200));
    }
    assert_eq!(metric(&node.metrics_url, "hco_http_connection_budget"), 8.0);
    assert!(
        metric(
            &node.metrics_url,
            "hco_http_connections_closed_total{reason=\"shed\"}"
        ) >= 5.0
    );
}

#[test]
fn bench_flood_idle_holds_connections_and_reports_what_the_member_closed() {
    let (ok, report) = crate::support::hco_json(&[
        "bench",
        "flood",
        "--idle-connections",
        "300",
        "--idle-seconds",
        "2",
        "--honest-requests",
        "40",
        "--json",
    ]);
    assert!(ok, "{report}");
    assert_eq!(report["idle_opened"], 300, "{report}");
    // One address: the member holds its cap of 256 and refuses the rest.
    assert_eq!(report["node_closed"]["per_ip_limit"], 44.0, "{report}");
    assert_eq!(report["honest_errors"], 0, "{report}");
    assert!(
        report["honest_p99_flood_ms"].as_f64().unwrap() > 0.0,
        "{report}"
    );
}
