//! Membership proofs come from the active set whose root the certificate names: a member whose
//! set falls short of the certified one serves none, and serves proofs that verify once
//! reconciliation completes its set, though it summarized the short set first.

use hco_challenges::Class;
use hco_oracle::{LightVerifier, SealedAcceptance, testing};

use crate::support::{Net, solve_one};

#[test]
fn a_member_short_of_the_certified_set_serves_proofs_once_it_catches_up() {
    let net = Net::new(3);
    let now = net.start(0) + 1_000;
    let agents: Vec<_> = (300..306).map(testing::key).collect();
    for k in &agents {
        net.register(k, Class::Agent, now);
        solve_one(&net, k, 0, 0, now, now + 2_000);
    }
    let all: Vec<SealedAcceptance> = net
        .oracles
        .iter()
        .flat_map(|o| {
            o.ledger()
                .acceptances(0)
                .map(Result::unwrap)
                .collect::<Vec<_>>()
        })
        .collect();
    let (short, member) = (&net.oracles[0], net.oracles[0].node_id());
    let missed = all
        .iter()
        .position(|s| s.seal.issuer != member)
        .expect("another member issued one of six");
    let (missed, rest): (Vec<_>, Vec<_>) = all
        .iter()
        .cloned()
        .enumerate()
        .partition(|(i, _)| *i == missed);
    let missed: Vec<SealedAcceptance> = missed.into_iter().map(|(_, s)| s).collect();
    let rest: Vec<SealedAcceptance> = rest.into_iter().map(|(_, s)| s).collect();
    short
        .record_remote(&rest, crate::support::at_once(&rest))
        .unwrap()
        .unwrap();
    for o in &net.oracles[1..] {
        o.record_remote(&all, crate::support::at_once(&all))
            .unwrap()
            .unwrap();
    }
    let closed = net.reveal_all(0);
    let summaries: Vec<_> = net
        .oracles
        .iter()
        .map(|o| o.summarize(0, closed).unwrap().unwrap())
        .collect();
    assert_eq!(summaries[0].summary.count, 5);
    let mut cert = None;
    for s in &summaries[1..] {
        cert = short.add_summary(s).unwrap().unwrap().or(cert);
    }
    let cert = cert.expect("two of three members agree");
    assert_eq!(cert.summary.count, 6);

    let first = testing::identity_id(&agents[0]);
    let late = missed[0].acceptance.challenge().id;
    // The set it summarized is not the certified one: no proof, for anyone.
    assert!(short.membership(0, &first).unwrap().is_none());
    assert!(short.membership(0, &late).unwrap().is_none());

    assert_eq!(
        short
            .record_remote(&missed, crate::support::at_once(&missed))
            .unwrap()
            .unwrap(),
        1
    );
    let verifier = LightVerifier::new(net.params.committee.clone(), net.params.quorum)
        .unwrap()
        .with_params(net.params.digest());
    for id in [first, late] {
        let (served_cert, proof) = short.membership(0, &id).unwrap().unwrap();
        assert_eq!(served_cert, cert);
        assert_eq!(
            verifier.verify_membership(&cert, &id, &proof).unwrap(),
            Class::Agent
        );
        // Served again from the kept set: the same proof.
        assert_eq!(short.membership(0, &id).unwrap().unwrap().1, proof);
    }
    let stranger = testing::identity_id(&testing::key(999));
    assert!(short.membership(0, &stranger).unwrap().is_none());
}
