//! Touch prompts in a committee of real node processes: every member gossips its witness of
//! each beat as the beat begins, a prompt carries another member's witness of its beat (its id,
//! the WebAuthn challenge, covers it), and a person who touches in time is certified by the
//! committee.

use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use hco_challenges::presence::{Passkey, Presence, PresencePolicy, SoftAuthenticator};
use hco_oracle::secret::issuer_order;
use hco_oracle::{IdentityId, NodeId, Response, SignedChallenge, SignedRequest};

use crate::support::{Devnet, get, post, wait_until};

/// A person registered at member 0 with a software passkey enrolled there.
struct Person {
    key: SigningKey,
    id: String,
    soft: SoftAuthenticator,
    passkey: Passkey,
}

fn person(net: &Devnet, seed: u8) -> Person {
    let key = SigningKey::from_bytes(&[seed; 32]);
    let id = hex::encode(key.verifying_key().to_bytes());
    let now = get(&net.url(0), "/v1/windows/current").unwrap()["now"]
        .as_u64()
        .unwrap();
    let reg = hco_oracle::SignedRegister::new(&key, hco_oracle::Class::Human, now);
    assert_eq!(post(&net.url(0), "/v1/identities", &reg).0, 201);
    let presence = Presence::new(PresencePolicy::default()).unwrap();
    let mut soft = SoftAuthenticator::new("http://localhost:1").unwrap();
    let id_bytes = key.verifying_key().to_bytes();
    let credential = soft.enrol(&presence, &id_bytes, now).unwrap();
    let passkey = presence.enrol(&id_bytes, now, &credential).unwrap();
    let enrolment =
        hco_oracle::SignedEnrolment::new(&key, now, String::from_utf8(credential).unwrap());
    let (status, body) = post(
        &net.url(0),
        &format!("/v1/identities/{id}/passkeys"),
        &enrolment,
    );
    assert_eq!(status, 201, "{body}");
    Person {
        key,
        id,
        soft,
        passkey,
    }
}

fn committee(net: &Devnet) -> Vec<NodeId> {
    (0..net.nodes.len())
        .map(|i| net.node_id(i).parse().unwrap())
        .collect()
}

/// Asks `url` for prompt 0 of window `t` until it is issued: waits for its beat
/// (`step_not_open`) and, should the other members' witnesses not have arrived yet,
/// `no_slot_witness`. Returns the envelope and how many `no_slot_witness` refusals came.
fn fetch_prompt(url: &str, key: &SigningKey, t: u64, limit: Duration) -> (SignedChallenge, u32) {
    let start = Instant::now();
    let mut waits = 0;
    loop {
        assert!(start.elapsed() < limit, "no prompt within {limit:?}");
        let (status, body) = post(url, "/v1/challenges", &SignedRequest::new(key, t, 0));
        match (status, body["code"].as_str()) {
            (200, _) => {
                return (
                    serde_json::from_value(body["challenge"].clone()).unwrap(),
                    waits,
                );
            }
            (_, Some("step_not_open")) => {
                let opens_at = body["opens_at"].as_u64().unwrap();
                let now = get(url, "/v1/windows/current").unwrap()["now"]
                    .as_u64()
                    .unwrap();
                std::thread::sleep(Duration::from_millis(opens_at.saturating_sub(now) + 20));
            }
            (_, Some("no_slot_witness")) => {
                waits += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            _ => panic!("prompt 0 of window {t}: {status} {body}"),
        }
    }
}

#[test]
fn devnet_touch_prompts_carry_another_members_witness_and_are_certified() {
    let net = Devnet::up_with(3, "24s", false, &["--prompts", "1"]);
    let mut p = person(&net, 7);
    wait_until(Duration::from_secs(10), || {
        (0..3).all(|i| {
            get(&net.url(i), &format!("/v1/identities/{}/passkeys", p.id))
                .and_then(|v| v["passkeys"].as_array().map(Vec::len))
                == Some(1)
        })
    });
    let committee = committee(&net);
    // A window whose slot has not opened yet, so the whole ceremony is seen from its start.
    let (t, slot_start) = loop {
        let w = get(&net.url(0), &format!("/v1/windows/current?id={}", p.id)).unwrap();
        let (now, start) = (
            w["now"].as_u64().unwrap(),
            w["slot"]["start"].as_u64().unwrap(),
        );
        if now + 500 < start {
            break (w["t"].as_u64().unwrap(), start);
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    // Asked before the slot, a challenge is `outside_slot`: wait for the slot to open.
    let now = get(&net.url(0), "/v1/windows/current").unwrap()["now"]
        .as_u64()
        .unwrap();
    std::thread::sleep(Duration::from_millis(slot_start.saturating_sub(now) + 50));
    let id: IdentityId = p.id.parse().unwrap();
    let issuer_id = issuer_order(&committee, &id, t)[0];
    let issuer = committee.iter().position(|n| *n == issuer_id).unwrap();

    let (signed, waited) = fetch_prompt(&net.url(issuer), &p.key, t, Duration::from_secs(30));
    let c = &signed.challenge;
    assert_eq!((c.t, c.family.as_str()), (t, "presence"));
    assert!(c.issued_at >= slot_start);
    let witness = c.witness.expect("a touch prompt carries a beat witness");
    assert_eq!(witness.t, t);
    // Of the prompt's own beat: the prompt opens at most the devnet's 500 ms jitter after it.
    assert!(
        (witness.at..=witness.at + 500).contains(&c.issued_at),
        "witness of {} for a prompt issued at {}",
        witness.at,
        c.issued_at
    );
    assert_ne!(witness.node, issuer_id, "the witness is another member's");
    assert!(committee.contains(&witness.node));
    witness.check_signature().unwrap();

    // The touch, well inside the 4 s reaction window.
    let presence = Presence::new(PresencePolicy::default()).unwrap();
    let answer = p
        .soft
        .assert(
            &presence,
            &c.challenge_id().0,
            std::slice::from_ref(&p.passkey),
        )
        .unwrap();
    let response = Response::new(&p.key, signed.clone(), answer);
    let (status, verdict) = post(&net.url(issuer), "/v1/responses", &response);
    assert_eq!(
        (status, verdict["verdict"].as_str()),
        (200, Some("accepted")),
        "{verdict}"
    );

    // The acceptance reached the others in time, and the committee certifies the person.
    for i in 0..3 {
        wait_until(Duration::from_secs(10), || {
            get(&net.url(i), &format!("/v1/windows/{t}"))
                .is_some_and(|w| w["active_count_local"] == 1)
        });
    }
    let other = (issuer + 1) % 3;
    wait_until(Duration::from_secs(40), || {
        get(&net.url(other), &format!("/v1/windows/{t}/proofs/{}", p.id)).is_some()
    });
    let proof = get(&net.url(other), &format!("/v1/windows/{t}/proofs/{}", p.id)).unwrap();
    assert_eq!(proof["proof"]["class"], "human", "{proof}");
    assert_eq!(proof["certificate"]["summary"]["t"], t);
    eprintln!("prompt issued after {waited} no_slot_witness refusals");
}
