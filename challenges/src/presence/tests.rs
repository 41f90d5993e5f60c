//! Presence checks with the software authenticator (built with the `soft-authenticator`
//! feature, which the workspace's node crate enables).

use super::*;

const ID: [u8; 32] = [3; 32];
const ORIGIN: &str = "http://localhost:4000";

fn cid(n: u8) -> [u8; 32] {
    [n; 32]
}

#[test]
fn an_ip_address_is_not_a_relying_party() {
    let policy = PresencePolicy {
        rp_id: "127.0.0.1".into(),
        ..PresencePolicy::default()
    };
    assert!(Presence::new(policy).unwrap_err().contains("domain"));
    let strict = PresencePolicy {
        attestation: AttestationMode::Strict,
        ..PresencePolicy::default()
    };
    assert!(Presence::new(strict).unwrap_err().contains("CA"));
}

#[test]
fn the_stateless_check_accepts_nothing() {
    let family = PresenceFamily::default();
    let g = family.generate(&Seed([1; 32]), &family.default_params());
    assert_eq!(
        family.verify(&g.key, b"{}").unwrap_err(),
        Reject::NoPasskeyEnrolled
    );
    let context = Context {
        challenge_id: &cid(1),
        passkeys: &[],
    };
    assert_eq!(
        family.verify_in(&g.key, b"{}", &context).unwrap_err(),
        Reject::NoPasskeyEnrolled
    );
}

#[cfg(feature = "soft-authenticator")]
mod with_soft_authenticator {
    use super::*;

    /// The assertion with `mask` cleared in its authenticator-data flags (the byte at 32:
    /// 0x01 user present, 0x04 user verified).
    fn clear_flags(assertion: &serde_json::Value, mask: u8) -> serde_json::Value {
        use base64::Engine;
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let data = assertion["response"]["authenticatorData"].as_str().unwrap();
        let mut bytes = engine.decode(data).unwrap();
        bytes[32] &= !mask;
        let mut out = assertion.clone();
        out["response"]["authenticatorData"] = engine.encode(&bytes).into();
        out
    }

    fn enrolled(presence: &Presence) -> (SoftAuthenticator, Passkey) {
        let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();
        let credential = soft.enrol(presence, &ID, 1_000).unwrap();
        let passkey = presence.enrol(&ID, 1_000, &credential).unwrap();
        (soft, passkey)
    }

    #[test]
    fn an_assertion_bound_to_the_challenge_verifies_once_its_counter_moves_on() {
        let presence = Presence::new(PresencePolicy::default()).unwrap();
        let (mut soft, passkey) = enrolled(&presence);
        let keys = [passkey.clone()];
        let answer = soft.assert(&presence, &cid(1), &keys).unwrap();
        let update = presence.verify_assertion(&cid(1), &answer, &keys).unwrap();
        assert_eq!(update.credential_id, passkey.id());
        assert!(update.counter > passkey.counter());

        // For another challenge: refused, the assertion is bound to its challenge id.
        assert_eq!(
            presence
                .verify_assertion(&cid(2), &answer, &keys)
                .unwrap_err(),
            Reject::AssertionChallengeMismatch
        );
        // Once the counter is stored, the same assertion cannot be used again.
        let after = [passkey.clone().with_counter(update.counter)];
        assert!(matches!(
            presence.verify_assertion(&cid(1), &answer, &after).unwrap_err(),
            Reject::CounterNotIncreased { stored, got } if stored == got
        ));
        // A later assertion moves it on again.
        let next = soft.assert(&presence, &cid(3), &after).unwrap();
        assert!(
            presence
                .verify_assertion(&cid(3), &next, &after)
                .unwrap()
                .counter
                > update.counter
        );
    }

    #[test]
    fn presence_flag_origin_credential_and_signature_are_checked() {
        let presence = Presence::new(PresencePolicy::default()).unwrap();
        let (mut soft, passkey) = enrolled(&presence);
        let keys = [passkey];
        let answer = soft.assert(&presence, &cid(1), &keys).unwrap();
        let mut json: serde_json::Value = serde_json::from_slice(&answer).unwrap();

        // Clearing the UP flag.
        let no_up = clear_flags(&json, 0x01);
        use base64::Engine;
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        assert_eq!(
            presence
                .verify_assertion(&cid(1), &serde_json::to_vec(&no_up).unwrap(), &keys)
                .unwrap_err(),
            Reject::UserPresenceMissing
        );

        // A signature over other data.
        let sig = json["response"]["signature"].as_str().unwrap();
        let mut sig = engine.decode(sig).unwrap();
        let last = sig.len() - 1;
        sig[last] ^= 1;
        json["response"]["signature"] = engine.encode(&sig).into();
        assert_eq!(
            presence
                .verify_assertion(&cid(1), &serde_json::to_vec(&json).unwrap(), &keys)
                .unwrap_err(),
            Reject::BadAssertionSignature
        );

        // Client data from another origin (checked before the signature, so a rewritten
        // origin is reported as such).
        let client = json["response"]["clientDataJSON"].as_str().unwrap();
        let client = String::from_utf8(engine.decode(client).unwrap()).unwrap();
        let mut moved = json.clone();
        moved["response"]["clientDataJSON"] = engine
            .encode(client.replace("http://localhost:4000", "http://phish.example"))
            .into();
        assert_eq!(
            presence
                .verify_assertion(&cid(1), &serde_json::to_vec(&moved).unwrap(), &keys)
                .unwrap_err(),
            Reject::WrongOrigin
        );

        // A passkey the identity did not enrol.
        let (mut other, other_key) = enrolled(&presence);
        let foreign = other.assert(&presence, &cid(1), &[other_key]).unwrap();
        assert_eq!(
            presence
                .verify_assertion(&cid(1), &foreign, &keys)
                .unwrap_err(),
            Reject::UnknownCredential
        );

        // Garbage never panics.
        for junk in [&b""[..], b"{}", b"null", b"\xff\xfe", br#"{"id":1}"#] {
            assert!(presence.verify_assertion(&cid(1), junk, &keys).is_err());
            assert!(presence.enrol(&ID, 1, junk).is_err());
        }
    }

    #[test]
    fn an_enrolment_is_bound_to_its_identity_and_time() {
        let presence = Presence::new(PresencePolicy::default()).unwrap();
        let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();
        let credential = soft.enrol(&presence, &ID, 1_000).unwrap();
        assert!(presence.enrol(&ID, 1_001, &credential).is_err());
        assert!(presence.enrol(&[4; 32], 1_000, &credential).is_err());
        let passkey = presence.enrol(&ID, 1_000, &credential).unwrap();
        let stored = Passkey::decode(&passkey.encode()).unwrap();
        assert_eq!(stored.id(), passkey.id());
    }

    #[test]
    fn strict_mode_refuses_an_authenticator_outside_the_ca_list() {
        let presence = Presence::new(PresencePolicy {
            attestation: AttestationMode::Strict,
            attestation_ca_pem: vec![include_str!("test_ca.pem").into()],
            ..PresencePolicy::default()
        })
        .unwrap();
        let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();
        let credential = soft.enrol(&presence, &ID, 1_000).unwrap();
        assert_eq!(
            presence.enrol(&ID, 1_000, &credential).unwrap_err(),
            Reject::AttestationUntrusted
        );
    }

    #[test]
    fn required_user_verification_refuses_an_unverified_assertion() {
        let presence = Presence::new(PresencePolicy {
            user_verification: UserVerification::Required,
            ..PresencePolicy::default()
        })
        .unwrap();
        let (mut soft, passkey) = enrolled(&presence);
        let keys = [passkey];
        let answer = soft.assert(&presence, &cid(1), &keys).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&answer).unwrap();
        let json = clear_flags(&json, 0x04);
        assert_eq!(
            presence
                .verify_assertion(&cid(1), &serde_json::to_vec(&json).unwrap(), &keys)
                .unwrap_err(),
            Reject::UserVerificationMissing
        );
    }

    #[test]
    fn the_bench_reports_the_software_authenticator_passing() {
        let b = bench(std::time::Duration::from_millis(600)).unwrap();
        assert!(b.verify_per_s > 0.0 && b.generate_per_s > 0.0);
        assert_eq!(b.baseline_success, 1.0);
    }
}
