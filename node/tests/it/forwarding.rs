//! A person may talk to any committee member: a gateway that did not issue the challenge
//! forwards the request, the stage answers of a multi-stage family and the final answer to
//! the assigned issuer over `/hco/challenge/1`. Two real nodes whose human identities draw
//! `interactive_reasoning`.

use std::time::Duration;

use ed25519_dalek::SigningKey;
use hco_oracle::secret::issuer_order;
use hco_oracle::{
    Class, IdentityId, NodeId, Response, SignedChallenge, SignedRegister, SignedRequest,
};
use serde_json::Value;

use crate::browser::regenerate_at;
use crate::support::{Devnet, get, post, wait_until};

/// A two-node devnet whose only cognitive family is `interactive_reasoning` (fresh ledgers).
fn interactive_devnet() -> Devnet {
    let mut net = Devnet::up(2, "60s", false);
    for i in 0..2 {
        net.kill(i, "-TERM");
        let path = net.config(i);
        let config = std::fs::read_to_string(&path).unwrap();
        let arithmetic = "name = \"arithmetic_reasoning\"\ndeadline = \"19s\"\ndifficulty = 3\n";
        assert!(config.contains(arithmetic), "{config}");
        let config = config.replace(
            arithmetic,
            "name = \"interactive_reasoning\"\ndeadline = \"19s\"\ndifficulty = 2\n",
        );
        std::fs::write(&path, config).unwrap();
        std::fs::remove_dir_all(net.dir.path().join(format!("node{i}"))).unwrap();
    }
    for i in 0..2 {
        net.restart(i);
    }
    net
}

#[test]
fn devnet_stage_answers_reach_the_issuer_through_any_gateway() {
    let net = interactive_devnet();
    let key = SigningKey::from_bytes(&[77; 32]);
    let id = hex::encode(key.verifying_key().to_bytes());
    let now = get(&net.url(0), "/v1/windows/current").unwrap()["now"]
        .as_u64()
        .unwrap();
    let reg = SignedRegister::new(&key, Class::Human, now);
    assert_eq!(post(&net.url(0), "/v1/identities", &reg).0, 201);
    wait_until(Duration::from_secs(20), || {
        get(&net.url(1), &format!("/v1/identities/{id}")).is_some()
    });

    let w = get(&net.url(0), "/v1/windows/current").unwrap();
    let t = w["t"].as_u64().unwrap();
    let committee: Vec<NodeId> = (0..2).map(|i| net.node_id(i).parse().unwrap()).collect();
    let first = issuer_order(&committee, &id.parse::<IdentityId>().unwrap(), t)[0];
    let issuer = committee.iter().position(|n| *n == first).unwrap();
    let gateway = 1 - issuer;

    let (status, view) = post(
        &net.url(gateway),
        "/v1/challenges",
        &SignedRequest::new(&key, t, 0),
    );
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["prompt"]["family"], "interactive_reasoning", "{view}");
    let challenge: SignedChallenge = serde_json::from_value(view["challenge"].clone()).unwrap();
    assert_eq!(challenge.challenge.issuer, first);

    let issuer_key = net.dir.path().join(format!("node{issuer}.key"));
    let (generated, family) = regenerate_at(
        &issuer_key,
        &net.url(gateway),
        &id,
        t,
        0,
        "interactive_reasoning",
    );
    let answer = String::from_utf8(family.reference_answer(&generated.key).unwrap()).unwrap();
    let (first, _) = answer.split_once('|').unwrap();

    // The gateway does not hold the challenge: it forwards the stage answer to the issuer.
    let staged = Response::new(&key, challenge.clone(), format!("stage 1:{first}").into());
    let (status, stage): (u16, Value) = post(&net.url(gateway), "/v1/challenges/stage", &staged);
    assert_eq!(status, 200, "{stage}");
    assert_eq!(stage["stage"], 2, "{stage}");
    assert!(
        stage["prompt"]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("New picture")),
        "{stage}"
    );
    // A malformed stage answer gets the issuer's code back through the gateway.
    let bad = Response::new(&key, challenge.clone(), b"stage 9:1,1".to_vec());
    let (status, body) = post(&net.url(gateway), "/v1/challenges/stage", &bad);
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("no_such_stage"))
    );

    let response = Response::new(&key, challenge, answer.into_bytes());
    let (status, verdict) = post(&net.url(gateway), "/v1/responses", &response);
    assert_eq!(
        (status, verdict["verdict"].as_str()),
        (200, Some("accepted")),
        "{verdict}"
    );
}
