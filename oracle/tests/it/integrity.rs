//! A committee of three where one member cheats at window close: the certified active set
//! leaves out the acceptances of a member that accepted a wrong answer, withheld its reveal
//! or broke its commitment, keeps the honest members' identities, and the evidence names the
//! cheat with its own signed messages.

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_oracle::secret::{commit_lead, issuer_order};
use hco_oracle::{
    Acceptance, Digest, Evidence, Oracle, Response, SealedAcceptance, SignedRequest, SignedReveal,
    SignedSummary, VERSION, WindowCertificate, seal_batch, testing,
};

use crate::support::{Net, solve_one};

/// The third member cheats.
const CHEAT: usize = 2;
/// A window with commitments (past the genesis windows).
const T: u64 = 2;

fn cheat_key() -> SigningKey {
    testing::key(CHEAT as u64 + 1)
}

/// An identity (from `from` up) whose issuer in `t` is member `member`, registered everywhere.
pub(crate) fn served_by(net: &Net, member: usize, t: u64, from: u64, class: Class) -> SigningKey {
    let node = net.oracles[member].node_id();
    let key = (from..from + 1_000)
        .map(testing::key)
        .find(|k| issuer_order(&net.params.committee, &testing::identity_id(k), t)[0] == node)
        .unwrap();
    net.register(&key, class, net.start(t) + 500);
    key
}

pub(crate) fn spread(net: &Net, batch: &[SealedAcceptance]) {
    for o in &net.oracles {
        o.record_remote(batch, crate::support::at_once(batch))
            .unwrap()
            .unwrap();
    }
}

/// Reveals of `t` by the members listed, given to everyone.
pub(crate) fn reveal(net: &Net, t: u64, members: &[usize]) {
    let closed = net.params.closes_at(t);
    for &m in members {
        let r = net.oracles[m].reveal(t, closed).unwrap().unwrap().reveal;
        for o in &net.oracles {
            o.add_reveal(&r, closed).unwrap().unwrap();
        }
    }
}

/// Every member summarizes `t`; the summaries are exchanged; the honest members' certificate.
pub(crate) fn certify(net: &Net, t: u64) -> WindowCertificate {
    let closed = net.params.closes_at(t);
    let summaries: Vec<SignedSummary> = net
        .oracles
        .iter()
        .map(|o| o.summarize(t, closed).unwrap().unwrap())
        .collect();
    for o in &net.oracles {
        for s in &summaries {
            o.add_summary(s).unwrap().unwrap();
        }
    }
    net.oracles[0].ledger().certificate(t).unwrap().unwrap()
}

/// Windows `0..T` close cleanly, so every member committed to its secret of `T`.
fn net_at_t() -> Net {
    assert_eq!(commit_lead(&testing::params_for(&[])), T);
    let net = Net::new(3);
    for t in 0..T {
        reveal(&net, t, &[0, 1, 2]);
        certify(&net, t);
    }
    net
}

/// Whether `o` can prove `key` was active in the certified set of `T`.
fn certified(o: &Oracle, key: &SigningKey) -> bool {
    o.membership(T, &testing::identity_id(key))
        .unwrap()
        .is_some()
}

/// Solves challenge `(key, T, 0)` at its (honest) issuer and gossips the acceptance.
pub(crate) fn honest_solve(net: &Net, key: &SigningKey) {
    let now = net.start(T) + 1_000;
    solve_one(net, key, T, 0, now, now + 10);
    let issuer = net.issuer_for(key, T);
    let mine: Vec<_> = issuer
        .ledger()
        .acceptances(T)
        .map(Result::unwrap)
        .filter(|s| s.acceptance.challenge().id == testing::identity_id(key))
        .collect();
    spread(net, &mine);
}

#[test]
fn a_wrong_answer_accepted_by_a_member_is_left_out_and_names_it() {
    let net = net_at_t();
    let honest = served_by(&net, 0, T, 100, Class::Agent);
    let friend = served_by(&net, CHEAT, T, 2_000, Class::Agent);
    honest_solve(&net, &honest);
    // The cheat issues a real challenge and seals a wrong answer itself.
    let cheat = &net.oracles[CHEAT];
    let now = net.start(T) + 1_000;
    let issued = cheat
        .issue(&SignedRequest::new(&friend, T, 0), now)
        .unwrap()
        .unwrap();
    let acceptance = Acceptance {
        version: VERSION,
        response: Response::new(&friend, issued.challenge, b"wrong".to_vec()),
        accepted_at: now + 1_000,
    };
    // Members cannot see a wrong answer without the secret: the batch is recorded.
    spread(&net, &seal_batch(&cheat_key(), T, vec![acceptance]));
    reveal(&net, T, &[0, 1, 2]);
    let cert = certify(&net, T);
    assert_eq!(cert.summary.count, 1, "only the honest identity");
    for o in &net.oracles[..2] {
        assert!(certified(o, &honest));
        assert!(!certified(o, &friend));
        assert_eq!(o.excluded_members(T).unwrap(), vec![cheat.node_id()]);
        let evidence = o.ledger().evidence(T).unwrap();
        assert_eq!(evidence.len(), 1);
        assert_eq!(evidence[0].accused(), cheat.node_id());
        assert_eq!(evidence[0].kind(), "failed_audit");
        evidence[0].check(&net.params).unwrap();
    }
    // Gossiped evidence is re-audited on receipt; a passing acceptance is not evidence.
    let fresh = &net.oracles[1];
    let e = net.oracles[0].ledger().evidence(T).unwrap().remove(0);
    assert_eq!(fresh.add_evidence(&e).unwrap(), Ok(false));
    let honest_acceptance = fresh
        .ledger()
        .accepted(T, &testing::identity_id(&honest), 0)
        .unwrap()
        .unwrap();
    let Evidence::FailedAudit { violation, .. } = e else {
        panic!("a failed audit")
    };
    let false_accusation = Evidence::FailedAudit {
        acceptance: Box::new(honest_acceptance),
        violation,
    };
    assert_eq!(
        fresh
            .add_evidence(&false_accusation)
            .unwrap()
            .unwrap_err()
            .code(),
        "malformed"
    );
}

#[test]
fn a_member_that_withholds_its_reveal_is_left_out() {
    let net = net_at_t();
    let honest = served_by(&net, 1, T, 100, Class::Agent);
    let at_cheat = served_by(&net, CHEAT, T, 2_000, Class::Agent);
    honest_solve(&net, &honest);
    honest_solve(&net, &at_cheat);
    reveal(&net, T, &[0, 1]);
    let cert = certify(&net, T);
    assert_eq!(cert.summary.count, 1);
    for o in &net.oracles[..2] {
        assert!(certified(o, &honest));
        assert!(!certified(o, &at_cheat));
        assert_eq!(
            o.excluded_members(T).unwrap(),
            vec![net.oracles[CHEAT].node_id()]
        );
        // Withholding is not evidence (the member may be down), only an exclusion.
        assert!(o.ledger().evidence(T).unwrap().is_empty());
    }
}

#[test]
fn a_reveal_that_breaks_its_commitment_and_a_double_summary_are_evidence() {
    let net = net_at_t();
    let honest = served_by(&net, 0, T, 100, Class::Agent);
    let at_cheat = served_by(&net, CHEAT, T, 2_000, Class::Agent);
    honest_solve(&net, &honest);
    honest_solve(&net, &at_cheat);
    reveal(&net, T, &[0, 1]);
    // The cheat reveals another secret than it committed to two windows ago.
    let closed = net.params.closes_at(T);
    let other = SignedReveal::new(&cheat_key(), T, Digest([9; 32]), Digest([9; 32]));
    for o in &net.oracles[..2] {
        o.add_reveal(&other, closed).unwrap().unwrap();
    }
    // And signs two summaries of the window.
    let two: Vec<SignedSummary> = [1u8, 2]
        .map(|b| {
            let mut s = net.oracles[0]
                .summarize(T, closed)
                .unwrap()
                .unwrap()
                .summary;
            s.root = Digest([b; 32]);
            SignedSummary::new(&cheat_key(), s)
        })
        .into();
    let honest_summaries: Vec<_> = net.oracles[..2]
        .iter()
        .map(|o| o.summarize(T, closed).unwrap().unwrap())
        .collect();
    for o in &net.oracles[..2] {
        for s in two.iter().chain(&honest_summaries) {
            o.add_summary(s).unwrap().unwrap();
        }
        let cert = o.ledger().certificate(T).unwrap().unwrap();
        assert_eq!(cert.summary.count, 1);
        assert!(
            cert.signatures
                .iter()
                .all(|(signer, _)| *signer != net.oracles[CHEAT].node_id())
        );
        assert!(certified(o, &honest));
        assert!(!certified(o, &at_cheat));
        let mut kinds: Vec<_> = o
            .ledger()
            .evidence(T)
            .unwrap()
            .iter()
            .inspect(|e| {
                assert_eq!(e.accused(), net.oracles[CHEAT].node_id());
                e.check(&net.params).unwrap();
            })
            .map(Evidence::kind)
            .collect();
        // Only the cheat is accused: the honest reveals open their commitments. Its wrong
        // secret also fails the audit of its (honest) acceptance: the prompt differs.
        kinds.sort_unstable();
        assert_eq!(
            kinds,
            ["broken_commitment", "double_summary", "failed_audit"]
        );
    }
}

/// The cheat copies an honest member's seal signature under a root of its own, over an
/// acceptance of a wrong answer it claims that member sealed. Members refuse the batch; a
/// member holding such an acceptance anyway (written before this check, or by hand) counts it
/// for nobody and accuses nobody: a bad seal is not the named issuer's signature.
#[test]
fn a_seal_signature_copied_under_another_root_is_refused_and_frames_no_one() {
    let net = net_at_t();
    let honest = served_by(&net, 0, T, 100, Class::Agent);
    let friend = served_by(&net, 0, T, 2_000, Class::Agent);
    honest_solve(&net, &honest);
    let genuine = net.oracles[0]
        .ledger()
        .accepted(T, &testing::identity_id(&honest), 0)
        .unwrap()
        .unwrap();
    // A real challenge of the honest member, answered wrongly and never sent to it.
    let now = net.start(T) + 1_000;
    let issued = net.oracles[0]
        .issue(&SignedRequest::new(&friend, T, 0), now)
        .unwrap()
        .unwrap();
    let wrong = Acceptance {
        version: VERSION,
        response: Response::new(&friend, issued.challenge, b"wrong".to_vec()),
        accepted_at: now + 1_000,
    };
    let mut forged = seal_batch(&cheat_key(), T, vec![wrong]).remove(0);
    forged.seal.issuer = genuine.seal.issuer;
    forged.seal.sig = genuine.seal.sig;
    assert_eq!(forged.seal.count, genuine.seal.count);
    // The genuine acceptance first, so its seal (same signature) was verified before.
    for o in &net.oracles[1..] {
        let refused = o
            .record_remote(
                &[genuine.clone(), forged.clone()],
                crate::support::at_once(&[genuine.clone(), forged.clone()]),
            )
            .unwrap()
            .unwrap_err();
        assert_eq!(refused.code(), "bad_issuer_signature");
        assert!(
            o.ledger()
                .accepted(T, &testing::identity_id(&friend), 0)
                .unwrap()
                .is_none(),
            "nothing of a refused batch is written"
        );
    }
    let holder = &net.oracles[1];
    holder.ledger().insert_acceptances(&[forged]).unwrap();
    reveal(&net, T, &[0, 1, 2]);
    let cert = certify(&net, T);
    assert_eq!(cert.summary.count, 1, "only the honest identity");
    assert!(certified(holder, &honest));
    assert!(!certified(holder, &friend));
    assert!(holder.excluded_members(T).unwrap().is_empty());
    assert!(holder.ledger().evidence(T).unwrap().is_empty());
    // The forged acceptance left the ledger, so a set derived again (to serve proofs once the
    // summarized one is no longer kept) is the certified one.
    let friend_id = testing::identity_id(&friend);
    assert!(
        holder
            .ledger()
            .accepted(T, &friend_id, 0)
            .unwrap()
            .is_none()
    );
    let again: Vec<_> = holder
        .active_set(T)
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(again, vec![testing::identity_id(&honest)]);
}
