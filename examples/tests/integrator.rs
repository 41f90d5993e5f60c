//! Runs the integrator example against a certificate made by a real three-node committee of
//! oracles (in process), served in the gateway's JSON shapes.
#![allow(clippy::unwrap_used)]

use std::process::Command;

use hco_challenges::{Class, Registry};
use hco_oracle::{Ledger, Oracle, Response, SignedRegister, SignedRequest, testing};
use serde_json::json;

#[test]
fn verify_membership_accepts_a_real_proof_and_refuses_tampering() {
    let keys: Vec<_> = (1..=3).map(testing::key).collect();
    let committee: Vec<_> = keys.iter().map(testing::node_id).collect();
    let params = testing::params_for(&committee);
    let oracles: Vec<Oracle> = keys
        .into_iter()
        .map(|k| {
            Oracle::new(
                params.clone(),
                Registry::builtin(),
                k,
                Ledger::temporary(params.digest()).unwrap(),
            )
            .unwrap()
        })
        .collect();
    let now = params.genesis_ms + 1_000;
    let agent = testing::key(77);
    let id = testing::identity_id(&agent);
    for o in &oracles {
        o.register(&SignedRegister::new(&agent, Class::Agent, now), now)
            .unwrap()
            .unwrap();
    }
    let issuer = hco_oracle::secret::issuer_order(&committee, &id, 0)[0];
    let issuer = oracles.iter().find(|o| o.node_id() == issuer).unwrap();
    let issued = issuer
        .issue(&SignedRequest::new(&agent, 0, 0), now)
        .unwrap()
        .unwrap();
    let answer = Registry::builtin()
        .get(&issued.prompt.family)
        .unwrap()
        .solve(&issued.prompt)
        .unwrap();
    let sealed = issuer
        .verify_response(&Response::new(&agent, issued.challenge, answer), now + 10)
        .unwrap()
        .unwrap();
    let closed = params.closes_at(0);
    // Summaries come after the committee's reveals (an unrevealed issuer's acceptances are
    // left out).
    let reveals: Vec<_> = oracles
        .iter()
        .map(|o| o.reveal(0, closed).unwrap().unwrap())
        .collect();
    for o in &oracles {
        for r in &reveals {
            o.hear_reveal(r, closed).unwrap().unwrap();
        }
    }
    let summaries: Vec<_> = oracles
        .iter()
        .map(|o| {
            // Gossip brings it at once.
            let arrived = sealed.acceptance.accepted_at + 1;
            o.record_remote(std::slice::from_ref(&sealed), arrived)
                .unwrap()
                .unwrap();
            o.summarize(0, closed).unwrap().unwrap()
        })
        .collect();
    for s in &summaries {
        oracles[0].add_summary(s).unwrap().unwrap();
    }
    let (certificate, proof) = oracles[0].membership(0, &id).unwrap().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let params_file = dir.path().join("params.json");
    let proof_file = dir.path().join("proof.json");
    std::fs::write(
        &params_file,
        serde_json::to_vec(&json!({ "digest": params.digest(), "params": params })).unwrap(),
    )
    .unwrap();
    std::fs::write(
        &proof_file,
        serde_json::to_vec(&json!({ "certificate": certificate, "proof": proof })).unwrap(),
    )
    .unwrap();
    let run = |id: &str| {
        Command::new(env!("CARGO_BIN_EXE_verify_membership"))
            .args([
                "--params",
                params_file.to_str().unwrap(),
                "--proof",
                proof_file.to_str().unwrap(),
                "--id",
                id,
            ])
            .output()
            .unwrap()
    };
    let ok = run(&id.to_hex());
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("\"active\":true"));
    // Another identity cannot reuse the proof.
    let other = run(&testing::identity_id(&testing::key(78)).to_hex());
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stdout).contains("not_included"));
    // A certificate with a forged signature is refused.
    let mut forged = certificate.clone();
    forged.signatures[0].1.0[0] ^= 1;
    std::fs::write(
        &proof_file,
        serde_json::to_vec(&json!({ "certificate": forged, "proof": proof })).unwrap(),
    )
    .unwrap();
    let forged = run(&id.to_hex());
    assert!(!forged.status.success());
    assert!(String::from_utf8_lossy(&forged.stdout).contains("bad_signature"));
}
