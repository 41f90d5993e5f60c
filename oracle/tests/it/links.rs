//! Account links through the committee: statements recorded by every member, the links in
//! force in a window committed to by its certificate, the proof a light verifier checks, and the
//! rules that keep every member's set the same (later choices replace earlier ones).

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_oracle::account::{AccountId, address_of, personal_message_hash};
use hco_oracle::link::{AccountLink, SignedLink};
use hco_oracle::{AccountSig, LightVerifier, WindowCertificate, testing};

use crate::support::{Net, solve_one};

/// An EVM account's key and its CAIP-10 id on chain 1.
pub fn evm(seed: u8) -> (k256::ecdsa::SigningKey, String) {
    let key = k256::ecdsa::SigningKey::from_slice(&[seed; 32]).unwrap();
    let address = address_of(key.verifying_key());
    (key, format!("eip155:1:0x{}", hex::encode(address)))
}

/// `identity`'s statement linking `account` (held by `evm`) from window `from` on.
pub fn signed(
    net: &Net,
    identity: &SigningKey,
    evm: &k256::ecdsa::SigningKey,
    account: &str,
    from: u64,
) -> SignedLink {
    let link = AccountLink::new(
        net.params.digest(),
        testing::identity_id(identity),
        account,
        from,
    )
    .unwrap();
    let identity_sig = link.sign_identity(identity);
    let (sig, recovery) =
        evm.sign_prehash_recoverable(&personal_message_hash(link.text().as_bytes()));
    let mut account_sig = [0u8; 65];
    account_sig[..64].copy_from_slice(&sig.to_bytes());
    account_sig[64] = 27 + recovery.to_byte();
    SignedLink {
        link,
        identity_sig,
        account_sig: AccountSig(account_sig),
    }
}

/// Every member records `link` at `now`.
fn record(net: &Net, link: &SignedLink, now: u64) {
    for o in &net.oracles {
        o.record_link(link, now).unwrap().unwrap();
    }
}

/// Closes window `t` on every member (acceptances shared, secrets revealed, summaries
/// exchanged) and returns its certificate.
fn certify(net: &Net, t: u64) -> WindowCertificate {
    net.share_acceptances(t);
    let closed = net.reveal_all(t);
    let summaries: Vec<_> = net
        .oracles
        .iter()
        .map(|o| o.summarize(t, closed).unwrap().unwrap())
        .collect();
    let mut cert = None;
    for o in &net.oracles {
        for s in &summaries {
            cert = o.add_summary(s).unwrap().unwrap().or(cert);
        }
    }
    cert.unwrap_or_else(|| {
        panic!(
            "the members of window {t} do not agree: {:?}",
            summaries.iter().map(|s| &s.summary).collect::<Vec<_>>()
        )
    })
}

#[test]
fn a_linked_account_proves_its_identity_active_as_a_human_in_the_certified_window() {
    let net = Net::new(3);
    let now = net.start(0) + 1_000;
    let (person, agent, idle) = (testing::key(700), testing::key(701), testing::key(702));
    net.register(&person, Class::Human, now);
    net.register(&agent, Class::Agent, now);
    net.register(&idle, Class::Human, now);
    let (evm_p, account_p) = evm(1);
    let (evm_a, account_a) = evm(2);
    let (evm_i, account_i) = evm(3);
    let (_, unlinked) = evm(4);
    // Window 0 is past, for a statement from a client: its deadline was a round after it
    // closed.
    let too_late = signed(&net, &person, &evm_p, &account_p, 0);
    let refused = net.oracles[0]
        .record_link(&too_late, net.params.link_deadline(0, 0) + 1)
        .unwrap()
        .unwrap_err();
    assert_eq!(refused.code(), "wrong_window");
    for (key, evm, account) in [
        (&person, &evm_p, &account_p),
        (&agent, &evm_a, &account_a),
        (&idle, &evm_i, &account_i),
    ] {
        record(&net, &signed(&net, key, evm, account, 1), now);
    }
    // Window 1: the person and the agent are active, the third identity is not.
    let now1 = net.start(1) + 1_000;
    solve_one(&net, &person, 1, 0, now1, now1 + 1_000);
    solve_one(&net, &agent, 1, 0, now1, now1 + 1_000);
    let cert = certify(&net, 1);
    assert_eq!(cert.summary.count, 2);
    assert_ne!(cert.summary.links_root, hco_oracle::merkle::empty_root());

    let verifier = LightVerifier::new(net.params.committee.clone(), net.params.quorum)
        .unwrap()
        .with_params(net.params.digest());
    let member = &net.oracles[2];
    let served = member
        .link_proof(1, &AccountId::parse(&account_p).unwrap())
        .unwrap()
        .expect("a linked, active person");
    assert_eq!(served.certificate, cert);
    assert_eq!(served.link.identity, testing::identity_id(&person));
    verifier
        .verify_linked(
            &cert,
            &account_p,
            &served.link.identity,
            &served.link,
            &served.proof,
            Class::Human,
        )
        .unwrap();
    // The agent's account is linked too, but not to a person.
    let served = member
        .link_proof(1, &AccountId::parse(&account_a).unwrap())
        .unwrap()
        .unwrap();
    let refused = verifier
        .verify_linked(
            &cert,
            &account_a,
            &served.link.identity,
            &served.link,
            &served.proof,
            Class::Human,
        )
        .unwrap_err();
    assert_eq!(refused.code(), "wrong_class");
    // An idle identity's link is not in the window, nor is an unlinked account.
    for account in [&account_i, &unlinked] {
        assert!(
            member
                .link_proof(1, &AccountId::parse(account).unwrap())
                .unwrap()
                .is_none()
        );
    }
}

#[test]
fn later_choices_replace_earlier_ones_the_same_way_on_every_member() {
    let net = Net::new(3);
    let now = net.start(0) + 1_000;
    let (first, second) = (testing::key(710), testing::key(711));
    net.register(&first, Class::Human, now);
    net.register(&second, Class::Human, now);
    let (evm_x, account_x) = evm(11);
    let (evm_y, account_y) = evm(12);
    // Window 1: `first` links account x. From window 2, x's holder links x to `second`
    // instead, and `first` links account y.
    let statements = [
        signed(&net, &first, &evm_x, &account_x, 1),
        signed(&net, &second, &evm_x, &account_x, 2),
        signed(&net, &first, &evm_y, &account_y, 2),
    ];
    // Each member hears them in another order.
    for (i, o) in net.oracles.iter().enumerate() {
        for k in 0..statements.len() {
            let s = &statements[(k + i) % statements.len()];
            assert_eq!(o.record_link(s, now).unwrap(), Ok(true));
            assert_eq!(o.record_link(s, now).unwrap(), Ok(false));
        }
    }
    let both_active = |t: u64| {
        let at = net.start(t) + 1_000;
        solve_one(&net, &first, t, 0, at, at + 1_000);
        solve_one(&net, &second, t, 0, at, at + 1_000);
        certify(&net, t)
    };
    let linked = |t: u64, account: &str| {
        net.oracles[1]
            .link_proof(t, &AccountId::parse(account).unwrap())
            .unwrap()
            .map(|p| p.link.identity)
    };
    // Each window's secret is committed to by the reveal two windows before: close window 0
    // too, so that window 2 counts every member's acceptances.
    certify(&net, 0);
    both_active(1);
    assert_eq!(linked(1, &account_x), Some(testing::identity_id(&first)));
    assert_eq!(linked(1, &account_y), None);
    both_active(2);
    assert_eq!(linked(2, &account_x), Some(testing::identity_id(&second)));
    assert_eq!(linked(2, &account_y), Some(testing::identity_id(&first)));
}

#[test]
fn a_statement_for_another_network_or_with_a_bad_signature_is_refused() {
    let net = Net::new(1);
    let now = net.start(0) + 1_000;
    let person = testing::key(720);
    let o = &net.oracles[0];
    let (evm_p, account) = evm(21);
    let good = signed(&net, &person, &evm_p, &account, 1);
    // Not registered yet.
    assert_eq!(
        o.record_link(&good, now).unwrap().unwrap_err().code(),
        "unknown_identity"
    );
    net.register(&person, Class::Human, now);
    let mut other_network = good.clone();
    other_network.link.network = hco_oracle::Digest([9; 32]);
    let mut forged = good.clone();
    forged.account_sig.0[10] ^= 1;
    let (other_evm, _) = evm(22);
    let wrong_signer = {
        let mut s = good.clone();
        let again = signed(&net, &person, &other_evm, &account, 1);
        s.account_sig = again.account_sig;
        s
    };
    let far = signed(
        &net,
        &person,
        &evm_p,
        &account,
        1 + hco_oracle::MAX_LINK_LEAD,
    );
    let near = signed(&net, &person, &evm_p, &account, hco_oracle::MAX_LINK_LEAD);
    assert_eq!(
        o.record_link(&far, now).unwrap().unwrap_err().code(),
        "wrong_window"
    );
    for (bad, why) in [
        (&other_network, "network"),
        (&forged, "forged"),
        (&wrong_signer, "signer"),
    ] {
        let refused = o.record_link(bad, now).unwrap().unwrap_err();
        assert_eq!(refused.code(), "bad_link", "{why}: {refused}");
    }
    assert_eq!(o.record_link(&good, now).unwrap(), Ok(true));
    assert_eq!(o.record_link(&near, now).unwrap(), Ok(true));
}

#[test]
fn statements_are_served_page_by_page_in_key_order_within_the_windows_asked() {
    let net = Net::new(1);
    let now = net.start(0) + 1_000;
    let o = &net.oracles[0];
    let keys: Vec<SigningKey> = (730..733).map(testing::key).collect();
    let mut made = Vec::new();
    for (k, key) in keys.iter().enumerate() {
        net.register(key, Class::Human, now);
        for from in [1, 3] {
            let (wallet, account) = evm(30 + 2 * k as u8 + (from as u8 / 3));
            let s = signed(&net, key, &wallet, &account, from);
            assert_eq!(o.record_link(&s, now).unwrap(), Ok(true));
            made.push(s);
        }
    }
    // Pages of one, each after the last one served, only first windows 1..=2.
    let mut served = Vec::new();
    let mut after = None;
    loop {
        let page = o.links_between(1..=2, after.as_ref(), 1).unwrap();
        let Some(last) = page.last() else { break };
        let l = &last.link.link;
        after = Some((l.identity, l.account.chain_id().to_owned(), l.from_window));
        served.extend(page.into_iter().map(|r| r.link));
    }
    let mut expected: Vec<SignedLink> = made
        .into_iter()
        .filter(|s| s.link.from_window == 1)
        .collect();
    expected.sort_by_key(|s| s.link.identity);
    assert_eq!(served, expected);
}
