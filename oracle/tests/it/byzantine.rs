//! One Byzantine member in a committee of four in-process oracles, over two windows. In the
//! first it accepts a wrong answer, mints an acceptance for an identity that never saw a
//! challenge, and backdates (an answer past its deadline, a challenge issued before the
//! window); in the second it withholds its reveal and signs two summaries. No identity it
//! vouched for is certified, every honest identity is, and the evidence names it. And a member
//! cannot add to a window once it is summarized.

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_oracle::{
    Acceptance, Challenge, Digest, IdentityId, Response, SealedAcceptance, SignedRequest,
    SignedSummary, VERSION, seal_batch, testing,
};

use crate::integrity::{certify, honest_solve, reveal, served_by, spread};
use crate::support::Net;

const FAULTY: usize = 3;
/// The first window with commitments for the test parameters (`L = 2`).
const T: u64 = 2;

fn faulty_key() -> SigningKey {
    testing::key(FAULTY as u64 + 1)
}

/// An acceptance sealed by the faulty member for `identity` (which signs whatever it is given:
/// the member's own sybil, or a friend).
fn sealed(challenge: Challenge, identity: &SigningKey, answer: &[u8], at: u64) -> SealedAcceptance {
    let signed = hco_oracle::SignedChallenge::new(&faulty_key(), challenge);
    let acceptance = Acceptance {
        version: VERSION,
        response: Response::new(identity, signed, answer.to_vec()),
        accepted_at: at,
    };
    seal_batch(&faulty_key(), acceptance.challenge().t, vec![acceptance]).remove(0)
}

fn made_up(net: &Net, identity: &SigningKey, t: u64, issued_at: u64) -> Challenge {
    Challenge {
        version: VERSION,
        issuer: net.oracles[FAULTY].node_id(),
        id: testing::identity_id(identity),
        t,
        j: 0,
        family: "proof_of_work".into(),
        issued_at,
        deadline: issued_at + net.params.families[0].deadline_ms,
        prompt_digest: Digest([0xab; 32]),
        witness: None,
    }
}

#[test]
fn byzantine_member_certifies_nothing_invalid_and_is_named() {
    let net = Net::new(4);
    for t in 0..T {
        reveal(&net, t, &[0, 1, 2, 3]);
        certify(&net, t);
    }
    let faulty = net.oracles[FAULTY].node_id();
    let honest_nodes = &net.oracles[..FAULTY];
    let start = net.start(T);

    // Window T: honest identities at every honest member; the faulty member's three kinds of
    // invalid acceptance.
    let honest: Vec<SigningKey> = (0..FAULTY)
        .map(|m| served_by(&net, m, T, 100 + 1_000 * m as u64, Class::Agent))
        .collect();
    for key in &honest {
        honest_solve(&net, key);
    }
    let friend = served_by(&net, FAULTY, T, 10_000, Class::Agent);
    let issued = net.oracles[FAULTY]
        .issue(&SignedRequest::new(&friend, T, 0), start + 1_000)
        .unwrap()
        .unwrap();
    let wrong = sealed(issued.challenge.challenge, &friend, b"wrong", start + 2_000);
    let sybil = served_by(&net, FAULTY, T, 20_000, Class::Agent);
    let minted = sealed(
        made_up(&net, &sybil, T, start + 1_000),
        &sybil,
        b"0",
        start + 3_000,
    );
    spread(&net, &[wrong, minted]);
    let late = served_by(&net, FAULTY, T, 30_000, Class::Agent);
    let challenge = made_up(&net, &late, T, start + 1_000);
    let past_deadline = challenge.deadline + 1;
    let backdated = [
        sealed(challenge, &late, b"0", past_deadline),
        sealed(
            made_up(&net, &late, T, start - 5_000),
            &late,
            b"0",
            start + 1_000,
        ),
    ];
    for (b, code) in backdated.iter().zip(["challenge_expired", "outside_slot"]) {
        for o in honest_nodes {
            let got = o
                .record_remote(
                    std::slice::from_ref(b),
                    crate::support::at_once(std::slice::from_ref(b)),
                )
                .unwrap();
            assert_eq!(got.unwrap_err().code(), code);
        }
    }
    reveal(&net, T, &[0, 1, 2, 3]);
    let cert = certify(&net, T);

    // Window T + 1: an honest identity at the faulty member; then no reveal, two summaries.
    let t1 = T + 1;
    let next: Vec<SigningKey> = (0..FAULTY)
        .map(|m| served_by(&net, m, t1, 40_000 + 1_000 * m as u64, Class::Agent))
        .collect();
    let at_faulty = served_by(&net, FAULTY, t1, 50_000, Class::Agent);
    for key in next.iter().chain([&at_faulty]) {
        let now = net.start(t1) + 1_000;
        crate::support::solve_one(&net, key, t1, 0, now, now + 10);
        let issuer = net.issuer_for(key, t1);
        let mine: Vec<_> = issuer
            .ledger()
            .acceptances(t1)
            .map(Result::unwrap)
            .filter(|s| s.acceptance.challenge().id == testing::identity_id(key))
            .collect();
        spread(&net, &mine);
    }
    reveal(&net, t1, &[0, 1, 2]);
    let closed = net.params.closes_at(t1);
    for root in [1u8, 2] {
        let (mut s, _) = hco_oracle::WindowSummary::of(t1, Vec::new(), net.params.digest());
        s.root = Digest([root; 32]);
        let s = SignedSummary::new(&faulty_key(), s);
        for o in honest_nodes {
            o.add_summary(&s).unwrap().unwrap();
        }
    }
    let summaries: Vec<_> = honest_nodes
        .iter()
        .map(|o| o.summarize(t1, closed).unwrap().unwrap())
        .collect();
    for o in honest_nodes {
        for s in &summaries {
            o.add_summary(s).unwrap().unwrap();
        }
    }
    let cert1 = net.oracles[0].ledger().certificate(t1).unwrap().unwrap();

    // Zero invalid identities in any certificate, every honest one in, the faulty one named.
    let vouched: Vec<IdentityId> = [&friend, &sybil, &late, &at_faulty]
        .map(testing::identity_id)
        .into();
    for (t, cert, good) in [(T, &cert, &honest), (t1, &cert1, &next)] {
        assert_eq!(cert.summary.count, good.len() as u64, "window {t}");
        assert!(cert.signatures.iter().all(|(signer, _)| *signer != faulty));
        for o in honest_nodes {
            for key in good {
                assert!(
                    o.membership(t, &testing::identity_id(key))
                        .unwrap()
                        .is_some()
                );
            }
            for id in &vouched {
                assert!(o.membership(t, id).unwrap().is_none());
            }
            assert_eq!(o.excluded_members(t).unwrap(), vec![faulty]);
        }
    }
    for o in honest_nodes {
        let kinds = |t| -> Vec<&'static str> {
            let evidence = o.ledger().evidence(t).unwrap();
            assert!(evidence.iter().all(|e| e.accused() == faulty));
            assert!(evidence.iter().all(|e| e.check(&net.params).is_ok()));
            evidence.iter().map(|e| e.kind()).collect()
        };
        assert_eq!(kinds(T), ["failed_audit", "failed_audit"]);
        assert_eq!(kinds(t1), ["double_summary"]);
    }
}

#[test]
fn a_certified_window_takes_no_late_acceptance() {
    let net = Net::new(4);
    for t in 0..T {
        reveal(&net, t, &[0, 1, 2, 3]);
        certify(&net, t);
    }
    let start = net.start(T);
    let honest = served_by(&net, 0, T, 100, Class::Agent);
    honest_solve(&net, &honest);
    reveal(&net, T, &[0, 1, 2, 3]);
    // A member that behaved in T adds to it afterwards, dated inside the window: refused by a
    // member that summarized T, even before the certificate forms.
    let sybil = served_by(&net, FAULTY, T, 20_000, Class::Agent);
    let late = sealed(
        made_up(&net, &sybil, T, start + 1_000),
        &sybil,
        b"0",
        start + 3_000,
    );
    net.oracles[0]
        .summarize(T, net.params.closes_at(T))
        .unwrap()
        .unwrap();
    assert!(net.oracles[0].ledger().certificate(T).unwrap().is_none());
    let refused = net.oracles[0]
        .record_remote(
            std::slice::from_ref(&late),
            crate::support::at_once(std::slice::from_ref(&late)),
        )
        .unwrap()
        .unwrap_err();
    assert_eq!(refused.code(), "window_summarized");
    let cert = certify(&net, T);
    assert_eq!(cert.summary.count, 1);
    for o in &net.oracles[..FAULTY] {
        let refused = o
            .record_remote(
                std::slice::from_ref(&late),
                crate::support::at_once(std::slice::from_ref(&late)),
            )
            .unwrap()
            .unwrap_err();
        assert_eq!(refused.code(), "window_summarized");
        assert!(!hco_oracle::blames_sender(&refused));
        assert!(
            o.membership(T, &testing::identity_id(&honest))
                .unwrap()
                .is_some()
        );
        assert!(
            o.membership(T, &testing::identity_id(&sybil))
                .unwrap()
                .is_none()
        );
    }
    // The next window is still open to it.
    let other = served_by(&net, FAULTY, T + 1, 30_000, Class::Agent);
    let next = made_up(&net, &other, T + 1, net.start(T + 1) + 1_000);
    let on_time = sealed(next, &other, b"0", net.start(T + 1) + 3_000);
    net.oracles[0]
        .record_remote(
            std::slice::from_ref(&on_time),
            crate::support::at_once(std::slice::from_ref(&on_time)),
        )
        .unwrap()
        .unwrap();
}
