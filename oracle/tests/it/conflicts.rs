//! First write wins for a window's reveals and certificate: a member's second, different
//! reveal of a window is evidence against it and never replaces the first; a second certificate
//! of another summary (both with a quorum's signatures) is refused with a stable reason, keeps
//! the first, and accuses the members that signed both summaries.

use std::sync::{Arc, Mutex};

use hco_oracle::certificate::assemble;
use hco_oracle::{Digest, Evidence, SignedReveal, SignedSummary, WindowSummary, testing};

use crate::support::Net;

const T: u64 = 1;

#[test]
fn a_second_different_reveal_is_evidence_and_the_first_is_kept() {
    let net = Net::new(3);
    let closed = net.params.closes_at(T);
    let first = net.oracles[2].reveal(T, closed).unwrap().unwrap().reveal;
    let receiver = &net.oracles[0];
    let told = Arc::new(Mutex::new(Vec::new()));
    let sink = told.clone();
    assert!(receiver.observe_evidence(move |e| sink.lock().unwrap().push(e.clone())));
    assert!(
        !receiver.observe_evidence(|_| {}),
        "one observer per oracle"
    );
    receiver.add_reveal(&first, closed).unwrap().unwrap();
    // The same reveal again: nothing new.
    receiver.add_reveal(&first, closed).unwrap().unwrap();
    assert!(receiver.ledger().evidence(T).unwrap().is_empty());

    let second = SignedReveal::new(&testing::key(3), T, Digest([9; 32]), Digest([9; 32]));
    receiver.add_reveal(&second, closed).unwrap().unwrap();

    let held = receiver
        .ledger()
        .reveal(T, &net.oracles[2].node_id())
        .unwrap();
    assert_eq!(held, Some(first.clone()));
    let evidence = receiver.ledger().evidence(T).unwrap();
    assert_eq!(
        evidence,
        vec![Evidence::DoubleReveal {
            first,
            second: second.clone()
        }]
    );
    evidence[0].check(&net.params).unwrap();
    // Arriving once more adds no second piece; the observer heard of it once.
    receiver.add_reveal(&second, closed).unwrap().unwrap();
    assert_eq!(receiver.ledger().evidence(T).unwrap().len(), 1);
    assert_eq!(*told.lock().unwrap(), evidence);
}

#[test]
fn a_conflicting_certificate_is_refused_the_first_kept_and_double_signers_accused() {
    let net = Net::new(3);
    let summary = |root: u8| {
        let (mut s, _) = WindowSummary::of(T, Vec::new(), net.params.digest());
        s.root = Digest([root; 32]);
        s
    };
    let signed = |member: u64, root: u8| SignedSummary::new(&testing::key(member), summary(root));
    // Quorum is two of three: member 3 signs both summaries.
    let quorum = net.params.quorum;
    let first = assemble(&[signed(1, 1), signed(3, 1)], quorum).unwrap();
    let other = assemble(&[signed(2, 2), signed(3, 2)], quorum).unwrap();
    let o = &net.oracles[0];
    o.add_certificate(&first).unwrap().unwrap();
    // The same summary under other signatures is no conflict.
    let resigned = assemble(&[signed(1, 1), signed(2, 1)], quorum).unwrap();
    o.add_certificate(&resigned).unwrap().unwrap();
    assert!(o.ledger().evidence(T).unwrap().is_empty());

    let refused = o.add_certificate(&other).unwrap().unwrap_err();

    assert_eq!(refused.code(), "certificate_conflict");
    assert_eq!(o.ledger().certificate(T).unwrap(), Some(first));
    let evidence = o.ledger().evidence(T).unwrap();
    assert_eq!(evidence.len(), 1);
    assert_eq!(evidence[0].kind(), "double_summary");
    assert_eq!(evidence[0].accused(), testing::node_id(&testing::key(3)));
    evidence[0].check(&net.params).unwrap();
}
