//! Random clocks, requests, replays and cross-identity reuse against the verification rules:
//! no response is ever accepted twice, for another identity, in another window, outside its
//! slot or after its deadline; each challenge's answer is judged at most once (the first judged
//! answer, right or wrong, is final: every later one is `already_answered`); challenges are
//! issued in sequence, never before their opening.

use std::collections::HashSet;

use hco_challenges::Class;
use hco_oracle::{IssuedChallenge, Response, SignedRequest, SlotMode, testing};
use proptest::prelude::*;

use crate::support::{Net, solve};

#[derive(Debug, Clone)]
enum Op {
    Advance(u64),
    Request {
        who: usize,
        j: u32,
        window_offset: i8,
    },
    Answer {
        issued: usize,
        signer: usize,
        correct: bool,
    },
    Replay {
        response: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u64..40_000).prop_map(Op::Advance),
        (0usize..3, 0u32..3, -1i8..=1).prop_map(|(who, j, window_offset)| Op::Request {
            who,
            j,
            window_offset
        }),
        (0usize..16, 0usize..3, prop::bool::weighted(0.8)).prop_map(|(issued, signer, correct)| {
            Op::Answer {
                issued,
                signer,
                correct,
            }
        }),
        (0usize..16).prop_map(|response| Op::Replay { response }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn acceptance_invariants_hold(ops in prop::collection::vec(op(), 1..60), staggered in any::<bool>()) {
        let net = Net::with(1, |p| {
            if staggered {
                p.slot_mode = SlotMode::Staggered;
                p.slot_ms = 30_000;
            }
        });
        let o = &net.oracles[0];
        let keys = [testing::key(1000), testing::key(1001), testing::key(1002)];
        let mut now = net.start(0);
        for k in &keys {
            net.register(k, Class::Agent, now);
        }
        let mut issued: Vec<IssuedChallenge> = Vec::new();
        let mut responses: Vec<Response> = Vec::new();
        let mut accepted = HashSet::new();
        let mut judged = HashSet::new();
        for op in ops {
            let outcome = match op {
                Op::Advance(ms) => { now += ms; None }
                Op::Request { who, j, window_offset } => {
                    let t = (net.params.window_at(now).unwrap() as i64 + i64::from(window_offset)).max(0) as u64;
                    if let Ok(c) = o.issue(&SignedRequest::new(&keys[who], t, j), now).unwrap() {
                        let e = &c.challenge.challenge;
                        prop_assert_eq!(e.t, net.params.window_at(now).unwrap());
                        // Every earlier challenge of the sequence was answered or expired.
                        for k in 0..e.j {
                            let earlier = o.ledger().issued(e.t, &e.id, k).unwrap();
                            prop_assert!(earlier.is_some(), "issued out of sequence");
                            prop_assert!(o.ledger().is_answered(e.t, &e.id, k).unwrap() || earlier.unwrap().deadline < e.issued_at);
                        }
                        issued.push(c);
                    }
                    None
                }
                Op::Answer { issued: i, signer, correct } => {
                    let Some(c) = issued.get(i % issued.len().max(1)).cloned() else { continue };
                    let answer = if correct { solve(o, &c) } else { b"{\"nonce\":0,\"hash\":\"00\"}".to_vec() };
                    let r = Response::new(&keys[signer], c.challenge.clone(), answer);
                    responses.push(r.clone());
                    Some(r)
                }
                Op::Replay { response } => responses.get(response % responses.len().max(1)).cloned(),
            };
            let Some(r) = outcome else { continue };
            let key = (r.challenge.challenge.t, r.challenge.challenge.id, r.challenge.challenge.j);
            let verdict = o.verify_response(&r, now).unwrap();
            match &verdict {
                Ok(_) => prop_assert!(judged.insert(key), "judged twice"),
                Err(reason) if reason.is_final_answer() => {
                    prop_assert!(judged.insert(key), "judged twice");
                    prop_assert!(o.ledger().answered(key.0, &key.1, key.2).unwrap().is_some());
                }
                Err(reason) if reason.code() == "already_answered" => prop_assert!(judged.contains(&key)),
                Err(_) => {}
            }
            if let Ok(sealed) = verdict {
                let c = sealed.acceptance.challenge();
                prop_assert!(accepted.insert((c.t, c.id, c.j)), "accepted twice");
                prop_assert_eq!(c.id.0, r.challenge.challenge.id.0);
                prop_assert!(keys.iter().any(|k| testing::identity_id(k) == c.id && k.verifying_key().to_bytes() == r.challenge.challenge.id.0));
                prop_assert!(now <= c.deadline, "accepted after the deadline");
                prop_assert!(net.params.window_open(c.t, now).is_ok(), "accepted outside its window");
                prop_assert!(o.slot(c.t, &c.id).unwrap().contains(&c.issued_at), "issued outside slot");
                // The signer is the identity the challenge is bound to.
                prop_assert!(hco_oracle::sign::verify(&c.id.0, &r.signing_digest(), &r.sig));
            }
        }
        let stored: HashSet<_> = (0..=net.params.window_at(now).unwrap())
            .flat_map(|t| o.ledger().accepted_keys(t).unwrap().into_iter().map(move |(id, j)| (t, id, j)))
            .collect();
        prop_assert_eq!(stored, accepted);
    }
}
