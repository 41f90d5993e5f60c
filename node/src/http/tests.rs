//! The router without a listening socket (`tower::ServiceExt::oneshot`), over a real oracle on a
//! temporary ledger and a real (unconnected) swarm.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use hco_challenges::{Class, Registry};
use hco_oracle::{Clock, Ledger, ManualClock, Oracle, SignedRegister, SignedRequest, testing};
use serde_json::Value;
use tower::ServiceExt;

use super::{AppState, Shared, router};
use crate::config::P2pSection;
use crate::metrics::Metrics;
use crate::service::Node;

pub(super) struct Harness {
    pub(super) app: axum::Router,
    /// The metrics listener's router over the same registry.
    pub(super) metrics: axum::Router,
    pub(super) node: Arc<Node>,
    pub(super) now: u64,
}

async fn harness() -> Harness {
    let params = testing::params_for(&[testing::node_id(&testing::key(1))]);
    harness_over(Ledger::temporary(params.digest()).unwrap()).await
}

/// The router over `ledger` (made for the parameters of `testing::params_for` with node key 1).
pub(super) async fn harness_over(ledger: Ledger) -> Harness {
    let params = testing::params_for(&[testing::node_id(&testing::key(1))]);
    harness_with(params, ledger).await
}

/// The router of node key 1 under `params` (whose committee must hold it), over `ledger`.
pub(super) async fn harness_with(params: hco_oracle::NetworkParams, ledger: Ledger) -> Harness {
    let key = testing::key(1);
    let oracle =
        Arc::new(Oracle::new(params.clone(), Registry::builtin(), key.clone(), ledger).unwrap());
    let mut registry = prometheus_client::registry::Registry::default();
    let metrics = Arc::new(Metrics::new(&mut registry));
    let (net, _events, event_loop) = crate::network::new(
        crate::network::keypair(&key).unwrap(),
        &P2pSection::default(),
        params.digest().to_hex(),
        Vec::new(),
        metrics.clone(),
    )
    .unwrap();
    tokio::spawn(event_loop.run(tokio_util::sync::CancellationToken::new()));
    let now = params.genesis_ms + 1_000;
    let clock: Arc<dyn Clock> = Arc::new(ManualClock::new(now));
    let node = Node::start(oracle, net, metrics, clock);
    let state = AppState::new(Shared {
        node: node.clone(),
        game: None,
        streams: Default::default(),
        limits: Arc::new(super::limits::Limits::unlimited()),
        agent_corpus: Arc::new(
            crate::corpus::operator::AgentCorpus::load(&crate::config::Config::default()).unwrap(),
        ),
    });
    Harness {
        app: router(state, 4096, Duration::from_secs(5), false),
        metrics: crate::metrics_listener::router(Arc::new(registry)),
        node,
        now,
    }
}

pub(super) async fn call(
    app: &axum::Router,
    method: &str,
    uri: &str,
    body: Body,
) -> (StatusCode, Value, String) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(body)
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
    )
}

/// `GET uri`, asserting 200; the body.
async fn get_ok(app: &axum::Router, uri: &str) -> Value {
    let (status, body, _) = call(app, "GET", uri, Body::empty()).await;
    assert_eq!(status, StatusCode::OK, "GET {uri}: {body}");
    body
}

pub(super) fn json(v: &impl serde::Serialize) -> Body {
    Body::from(serde_json::to_vec(v).unwrap())
}

#[tokio::test]
async fn bad_input_gets_codes_and_leaves_no_state() {
    let h = harness().await;
    let (status, body, _) = call(&h.app, "POST", "/v1/identities", Body::from("{not json")).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("malformed"))
    );
    let (status, body, _) = call(
        &h.app,
        "POST",
        "/v1/identities",
        Body::from(vec![b'x'; 10_000]),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("message_too_large"))
    );
    let (status, body, _) = call(&h.app, "GET", "/v1/nowhere", Body::empty()).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );

    let agent = testing::key(50);
    let mut forged = SignedRegister::new(&agent, Class::Agent, h.now);
    forged.sig.0[0] ^= 1;
    let (status, body, _) = call(&h.app, "POST", "/v1/identities", json(&forged)).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("bad_identity_signature"))
    );
    // An unregistered identity's request creates nothing.
    let (status, body, _) = call(
        &h.app,
        "POST",
        "/v1/challenges",
        json(&SignedRequest::new(&agent, 0, 0)),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_identity"))
    );
    let ledger = h.node.oracle.ledger();
    assert_eq!(ledger.identity_count(), 0);
    assert!(
        ledger
            .issued(0, &testing::identity_id(&agent), 0)
            .unwrap()
            .is_none()
    );

    let (status, body, _) = call(&h.app, "GET", "/v1/windows/0/certificate", Body::empty()).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("no_certificate"))
    );
    let (status, body, _) = call(&h.app, "GET", "/v1/identities/zz", Body::empty()).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("bad_request"))
    );
    let (_, _, metrics) = call(&h.metrics, "GET", "/metrics", Body::empty()).await;
    assert!(
        metrics.contains("hco_rejections_total{reason=\"unknown_identity\""),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_round_trip_through_the_router() {
    let h = harness().await;
    let agent = testing::key(60);
    let (status, _, _) = call(
        &h.app,
        "POST",
        "/v1/identities",
        json(&SignedRegister::new(&agent, Class::Agent, h.now)),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, view, _) = call(
        &h.app,
        "POST",
        "/v1/challenges",
        json(&SignedRequest::new(&agent, 0, 0)),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    let view: crate::api::ChallengeView = serde_json::from_value(view).unwrap();
    let prompt = hco_challenges::Prompt {
        family: view.prompt.family.clone(),
        text: view.prompt.text.clone(),
        data: serde_json::to_vec(&view.prompt.data).unwrap(),
    };
    let answer = Registry::builtin()
        .get(&prompt.family)
        .unwrap()
        .solve(&prompt)
        .unwrap();
    let response = hco_oracle::Response::new(&agent, view.challenge, answer);
    let (status, verdict, _) = call(&h.app, "POST", "/v1/responses", json(&response)).await;
    assert_eq!(
        (status, verdict["verdict"].as_str()),
        (StatusCode::OK, Some("accepted")),
        "{verdict}"
    );
    let (status, again, _) = call(&h.app, "POST", "/v1/responses", json(&response)).await;
    assert_eq!(
        (status, again["code"].as_str()),
        (StatusCode::CONFLICT, Some("already_answered"))
    );
    let id = testing::identity_id(&agent);
    let (status, ident, _) = call(
        &h.app,
        "GET",
        &format!("/v1/identities/{id}"),
        Body::empty(),
    )
    .await;
    assert_eq!(
        (status, ident["status"].as_str()),
        (StatusCode::OK, Some("active")),
        "{ident}"
    );
    let (status, doc, _) = call(&h.app, "GET", "/openapi.json", Body::empty()).await;
    assert_eq!(status, StatusCode::OK);
    for path in [
        "/v1/identities",
        "/v1/challenges",
        "/v1/responses",
        "/v1/windows/{t}/proofs/{id}",
    ] {
        assert!(
            doc["paths"].get(path).is_some(),
            "{path} missing from the OpenAPI document"
        );
    }
    // Metrics have their own listener: the gateway neither serves nor documents them.
    assert!(doc["paths"].get("/metrics").is_none());
    let (status, body, _) = call(&h.app, "GET", "/metrics", Body::empty()).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
}

#[tokio::test]
async fn the_grafana_dashboard_only_uses_metrics_the_node_exports() {
    let h = harness().await;
    let (_, _, metrics) = call(&h.metrics, "GET", "/metrics", Body::empty()).await;
    let dashboard = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/grafana/hco-node.json"
    ))
    .unwrap();
    let mut names = std::collections::BTreeSet::new();
    for word in dashboard.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if let Some(name) = word.strip_prefix("hco_") {
            let base = name.trim_end_matches("_bucket").trim_end_matches("_total");
            names.insert(format!("hco_{base}"));
        }
    }
    assert!(names.len() >= 10);
    for name in names {
        assert!(
            metrics.contains(&format!("# TYPE {name} ")),
            "{name} is not exported"
        );
    }
}

#[tokio::test]
async fn passkey_enrolment_through_the_router() {
    use hco_challenges::presence::SoftAuthenticator;
    use hco_oracle::SignedEnrolment;

    let h = harness().await;
    let person = testing::key(40);
    let id = testing::identity_id(&person);
    let path = format!("/v1/identities/{id}/passkeys");

    // Options are a pure function of (id, created_at): the node keeps no ceremony state.
    let options_uri = format!("{path}/options?created_at={}", h.now);
    let (status, options, _) = call(&h.app, "GET", &options_uri, Body::empty()).await;
    assert_eq!(status, StatusCode::OK);
    let again = call(&h.app, "GET", &options_uri, Body::empty()).await.1;
    assert_eq!(
        options["publicKey"]["challenge"],
        again["publicKey"]["challenge"]
    );
    assert_eq!(options["publicKey"]["rp"]["id"], "localhost");

    let presence = h.node.oracle.presence().clone();
    let mut soft = SoftAuthenticator::new("http://localhost:8080").unwrap();
    let credential = String::from_utf8(soft.enrol(&presence, &id.0, h.now).unwrap()).unwrap();
    let enrolment = SignedEnrolment::new(&person, h.now, credential);

    // Not registered yet; then registered, but the path names someone else.
    let (status, body, _) = call(&h.app, "POST", &path, json(&enrolment)).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_identity"))
    );
    let reg = SignedRegister::new(&person, Class::Human, h.now);
    assert_eq!(
        call(&h.app, "POST", "/v1/identities", json(&reg)).await.0,
        StatusCode::CREATED
    );
    let other = format!(
        "/v1/identities/{}/passkeys",
        testing::identity_id(&testing::key(41))
    );
    let (status, body, _) = call(&h.app, "POST", &other, json(&enrolment)).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("malformed"))
    );
    let mut forged = enrolment.clone();
    forged.body.credential.push(' ');
    let (_, body, _) = call(&h.app, "POST", &path, json(&forged)).await;
    assert_eq!(body["code"], "bad_identity_signature");
    assert_eq!(
        call(&h.app, "GET", &path, Body::empty()).await.1["passkeys"],
        serde_json::json!([])
    );

    let (status, body, text) = call(&h.app, "POST", &path, json(&enrolment)).await;
    assert_eq!(status, StatusCode::CREATED, "{text}");
    let (_, list, _) = call(&h.app, "GET", &path, Body::empty()).await;
    assert_eq!(list["passkeys"][0]["credential_id"], body["credential_id"]);
    assert_eq!(list["user_verification"], "preferred");
}

#[test]
fn status_says_when_software_authenticators_pass_presence() {
    use hco_challenges::presence::AttestationMode;
    let mut p = testing::params_for(&[testing::node_id(&testing::key(1))]);
    let view = super::handlers::presence_view(&p);
    assert!(!view.enabled);
    assert!(!view.software_authenticators_accepted);
    p.families.push(hco_oracle::FamilyConfig {
        name: "presence".into(),
        deadline_ms: 10_000,
        difficulty: 1,
        min_solve_ms: 0,
    });
    let view = super::handlers::presence_view(&p);
    assert!(view.software_authenticators_accepted, "general attestation");
    p.presence.attestation = AttestationMode::Strict;
    p.presence.attestation_ca_pem = vec!["a vendor root".into()];
    let view = super::handlers::presence_view(&p);
    assert!(!view.software_authenticators_accepted, "strict with roots");
}

#[tokio::test]
async fn params_say_which_classes_only_baselines_serve() {
    // The test parameters: proof_of_work for agents, arithmetic_reasoning for people.
    let h = harness().await;
    let (status, body, _) = call(&h.app, "GET", "/v1/params", Body::empty()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body["baseline_only"],
        serde_json::json!({ "human": true, "agent": true })
    );
    assert!(body["digest"].is_string() && body["params"]["families"].is_array());
    // With a family no script passes beside each, drawn steps take only those.
    let mut params = testing::params_for(&[testing::node_id(&testing::key(1))]);
    for name in ["narrative_chain", "visual_match"] {
        params.families.push(hco_oracle::FamilyConfig {
            name: name.into(),
            deadline_ms: 15_000,
            difficulty: 1,
            min_solve_ms: 0,
        });
    }
    let h = harness_with(params.clone(), Ledger::temporary(params.digest()).unwrap()).await;
    let (_, body, _) = call(&h.app, "GET", "/v1/params", Body::empty()).await;
    assert_eq!(
        body["baseline_only"],
        serde_json::json!({ "human": false, "agent": false })
    );
}

/// Every object in `value` has exactly the properties its schema in `doc` names (`$ref`s
/// resolved), and every value of an `enum` is one it lists.
fn keys_match_schema(value: &Value, schema: &Value, doc: &Value, at: &str) {
    let schema = match schema["$ref"].as_str() {
        Some(r) => doc
            .pointer(r.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("{at}: {r} is not in the document")),
        None => schema,
    };
    if let Some(allowed) = schema["enum"].as_array() {
        assert!(
            allowed.contains(value),
            "{at}: {value} is not in {allowed:?}"
        );
    }
    match value {
        Value::Object(fields) => {
            let properties = schema["properties"]
                .as_object()
                .unwrap_or_else(|| panic!("{at}: the schema names no properties"));
            let served: std::collections::BTreeSet<_> = fields.keys().collect();
            let named: std::collections::BTreeSet<_> = properties.keys().collect();
            assert_eq!(
                served, named,
                "{at}: served keys and schema properties differ"
            );
            for (key, v) in fields {
                keys_match_schema(v, &properties[key], doc, &format!("{at}.{key}"));
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    keys_match_schema(v, item, doc, &format!("{at}[{i}]"));
                }
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn a_served_proof_has_the_keys_the_openapi_document_names() {
    let h = harness().await;
    let agent = testing::key(61);
    let id = testing::identity_id(&agent);
    let (status, registered, _) = call(
        &h.app,
        "POST",
        "/v1/identities",
        json(&SignedRegister::new(&agent, Class::Agent, h.now)),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, view, _) = call(
        &h.app,
        "POST",
        "/v1/challenges",
        json(&SignedRequest::new(&agent, 0, 0)),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    let served_challenge = view.clone();
    let view: crate::api::ChallengeView = serde_json::from_value(view).unwrap();
    let prompt = hco_challenges::Prompt {
        family: view.prompt.family.clone(),
        text: view.prompt.text.clone(),
        data: serde_json::to_vec(&view.prompt.data).unwrap(),
    };
    let answer = Registry::builtin()
        .get(&prompt.family)
        .unwrap()
        .solve(&prompt)
        .unwrap();
    let response = hco_oracle::Response::new(&agent, view.challenge, answer);
    let (status, verdict, _) = call(&h.app, "POST", "/v1/responses", json(&response)).await;
    assert_eq!(status, StatusCode::OK, "{verdict}");
    let served_response = serde_json::to_value(&response).unwrap();
    let served_register =
        serde_json::to_value(SignedRegister::new(&agent, Class::Agent, h.now)).unwrap();
    let served_request = serde_json::to_value(SignedRequest::new(&agent, 0, 0)).unwrap();
    // The one-member committee closes and certifies window 0.
    let oracle = &h.node.oracle;
    let closed = oracle.params().closes_at(0);
    oracle.reveal(0, closed).unwrap().unwrap();
    let summary = oracle.summarize(0, closed).unwrap().unwrap();
    assert!(oracle.add_summary(&summary).unwrap().unwrap().is_some());

    let (status, proof, _) = call(
        &h.app,
        "GET",
        &format!("/v1/windows/0/proofs/{id}"),
        Body::empty(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{proof}");
    assert_eq!(proof["proof"]["class"], "agent");
    let (_, doc, _) = call(&h.app, "GET", "/openapi.json", Body::empty()).await;
    let route = &doc["paths"]["/v1/windows/{t}/proofs/{id}"]["get"]["responses"]["200"];
    let schema = &route["content"]["application/json"]["schema"];
    keys_match_schema(&proof, schema, &doc, "proof");
    let (status, certificate, _) =
        call(&h.app, "GET", "/v1/windows/0/certificate", Body::empty()).await;
    assert_eq!(status, StatusCode::OK);
    keys_match_schema(
        &certificate,
        &serde_json::json!({ "$ref": "#/components/schemas/WindowCertificate" }),
        &doc,
        "certificate",
    );
    // And they validate against the schemas generated from their types (JSON Schema 2020-12),
    // which refuse what the verifier would.
    assert_valid(&doc, "Proof", &proof);
    assert_valid(&doc, "WindowCertificate", &certificate);
    // The closed window, its reveals and the (empty) evidence.
    let window = get_ok(&h.app, "/v1/windows/0").await;
    assert_valid(&doc, "Window", &window);
    assert_eq!(window["certified"], true, "{window}");
    assert_eq!(window["certificate_root"], certificate["summary"]["root"]);
    let reveals = get_ok(&h.app, "/v1/windows/0/reveals").await;
    assert_eq!(reveals.as_array().map(Vec::len), Some(1), "{reveals}");
    assert_valid(&doc, "SignedReveal", &reveals[0]);
    let evidence = get_ok(&h.app, "/v1/evidence").await;
    assert_valid(&doc, "EvidenceList", &evidence);
    let (status, params, _) = call(&h.app, "GET", "/v1/params", Body::empty()).await;
    assert_eq!(status, StatusCode::OK);
    assert_valid(&doc, "Params", &params);
    // A linked proof is the served certificate and membership proof with a link proof.
    let link = hco_oracle::link::LinkSet::new(vec![(
        hco_oracle::account::AccountId::parse(
            "eip155:1:0x00000000000000000000000000000000000000aa",
        )
        .unwrap(),
        id,
    )]);
    let linked = serde_json::json!({
        "certificate": proof["certificate"],
        "link": serde_json::to_value(link.proof(link.links().next().unwrap().0).unwrap()).unwrap(),
        "proof": proof["proof"],
    });
    assert_valid(&doc, "LinkedProof", &linked);
    // What a client sends and gets on the way: the registration, the challenge request, the
    // challenge, the response and the verdict, against the schemas of their types.
    assert_valid(&doc, "SignedRegister", &served_register);
    assert_valid(&doc, "SignedRequest", &served_request);
    assert_valid(&doc, "Challenge", &served_challenge);
    assert_valid(&doc, "Response", &served_response);
    assert_valid(&doc, "Verdict", &verdict);
    // What a registration returns, an identity's status, an agent session's start and an error.
    assert_valid(&doc, "Registered", &registered);
    let identity = get_ok(&h.app, &format!("/v1/identities/{id}")).await;
    assert_valid(&doc, "IdentityStatus", &identity);
    assert_eq!(identity["status"], "active", "{identity}");
    for (uri, names_one) in [
        ("/v1/windows/current".to_owned(), false),
        (format!("/v1/windows/current?id={id}"), true),
    ] {
        let current = get_ok(&h.app, &uri).await;
        assert_valid(&doc, "CurrentWindow", &current);
        assert_eq!(current["identity"].is_null(), !names_one, "{current}");
    }
    let start =
        hco_oracle::SessionStart::sign(&agent, &oracle.node_id(), 0, hco_oracle::Digest([7; 32]));
    assert_valid(&doc, "SessionStart", &serde_json::to_value(&start).unwrap());
    let (status, error, _) = call(&h.app, "GET", "/v1/windows/99/certificate", Body::empty()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_valid(&doc, "Error", &error);
    let mut unknown_code = error.clone();
    unknown_code["code"] = "no_such_code".into();
    assert!(!valid(&doc, "Error", &unknown_code));
    let mut no_status = identity.clone();
    no_status.as_object_mut().unwrap().remove("status");
    assert!(!valid(&doc, "IdentityStatus", &no_status));
    let mut odd_answer = served_response.clone();
    odd_answer["answer"] = "abc".into();
    assert!(!valid(&doc, "Response", &odd_answer));
    let mut not_accepted = verdict.clone();
    not_accepted["verdict"] = "maybe".into();
    assert!(!valid(&doc, "Verdict", &not_accepted));
    let mut unsigned = served_register.clone();
    unsigned.as_object_mut().unwrap().remove("sig");
    assert!(!valid(&doc, "SignedRegister", &unsigned));
    let mut unknown_slot_mode = params.clone();
    unknown_slot_mode["params"]["slot_mode"] = "sometimes".into();
    assert!(!valid(&doc, "Params", &unknown_slot_mode));
    let mut wrong_class = proof.clone();
    wrong_class["proof"]["class"] = "robot".into();
    let mut short_sig = certificate.clone();
    short_sig["signatures"][0][1] = "abcd".into();
    let mut no_links_root = certificate.clone();
    no_links_root["summary"]
        .as_object_mut()
        .unwrap()
        .remove("links_root");
    assert!(!valid(&doc, "Proof", &wrong_class));
    assert!(!valid(&doc, "WindowCertificate", &short_sig));
    assert!(!valid(&doc, "WindowCertificate", &no_links_root));
}

/// Whether `value` validates against the document's schema `name`.
fn valid(doc: &Value, name: &str, value: &Value) -> bool {
    let schema = serde_json::json!({
        "$ref": format!("#/components/schemas/{name}"),
        "components": doc["components"],
    });
    jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|e| panic!("the schema of {name} does not compile: {e}"))
        .is_valid(value)
}

fn assert_valid(doc: &Value, name: &str, value: &Value) {
    let schema = serde_json::json!({
        "$ref": format!("#/components/schemas/{name}"),
        "components": doc["components"],
    });
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}\n{value}");
}

#[test]
fn a_link_statement_and_a_link_proof_validate_against_the_generated_schemas() {
    use hco_oracle::link::{AccountLink, LinkSet, SignedLink};
    let doc = super::openapi::spec();
    let id = testing::identity_id(&testing::key(5));
    let account = "eip155:1:0x00000000000000000000000000000000000000aa";
    let link = AccountLink::new(hco_oracle::Digest([3; 32]), id, account, 7).unwrap();
    let statement = serde_json::to_value(SignedLink {
        identity_sig: link.sign_identity(&testing::key(5)),
        link,
        account_sig: hco_oracle::AccountSig([27; 65]),
    })
    .unwrap();
    assert_valid(&doc, "SignedLink", &statement);
    let set = LinkSet::new(vec![(
        hco_oracle::account::AccountId::parse(account).unwrap(),
        id,
    )]);
    let proof = serde_json::to_value(
        set.proof(&hco_oracle::account::AccountId::parse(account).unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_valid(&doc, "LinkProof", &proof);
    let mut bad_account = statement.clone();
    bad_account["link"]["account"] = "cosmos:hub:abc".into();
    assert!(!valid(&doc, "SignedLink", &bad_account));
}
