//! The window policy (DESIGN §12) through the oracle on sled ledgers, driven on explicit `now`
//! values: the first answer to a challenge is final for both classes, the steps run in order
//! with their spares and refusals, the presence step stops a script that has every cognitive
//! answer, and blind guesses on the closed-answer human families win no more than chance.
//!
//! The tests print what they measure (`cargo test -p hco-oracle --test it policy -- --nocapture`).

use std::collections::BTreeMap;

use ed25519_dalek::SigningKey;
use hco_challenges::presence::{AttestationMode, Presence, PresencePolicy, SoftAuthenticator};
use hco_challenges::{Class, Prompt, Registry, Seed, SeedStream};
use hco_oracle::{
    ClassPolicies, FamilyConfig, IssuedChallenge, Ledger, LifecycleParams, LightVerifier,
    NetworkParams, Oracle, Reason, Response, SignedEnrolment, SignedRegister, SignedRequest,
    SlotMode, Step, WindowPolicy, testing,
};

use crate::support::{footprint, open_node, reference, solve};

// ---------------------------------------------------------------------------------------------
// Helpers.

/// One committee node on a temporary sled ledger.
fn node(params: &NetworkParams, key: &SigningKey) -> Oracle {
    let ledger = Ledger::temporary(params.digest()).unwrap();
    Oracle::new(params.clone(), Registry::builtin(), key.clone(), ledger).unwrap()
}

fn register(o: &Oracle, key: &SigningKey, class: Class, now: u64) {
    o.register(&SignedRegister::new(key, class, now), now)
        .unwrap()
        .unwrap();
}

fn request(
    o: &Oracle,
    key: &SigningKey,
    t: u64,
    j: u32,
    now: u64,
) -> Result<IssuedChallenge, Reason> {
    o.issue(&SignedRequest::new(key, t, j), now).unwrap()
}

fn answer(
    o: &Oracle,
    key: &SigningKey,
    issued: &IssuedChallenge,
    answer: &[u8],
    now: u64,
) -> Result<(), Reason> {
    let response = Response::new(key, issued.challenge.clone(), answer.to_vec());
    o.verify_response(&response, now).unwrap().map(|_| ())
}

/// `accepted`, or the rejection's code.
fn code(verdict: Result<(), Reason>) -> String {
    match verdict {
        Ok(()) => "accepted".into(),
        Err(reason) => reason.code().into(),
    }
}

// ---------------------------------------------------------------------------------------------
// 1. One answer per challenge.

/// A well-formed wrong answer (number `k` of many) to a challenge whose right answer is `right`:
/// another integer for `arithmetic_reasoning`, a nonce with a made-up hash for `proof_of_work`.
fn wrong(class: Class, right: &[u8], k: u64) -> Vec<u8> {
    match class {
        Class::Human => {
            let value: i64 = std::str::from_utf8(right).unwrap().trim().parse().unwrap();
            (value + 1 + k as i64).to_string().into_bytes()
        }
        Class::Agent => format!(r#"{{"nonce":{k},"hash":"{}"}}"#, "0".repeat(64)).into_bytes(),
    }
}

#[test]
fn a_second_answer_is_already_answered_for_any_class() {
    let dir = tempfile::tempdir().unwrap();
    let node_key = testing::key(1);
    let params = testing::params_for(&[testing::node_id(&node_key)]);
    let open = || open_node(dir.path(), &params, &node_key);
    let o = open();
    let now = params.window_start(0) + 1_000;
    // (identity, challenge, right answer, marker) of the wrong first answers, for the reopen.
    let mut kept = Vec::new();
    // (identity, challenge, right answer) of the accepted ones, for the reopen.
    let mut accepted_kept = Vec::new();
    let classes = [
        (Class::Human, "arithmetic_reasoning", "answer_mismatch", 100),
        (Class::Agent, "proof_of_work", "hash_mismatch", 200),
    ];
    for (class, family, family_code, base) in classes {
        let [a, b, c] = [0, 1, 2].map(|i| testing::key(base + i));
        for key in [&a, &b, &c] {
            register(&o, key, class, now);
        }

        // A wrong first answer gets the family's code and is recorded; the right answer
        // afterwards is `already_answered`, and the marker stays the first answer's.
        let id = testing::identity_id(&a);
        let issued = request(&o, &a, 0, 0, now).unwrap();
        assert_eq!(issued.prompt.family, family);
        let right = solve(&o, &issued);
        let verdict = answer(&o, &a, &issued, &wrong(class, &right, 0), now + 100);
        assert_eq!(code(verdict), family_code);
        let marker = o.ledger().answered(0, &id, 0).unwrap().unwrap();
        assert_eq!(
            (marker.answered_at, marker.code.as_str()),
            (now + 100, family_code)
        );
        assert!(o.ledger().is_answered(0, &id, 0).unwrap());
        assert!(!o.ledger().is_accepted(0, &id, 0).unwrap());
        let verdict = answer(&o, &a, &issued, &right, now + 200);
        assert_eq!(code(verdict), "already_answered");
        assert_eq!(o.ledger().answered(0, &id, 0).unwrap().unwrap(), marker);
        kept.push((a.clone(), issued, right, marker));

        // A flood of 100 answers, right and wrong, to one challenge in one batch: the first is
        // judged, the other 99 are `already_answered`, one record is written.
        let id = testing::identity_id(&b);
        let issued = request(&o, &b, 0, 0, now).unwrap();
        let right = solve(&o, &issued);
        let markers = o.ledger().answered_count(0);
        let flood: Vec<Response> = (0..100u64)
            .map(|k| {
                let bytes = if k % 2 == 1 {
                    right.clone()
                } else {
                    wrong(class, &right, k)
                };
                Response::new(&b, issued.challenge.clone(), bytes)
            })
            .collect();
        let results = o.verify_responses(&flood, now + 100).unwrap();
        assert_eq!(results[0].as_ref().unwrap_err().code(), family_code);
        for r in &results[1..] {
            assert_eq!(r.as_ref().unwrap_err().code(), "already_answered");
        }
        assert_eq!(o.ledger().answered_count(0), markers + 1);
        assert!(!o.ledger().is_accepted(0, &id, 0).unwrap());

        // The same flood on the spare challenge from four threads at once (25 answers each, in
        // batches of 5, half of them right): exactly one answer is judged, whichever came
        // first, and exactly one record holds it.
        let spare = request(&o, &b, 0, 1, now + 200).unwrap();
        let right = solve(&o, &spare);
        let verdicts: Vec<Result<(), Reason>> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..4u64)
                .map(|thread| {
                    let (o, b, spare, right) = (&o, &b, &spare, &right);
                    s.spawn(move || {
                        let mut out = Vec::new();
                        for batch in 0..5u64 {
                            let responses: Vec<Response> = (0..5u64)
                                .map(|i| {
                                    let k = thread * 25 + batch * 5 + i;
                                    let bytes = if k % 2 == 0 {
                                        right.clone()
                                    } else {
                                        wrong(class, right, k)
                                    };
                                    Response::new(b, spare.challenge.clone(), bytes)
                                })
                                .collect();
                            let results = o.verify_responses(&responses, now + 300).unwrap();
                            out.extend(results.into_iter().map(|r| r.map(|_| ())));
                        }
                        out
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        assert_eq!(verdicts.len(), 100);
        let judged: Vec<&Result<(), Reason>> = verdicts
            .iter()
            .filter(|v| !matches!(v, Err(r) if r.code() == "already_answered"))
            .collect();
        assert_eq!(judged.len(), 1, "{judged:?}");
        let accepted = o.ledger().is_accepted(0, &id, 1).unwrap();
        let marker = o.ledger().answered(0, &id, 1).unwrap();
        match judged[0] {
            Ok(()) => assert!(accepted && marker.is_none()),
            Err(reason) => {
                assert_eq!(reason.code(), family_code);
                assert!(!accepted && marker.unwrap().code == family_code);
            }
        }
        eprintln!(
            "{family}: concurrent flood of 100 answers judged once ({})",
            code(judged[0].clone())
        );

        // An accepted challenge answered again, rightly or wrongly: `already_answered`, and the
        // acceptance itself is the record (no marker).
        let id = testing::identity_id(&c);
        let issued = request(&o, &c, 0, 0, now).unwrap();
        let right = solve(&o, &issued);
        assert_eq!(code(answer(&o, &c, &issued, &right, now + 100)), "accepted");
        for again in [right.clone(), wrong(class, &right, 1)] {
            let verdict = answer(&o, &c, &issued, &again, now + 200);
            assert_eq!(code(verdict), "already_answered");
        }
        assert!(o.ledger().answered(0, &id, 0).unwrap().is_none());
        assert!(o.ledger().is_answered(0, &id, 0).unwrap());
        accepted_kept.push((c.clone(), issued, right));
    }

    // The markers are durable: after a reopen of the data directory they are still there and
    // still refuse the right answer.
    let markers = o.ledger().answered_count(0);
    drop(o);
    let o = open();
    assert_eq!(o.ledger().answered_count(0), markers);
    for (key, issued, right, marker) in &kept {
        let id = testing::identity_id(key);
        assert_eq!(
            o.ledger().answered(0, &id, 0).unwrap().as_ref(),
            Some(marker)
        );
        assert_eq!(
            code(answer(&o, key, issued, right, now + 400)),
            "already_answered"
        );
    }
    // So are the acceptances, though the reopened node remembers nothing of the window in
    // memory; and a challenge issued and accepted after the reopen, in the same window, is
    // answered once too.
    for (key, issued, right) in &accepted_kept {
        assert_eq!(
            code(answer(&o, key, issued, right, now + 400)),
            "already_answered"
        );
    }
    let late = testing::key(300);
    register(&o, &late, Class::Agent, now + 400);
    let issued = request(&o, &late, 0, 0, now + 400).unwrap();
    let right = solve(&o, &issued);
    assert_eq!(
        code(answer(&o, &late, &issued, &right, now + 500)),
        "accepted"
    );
    assert_eq!(
        code(answer(&o, &late, &issued, &right, now + 600)),
        "already_answered"
    );
    // Pruning the window removes them with the rest of it.
    o.ledger().prune_before(1).unwrap();
    assert_eq!(o.ledger().answered_count(0), 0);
    for (key, issued, right, _) in &kept {
        assert!(
            !o.ledger()
                .is_answered(0, &testing::identity_id(key), 0)
                .unwrap()
        );
        assert_eq!(
            code(answer(&o, key, issued, right, now + 500)),
            "unknown_challenge"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 2. The step sequence.

#[test]
fn steps_run_in_order_with_spares() {
    const MIN: u64 = 2_000;
    let node_key = testing::key(1);
    let mut params = testing::params_for(&[testing::node_id(&node_key)]);
    params.policies.human = WindowPolicy {
        steps: vec![Step::Drawn, Step::Drawn],
        spares: 1,
    };
    for f in &mut params.families {
        if f.name == "arithmetic_reasoning" {
            f.min_solve_ms = MIN;
        }
    }
    let o = node(&params, &node_key);
    let now = params.window_start(0) + 1_000;
    let [a, b, c] = [10, 11, 12].map(testing::key);
    for key in [&a, &b, &c] {
        register(&o, key, Class::Human, now);
    }
    // A refused request stores nothing.
    let refused = |o: &Oracle, key: &SigningKey, j: u32, at: u64| -> Reason {
        let id = testing::identity_id(key);
        let before = footprint(o, 0, &id);
        let reason = request(o, key, 0, j, at).unwrap_err();
        assert_eq!(footprint(o, 0, &id), before, "{reason}: stored something");
        reason
    };

    // A: the sequence's refusals; an expiry and a too-fast answer use up its tries.
    let id_a = testing::identity_id(&a);
    assert_eq!(
        refused(&o, &a, 1, now),
        Reason::OutOfSequence { j: 1, next: 0 }
    );
    assert_eq!(
        refused(&o, &a, 3, now),
        Reason::IndexOutOfRange { j: 3, k: 3 }
    );
    let first = request(&o, &a, 0, 0, now).unwrap();
    assert_eq!(
        refused(&o, &a, 1, now + 1),
        Reason::PreviousStepUnanswered { previous: 0 }
    );
    assert_eq!(
        refused(&o, &a, 2, now + 1),
        Reason::OutOfSequence { j: 2, next: 1 }
    );
    let deadline = first.challenge.challenge.deadline;
    assert_eq!(
        refused(&o, &a, 1, deadline),
        Reason::PreviousStepUnanswered { previous: 0 }
    );
    // Late: refused before it is judged, nothing stored.
    let before = footprint(&o, 0, &id_a);
    let late = answer(&o, &a, &first, &solve(&o, &first), deadline + 1);
    assert_eq!(code(late), "challenge_expired");
    assert_eq!(footprint(&o, 0, &id_a), before);
    assert!(!o.ledger().is_answered(0, &id_a, 0).unwrap());
    // The expired challenge counts as a used try: the next one is issued, for the same step.
    let second = request(&o, &a, 0, 1, deadline + 1).unwrap();
    assert_eq!(o.progress(0, &id_a).unwrap(), (2, 0));
    // Too fast: judged, final, recorded.
    let issued_at = second.challenge.challenge.issued_at;
    let right = solve(&o, &second);
    assert_eq!(
        answer(&o, &a, &second, &right, issued_at + 500).unwrap_err(),
        Reason::TooFast {
            elapsed_ms: 500,
            min_ms: MIN
        }
    );
    let marker = o.ledger().answered(0, &id_a, 1).unwrap().unwrap();
    assert_eq!(marker.code, "too_fast");
    let verdict = answer(&o, &a, &second, &right, issued_at + MIN);
    assert_eq!(code(verdict), "already_answered");
    // Two tries used, one left, two steps to go: refused at once.
    assert_eq!(
        refused(&o, &a, 2, issued_at + MIN),
        Reason::NoTriesLeft { tries: 3 }
    );

    // B: a wrong answer uses the spare; both steps pass in the other two tries.
    let id_b = testing::identity_id(&b);
    let mut at = now;
    let first = request(&o, &b, 0, 0, at).unwrap();
    let verdict = answer(&o, &b, &first, b"-1000000", at + MIN);
    assert_eq!(code(verdict), "answer_mismatch");
    for j in 1..3 {
        at += MIN + 1;
        let issued = request(&o, &b, 0, j, at).unwrap();
        let verdict = answer(&o, &b, &issued, &solve(&o, &issued), at + MIN);
        assert_eq!(code(verdict), "accepted");
    }
    assert_eq!(o.progress(0, &id_b).unwrap(), (3, 2));
    // Past the last try with every step passed: the window is complete, not out of range.
    assert_eq!(refused(&o, &b, 3, at + MIN), Reason::StepsComplete);

    // C: both steps pass in two tries; the spare is not issued.
    let id_c = testing::identity_id(&c);
    let mut at = now;
    for j in 0..2 {
        let issued = request(&o, &c, 0, j, at).unwrap();
        let verdict = answer(&o, &c, &issued, &solve(&o, &issued), at + MIN);
        assert_eq!(code(verdict), "accepted");
        at += MIN + 1;
    }
    assert_eq!(refused(&o, &c, 2, at), Reason::StepsComplete);

    let mut expected = vec![(id_b, Class::Human), (id_c, Class::Human)];
    expected.sort();
    assert_eq!(o.active_set(0).unwrap(), expected);

    // Inside a global slot, each try has its phase of the slot and challenge j opens at a
    // secret moment in phase j: asked earlier, it is `step_not_open` (nothing stored) with the
    // moment to come back at, even when the previous step was answered long before.
    let mut params = params.clone();
    params.window_ms = 120_000;
    params.slot_mode = SlotMode::Global;
    params.slot_ms = 90_000;
    let o = node(&params, &node_key);
    let d = testing::key(13);
    let id_d = testing::identity_id(&d);
    register(&o, &d, Class::Human, params.window_start(0));
    let slot = o.slot(0, &id_d).unwrap();
    let phase = (slot.end - slot.start) / 3;
    let mut at = slot.start;
    for j in 0..2u32 {
        let before = footprint(&o, 0, &id_d);
        let opens_at = match request(&o, &d, 0, j, at) {
            Err(Reason::StepNotOpen { opens_at }) => opens_at,
            other => panic!("challenge {j} asked for at {at}: {other:?}"),
        };
        assert_eq!(footprint(&o, 0, &id_d), before);
        let start = slot.start + u64::from(j) * phase;
        assert!((start..start + phase).contains(&opens_at) && opens_at > at);
        assert!(matches!(
            request(&o, &d, 0, j, opens_at - 1),
            Err(Reason::StepNotOpen { .. })
        ));
        let issued = request(&o, &d, 0, j, opens_at).unwrap();
        assert_eq!(issued.challenge.challenge.issued_at, opens_at);
        let verdict = answer(&o, &d, &issued, &solve(&o, &issued), opens_at + MIN);
        assert_eq!(code(verdict), "accepted");
        // Asked for right after: challenge j + 1 waits for its own phase.
        at = (opens_at + MIN).min(start + phase);
    }
    assert_eq!(refused(&o, &d, 2, slot.end - 1), Reason::StepsComplete);
}

// ---------------------------------------------------------------------------------------------
// 3. Perfect cognition without an authenticator.

/// An attestation CA that is not the software authenticator's (the one the presence tests of
/// `hco-challenges` use; "not trusted anywhere"). A strict network trusts only it here.
const FOREIGN_CA_PEM: &str = "-----BEGIN CERTIFICATE-----
MIIB2TCCAX+gAwIBAgIUaoEPOw0wYhcjuV6sDjYQvcPqooQwCgYIKoZIzj0EAwIw
OTE3MDUGA1UEAwwuSENPIHRlc3QgYXR0ZXN0YXRpb24gQ0EgKG5vdCB0cnVzdGVk
IGFueXdoZXJlKTAgFw0yNjExMjIwMjU5NTFaGA8yMTI2MTAyOTAyNTk1MVowOTE3
MDUGA1UEAwwuSENPIHRlc3QgYXR0ZXN0YXRpb24gQ0EgKG5vdCB0cnVzdGVkIGFu
eXdoZXJlKTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABJt3bPLZ1zrix8OrV/WN
MpioukIsW6p9kr1jU86bx8pvxq9dF5YyK46c59CvkLUCdawWrN8pqw6LvVYhB2zF
cMejYzBhMB0GA1UdDgQWBBRBtBZxLoWfqeWnXZxCJ9i/XWFduzAfBgNVHSMEGDAW
gBRBtBZxLoWfqeWnXZxCJ9i/XWFduzAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB
/wQEAwIBBjAKBggqhkjOPQQDAgNIADBFAiEAtZT5tqKOd7Yok71e6BQqQCFxXbBH
wi1nhM5ra3KZA1kCIAMWiPOVRLl5rk4IrLalIRPqNtbuiImguHN0GlR4jgVG
-----END CERTIFICATE-----
";

const ORIGIN: &str = "https://oracle.example.org";

/// The relying party of `configs/prod.toml` (`user_verification` left at its default,
/// `preferred`, as there), in `attestation` mode.
fn prod_presence(attestation: AttestationMode) -> PresencePolicy {
    PresencePolicy {
        rp_id: "oracle.example.org".into(),
        rp_name: "Example HCO network".into(),
        origins: vec![ORIGIN.into()],
        allow_any_port: false,
        attestation,
        attestation_ca_pem: match attestation {
            AttestationMode::Strict => vec![FOREIGN_CA_PEM.into()],
            AttestationMode::General => Vec::new(),
        },
        ..PresencePolicy::default()
    }
}

/// Parameters shaped like `configs/prod.toml`: 1 h windows, 2 min grace, one global 2 min
/// slot, people run `human_steps` with one spare, the prod families and deadlines with their
/// default human-speed floors (presence 500 ms as configured there), and a strict attestation
/// policy whose CA list does not include the software authenticator.
fn prod_like(node_key: &SigningKey, human_steps: &[&str]) -> NetworkParams {
    let registry = Registry::builtin();
    let family = |name: &str, deadline_s: u64, difficulty: u32| FamilyConfig {
        name: name.into(),
        deadline_ms: deadline_s * 1_000,
        difficulty,
        min_solve_ms: registry.get(name).unwrap().min_human_solve_ms(),
    };
    let mut presence = family("presence", 5, 1);
    presence.min_solve_ms = 500;
    NetworkParams {
        genesis_ms: testing::TEST_GENESIS_MS,
        window_ms: 3_600_000,
        grace_ms: 120_000,
        policies: ClassPolicies {
            human: WindowPolicy {
                steps: human_steps
                    .iter()
                    .map(|s| Step::from(s.to_string()))
                    .collect(),
                spares: 1,
            },
            agent: WindowPolicy {
                steps: vec![Step::Family("narrative_chain".into())],
                spares: 0,
            },
        },
        slot_mode: SlotMode::Global,
        slot_ms: 100_000,
        families: vec![
            family("visual_match", 30, 5),
            family("attention", 40, 2),
            family("interactive_reasoning", 45, 2),
            presence,
            family("narrative_chain", 45, 3),
        ],
        lifecycle: LifecycleParams::default(),
        committee: vec![testing::node_id(node_key)],
        quorum: 1,
        issuer_fallback: 0,
        rotate_issuers: false,
        max_clock_skew_ms: 30_000,
        relay_round_ms: 1_000,
        prompt_jitter_ms: 1000,
        registration_pow_bits: 0,
        presence: prod_presence(AttestationMode::Strict),
        narrative: hco_oracle::NarrativeParams::embedded(),
    }
}

/// A script with perfect cognition: it reads every cognitive answer off the regenerated key.
/// Its only authenticator is a software one. Under a strict network the enrolment of it is
/// refused, and for a presence step the script sends either that authenticator's real
/// assertion bound to the challenge (from a credential the network never accepted), or
/// garbage. Under a `general` network the enrolment passes and it answers with the enrolled
/// credential.
struct Automaton {
    key: SigningKey,
    soft: SoftAuthenticator,
    /// The software passkey: as the network holds it if enrolled, else as a `general`
    /// relying party of the same origin would.
    passkey: hco_challenges::presence::Passkey,
}

impl Automaton {
    /// Registers as a person and tries to enrol its software authenticator.
    fn join(o: &Oracle, key: SigningKey, now: u64) -> Self {
        register(o, &key, Class::Human, now);
        let id = testing::identity_id(&key);
        let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();
        let network = Presence::new(o.params().presence.clone()).unwrap();
        let credential = soft.enrol(&network, &id.0, now).unwrap();
        let enrolment = SignedEnrolment::new(&key, now, String::from_utf8(credential).unwrap());
        let enrolled = o.enrol_passkey(&enrolment, now).unwrap();
        let passkey = match o.params().presence.attestation {
            AttestationMode::Strict => {
                let refused = enrolled.unwrap_err();
                assert!(
                    ["attestation_untrusted", "aaguid_not_allowed"].contains(&refused.code()),
                    "{refused}"
                );
                assert!(o.passkeys(&id).unwrap().is_empty());
                let general = Presence::new(prod_presence(AttestationMode::General)).unwrap();
                let credential = soft.enrol(&general, &id.0, now).unwrap();
                general.enrol(&id.0, now, &credential).unwrap()
            }
            AttestationMode::General => {
                hco_challenges::presence::Passkey::decode(&enrolled.unwrap().passkey).unwrap()
            }
        };
        Self { key, soft, passkey }
    }

    /// Runs window `t` from the start of its slot: each step as soon as it opens (a
    /// `step_not_open` refusal gives the moment), each answer 250 ms after the family's
    /// human-speed floor, until the oracle has no further challenge for it.
    fn run_window(&mut self, o: &Oracle, node_key: &SigningKey, t: u64, tally: &mut Tally) {
        let id = testing::identity_id(&self.key);
        let slot = o.slot(t, &id).unwrap();
        let tries = o.params().policy(Class::Human).tries();
        let phase = (slot.end - slot.start) / u64::from(tries);
        let mut now = slot.start;
        for j in 0..=tries {
            let issued = loop {
                let before = footprint(o, t, &id);
                match request(o, &self.key, t, j, now) {
                    Ok(issued) => break issued,
                    Err(Reason::StepNotOpen { opens_at }) => {
                        assert_eq!(footprint(o, t, &id), before);
                        // A cognitive step opens in its phase, a presence step on its beat.
                        let start = slot.start + u64::from(j) * phase;
                        let beat = o.params().beat(&slot, Class::Human, j, 5_000);
                        assert!(
                            ((start..start + phase).contains(&opens_at)
                                || beat.contains(&opens_at))
                                && opens_at > now
                        );
                        now = opens_at;
                    }
                    Err(reason @ (Reason::NoTriesLeft { .. } | Reason::StepsComplete)) => {
                        assert_eq!(footprint(o, t, &id), before);
                        tally.count(format!("request: {}", reason.code()));
                        return;
                    }
                    Err(other) => panic!("{other}"),
                }
            };
            let c = &issued.challenge.challenge;
            let bytes = if o.registry().get(&c.family).unwrap().uses_passkeys() {
                let enrolled = !o.passkeys(&id).unwrap().is_empty();
                if enrolled || j % 2 == 0 {
                    let presence = Presence::new(o.params().presence.clone()).unwrap();
                    let challenge_id = c.challenge_id().0;
                    self.soft
                        .assert(
                            &presence,
                            &challenge_id,
                            std::slice::from_ref(&self.passkey),
                        )
                        .unwrap()
                } else {
                    br#"{"id":"forged","type":"public-key"}"#.to_vec()
                }
            } else {
                reference(o, node_key, &issued)
            };
            now = c.issued_at + o.params().min_solve_ms(&c.family) + 250;
            let verdict = code(answer(o, &self.key, &issued, &bytes, now));
            tally.count(format!("{}: {verdict}", c.family));
        }
        panic!("more requests than tries");
    }
}

/// What the automaton's windows came to.
#[derive(Debug, Default)]
struct Tally {
    identity_windows: usize,
    active: usize,
    outcomes: BTreeMap<String, usize>,
}

impl Tally {
    fn count(&mut self, what: String) {
        *self.outcomes.entry(what).or_default() += 1;
    }
}

/// Runs `identities` automata for `windows` windows under `human_steps` (and `attestation`);
/// closes each window into a certificate. Returns the tally, with the active set checked
/// against the certificate.
fn automata(
    human_steps: &[&str],
    attestation: AttestationMode,
    identities: u64,
    windows: u64,
) -> Tally {
    let node_key = testing::key(1);
    let mut params = prod_like(&node_key, human_steps);
    params.presence = prod_presence(attestation);
    let o = node(&params, &node_key);
    let verifier = LightVerifier::new(params.committee.clone(), params.quorum)
        .unwrap()
        .with_params(params.digest());
    let now = params.window_start(0);
    let mut bots: Vec<Automaton> = (0..identities)
        .map(|i| Automaton::join(&o, testing::key(10_000 + i), now))
        .collect();
    let mut tally = Tally::default();
    for t in 0..windows {
        for bot in &mut bots {
            bot.run_window(&o, &node_key, t, &mut tally);
        }
        let active = o.active_set(t).unwrap();
        tally.identity_windows += bots.len();
        tally.active += active.len();
        // The window's certificate holds exactly the active set, each with its class.
        let summary = o.summarize(t, params.closes_at(t)).unwrap().unwrap();
        let cert = o.ledger().certificate(t).unwrap().unwrap();
        assert_eq!(cert.summary, summary.summary);
        assert_eq!(summary.summary.count, active.len() as u64);
        for bot in &bots {
            let id = testing::identity_id(&bot.key);
            match o.membership(t, &id).unwrap() {
                Some((cert, proof)) => {
                    verifier
                        .verify_member_of_class(&cert, &id, Class::Human, &proof)
                        .unwrap();
                    assert!(active.contains(&(id, Class::Human)));
                }
                None => assert!(!active.iter().any(|(a, _)| *a == id)),
            }
        }
    }
    tally
}

#[test]
fn perfect_cognition_without_an_authenticator_keeps_no_identity_active() {
    const IDENTITIES: u64 = 100;
    const WINDOWS: u64 = 4;
    const PROD: [&str; 5] = ["cognitive", "cognitive", "presence", "presence", "presence"];
    let started = std::time::Instant::now();
    let with_presence = automata(&PROD, AttestationMode::Strict, IDENTITIES, WINDOWS);
    eprintln!(
        "prod policy [cognitive ×2, presence ×3] + 1 spare: {} of {} identity-windows active; {:?}",
        with_presence.active, with_presence.identity_windows, with_presence.outcomes
    );
    assert_eq!(with_presence.identity_windows, 400);
    assert_eq!(with_presence.active, 0);
    // Every window ended the same way: both cognitive steps passed (the script has the answer
    // key), two presence prompts refused for want of an enrolled passkey, then no try left for
    // the three prompts.
    let windows = with_presence.identity_windows;
    let count = |suffix: &str| -> usize {
        with_presence
            .outcomes
            .iter()
            .filter(|(k, _)| k.ends_with(suffix))
            .map(|(_, n)| n)
            .sum()
    };
    assert_eq!(
        count(": accepted"),
        2 * windows,
        "{:?}",
        with_presence.outcomes
    );
    assert_eq!(
        with_presence.outcomes.get("presence: no_passkey_enrolled"),
        Some(&(2 * windows))
    );
    assert_eq!(
        with_presence.outcomes.get("request: no_tries_left"),
        Some(&windows)
    );

    // The same automaton without the presence step: every cognitive step passes (the cognitive
    // families alone do not stop a script that has the answer key), so it is active in every
    // window. The presence step is what stopped it above.
    let without = automata(
        &["cognitive", "cognitive"],
        AttestationMode::Strict,
        IDENTITIES,
        WINDOWS,
    );
    eprintln!(
        "policy [cognitive, cognitive] + 1 spare: {} of {} identity-windows active; {:?}",
        without.active, without.identity_windows, without.outcomes
    );
    assert_eq!(without.active, without.identity_windows);
    let accepted: usize = without
        .outcomes
        .iter()
        .filter(|(k, _)| k.ends_with(": accepted"))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(accepted, 2 * without.identity_windows);
    assert_eq!(
        without.outcomes.get("request: steps_complete"),
        Some(&without.identity_windows)
    );

    // What the strict attestation policy is worth: under `general` (the mode
    // `configs/prod.toml` ships with) the software authenticator enrols, and the same script
    // passes the presence step too, in every window.
    let general = automata(&PROD, AttestationMode::General, IDENTITIES / 4, WINDOWS);
    eprintln!(
        "prod policy under `general` attestation, software authenticator enrolled: {} of {} identity-windows active; {:?}",
        general.active, general.identity_windows, general.outcomes
    );
    assert_eq!(general.active, general.identity_windows);
    eprintln!("automata: {:?}", started.elapsed());
}

// ---------------------------------------------------------------------------------------------
// 4. Blind guessing.

/// A uniformly random well-formed answer to a closed-answer prompt, and the chance it is right.
///
/// The answer space, read off the prompt and answer format:
/// - `visual_match`: a string of `length` letters over the prompt's `alphabet` (five over
///   twenty): 1/20⁵.
///
/// Not guessed here, their answer space being open: `interactive_reasoning` (click positions
/// on two pictures; its blind clicker is among the node's attackers), `arithmetic_reasoning`
/// (any integer; its baseline parser solves it outright anyway), `attention` (a log sealed by
/// the node), `presence` (a signature by an enrolled credential).
fn blind_guess(prompt: &Prompt, rng: &mut SeedStream) -> (Vec<u8>, f64, &'static str) {
    match prompt.family.as_str() {
        "visual_match" => {
            let data: serde_json::Value = serde_json::from_slice(&prompt.data).unwrap();
            let alphabet = data["alphabet"].as_str().unwrap().as_bytes();
            let length = data["length"].as_u64().unwrap() as i32;
            let guess = (0..length)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                .collect();
            (
                guess,
                (1.0f64 / alphabet.len() as f64).powi(length),
                "transcription",
            )
        }
        other => panic!("no closed answer space for {other}"),
    }
}

/// Guesses on fresh challenges: how many, how many right, and the sums of the chance `p` and
/// of `p (1 − p)` (the variance of the count of right guesses).
#[derive(Debug, Default, Clone, Copy)]
struct Guesses {
    n: usize,
    right: usize,
    p: f64,
    var: f64,
}

impl Guesses {
    fn add(&mut self, p: f64, right: bool) {
        self.n += 1;
        self.right += usize::from(right);
        self.p += p;
        self.var += p * (1.0 - p);
    }

    /// Checks the success rate against the chance of a blind guess and prints the figures.
    ///
    /// Expected rate `p̄ = Σp / n` (1/options for a single answer space); one standard
    /// deviation of the rate `σ = √(Σ p(1−p)) / n` (= √(p(1−p)/n) for a single space). The
    /// rate of a blind guesser falls within `p̄ ± 2σ` 95% of the time; the assertion allows
    /// `p̄ ± 3σ` (99.7%) so that a change of generator or of this test's seeds does not fail it
    /// by chance one time in twenty. The run itself is deterministic (fixed keys and guess
    /// seed), so it does not flake between runs.
    fn check(&self, what: &str) {
        let rate = self.right as f64 / self.n as f64;
        let expected = self.p / self.n as f64;
        let sigma = self.var.sqrt() / self.n as f64;
        let z = (rate - expected) / sigma;
        eprintln!(
            "{what}: {}/{} right = {rate:.4}; blind chance {expected:.4}, σ {sigma:.4}, 2σ band [{:.4}, {:.4}], z = {z:+.2}",
            self.right,
            self.n,
            expected - 2.0 * sigma,
            expected + 2.0 * sigma,
        );
        assert!(
            z.abs() <= 3.0,
            "{what}: {rate:.4} is {z:+.2}σ from {expected:.4}"
        );
    }
}

/// At least `tries` first answers by blind guess, each to a fresh `(id, t, j)` of `family` (one
/// drawn step, three spares: up to four fresh challenges per identity and window), with the
/// right answer sent second to each. Returns the guesses by answer space.
fn guess_family(family: &str, tries: usize) -> BTreeMap<&'static str, Guesses> {
    let node_key = testing::key(1);
    let mut params = testing::params_for(&[testing::node_id(&node_key)]);
    let registry = Registry::builtin();
    let fam = registry.get(family).unwrap();
    // `proof_of_work` stays for the agents' drawn step; the people draw only `family`.
    params.families = vec![
        params.family("proof_of_work").unwrap().clone(),
        FamilyConfig {
            name: family.into(),
            deadline_ms: 20_000,
            difficulty: fam.default_params().difficulty,
            min_solve_ms: fam.min_human_solve_ms(),
        },
    ];
    params.policies.human = WindowPolicy {
        steps: vec![Step::Drawn],
        spares: 3,
    };
    let o = node(&params, &node_key);
    let keys: Vec<SigningKey> = (0..100).map(|i| testing::key(20_000 + i)).collect();
    for key in &keys {
        register(&o, key, Class::Human, params.window_start(0));
    }
    let mut rng = Seed([0x5e; 32]).derive(family).stream();
    let mut by_space: BTreeMap<&'static str, Guesses> = BTreeMap::new();
    let mut second_answers = 0;
    let mut t = 0;
    let done =
        |by_space: &BTreeMap<&str, Guesses>| by_space.values().map(|g| g.n).sum::<usize>() >= tries;
    while !done(&by_space) {
        for key in &keys {
            if done(&by_space) {
                break;
            }
            let mut now = params.window_start(t) + 1_000;
            for j in 0.. {
                let issued = match request(&o, key, t, j, now) {
                    Ok(issued) => issued,
                    // Passed, or four wrong guesses: the window is over for this identity.
                    Err(Reason::StepsComplete | Reason::IndexOutOfRange { .. }) => break,
                    Err(other) => panic!("{other}"),
                };
                let (guess, p, space) = blind_guess(&issued.prompt, &mut rng);
                now += params.min_solve_ms(family) + 10;
                let verdict = code(answer(&o, key, &issued, &guess, now));
                assert!(
                    ["accepted", "answer_mismatch"].contains(&verdict.as_str()),
                    "a malformed guess: {verdict}"
                );
                by_space
                    .entry(space)
                    .or_default()
                    .add(p, verdict == "accepted");
                // The second answer, the right one, comes too late: the first was final.
                let right = reference(&o, &node_key, &issued);
                let again = code(answer(&o, key, &issued, &right, now + 10));
                assert_eq!(again, "already_answered");
                second_answers += 1;
                now += 20;
            }
        }
        t += 1;
    }
    let n: usize = by_space.values().map(|g| g.n).sum();
    assert_eq!(second_answers, n);
    eprintln!(
        "{family}: {n} first tries in {t} windows of up to 100 identities; every second answer already_answered"
    );
    by_space
}

#[test]
fn blind_guessing_stays_within_one_over_options() {
    const TRIES: usize = 1_000;
    let started = std::time::Instant::now();
    for family in ["visual_match"] {
        let by_space = guess_family(family, TRIES);
        let mut all = Guesses::default();
        for (space, g) in &by_space {
            g.check(&format!("{family} {space}"));
            all.n += g.n;
            all.right += g.right;
            all.p += g.p;
            all.var += g.var;
        }
        assert!(all.n >= TRIES);
        all.check(family);
    }
    eprintln!("blind guessing: {:?}", started.elapsed());
}
