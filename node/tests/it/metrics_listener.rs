//! Metrics are served on their own listener (`[metrics] listen`), never on the client gateway:
//! the gateway answers 404 at `/metrics`, the metrics listener serves the `hco_` series there
//! (and nothing else), and no series tells which part of a wrong answer was right.

use serde_json::Value;

use crate::support::{Single, agent, metrics_text};

/// Status and body of a GET.
fn fetch(url: &str) -> (u16, String) {
    let mut reply = agent().get(url).call().unwrap();
    let status = reply.status().as_u16();
    (
        status,
        reply.body_mut().read_to_string().unwrap_or_default(),
    )
}

#[test]
fn the_gateway_answers_404_at_metrics_and_the_metrics_listener_serves_them() {
    let node = Single::start("[network]\ndevelopment = true\n");

    let (status, body) = fetch(&format!("{}/metrics", node.url));
    assert_eq!(status, 404, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["code"], "not_found", "{body}");
    assert!(!body.to_string().contains("hco_"), "{body}");

    let text = metrics_text(&node.metrics_url);
    let series = text.lines().filter(|l| l.starts_with("hco_")).count();
    assert!(series >= 10, "{text}");
    assert!(text.contains("hco_http_connection_budget "), "{text}");
    assert!(!text.contains("wrong_answer_parts"), "{text}");
    // The listener serves metrics only.
    assert_eq!(fetch(&format!("{}/v1/params", node.metrics_url)).0, 404);

    // node.json tells tools where it is.
    let info: Value =
        serde_json::from_slice(&std::fs::read(node.dir.path().join("ledger/node.json")).unwrap())
            .unwrap();
    assert_eq!(info["metrics"], node.metrics_url.as_str(), "{info}");
}
