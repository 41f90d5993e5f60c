//! The registration proof of work through the router: refused with its code and nothing
//! stored when missing, too weak or stale; accepted when computed as the client does it.

use axum::body::Body;
use axum::http::StatusCode;
use hco_challenges::Class;
use hco_oracle::{Ledger, SignedRegister, testing};

use super::tests::{call, harness_with, json};

const BITS: u32 = 8;

#[tokio::test]
async fn registration_proofs_are_checked_at_the_gateway() {
    let mut params = testing::params_for(&[testing::node_id(&testing::key(1))]);
    params.registration_pow_bits = BITS;
    let ledger = Ledger::temporary(params.digest()).unwrap();
    let window_ms = params.window_ms;
    let h = harness_with(params, ledger).await;
    // What a client reads to learn the difficulty.
    let (_, served, _) = call(&h.app, "GET", "/v1/params", Body::empty()).await;
    assert_eq!(served["params"]["registration_pow_bits"], BITS, "{served}");

    let key = testing::key(70);
    let id = testing::identity_id(&key);
    let missing = SignedRegister::new(&key, Class::Agent, h.now);
    // Nonce 0 proves fewer than BITS bits for this key and time (checked, not assumed).
    let hash = hco_oracle::register_pow::hash(&id, h.now, 0);
    assert!(hco_oracle::register_pow::leading_zero_bits(&hash) < BITS);
    let weak = SignedRegister::with_nonce(&key, Class::Agent.into(), h.now, Some(0));
    // The harness's clock is in window 0: dated two windows earlier is stale.
    let old = h.now - 2 * window_ms;
    let stale = SignedRegister::proven(&key, Class::Agent.into(), old, BITS);
    let cases = [
        (&missing, "registration_proof_missing"),
        (&weak, "registration_proof_insufficient"),
        (&stale, "registration_proof_stale"),
    ];
    for (reg, code) in cases {
        let (status, body, _) = call(&h.app, "POST", "/v1/identities", json(reg)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["code"], code, "{body}");
    }
    // The proof is checked before the signature (one hash, not a signature check, per junk
    // registration of a flood): a forged registration without it is refused for the proof.
    let mut forged = missing.clone();
    forged.sig.0[0] ^= 1;
    let (status, body, _) = call(&h.app, "POST", "/v1/identities", json(&forged)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "registration_proof_missing", "{body}");
    let path = format!("/v1/identities/{id}");
    let (status, _, _) = call(&h.app, "GET", &path, Body::empty()).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing stored");
    assert_eq!(h.node.oracle.ledger().identity_count(), 0);
    let (_, _, metrics) = call(&h.metrics, "GET", "/metrics", Body::empty()).await;
    for code in cases.map(|(_, code)| code) {
        let line = format!("hco_rejections_total{{reason=\"{code}\"");
        assert!(metrics.contains(&line), "{metrics}");
    }

    // Computed as `hco client register` does it: accepted.
    let proven = SignedRegister::proven(&key, Class::Agent.into(), h.now, BITS);
    let (status, body, _) = call(&h.app, "POST", "/v1/identities", json(&proven)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, _, _) = call(&h.app, "GET", &path, Body::empty()).await;
    assert_eq!(status, StatusCode::OK);
}
