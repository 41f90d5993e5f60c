//! A whole window on a committee of three: acceptances spread to every node, summaries form a
//! certificate, membership proofs verify offline, reveals let anyone audit.

use hco_challenges::Class;
use hco_oracle::{
    Acceptance, LightVerifier, Response, SignedRequest, SignedReveal, Status, VERSION, Violation,
    seal_batch, testing,
};

use crate::support::{Net, solve, solve_one};

#[test]
fn window_to_certificate_to_offline_proof_to_audit() {
    let net = Net::new(3);
    let now = net.start(0) + 1_000;
    let agents: Vec<_> = (100..110).map(testing::key).collect();
    let humans: Vec<_> = (200..205).map(testing::key).collect();
    for k in &agents {
        net.register(k, Class::Agent, now);
    }
    for k in &humans {
        net.register(k, Class::Human, now);
    }
    for k in agents.iter().chain(&humans).take(12) {
        solve_one(&net, k, 0, 0, now, now + 2_000);
    }
    net.share_acceptances(0);
    for o in &net.oracles {
        let active = o.active_set(0).unwrap();
        assert_eq!(active.len(), 12);
        // Each identity is active with its class: the ten agents and two of the humans.
        let humans_active = active.iter().filter(|(_, c)| *c == Class::Human).count();
        assert_eq!(humans_active, 2);
    }
    // Summaries cannot be signed while the window is open.
    let early = net.oracles[0]
        .summarize(0, net.params.closes_at(0) - 1)
        .unwrap();
    assert_eq!(early.unwrap_err().code(), "window_not_closed");

    let closed = net.params.closes_at(0);
    // Reveals cannot come early; the summaries come after them (an issuer that did not reveal
    // has its acceptances left out).
    assert!(net.oracles[0].reveal(0, closed - 1).unwrap().is_err());
    let reveals: Vec<SignedReveal> = net
        .oracles
        .iter()
        .map(|o| o.reveal(0, closed).unwrap().unwrap().reveal)
        .collect();
    for o in &net.oracles {
        for r in &reveals {
            o.add_reveal(r, closed).unwrap().unwrap();
        }
    }
    let summaries: Vec<_> = net
        .oracles
        .iter()
        .map(|o| o.summarize(0, closed).unwrap().unwrap())
        .collect();
    let mut cert = None;
    for o in &net.oracles {
        for s in &summaries {
            cert = o.add_summary(s).unwrap().unwrap().or(cert);
        }
    }
    let cert = cert.expect("three matching summaries make a certificate");
    assert_eq!(cert.summary.count, 12);

    let verifier = LightVerifier::new(net.params.committee.clone(), net.params.quorum)
        .unwrap()
        .with_params(net.params.digest());
    let member = hco_oracle::IdentityId(agents[0].verifying_key().to_bytes());
    let (cert_again, proof) = net.oracles[2].membership(0, &member).unwrap().unwrap();
    assert_eq!(cert_again, cert);
    // The certified leaf names the class: the proof says "active as an agent".
    assert_eq!(
        verifier.verify_membership(&cert, &member, &proof).unwrap(),
        Class::Agent
    );
    verifier
        .verify_member_of_class(&cert, &member, Class::Agent, &proof)
        .unwrap();
    assert_eq!(
        verifier
            .verify_member_of_class(&cert, &member, Class::Human, &proof)
            .unwrap_err()
            .code(),
        "wrong_class"
    );
    // A proof whose class was rewritten does not verify: the class is in the leaf.
    let mut relabelled = proof.clone();
    relabelled.class = Class::Human;
    assert_eq!(
        verifier
            .verify_membership(&cert, &member, &relabelled)
            .unwrap_err()
            .code(),
        "not_included"
    );
    let person = hco_oracle::IdentityId(humans[0].verifying_key().to_bytes());
    let (_, person_proof) = net.oracles[1].membership(0, &person).unwrap().unwrap();
    verifier
        .verify_member_of_class(&cert, &person, Class::Human, &person_proof)
        .unwrap();
    // The proof does not transfer to an identity that was not active.
    let idle = hco_oracle::IdentityId(humans[4].verifying_key().to_bytes());
    assert!(net.oracles[0].membership(0, &idle).unwrap().is_none());
    assert_eq!(
        verifier
            .verify_membership(&cert, &idle, &proof)
            .unwrap_err()
            .code(),
        "not_included"
    );
    // A certificate below quorum, or with a forged signer, fails.
    let mut thin = cert.clone();
    thin.signatures.truncate(1);
    assert_eq!(
        verifier.verify_certificate(&thin).unwrap_err().code(),
        "below_quorum"
    );
    let mut forged = cert.clone();
    forged.signatures[0].1.0[3] ^= 1;
    assert_eq!(
        verifier.verify_certificate(&forged).unwrap_err().code(),
        "bad_signature"
    );
    let outsider = LightVerifier::new(vec![net.params.committee[0]], 1).unwrap();
    assert_eq!(
        outsider.verify_certificate(&cert).unwrap_err().code(),
        "not_in_committee"
    );
    // A quorum that is not a strict majority is refused when the verifier is made: quorum 0
    // would accept a certificate with no signature at all.
    let n = net.params.committee.len() as u32;
    for quorum in [0, n / 2, n + 1] {
        assert_eq!(
            LightVerifier::new(net.params.committee.clone(), quorum)
                .unwrap_err()
                .code(),
            "bad_quorum",
            "quorum {quorum} of {n}"
        );
    }
    let twice = vec![net.params.committee[0]; 3];
    assert!(
        LightVerifier::new(twice, 2).is_err(),
        "a committee listing one key twice"
    );

    // Every node's audit is clean.
    for o in &net.oracles {
        let report = o.audit(0).unwrap();
        assert_eq!((report.checked, report.unrevealed), (12, 0));
        assert!(report.findings.is_empty(), "{:?}", report.findings);
    }

    // Status: active in window 0, lapsed after missing window 1, retired much later.
    let o = &net.oracles[0];
    assert_eq!(
        o.status(&member, net.start(1) + 5).unwrap().unwrap().status,
        Status::Active
    );
    assert_eq!(
        o.status(&member, net.start(2) + 5).unwrap().unwrap().status,
        Status::Lapsed
    );
    assert_eq!(
        o.status(&member, net.start(40)).unwrap().unwrap().status,
        Status::Retired
    );
    assert_eq!(
        o.status(&idle, now).unwrap().unwrap().status,
        Status::Pending
    );
}

#[test]
fn audit_catches_an_issuer_that_accepts_wrong_or_late_answers() {
    let net = Net::new(1);
    let oracle = &net.oracles[0];
    let now = net.start(0) + 1_000;
    let cheat_key = testing::key(1);
    let human = testing::key(300);
    net.register(&human, Class::Human, now);
    let issued = oracle
        .issue(&SignedRequest::new(&human, 0, 0), now)
        .unwrap()
        .unwrap();
    let right = solve(oracle, &issued);
    let wrong = format!(
        "{}",
        String::from_utf8(right).unwrap().parse::<i64>().unwrap() + 1
    )
    .into_bytes();
    // The issuer bypasses verification and seals a wrong answer and a late one itself.
    let wrong_acceptance = Acceptance {
        version: VERSION,
        response: Response::new(&human, issued.challenge.clone(), wrong),
        accepted_at: now + 1_000,
    };
    // Challenge 1 is issued once challenge 0 expired (the sealed wrong answer above never
    // went through this issuer's verification, so its ledger does not know it as answered).
    let issued_j1 = oracle
        .issue(
            &SignedRequest::new(&human, 0, 1),
            issued.challenge.challenge.deadline + 1,
        )
        .unwrap()
        .unwrap();
    let late_acceptance = Acceptance {
        version: VERSION,
        response: Response::new(
            &human,
            issued_j1.challenge.clone(),
            solve(oracle, &issued_j1),
        ),
        accepted_at: issued_j1.challenge.challenge.deadline + 1,
    };
    let sealed = seal_batch(&cheat_key, 0, vec![wrong_acceptance, late_acceptance]);
    // Members refuse the late one on receipt (and with it the whole batch); a wrong answer
    // needs the secret to see. Both are stored here as a member that skipped the checks would.
    assert_eq!(
        oracle
            .record_remote(&sealed, crate::support::at_once(&sealed))
            .unwrap()
            .unwrap_err()
            .code(),
        "challenge_expired"
    );
    assert!(oracle.ledger().accepted_keys(0).unwrap().is_empty());
    oracle
        .record_remote(&sealed[..1], crate::support::at_once(&sealed[..1]))
        .unwrap()
        .unwrap();
    oracle.ledger().insert_acceptances(&sealed[1..]).unwrap();
    oracle.reveal(0, net.params.closes_at(0)).unwrap().unwrap();
    let report = oracle.audit(0).unwrap();
    let violations: Vec<_> = report
        .findings
        .iter()
        .map(|f| f.violation.clone())
        .collect();
    assert_eq!(
        violations,
        vec![
            Violation::WrongAnswer {
                code: "answer_mismatch".into()
            },
            Violation::Late
        ]
    );
    // The evidence carries the issuer's own seal.
    for f in &report.findings {
        f.evidence.check_seal().unwrap();
        assert_eq!(f.evidence.seal.issuer, oracle.node_id());
    }
}

#[test]
fn a_wrong_reveal_shows_as_prompt_mismatch() {
    let net = Net::new(1);
    let now = net.start(0) + 1_000;
    let agent = testing::key(400);
    net.register(&agent, Class::Agent, now);
    solve_one(&net, &agent, 0, 0, now, now + 10);
    let fake = SignedReveal::new(
        &testing::key(1),
        0,
        hco_oracle::Digest([7; 32]),
        hco_oracle::Digest([8; 32]),
    );
    net.oracles[0]
        .add_reveal(&fake, net.params.closes_at(0))
        .unwrap()
        .unwrap();
    let report = net.oracles[0].audit(0).unwrap();
    assert_eq!(report.findings.len(), 1);
    assert!(matches!(
        report.findings[0].violation,
        Violation::PromptMismatch | Violation::FamilyMismatch
    ));
}

#[test]
fn reconciliation_input_is_idempotent_and_checked() {
    let net = Net::new(3);
    let now = net.start(0) + 1_000;
    let agent = testing::key(500);
    net.register(&agent, Class::Agent, now);
    solve_one(&net, &agent, 0, 0, now, now + 10);
    let issuer = net.issuer_for(&agent, 0);
    let mine: Vec<_> = issuer.ledger().acceptances(0).map(Result::unwrap).collect();
    let other = net
        .oracles
        .iter()
        .find(|o| o.node_id() != issuer.node_id())
        .unwrap();
    assert_eq!(
        other
            .record_remote(&mine, crate::support::at_once(&mine))
            .unwrap()
            .unwrap(),
        1
    );
    assert_eq!(
        other
            .record_remote(&mine, crate::support::at_once(&mine))
            .unwrap()
            .unwrap(),
        0
    );
    assert_eq!(
        other.ledger().accepted_keys(0).unwrap(),
        issuer.ledger().accepted_keys(0).unwrap()
    );
    // A tampered answer breaks the seal's inclusion proof.
    let mut tampered = mine.clone();
    tampered[0].acceptance.response.answer.push(b' ');
    let fresh = net
        .oracles
        .iter()
        .find(|o| o.node_id() != issuer.node_id() && o.node_id() != other.node_id())
        .unwrap();
    assert_eq!(
        fresh
            .record_remote(&tampered, crate::support::at_once(&tampered))
            .unwrap()
            .unwrap_err()
            .code(),
        "bad_issuer_signature"
    );
    assert!(fresh.ledger().accepted_keys(0).unwrap().is_empty());
}
