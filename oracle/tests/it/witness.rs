//! Beat witnesses: a touch prompt of a global slot carries another member's witness that its
//! beat has begun, so no assertion can exist before it — the issuer's own included — and a
//! prompt acceptance that reaches a member later than its deadline plus a relay round is
//! refused there. So whoever issues a prompt, its touch falls in `[beat, deadline + round]`.

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use hco_challenges::presence::SoftAuthenticator;
use hco_oracle::secret::issuers_of;
use hco_oracle::witness::SlotWitness;
use hco_oracle::{
    Acceptance, Oracle, Response, SealedAcceptance, SignedChallenge, SignedRequest, SlotMode, Step,
    VERSION, blames_sender, seal_batch, testing,
};

use crate::presence::{assertion, enrol, presence_only};
use crate::support::Net;

const ORIGIN: &str = "http://localhost:8080";
const REACTION: u64 = 6_000;

/// Three members, one presence prompt and a spare in a 40 s global slot.
fn net() -> Net {
    Net::with(3, |p| {
        presence_only(p, 1);
        p.families[0].deadline_ms = REACTION;
        p.policies.human.steps = vec![Step::Family("presence".into())];
        p.slot_mode = SlotMode::Global;
        p.slot_ms = 40_000;
        p.prompt_jitter_ms = 500;
    })
}

/// The member that issues try `j` of `person` in window 0, and its key.
fn issuer<'n>(net: &'n Net, person: &SigningKey, j: u32) -> (&'n Oracle, SigningKey) {
    let first = issuers_of(&net.params, &testing::identity_id(person), 0, j)[0];
    let at = net
        .oracles
        .iter()
        .position(|o| o.node_id() == first)
        .unwrap();
    (&net.oracles[at], testing::key(at as u64 + 1))
}

/// A person registered everywhere with a software passkey the issuer of try 0 enrolled.
fn person(net: &Net, seed: u64) -> (SigningKey, SoftAuthenticator) {
    let key = testing::key(seed);
    let now = net.start(0) + 1_000;
    net.register(&key, Class::Human, now);
    let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();
    let (o, _) = issuer(net, &key, 0);
    enrol(o, &key, &mut soft, now).unwrap();
    let enrolment = o.passkeys(&testing::identity_id(&key)).unwrap()[0]
        .enrolment
        .clone();
    for other in &net.oracles {
        other.record_enrolment(&enrolment).unwrap().unwrap();
    }
    (key, soft)
}

/// When prompt 0 of `key` opens.
fn opening(o: &Oracle, key: &SigningKey, at: u64) -> u64 {
    match o.issue(&SignedRequest::new(key, 0, 0), at).unwrap() {
        Err(hco_oracle::Reason::StepNotOpen { opens_at }) => opens_at,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_touch_prompt_carries_another_members_witness_published_when_its_beat_begins() {
    let net = net();
    let (key, mut soft) = person(&net, 40);
    let (o, _) = issuer(&net, &key, 0);
    let slot = o.slot(0, &testing::identity_id(&key)).unwrap();
    let opens = opening(o, &key, slot.start);
    let beat = net.params.beat(&slot, Class::Human, 0, REACTION).start;
    assert!((beat..=beat + 500).contains(&opens));
    let others: Vec<&Oracle> = net
        .oracles
        .iter()
        .filter(|m| m.node_id() != o.node_id())
        .collect();

    // No other member has published: the prompt cannot be issued (the issuer's own witness,
    // which it holds from the beat's start, does not count).
    assert!(!o.witnesses_due(opens).unwrap().is_empty());
    let refused = o.issue(&SignedRequest::new(&key, 0, 0), opens).unwrap();
    assert_eq!(refused.unwrap_err().code(), "no_slot_witness");

    // A member's witness of a beat is due from the beat's start, not before (nothing at the
    // slot's opening: the beats end the slot); a receiver refuses one that claims a beat its
    // clock (plus the skew) has not reached, or a moment that is no beat.
    assert_eq!(others[0].witnesses_due(slot.start).unwrap(), vec![]);
    assert_eq!(others[0].witnesses_due(beat - 1).unwrap(), vec![]);
    // The node sleeps until then: the next beat after any moment before it is this one.
    for before in [slot.start, beat - 1] {
        assert_eq!(others[0].next_beat_after(before).unwrap(), Some(beat));
    }
    assert!(others[0].next_beat_after(beat).unwrap() > Some(beat));
    let due = others[0].witnesses_due(beat).unwrap();
    assert_eq!(due.len(), 1, "{due:?}");
    let w = due[0];
    assert_eq!((w.node, w.at), (others[0].node_id(), beat));
    // It stays due while a prompt on its beat may be issued, and no longer.
    let useful = net.params.prompt_jitter_ms + REACTION + net.params.relay_round_ms;
    assert!(others[0].witnesses_due(beat + useful).unwrap().contains(&w));
    assert!(
        !others[0]
            .witnesses_due(beat + useful + 1)
            .unwrap()
            .contains(&w)
    );
    let too_early = beat - net.params.max_clock_skew_ms - 1;
    assert_eq!(
        o.record_witness(&w, too_early).unwrap().unwrap_err().code(),
        "bad_witness"
    );
    // A witness of another member, or forged, is refused.
    let forged = SlotWitness {
        node: others[1].node_id(),
        ..w
    };
    assert_eq!(
        o.record_witness(&forged, slot.start)
            .unwrap()
            .unwrap_err()
            .code(),
        "bad_witness"
    );
    let off_beat = SlotWitness::new(&testing::key(2), 0, beat + 1);
    assert_eq!(
        o.record_witness(&off_beat, beat + 1)
            .unwrap()
            .unwrap_err()
            .code(),
        "bad_witness"
    );
    assert_eq!(o.record_witness(&w, beat).unwrap(), Ok(true));
    assert_eq!(o.record_witness(&w, beat + 5).unwrap(), Ok(false));

    // Now the prompt carries it, its id covers it, and the assertion over that id passes.
    let issued = o
        .issue(&SignedRequest::new(&key, 0, 0), opens + 1_000)
        .unwrap()
        .unwrap();
    let c = &issued.challenge.challenge;
    assert_eq!(c.witness, Some(w));
    let without = hco_oracle::Challenge {
        witness: None,
        ..c.clone()
    };
    assert_ne!(without.challenge_id(), c.challenge_id());
    // Asked again: the same envelope, byte for byte.
    let again = o
        .issue(&SignedRequest::new(&key, 0, 0), opens + 1_500)
        .unwrap()
        .unwrap();
    assert_eq!(again.challenge, issued.challenge);
    let answer = assertion(o, &mut soft, &key, &issued);
    let response = Response::new(&key, issued.challenge.clone(), answer);
    let sealed = o
        .verify_response(&response, opens + 2_000)
        .unwrap()
        .unwrap();

    // Every other member records it when gossip brings it in time …
    for m in &others {
        let batch = std::slice::from_ref(&sealed);
        assert_eq!(m.record_remote(batch, opens + 2_100).unwrap(), Ok(1));
    }
    // … and a fresh member refuses it when it arrives after the prompt's deadline plus one
    // relay round, without blaming whoever relayed it.
    let late_net = net_like(&net, &key);
    let latest = c.deadline + net.params.relay_round_ms;
    let batch = std::slice::from_ref(&sealed);
    assert_eq!(late_net.record_remote(batch, latest).unwrap(), Ok(1));
    let later = net_like(&net, &key);
    let refused = later.record_remote(batch, latest + 1).unwrap().unwrap_err();
    assert_eq!(refused.code(), "late_acceptance");
    assert!(!blames_sender(&refused));
}

/// A fresh member of `net`'s committee (member 3's key) that holds `person`'s registration and
/// passkey only.
fn net_like(net: &Net, person: &SigningKey) -> Oracle {
    let ledger = hco_oracle::Ledger::temporary(net.params.digest()).unwrap();
    let o = Oracle::new(
        net.params.clone(),
        hco_challenges::Registry::builtin(),
        testing::key(3),
        ledger,
    )
    .unwrap();
    let now = net.start(0) + 1_000;
    let bits = net.params.registration_pow_bits;
    let reg = hco_oracle::SignedRegister::proven(person, Class::Human.into(), now, bits);
    o.register(&reg, now).unwrap().unwrap();
    let id = testing::identity_id(person);
    for pk in net.oracles[0].passkeys(&id).unwrap() {
        o.record_enrolment(&pk.enrolment).unwrap().unwrap();
    }
    o
}

#[test]
fn an_issuer_cannot_witness_its_own_prompt_nor_leave_the_witness_out() {
    // A member that answers its own sybil's prompt (it knows the challenge: its own secret and
    // any `issued_at` it likes) must still name another member's witness of the prompt's own
    // beat, which exists only once that member published it as the beat began — not the
    // slot's opening, nor another beat's, whose touches could be made away from this beat.
    let net = net();
    let (key, _) = person(&net, 41);
    let (o, o_key) = issuer(&net, &key, 0);
    let slot = o.slot(0, &testing::identity_id(&key)).unwrap();
    let opens = opening(o, &key, slot.start);
    let beat = net.params.beat(&slot, Class::Human, 0, REACTION).start;
    let next_beat = net.params.beat(&slot, Class::Human, 1, REACTION).start;
    let other_key = (1..=3)
        .map(testing::key)
        .find(|k| testing::node_id(k) != o.node_id())
        .unwrap();
    let receiver = net
        .oracles
        .iter()
        .find(|m| m.node_id() != o.node_id())
        .unwrap();
    let sealed = |witness: Option<SlotWitness>| -> SealedAcceptance {
        let challenge = hco_oracle::Challenge {
            version: VERSION,
            issuer: o.node_id(),
            id: testing::identity_id(&key),
            t: 0,
            j: 0,
            family: "presence".into(),
            issued_at: opens,
            deadline: opens + REACTION,
            prompt_digest: hco_oracle::Digest([5; 32]),
            witness,
        };
        let acceptance = Acceptance {
            version: VERSION,
            response: Response::new(
                &key,
                SignedChallenge::new(&o_key, challenge),
                b"made up".to_vec(),
            ),
            accepted_at: opens + 1_000,
        };
        seal_batch(&o_key, 0, vec![acceptance]).remove(0)
    };
    for (witness, why) in [
        (None, "no witness"),
        (Some(SlotWitness::new(&o_key, 0, beat)), "its own"),
        (
            Some(SlotWitness::new(&other_key, 1, beat)),
            "another window's",
        ),
        (
            Some(SlotWitness::new(&other_key, 0, slot.start)),
            "the slot's opening",
        ),
        (
            Some(SlotWitness::new(&other_key, 0, next_beat)),
            "the next beat's",
        ),
        (
            Some(SlotWitness::new(&testing::key(99), 0, beat)),
            "an outsider's",
        ),
    ] {
        let s = sealed(witness);
        let refused = receiver
            .record_remote(std::slice::from_ref(&s), opens + 1_100)
            .unwrap()
            .unwrap_err();
        assert_eq!(refused.code(), "bad_witness", "{why}");
    }
    // With another member's witness of the beat the envelope passes these checks (the
    // made-up answer is the audit's business once the secret is revealed) — if it arrives by
    // the deadline plus a round: the member's touch for its sybil had to fall in
    // `[beat, deadline + round]`, the same seconds an honest member's prompts take.
    let s = sealed(Some(SlotWitness::new(&other_key, 0, beat)));
    let latest = opens + REACTION + net.params.relay_round_ms;
    let late = net_like(&net, &key);
    assert_eq!(
        late.record_remote(std::slice::from_ref(&s), latest + 1)
            .unwrap()
            .unwrap_err()
            .code(),
        "late_acceptance"
    );
    assert_eq!(
        receiver
            .record_remote(std::slice::from_ref(&s), latest)
            .unwrap(),
        Ok(1)
    );
}
