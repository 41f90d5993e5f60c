//! A client racing the members cannot split them over account links (hco_oracle::relay's link
//! rule): whoever it sends a statement to, whenever, whichever members hold its identity's
//! registration yet, and whatever a faulty member relays, honest members that relay within a
//! round and pull each other's statements before the deadline keep the same statements, so
//! they commit to the same links. And a faulty member's relay alone makes them store nothing
//! for an identity nobody registered.

use std::collections::BTreeMap;

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_oracle::link::SignedLink;
use hco_oracle::{RelayedLink, SignedRegister, testing};

use crate::links::{evm, signed};
use crate::support::Net;

/// Members 0–2 are honest; member 3 relays what it likes, when it likes.
const FAULTY: usize = 3;
const HONEST: [usize; 3] = [0, 1, 2];

/// When the client's bare statement reaches an honest member, relative to its deadline
/// (`None`: never; at it; 1 ms late).
const ARRIVALS: [Option<i64>; 3] = [None, Some(0), Some(1)];

/// One race: the client's arrivals at the honest members, which of them hold the registration,
/// when the faulty member's relay (with its receipt) reaches member 0 relative to the
/// one-receipt deadline and whether it carries the registration, and how long honest relays
/// take.
#[derive(Debug, Clone, Copy)]
struct Race {
    arrivals: [Option<i64>; 3],
    registered: [bool; 3],
    faulty_relay: Option<(i64, bool)>,
    delay: u64,
}

/// Every race over the arrivals, three registration patterns (everywhere, member 0 only,
/// nowhere), four faulty relays (none; at its deadline, with the registration or without; 1 ms
/// late) and relays taking 0 or a round.
fn races(round: u64) -> Vec<Race> {
    let mut out = Vec::new();
    for a in ARRIVALS {
        for b in ARRIVALS {
            for c in ARRIVALS {
                for registered in [[true; 3], [true, false, false], [false; 3]] {
                    for faulty_relay in [None, Some((0, true)), Some((0, false)), Some((1, true))] {
                        for delay in [0, round] {
                            out.push(Race {
                                arrivals: [a, b, c],
                                registered,
                                faulty_relay,
                                delay,
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

/// An event of a race, in time order: a message heard, or a member pulling the others'
/// statements of the window.
enum Event {
    Hear(Box<RelayedLink>),
    Pull,
}

/// Runs `race` for `statement` (first window `from`) and returns what each honest member holds
/// of the identity's statements.
fn run(
    net: &Net,
    statement: &SignedLink,
    registration: &SignedRegister,
    from: u64,
    race: Race,
) -> Vec<Vec<SignedLink>> {
    let params = &net.params;
    let bare = RelayedLink::new(statement.clone());
    let deadline = params.link_deadline(from, 0) as i64;
    let mut queue: BTreeMap<(u64, usize, usize), Event> = BTreeMap::new();
    let mut order = 0;
    let mut push = |queue: &mut BTreeMap<_, _>, at: u64, member: usize, event: Event| {
        queue.insert((at, order, member), event);
        order += 1;
    };
    for (&member, arrival) in HONEST.iter().zip(race.arrivals) {
        if let Some(offset) = arrival {
            push(
                &mut queue,
                (deadline + offset) as u64,
                member,
                Event::Hear(Box::new(bare.clone())),
            );
        }
    }
    if let Some((offset, attaches)) = race.faulty_relay {
        let relayed = bare
            .clone()
            .with_registration(attaches.then(|| registration.clone()))
            .with_receipt(&testing::key(FAULTY as u64 + 1));
        let at = params.link_deadline(from, 1) as i64 + offset;
        push(&mut queue, at as u64, 0, Event::Hear(Box::new(relayed)));
    }
    // Each honest member pulls half a round before the bare deadline, as a node does.
    let pull_at = (deadline - params.relay_round_ms as i64 / 2) as u64;
    for &member in &HONEST {
        push(&mut queue, pull_at, member, Event::Pull);
    }
    while let Some(((at, _, member), event)) = queue.pop_first() {
        let heard: Vec<RelayedLink> = match event {
            Event::Hear(relayed) => vec![*relayed],
            Event::Pull => HONEST
                .iter()
                .filter(|&&o| o != member)
                .flat_map(|&o| {
                    net.oracles[o]
                        .links_between(from..=from, None, 100)
                        .unwrap()
                })
                .collect(),
        };
        for relayed in heard {
            let Ok(heard) = net.oracles[member].hear_link(&relayed, at).unwrap() else {
                continue;
            };
            if let Some(relay) = heard.relay {
                for &other in HONEST.iter().filter(|&&o| o != member) {
                    push(
                        &mut queue,
                        at + race.delay,
                        other,
                        Event::Hear(Box::new(relay.clone())),
                    );
                }
            }
        }
    }
    HONEST
        .iter()
        .map(|&m| {
            net.oracles[m]
                .ledger()
                .links_of(&statement.link.identity)
                .unwrap()
        })
        .collect()
}

/// Registers `key` at the members `registered` says (and at the faulty one); the registration.
fn register_at(net: &Net, key: &SigningKey, registered: [bool; 3], now: u64) -> SignedRegister {
    let reg = SignedRegister::proven(
        key,
        Class::Human.into(),
        now,
        net.params.registration_pow_bits,
    );
    for (m, o) in net.oracles.iter().enumerate() {
        if m == FAULTY || registered[m] {
            o.register(&reg, now).unwrap().unwrap();
        }
    }
    reg
}

#[test]
fn honest_members_keep_the_same_statements_whoever_a_client_races_and_whatever_a_member_relays() {
    let net = Net::new(4);
    assert_eq!(net.params.faults_tolerated(), 1);
    let races = races(net.params.relay_round_ms);
    let (account_key, account) = evm(40);
    let from = 1;
    let mut kept_somewhere = 0;
    for (i, race) in races.iter().enumerate() {
        let key = testing::key(10_000 + i as u64);
        let reg = register_at(&net, &key, race.registered, net.start(0));
        let statement = signed(&net, &key, &account_key, &account, from);
        let held = run(&net, &statement, &reg, from, *race);
        let case = format!("{race:?}");
        assert!(held.iter().all(|h| *h == held[0]), "{case}: {held:?}");
        // Kept exactly when an honest member heard it in time with the registration, or the
        // faulty member's relay came in time with the registration or to a member holding it.
        let in_time = race
            .arrivals
            .iter()
            .zip(race.registered)
            .any(|(a, r)| r && a.is_some_and(|o| o <= 0))
            || race
                .faulty_relay
                .is_some_and(|(o, attaches)| o <= 0 && (attaches || race.registered[0]));
        assert_eq!(held[0].len(), usize::from(in_time), "{case}");
        kept_somewhere += usize::from(in_time);
    }
    assert!(kept_somewhere > 0 && kept_somewhere < races.len());
}

/// Identity `seed`, registered everywhere in window 0, linking wallet `wallet` from window
/// `from`; and the moment it registered.
fn registered_statement(net: &Net, seed: u64, wallet: u8, from: u64) -> (SignedLink, u64) {
    let now = net.start(0) + 1_000;
    let key = testing::key(seed);
    net.register(&key, Class::Human, now);
    let (account_key, account) = evm(wallet);
    (signed(net, &key, &account_key, &account, from), now)
}

#[test]
fn a_statement_too_far_ahead_at_one_member_counts_there_once_another_relays_it() {
    let net = Net::new(4);
    let (statement, now) = registered_statement(&net, 900, 41, 1 + hco_oracle::MAX_LINK_LEAD);
    // Member 0's clock is still in window 0, member 1's in window 1.
    let refused = net.oracles[0].record_link(&statement, now).unwrap();
    assert_eq!(refused.unwrap_err().code(), "wrong_window");
    let later = net.start(1);
    let heard = net.oracles[1]
        .hear_link(&RelayedLink::new(statement.clone()), later)
        .unwrap()
        .unwrap();
    let relay = heard.relay.expect("relayed with member 1's receipt");
    assert!(
        net.oracles[0]
            .hear_link(&relay, now)
            .unwrap()
            .unwrap()
            .fresh
    );
}

#[test]
fn two_statements_for_one_chain_and_window_heard_in_either_order_leave_the_same_one() {
    let net = Net::new(2);
    let now = net.start(0) + 1_000;
    let key = testing::key(901);
    net.register(&key, Class::Human, now);
    let (a_key, a) = evm(42);
    let (b_key, b) = evm(43);
    let first = signed(&net, &key, &a_key, &a, 1);
    let second = signed(&net, &key, &b_key, &b, 1);
    let outcomes: Vec<_> = [(&first, &second), (&second, &first)]
        .into_iter()
        .zip(&net.oracles)
        .map(|((x, y), o)| {
            let codes = [x, y].map(|s| match o.record_link(s, now).unwrap() {
                Ok(_) => "kept",
                Err(reason) => reason.code(),
            });
            (codes, o.ledger().links_of(&first.link.identity).unwrap())
        })
        .collect();
    assert_eq!(outcomes[0].1, outcomes[1].1);
    assert_eq!(outcomes[0].1.len(), 1);
    // One member replaced what it held, the other refused the second as outranked.
    let refusals: Vec<_> = outcomes.iter().map(|(codes, _)| codes[1]).collect();
    assert!(
        refusals.contains(&"kept") && refusals.contains(&"link_outranked"),
        "{refusals:?}"
    );
}

#[test]
fn a_member_that_missed_a_statement_past_its_deadline_takes_it_once_f_plus_one_members_vouch() {
    let net = Net::new(4);
    assert_eq!(net.params.faults_tolerated(), 1);
    let (statement, now) = registered_statement(&net, 902, 44, 1);
    for o in &net.oracles[..2] {
        assert_eq!(o.record_link(&statement, now).unwrap(), Ok(true));
    }
    // Member 2 was away: long after every deadline, one member's word is not enough…
    let late = net.params.links_decided_at(1) + 60_000;
    let one = RelayedLink::new(statement.clone()).with_receipt(&testing::key(1));
    let refused = net.oracles[2].hear_link(&one, late).unwrap().unwrap_err();
    assert_eq!(refused.code(), "wrong_window");
    // …two are (f + 1: one of them is honest, and honest members kept it in time).
    let two = one.with_receipt(&testing::key(2));
    let heard = net.oracles[2].hear_link(&two, late).unwrap().unwrap();
    assert!(heard.fresh && heard.relay.is_none());
    assert_eq!(
        net.oracles[2]
            .ledger()
            .links_of(&statement.link.identity)
            .unwrap(),
        vec![statement]
    );
}

#[test]
fn a_faulty_members_relay_stores_nothing_for_an_identity_nobody_registered() {
    // Registrations need a proof of work here, as in production (a small one).
    let net = Net::with(4, |p| p.registration_pow_bits = 8);
    let now = net.start(0) + 1_000;
    let faulty = testing::key(FAULTY as u64 + 1);
    let (account_key, account) = evm(45);
    let honest = &net.oracles[0];
    let heard = |relayed: &RelayedLink| match honest.hear_link(relayed, now).unwrap() {
        Ok(_) => "kept",
        Err(reason) => reason.code(),
    };
    let key = testing::key(20_000);
    let statement = signed(&net, &key, &account_key, &account, 1);
    let id = statement.link.identity;
    let held = || honest.ledger().links_of(&id).unwrap().len();

    // Its receipt alone: refused (ignored on gossip), nothing kept.
    let bare = RelayedLink::new(statement.clone()).with_receipt(&faulty);
    assert_eq!(heard(&bare), "unknown_identity");
    // Another identity's registration, or the identity's without its proof of work: refused.
    let other = SignedRegister::proven(&testing::key(20_001), Class::Human.into(), now, 8);
    let unproven = SignedRegister::proven(&key, Class::Human.into(), now, 0);
    for (registration, code) in [
        (other, "unknown_identity"),
        (unproven, "registration_proof_missing"),
    ] {
        let relayed = RelayedLink::new(statement.clone())
            .with_registration(Some(registration))
            .with_receipt(&faulty);
        assert_eq!(heard(&relayed), code);
    }
    assert_eq!(held(), 0);
    assert!(!honest.ledger().has_identity(&id).unwrap());
    assert!(
        !honest
            .ledger()
            .has_identity(&testing::identity_id(&testing::key(20_001)))
            .unwrap()
    );
    // With the identity's proven registration (what an honest relay carries): the statement
    // and the registration are kept, and relayed on with both.
    let reg = SignedRegister::proven(&key, Class::Human.into(), now, 8);
    let proven = RelayedLink::new(statement.clone())
        .with_registration(Some(reg.clone()))
        .with_receipt(&faulty);
    let relay = honest
        .hear_link(&proven, now)
        .unwrap()
        .unwrap()
        .relay
        .unwrap();
    assert_eq!(held(), 1);
    assert!(honest.ledger().has_identity(&id).unwrap());
    assert_eq!(relay.registration, Some(reg));
    assert_eq!(relay.receipts.len(), 2);
}
