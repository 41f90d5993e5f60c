//! Rotating issuers (`rotate_issuers`): each try of an identity-window at its own member, the
//! later ones issued after asking the earlier ones' issuers how those went; a member's
//! acceptance of a try it may not issue is refused and kept as evidence against it. Against a
//! committee of one issuer per window, where the same member answering every try for its own
//! sybil makes it active.

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_oracle::secret::{derive_challenge, draw_family, issuers_of, node_secret, window_secret};
use hco_oracle::{
    Acceptance, Challenge, Digest, EarlierTries, Oracle, Reason, Response, SignedChallenge,
    SignedRequest, Step, TryStatus, VERSION, seal_batch, testing,
};

use crate::support::{Net, solve};

fn net(rotate: bool) -> Net {
    Net::with(4, |p| {
        p.rotate_issuers = rotate;
        p.policies.agent.steps = vec![Step::Drawn, Step::Drawn];
        p.policies.agent.spares = 1;
    })
}

fn member<'a>(net: &'a Net, key: &SigningKey, t: u64, j: u32) -> &'a Oracle {
    let first = issuers_of(&net.params, &testing::identity_id(key), t, j)[0];
    net.oracles.iter().find(|o| o.node_id() == first).unwrap()
}

/// What `o` learns of `key`'s earlier tries before `j` by asking their issuers (as the node does).
fn ask(net: &Net, o: &Oracle, key: &SigningKey, t: u64, j: u32, now: u64) -> EarlierTries {
    let id = testing::identity_id(key);
    let mut out = EarlierTries::new();
    for (k, issuers) in o.earlier_tries_to_ask(&id, t, j).unwrap() {
        let asked = net
            .oracles
            .iter()
            .find(|x| x.node_id() == issuers[0])
            .unwrap();
        let status = asked.try_status(&id, t, k, now).unwrap();
        if let TryStatus::Passed(sealed) = &status {
            o.record_remote(
                std::slice::from_ref(sealed),
                crate::support::at_once(std::slice::from_ref(sealed)),
            )
            .unwrap()
            .unwrap();
        }
        out.insert(k, status);
    }
    out
}

#[test]
fn each_try_has_its_own_issuer_and_later_ones_follow_the_earlier_outcomes() {
    let net = net(true);
    let key = testing::key(500);
    let now = net.start(0) + 1_000;
    net.register(&key, Class::Agent, now);
    let issuers: Vec<_> = (0..3).map(|j| member(&net, &key, 0, j).node_id()).collect();
    assert_ne!(issuers[0], issuers[1]);
    assert_ne!(issuers[1], issuers[2]);
    // Try 0 only at its issuer.
    let other = net
        .oracles
        .iter()
        .find(|o| o.node_id() != issuers[0])
        .unwrap();
    let refused = other.issue(&SignedRequest::new(&key, 0, 0), now).unwrap();
    assert!(
        matches!(refused, Err(Reason::NotAssignedIssuer { .. })),
        "{refused:?}"
    );

    let first = member(&net, &key, 0, 0);
    let c0 = first
        .issue(&SignedRequest::new(&key, 0, 0), now)
        .unwrap()
        .unwrap();
    // Try 1 waits for try 0, whose issuer says it is open.
    let second = member(&net, &key, 0, 1);
    let checked = second
        .check_request_signature(SignedRequest::new(&key, 0, 1))
        .unwrap();
    let earlier = ask(&net, second, &key, 0, 1, now + 10);
    assert!(matches!(earlier[&0], TryStatus::Open { .. }));
    let waiting = second.issue_after(&checked, now + 10, &earlier).unwrap();
    assert_eq!(
        waiting.unwrap_err(),
        Reason::PreviousStepUnanswered { previous: 0 }
    );

    // Try 0 answered wrongly: try 1 serves step 0 again; answered right, the pass is carried
    // to try 2's issuer with its acceptance.
    let wrong = Response::new(&key, c0.challenge.clone(), b"0".to_vec());
    assert!(first.verify_response(&wrong, now + 20).unwrap().is_err());
    let earlier = ask(&net, second, &key, 0, 1, now + 30);
    assert_eq!(earlier[&0], TryStatus::Failed);
    let c1 = second
        .issue_after(&checked, now + 30, &earlier)
        .unwrap()
        .unwrap();
    let right = Response::new(&key, c1.challenge.clone(), solve(second, &c1));
    second.verify_response(&right, now + 40).unwrap().unwrap();

    let third = member(&net, &key, 0, 2);
    let checked = third
        .check_request_signature(SignedRequest::new(&key, 0, 2))
        .unwrap();
    let earlier = ask(&net, third, &key, 0, 2, now + 50);
    assert!(matches!(earlier[&1], TryStatus::Passed(_)));
    let c2 = third
        .issue_after(&checked, now + 50, &earlier)
        .unwrap()
        .unwrap();
    let right = Response::new(&key, c2.challenge.clone(), solve(third, &c2));
    third.verify_response(&right, now + 60).unwrap().unwrap();
    // Two passes at two members: active, as every member holding both acceptances computes.
    assert_eq!(
        third
            .ledger()
            .solves(0, &testing::identity_id(&key))
            .unwrap(),
        2
    );
    assert_eq!(
        third.active_set(0).unwrap(),
        vec![(testing::identity_id(&key), Class::Agent)]
    );
    // A try past the last is refused as complete.
    let past = third
        .issue(&SignedRequest::new(&key, 0, 3), now + 70)
        .unwrap();
    assert!(past.is_err());
}

/// Member `o` answers every try of its own sybil `sybil` in `t` right, as modified issuing
/// code would; returns the sealed acceptances.
fn answer_for_own_sybil(
    o: &Oracle,
    o_key: &SigningKey,
    sybil: &SigningKey,
    t: u64,
    now: u64,
) -> Vec<hco_oracle::SealedAcceptance> {
    let params = o.params();
    let w_t = window_secret(&node_secret(o_key), t);
    let id = testing::identity_id(sybil);
    let mut batch = Vec::new();
    for j in 0..3u32 {
        let step = &params.policies.agent.steps[(j as usize).min(1)];
        let family = draw_family(params, o.registry(), Class::Agent, step, &w_t, &id, t, j)
            .unwrap()
            .name
            .clone();
        let (config, generated) =
            derive_challenge(params, o.registry(), &w_t, Class::Agent, &id, t, j, &family).unwrap();
        let answer = o
            .registry()
            .get(&family)
            .unwrap()
            .solve(&generated.prompt)
            .unwrap();
        let issued_at = now - 2_000;
        let challenge = Challenge {
            version: VERSION,
            issuer: o.node_id(),
            id,
            t,
            j,
            family,
            issued_at,
            deadline: issued_at + config.deadline_ms,
            prompt_digest: Digest(generated.prompt.digest()),
            witness: None,
        };
        batch.push(Acceptance {
            version: VERSION,
            response: Response::new(sybil, SignedChallenge::new(o_key, challenge), answer),
            accepted_at: now,
        });
    }
    seal_batch(o_key, t, batch)
}

#[test]
fn a_member_answering_for_its_own_sybil_passes_one_try_when_tries_rotate() {
    for rotate in [false, true] {
        let net = net(rotate);
        let now = net.start(0) + 5_000;
        // A sybil whose window-0 tries start at member 0 (the cheat).
        let cheat_key = testing::key(1);
        let cheat = &net.oracles[0];
        let sybil = (1_000u64..)
            .map(testing::key)
            .find(|k| member(&net, k, 0, 0).node_id() == cheat.node_id())
            .unwrap();
        net.register(&sybil, Class::Agent, now - 4_000);
        let sealed = answer_for_own_sybil(cheat, &cheat_key, &sybil, 0, now);
        let honest = &net.oracles[1];
        let id = testing::identity_id(&sybil);
        if !rotate {
            // One issuer per window: all three are genuine and the sybil is active.
            assert_eq!(
                honest
                    .record_remote(&sealed, crate::support::at_once(&sealed))
                    .unwrap(),
                Ok(3)
            );
            assert_eq!(honest.active_set(0).unwrap(), vec![(id, Class::Agent)]);
            continue;
        }
        // Rotating: the batch is refused, and the cheat's seal on a try it may not issue is
        // kept as evidence naming it.
        let refused = honest
            .record_remote(&sealed, crate::support::at_once(&sealed))
            .unwrap();
        assert!(
            matches!(refused, Err(Reason::NotAssignedIssuer { .. })),
            "{refused:?}"
        );
        let evidence = honest.ledger().evidence(0).unwrap();
        assert_eq!(evidence.len(), 1);
        assert_eq!(evidence[0].accused(), cheat.node_id());
        // Its own try alone is genuine, and not enough.
        assert_eq!(
            honest
                .record_remote(&sealed[..1], crate::support::at_once(&sealed[..1]))
                .unwrap(),
            Ok(1)
        );
        assert!(honest.active_set(0).unwrap().is_empty());
    }
}
