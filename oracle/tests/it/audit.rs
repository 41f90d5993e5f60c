//! The audit of a large window, as a member that did not issue it runs it: split over the
//! machine's cores, it reports what the same audit does a few acceptances at a time, in
//! order, with bad seals apart from the issuer's violations.

use std::collections::BTreeMap;

use hco_challenges::{Class, Registry};
use hco_oracle::audit::{Audited, audit_window};
use hco_oracle::{
    AuditReport, Ledger, Oracle, Response, SealedAcceptance, Violation, seal_batch, testing,
};

use crate::support::register_and_issue;

/// Enough acceptances for the audit to use every core.
const N: u64 = 700;

/// One member that issued and accepted one challenge for each of `N` identities in window 0;
/// its acceptances, in key order.
fn window() -> (Oracle, Vec<SealedAcceptance>) {
    let key = testing::key(1);
    let params = testing::params_for(&[testing::node_id(&key)]);
    let ledger = Ledger::temporary(params.digest()).unwrap();
    let oracle = Oracle::new(params.clone(), Registry::builtin(), key, ledger).unwrap();
    let now = params.genesis_ms + 1_000;
    let responses: Vec<Response> = (0..N)
        .map(|i| {
            let id = testing::key(50_000 + i);
            let issued = register_and_issue(&oracle, &id, Class::Agent, now);
            let family = oracle.registry().get(&issued.prompt.family).unwrap();
            let answer = family.solve(&issued.prompt).unwrap();
            Response::new(&id, issued.challenge, answer)
        })
        .collect();
    for chunk in responses.chunks(256) {
        for verdict in oracle.verify_responses(chunk, now + 2_000).unwrap() {
            verdict.unwrap();
        }
    }
    let accepted = oracle.ledger().acceptances(0).map(Result::unwrap).collect();
    (oracle, accepted)
}

fn audit(oracle: &Oracle, acceptances: &[SealedAcceptance]) -> AuditReport {
    let closed = oracle.params().closes_at(0);
    let reveal = oracle.reveal(0, closed).unwrap().unwrap().reveal.reveal;
    let reveals = BTreeMap::from([(reveal.node, reveal.secret)]);
    let ledger = oracle.ledger();
    audit_window(
        oracle.params(),
        oracle.registry(),
        0,
        &oracle.beacon(0).unwrap(),
        &reveals,
        |id| {
            let profile = ledger.identity(id).ok().flatten()?.register.body.profile();
            Some(Audited {
                profile,
                passkeys: Vec::new(),
            })
        },
        acceptances,
    )
}

#[test]
fn a_large_audit_reports_in_order_what_small_ones_do() {
    let (oracle, mut accepted) = window();
    assert_eq!(accepted.len(), N as usize);
    // Two acceptances the issuer sealed over another answer than the identity signed, far
    // apart, and one whose seal was damaged in between.
    for k in [10, 650] {
        let mut acceptance = accepted[k].acceptance.clone();
        acceptance.response.answer = b"not what was signed".to_vec();
        accepted[k] = seal_batch(&testing::key(1), 0, vec![acceptance]).remove(0);
    }
    accepted[300].seal.root.0[0] ^= 1;

    let whole = audit(&oracle, &accepted);
    assert_eq!(whole.checked, N as usize);
    assert_eq!(whole.unrevealed, 0);
    let at = |k: usize| {
        let c = accepted[k].acceptance.challenge();
        (c.id, c.j)
    };
    let found: Vec<_> = whole
        .findings
        .iter()
        .map(|f| {
            assert_eq!(f.violation, Violation::ForgedResponse);
            let c = f.evidence.acceptance.challenge();
            (c.id, c.j)
        })
        .collect();
    assert_eq!(found, vec![at(10), at(650)]);
    assert_eq!(whole.unsealed, vec![at(300)]);

    // The same audit, on the calling thread a few at a time.
    let mut pieces = AuditReport::default();
    for chunk in accepted.chunks(100) {
        let part = audit(&oracle, chunk);
        pieces.checked += part.checked;
        pieces.findings.extend(part.findings);
        pieces.unsealed.extend(part.unsealed);
    }
    assert_eq!(pieces, whole);
}
