//! A faulty member cannot split the honest members over whether its reveal or its acceptances
//! count (hco_oracle::relay): whoever it sends them to, whenever, by gossip or in answer to a
//! request, honest members that relay within a round agree, so they leave out the same members,
//! hold the same acceptances and certify the same root.

use std::collections::BTreeMap;

use hco_challenges::Class;
use hco_oracle::relay::Heard;
use hco_oracle::{RelayedReveal, SealReceipt, SealedAcceptance, SignedSummary};

use crate::support::{Net, solve_one};

/// Members 0–2 are honest; member 3 reveals to whom it likes, when it likes.
const FAULTY: usize = 3;
const HONEST: [usize; 3] = [0, 1, 2];

/// When the faulty member's bare reveal reaches an honest member, relative to the first
/// deadline (`None`: never).
const ARRIVALS: [Option<i64>; 5] = [None, Some(-1_000), Some(0), Some(1), Some(900)];

/// Every assignment of `arrivals` to the three honest members, each with relays taking 0, half
/// a round or a round.
fn schedules(arrivals: [Option<i64>; 5], round: u64) -> Vec<([Option<i64>; 3], u64)> {
    let mut out = Vec::new();
    for a in arrivals {
        for b in arrivals {
            for c in arrivals {
                for delay in [0, round / 2, round] {
                    out.push(([a, b, c], delay));
                }
            }
        }
    }
    out
}

/// Asserts that the honest members agree (`outcome`, one per member) and that they count the
/// message exactly when one of them heard it in time; returns whether they count it.
fn agree(outcome: &[bool], arrivals: [Option<i64>; 3], case: &str) -> bool {
    assert!(
        outcome.iter().all(|&x| x == outcome[0]),
        "{case}: {outcome:?}"
    );
    // Heard in time by anyone, it counts everywhere; heard late by all, nowhere.
    let in_time = arrivals.iter().any(|x| x.is_some_and(|o| o <= 0));
    assert_eq!(outcome[0], in_time, "{case}");
    outcome[0]
}

/// Delivers the faulty member's reveal of `t` to each honest member at its arrival time, and
/// every relay an honest member makes to the other honest members `delay` later (at most one
/// round: the rule's assumption). Returns whether the reveal counts at each honest member.
fn deliver(net: &Net, t: u64, arrivals: [Option<i64>; 3], delay: u64) -> Vec<bool> {
    let faulty = RelayedReveal::direct(
        net.oracles[FAULTY]
            .reveal(t, net.params.closes_at(t))
            .unwrap()
            .unwrap()
            .reveal,
    );
    let first = net.params.reveal_deadline(t, 1) as i64;
    // (time, order, member) → message; processed in time order.
    let mut queue: BTreeMap<(u64, usize, usize), RelayedReveal> = BTreeMap::new();
    let mut order = 0;
    for (&member, arrival) in HONEST.iter().zip(arrivals) {
        if let Some(offset) = arrival {
            queue.insert(((first + offset) as u64, order, member), faulty.clone());
            order += 1;
        }
    }
    while let Some(((at, _, member), relayed)) = queue.pop_first() {
        if let Some(relay) = net.oracles[member]
            .hear_reveal(&relayed, at)
            .unwrap()
            .unwrap()
        {
            for &other in HONEST.iter().filter(|&&o| o != member) {
                queue.insert((at + delay, order, other), relay.clone());
                order += 1;
            }
        }
    }
    let node = net.oracles[FAULTY].node_id();
    HONEST
        .iter()
        .map(|&m| net.oracles[m].ledger().reveal_counts(t, &node).unwrap())
        .collect()
}

/// The honest members reveal `t` to each other as it closes.
fn reveal_honest(net: &Net, t: u64) {
    let closed = net.params.closes_at(t);
    for &m in &HONEST {
        let own = net.oracles[m].reveal(t, closed).unwrap().unwrap();
        for &other in &HONEST {
            net.oracles[other]
                .hear_reveal(&own, closed)
                .unwrap()
                .unwrap();
        }
    }
}

#[test]
fn honest_members_agree_whatever_a_faulty_member_reveals_to_whom_and_when() {
    let net = Net::new(4);
    assert_eq!(net.params.faults_tolerated(), 1);
    let round = net.params.relay_round_ms;
    let mut t = 0;
    let mut counted_somewhere = 0;
    for (arrivals, delay) in schedules(ARRIVALS, round) {
        let counts = deliver(&net, t, arrivals, delay);
        let case = format!("window {t}: arrivals {arrivals:?}, relays after {delay} ms");
        counted_somewhere += usize::from(agree(&counts, arrivals, &case));
        t += 1;
    }
    assert!(counted_somewhere > 0 && counted_somewhere < t as usize);
}

#[test]
fn a_reveal_shown_to_one_member_at_its_deadline_splits_nothing_and_the_window_is_certified() {
    let net = Net::new(4);
    let t = 0;
    let now = net.start(t) + 1_000;
    // One identity at each member, answered and known everywhere.
    let keys: Vec<_> = (0..4)
        .map(|m| {
            let node = net.oracles[m].node_id();
            let key = (100..2_000)
                .map(hco_oracle::testing::key)
                .find(|k| net.issuer_for(k, t).node_id() == node)
                .unwrap();
            net.register(&key, Class::Agent, now - 500);
            solve_one(&net, &key, t, 0, now, now + 10);
            key
        })
        .collect();
    net.share_acceptances(t);
    reveal_honest(&net, t);
    // The faulty member reveals to member 1 alone, at the last moment a bare reveal counts.
    let counts = deliver(&net, t, [None, Some(0), None], net.params.relay_round_ms);
    assert_eq!(counts, [true, true, true]);

    let decided = net.params.reveals_decided_at(t);
    let summaries: Vec<SignedSummary> = HONEST
        .iter()
        .map(|&m| net.oracles[m].summarize(t, decided).unwrap().unwrap())
        .collect();
    assert!(summaries.iter().all(|s| s.summary == summaries[0].summary));
    assert_eq!(summaries[0].summary.count, keys.len() as u64);
    for &m in &HONEST {
        assert!(net.oracles[m].excluded_members(t).unwrap().is_empty());
        for s in &summaries {
            net.oracles[m].add_summary(s).unwrap().unwrap();
        }
        assert!(net.oracles[m].ledger().certificate(t).unwrap().is_some());
    }
}

#[test]
fn a_faulty_members_own_contradictions_leave_it_out_everywhere_or_nowhere() {
    let net = Net::new(4);
    let faulty = net.oracles[FAULTY].node_id();
    let key = hco_oracle::testing::key(FAULTY as u64 + 1);
    let other = |t| {
        hco_oracle::SignedReveal::new(
            &key,
            t,
            hco_oracle::Digest([7; 32]),
            hco_oracle::Digest([7; 32]),
        )
    };
    let excluded = |t| -> Vec<Vec<hco_oracle::NodeId>> {
        let decided = net.params.reveals_decided_at(t);
        HONEST
            .iter()
            .map(|&m| {
                net.oracles[m].summarize(t, decided).unwrap().unwrap();
                net.oracles[m].excluded_members(t).unwrap()
            })
            .collect()
    };

    // Window 0: its reveal counts everywhere; a second, different reveal reaches member 1 alone
    // after the deadline, and so does evidence built from the two: member 1 holds evidence the
    // others lack, yet all three leave the member in.
    let t = 0;
    reveal_honest(&net, t);
    assert_eq!(
        deliver(&net, t, [Some(0), None, None], 0),
        [true, true, true]
    );
    let late = net.params.reveals_decided_at(t) - 1;
    net.oracles[1].add_reveal(&other(t), late).unwrap().unwrap();
    assert_eq!(net.oracles[1].ledger().evidence(t).unwrap().len(), 1);
    let evidence = net.oracles[1].ledger().evidence(t).unwrap().remove(0);
    assert_eq!(net.oracles[2].add_evidence(&evidence).unwrap(), Ok(true));
    assert_eq!(excluded(t), vec![Vec::<hco_oracle::NodeId>::new(); 3]);

    // Window 1: the second reveal reaches member 1 alone at the first deadline: it counts there,
    // is relayed, counts everywhere, and every honest member leaves the member out.
    let t = 1;
    reveal_honest(&net, t);
    assert_eq!(
        deliver(&net, t, [Some(0), None, None], 0),
        [true, true, true]
    );
    let second = net.oracles[1]
        .hear_reveal(
            &RelayedReveal::direct(other(t)),
            net.params.reveal_deadline(t, 1),
        )
        .unwrap()
        .unwrap()
        .expect("relayed with member 1's receipt");
    for m in [0, 2] {
        net.oracles[m]
            .hear_reveal(&second, net.params.reveal_deadline(t, 2))
            .unwrap()
            .unwrap();
    }
    assert_eq!(excluded(t), vec![vec![faulty]; 3]);
}

/// Delivers the faulty member's sealed acceptance of `key` in `t` to each honest member at its
/// arrival time relative to the arrival deadline, by gossip or in answer to a request (`via`).
/// Gossip is forwarded by every member that accepts it, and relays go out, each reaching the
/// other honest members `delay` later. Returns whether each honest member holds it.
fn deliver_acceptance(
    net: &Net,
    key: &ed25519_dalek::SigningKey,
    t: u64,
    arrivals: [Option<i64>; 3],
    via: Heard,
    delay: u64,
) -> Vec<bool> {
    let id = hco_oracle::testing::identity_id(key);
    let sealed = net.oracles[FAULTY]
        .ledger()
        .accepted(t, &id, 0)
        .unwrap()
        .unwrap();
    let base = net.params.acceptance_base_deadline(t) as i64;
    type Message = (Vec<SealedAcceptance>, Vec<SealReceipt>, Heard);
    let mut queue: BTreeMap<(u64, usize, usize), Message> = BTreeMap::new();
    let mut order = 0;
    for (&member, arrival) in HONEST.iter().zip(arrivals) {
        if let Some(offset) = arrival {
            let message = (vec![sealed.clone()], vec![], via);
            queue.insert(((base + offset) as u64, order, member), message);
            order += 1;
        }
    }
    while let Some(((at, _, member), (batch, receipts, heard))) = queue.pop_first() {
        let Ok(done) = net.oracles[member]
            .record_relayed(&batch, &receipts, heard, at)
            .unwrap()
        else {
            continue;
        };
        let mut out = Vec::new();
        if heard == Heard::ByGossip && done.fresh > 0 {
            out.push((batch.clone(), receipts.clone(), Heard::ByGossip));
        }
        if !done.relay.is_empty() {
            let relayed = receipts.iter().cloned().chain(done.relay).collect();
            out.push((batch.clone(), relayed, Heard::ByGossip));
        }
        for message in out {
            for &other in HONEST.iter().filter(|&&o| o != member) {
                queue.insert((at + delay, order, other), message.clone());
                order += 1;
            }
        }
    }
    HONEST
        .iter()
        .map(|&m| {
            net.oracles[m]
                .ledger()
                .accepted(t, &id, 0)
                .unwrap()
                .is_some()
        })
        .collect()
}

#[test]
fn honest_members_hold_the_same_acceptances_whatever_a_faulty_issuer_sends_to_whom_and_when() {
    let net = Net::new(4);
    let round = net.params.relay_round_ms;
    let t = 0;
    let now = net.start(t) + 1_000;
    let node = net.oracles[FAULTY].node_id();
    let mut keys = (10_000..)
        .map(hco_oracle::testing::key)
        .filter(|k| net.issuer_for(k, t).node_id() == node);
    let (mut held_somewhere, mut cases) = (0, 0);
    let early = Some(-(2 * round as i64));
    let arrivals = [None, early, Some(-(round as i64)), Some(0), Some(1)];
    for (schedule, delay) in schedules(arrivals, round) {
        for via in [Heard::ByGossip, Heard::ByRequest] {
            let key = keys.next().unwrap();
            net.register(&key, Class::Agent, now - 500);
            solve_one(&net, &key, t, 0, now, now + 10);
            let held = deliver_acceptance(&net, &key, t, schedule, via, delay);
            let case = format!("arrivals {schedule:?} {via:?}, relays after {delay} ms");
            held_somewhere += usize::from(agree(&held, schedule, &case));
            cases += 1;
        }
    }
    assert!(held_somewhere > 0 && held_somewhere < cases);
}

#[test]
fn a_member_cut_off_when_an_earlier_window_closed_is_not_left_out_later() {
    let net = Net::new(4);
    let lead = hco_oracle::secret::commit_lead(&net.params);
    // Member 3 is cut off when window 0 closes: its reveal of 0 counts nowhere, and it is
    // left out of window 0 everywhere.
    reveal_honest(&net, 0);
    let decided = net.params.reveals_decided_at(0);
    let faulty = net.oracles[FAULTY].node_id();
    for &m in &HONEST {
        net.oracles[m].summarize(0, decided).unwrap().unwrap();
        assert_eq!(net.oracles[m].excluded_members(0).unwrap(), vec![faulty]);
    }
    // In window L its reveal carries its reveal of 0, which opens the commitment: it counts.
    let t = lead;
    reveal_honest(&net, t);
    let closed = net.params.closes_at(t);
    let own = net.oracles[FAULTY].reveal(t, closed).unwrap().unwrap();
    assert!(own.earlier.is_some() && own.opens_commitment());
    for &m in &HONEST {
        net.oracles[m].hear_reveal(&own, closed).unwrap().unwrap();
        net.oracles[m]
            .summarize(t, net.params.reveals_decided_at(t))
            .unwrap()
            .unwrap();
        assert!(net.oracles[m].excluded_members(t).unwrap().is_empty());
    }
    // Without the earlier reveal, nothing shows the commitment opened: left out everywhere.
    let t = lead + 1;
    reveal_honest(&net, t);
    let closed = net.params.closes_at(t);
    let bare = RelayedReveal::direct(
        net.oracles[FAULTY]
            .reveal(t, closed)
            .unwrap()
            .unwrap()
            .reveal,
    );
    for &m in &HONEST {
        net.oracles[m].hear_reveal(&bare, closed).unwrap().unwrap();
        net.oracles[m]
            .summarize(t, net.params.reveals_decided_at(t))
            .unwrap()
            .unwrap();
        assert_eq!(net.oracles[m].excluded_members(t).unwrap(), vec![faulty]);
    }
}
