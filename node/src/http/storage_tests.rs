//! A failing store stops the node: a record damaged under a running node (the ledger is
//! opened over a sled database the test keeps a handle to) makes the verification batcher, or
//! an HTTP read, report a storage failure; the request gets 500 `internal` and the node's
//! supervisor stops it, naming the failure.

use axum::body::Body;
use axum::http::StatusCode;
use hco_challenges::{Class, Registry};
use hco_oracle::{Ledger, Oracle, SignedRegister, SignedRequest, testing};

use super::tests::{call, harness_over, json};

/// Overwrites every record of the trees named with bytes that do not decode.
fn damage(db: &sled::Db, trees: &[&str]) {
    for name in trees {
        let tree = db.open_tree(name).unwrap();
        let keys: Vec<_> = tree.iter().keys().map(Result::unwrap).collect();
        assert!(!keys.is_empty(), "tree {name} has records to damage");
        for key in keys {
            tree.insert(key, &[0xff; 3][..]).unwrap();
        }
    }
}

fn ledger_over() -> (sled::Db, Ledger) {
    let params = testing::params_for(&[testing::node_id(&testing::key(1))]);
    let db = sled::Config::new().temporary(true).open().unwrap();
    let ledger = Ledger::over(db.clone(), params.digest()).unwrap();
    (db, ledger)
}

#[tokio::test]
async fn a_storage_failure_in_the_batcher_stops_the_node() {
    // The challenge is issued before a restart: the restarted node keeps nothing of the window
    // in memory and reads its records from sled.
    let (db, ledger) = ledger_over();
    let params = testing::params_for(&[testing::node_id(&testing::key(1))]);
    let now = params.genesis_ms + 1_000;
    let agent = testing::key(70);
    let before_restart =
        Oracle::new(params.clone(), Registry::builtin(), testing::key(1), ledger).unwrap();
    before_restart
        .register(&SignedRegister::new(&agent, Class::Agent, now), now)
        .unwrap()
        .unwrap();
    let issued = before_restart
        .issue(&SignedRequest::new(&agent, 0, 0), now)
        .unwrap()
        .unwrap();
    drop(before_restart);
    let answer = Registry::builtin()
        .get(&issued.prompt.family)
        .unwrap()
        .solve(&issued.prompt)
        .unwrap();
    let response = hco_oracle::Response::new(&agent, issued.challenge, answer);
    let h = harness_over(Ledger::over(db.clone(), params.digest()).unwrap()).await;
    assert_eq!(h.now, now);

    assert!(!h.node.supervisor.shutdown().is_cancelled());
    damage(&db, &["issued", "identities"]);
    let (status, body, _) = call(&h.app, "POST", "/v1/responses", json(&response)).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::INTERNAL_SERVER_ERROR, Some("internal")),
        "{body}"
    );
    assert!(
        h.node.supervisor.shutdown().is_cancelled(),
        "the node stops"
    );
    let cause = h.node.supervisor.cause().unwrap();
    assert!(
        cause.starts_with("storage failure in the verification batcher: corrupt record"),
        "{cause}"
    );
}

#[tokio::test]
async fn a_storage_failure_under_an_http_read_stops_the_node() {
    let (db, ledger) = ledger_over();
    let h = harness_over(ledger).await;
    let agent = testing::key(71);
    let reg = SignedRegister::new(&agent, Class::Agent, h.now);
    let (status, _, _) = call(&h.app, "POST", "/v1/identities", json(&reg)).await;
    assert_eq!(status, StatusCode::CREATED);
    damage(&db, &["identities"]);
    let uri = format!("/v1/identities/{}", testing::identity_id(&agent));
    let (status, body, _) = call(&h.app, "GET", &uri, Body::empty()).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    let cause = h.node.supervisor.cause().unwrap();
    assert!(
        cause.starts_with("storage failure in an HTTP request"),
        "{cause}"
    );
    assert!(h.node.supervisor.shutdown().is_cancelled());
}
