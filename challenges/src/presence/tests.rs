//! Presence checks with the software authenticator (built with the `soft-authenticator`
//! feature, which the workspace's node crate enables).

use super::*;
use policy::parse_aaguid;
use webauthn_rs_core::proto::{AttestationFormat, AttestationMetadata};

const ID: [u8; 32] = [3; 32];
#[cfg(feature = "soft-authenticator")]
const ORIGIN: &str = "http://localhost:4000";

/// The AAGUID of Chromium's WebDriver virtual authenticator.
const CHROMIUM_AAGUID: &str = "01020304-0506-0708-0102-030405060708";
/// The test CA that vouches for the virtual authenticator's attestation key.
const CHROMIUM_CA: &str = include_str!("chromium_virtual_ca.pem");
/// The shipped vendor snapshot (every file under `configs/attestation/`).
const VENDOR_ROOTS: [&str; 5] = [
    include_str!("../../../configs/attestation/yubico-2026-11.pem"),
    include_str!("../../../configs/attestation/apple-2026-11.pem"),
    include_str!("../../../configs/attestation/microsoft-tpm-2026-11.pem"),
    include_str!("../../../configs/attestation/android-key-2026-11.pem"),
    include_str!("../../../configs/attestation/nitrokey-2026-11.pem"),
];
const PROD_TOML: &str = include_str!("../../../configs/prod.toml");

fn cid(n: u8) -> [u8; 32] {
    [n; 32]
}

/// The AAGUIDs `configs/prod.toml` allow-lists (its `aaguids = [...]` lines).
fn prod_aaguids() -> Vec<String> {
    let start = PROD_TOML.find("\naaguids = [").unwrap();
    let list = &PROD_TOML[start..];
    let list = &list[..list.find("\n]").unwrap()];
    let out: Vec<String> = list
        .lines()
        .skip(1)
        .filter_map(|line| line.trim().strip_prefix('"')?.split('"').next())
        .map(str::to_owned)
        .collect();
    assert!(out.len() > 10, "{out:?}");
    out
}

/// A strict policy as production runs it, with `cas` and `aaguids`.
fn strict(cas: &[&str], aaguids: Vec<String>) -> PresencePolicy {
    PresencePolicy {
        user_verification: UserVerification::Required,
        attestation: AttestationMode::Strict,
        attestation_ca_pem: cas.iter().map(|&c| c.to_owned()).collect(),
        aaguids,
        allow_zero_counter: false,
        ..PresencePolicy::default()
    }
}

/// What Chromium's virtual authenticator returned (see `chromium_capture.json`).
struct Capture {
    created_at: u64,
    enrolment: Vec<u8>,
    /// Assertions for challenge ids `[1; 32]` and `[2; 32]` (counters 2 and 3).
    assertions: Vec<Vec<u8>>,
    /// After the counter wrapped: `[3; 32]` and `[4; 32]` (counters 0 and 1).
    wrapped: Vec<Vec<u8>>,
}

fn capture() -> Capture {
    let v: serde_json::Value = serde_json::from_str(include_str!("chromium_capture.json")).unwrap();
    let bytes = |v: &serde_json::Value| serde_json::to_vec(v).unwrap();
    let all = |key: &str| v[key].as_array().unwrap().iter().map(bytes).collect();
    Capture {
        created_at: v["created_at"].as_u64().unwrap(),
        enrolment: bytes(&v["enrolment"]),
        assertions: all("assertions"),
        wrapped: all("wrapped_assertions"),
    }
}

#[test]
fn counters_must_strictly_increase() {
    let lenient = PresencePolicy::default();
    let strict = PresencePolicy {
        allow_zero_counter: false,
        ..PresencePolicy::default()
    };
    for policy in [&lenient, &strict] {
        assert_eq!(policy.counter_ok(0, 1), Ok(()));
        assert_eq!(policy.counter_ok(41, 42), Ok(()));
        assert_eq!(policy.counter_ok(0, u32::MAX), Ok(()));
        for (stored, got) in [(1, 1), (42, 41), (42, 0), (u32::MAX, u32::MAX)] {
            assert_eq!(
                policy.counter_ok(stored, got),
                Err(Reject::CounterNotIncreased { stored, got })
            );
        }
    }
    // 0 after 0: an authenticator without a counter, accepted only where the policy says so.
    assert_eq!(lenient.counter_ok(0, 0), Ok(()));
    assert_eq!(
        strict.counter_ok(0, 0).unwrap_err().code(),
        "counter_not_increased"
    );
}

#[test]
fn the_policy_is_checked_and_errors_name_the_field() {
    let err = Presence::new(strict(&[], Vec::new())).unwrap_err();
    assert!(err.contains("attestation_ca_pem"), "{err}");
    let err = Presence::new(strict(
        &[CHROMIUM_CA],
        vec![CHROMIUM_AAGUID.into(), "x".into()],
    ))
    .unwrap_err();
    assert!(err.contains("aaguids[1] `x`"), "{err}");
    for bad in [
        "0102030405060708010203040506070",
        "01020304-0506-0708-0102-03040506070g",
        "01020304-0506-0708-0102030405060708",
        "{01020304-0506-0708-0102-030405060708}",
    ] {
        assert!(parse_aaguid(bad).is_none(), "{bad}");
    }
    // Any case; an allow-list needs strict attestation.
    Presence::new(strict(&[CHROMIUM_CA], vec![CHROMIUM_AAGUID.to_uppercase()])).unwrap();
    let general = PresencePolicy {
        aaguids: vec![CHROMIUM_AAGUID.into()],
        ..PresencePolicy::default()
    };
    assert!(Presence::new(general).unwrap_err().contains("aaguids"));
    let err = Presence::new(strict(&["no certificate here"], Vec::new())).unwrap_err();
    assert!(err.contains("attestation_ca_pem[0]"), "{err}");
    let truncated = &CHROMIUM_CA[..CHROMIUM_CA.len() - 40];
    let err = Presence::new(strict(&[CHROMIUM_CA, truncated], Vec::new())).unwrap_err();
    assert!(err.contains("attestation_ca_pem[1]"), "{err}");
    // The prod allow-list parses.
    Presence::new(strict(&VENDOR_ROOTS, prod_aaguids())).unwrap();
}

#[test]
fn software_authenticators_are_accepted_unless_strict_with_a_ca() {
    assert!(PresencePolicy::default().accepts_software_authenticators());
    let general_with_ca = PresencePolicy {
        attestation_ca_pem: vec![CHROMIUM_CA.into()],
        ..PresencePolicy::default()
    };
    assert!(general_with_ca.accepts_software_authenticators());
    assert!(!strict(&VENDOR_ROOTS, Vec::new()).accepts_software_authenticators());
}

#[test]
fn the_shipped_vendor_roots_parse_and_were_current_at_the_snapshot() {
    // 2026-11-23, the snapshot's date (the library checks validity against the clock).
    let snapshot = std::time::Duration::from_secs(1_795_392_000);
    for (i, pem) in VENDOR_ROOTS.iter().enumerate() {
        let presence = Presence::new(strict(&[pem], Vec::new())).unwrap();
        let cas = presence.cas.as_ref().unwrap();
        assert_eq!(
            cas.len(),
            pem.matches("-----BEGIN CERTIFICATE-----").count(),
            "{i}"
        );
        for ca in cas.cas().values() {
            let validity = ca.ca().tbs_certificate().validity();
            assert!(validity.not_after.to_unix_duration() > snapshot, "file {i}");
            assert!(
                validity.not_before.to_unix_duration() < snapshot,
                "file {i}"
            );
        }
    }
}

#[test]
fn a_chromium_virtual_authenticator_enrols_under_its_test_ca_and_answers() {
    let c = capture();
    let presence = Presence::new(strict(&[CHROMIUM_CA], vec![CHROMIUM_AAGUID.into()])).unwrap();
    // The enrolment is bound to its identity and time (the derived registration challenge).
    assert!(presence.enrol(&ID, c.created_at + 1, &c.enrolment).is_err());
    let passkey = presence.enrol(&ID, c.created_at, &c.enrolment).unwrap();
    assert_eq!(passkey.counter(), 1);
    assert!(passkey.user_verified());

    let mut keys = [passkey];
    for (n, (answer, counter)) in c.assertions.iter().zip([2, 3]).enumerate() {
        let challenge = cid(n as u8 + 1);
        let update = presence
            .verify_assertion(&challenge, answer, &keys)
            .unwrap();
        assert_eq!(update.counter, counter);
        assert_eq!(update.credential_id, keys[0].id());
        keys[0] = keys[0].clone().with_counter(update.counter);
        assert_eq!(
            presence.verify_assertion(&challenge, answer, &keys),
            Err(Reject::CounterNotIncreased {
                stored: counter,
                got: counter
            })
        );
    }
    assert_eq!(
        presence.verify_assertion(&cid(9), &c.assertions[0], &keys),
        Err(Reject::AssertionChallengeMismatch)
    );
}

#[test]
fn the_vendor_roots_and_the_prod_models_refuse_the_chromium_virtual_authenticator() {
    let c = capture();
    let vendors = Presence::new(strict(&VENDOR_ROOTS, Vec::new())).unwrap();
    assert_eq!(
        vendors.enrol(&ID, c.created_at, &c.enrolment).unwrap_err(),
        Reject::AttestationUntrusted
    );
    // Under its own CA but not on the prod model list: refused before the chain is checked.
    for cas in [&[CHROMIUM_CA][..], &VENDOR_ROOTS] {
        let prod = Presence::new(strict(cas, prod_aaguids())).unwrap();
        let refused = prod.enrol(&ID, c.created_at, &c.enrolment).unwrap_err();
        assert_eq!(
            refused,
            Reject::AaguidNotAllowed {
                aaguid: CHROMIUM_AAGUID.into()
            }
        );
        assert_eq!(refused.code(), "aaguid_not_allowed");
    }
}

#[test]
fn a_zero_counter_passes_only_where_the_policy_allows_it() {
    let c = capture();
    let strict_counters = Presence::new(strict(&[CHROMIUM_CA], Vec::new())).unwrap();
    let lenient = Presence::new(PresencePolicy {
        allow_zero_counter: true,
        ..strict(&[CHROMIUM_CA], Vec::new())
    })
    .unwrap();
    let passkey = strict_counters
        .enrol(&ID, c.created_at, &c.enrolment)
        .unwrap();
    // The wrapped counter: 0 with a valid signature. Against a stored 0 (as an authenticator
    // without a counter would have enrolled) only the lenient policy takes it.
    let zero = [passkey.clone().with_counter(0)];
    assert_eq!(
        lenient
            .verify_assertion(&cid(3), &c.wrapped[0], &zero)
            .unwrap()
            .counter,
        0
    );
    assert_eq!(
        strict_counters.verify_assertion(&cid(3), &c.wrapped[0], &zero),
        Err(Reject::CounterNotIncreased { stored: 0, got: 0 })
    );
    // Against the counter already seen, a fall to 0 is refused by both.
    let seen = [passkey.with_counter(3)];
    for presence in [&lenient, &strict_counters] {
        assert_eq!(
            presence.verify_assertion(&cid(3), &c.wrapped[0], &seen),
            Err(Reject::CounterNotIncreased { stored: 3, got: 0 })
        );
        assert_eq!(
            presence
                .verify_assertion(&cid(4), &c.wrapped[1], &zero)
                .unwrap()
                .counter,
            1
        );
    }
}

#[test]
fn the_attested_aaguid_is_read_from_the_attestation_object() {
    use base64::Engine;
    let c = capture();
    let v: serde_json::Value = serde_json::from_slice(&c.enrolment).unwrap();
    let object = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(v["response"]["attestationObject"].as_str().unwrap())
        .unwrap();
    let aaguid = attested_aaguid(&object).unwrap();
    assert_eq!(aaguid_text(&aaguid), CHROMIUM_AAGUID);
    assert_eq!(parse_aaguid(CHROMIUM_AAGUID), Some(aaguid));
    // Every truncation and single-byte change reads as something or nothing, never panics.
    for len in 0..object.len() {
        let _ = attested_aaguid(&object[..len]);
    }
    for i in 0..object.len() {
        let mut bad = object.clone();
        bad[i] ^= 0xa5;
        let _ = attested_aaguid(&bad);
    }
    assert_eq!(attested_aaguid(&[0xbf, 0xff]), None); // indefinite length
    assert_eq!(attested_aaguid(&[0xa1, 0x61, b'a', 0x9f]), None);
}

/// The YubiKey's `fido-u2f` registration of `yubikey_u2f_capture.json`, with `aaguid` written
/// into its authenticator data (where nothing the U2F signature covers changes).
fn yubikey_u2f_claiming(aaguid: &[u8; 16]) -> RegisterPublicKeyCredential {
    let v: serde_json::Value =
        serde_json::from_str(include_str!("yubikey_u2f_capture.json")).unwrap();
    let mut reg: RegisterPublicKeyCredential =
        serde_json::from_value(v["registration"].clone()).unwrap();
    let object = &reg.response.attestation_object;
    let data = attestation_auth_data(object).unwrap();
    let at = data.as_ptr() as usize - object.as_ptr() as usize + 37;
    reg.response.attestation_object[at..at + 16].copy_from_slice(aaguid);
    reg
}

/// Enrols the YubiKey capture under `policy`'s attestation rules (user verification preferred:
/// a U2F key does not verify the user). The capture's relying party is an IP address, which
/// `Presence::new` refuses (WebAuthn does not allow it), so the library's relying party for it
/// is put in place; the registration state is the policy's, with the capture's zero challenge.
fn enrol_yubikey_u2f(
    policy: PresencePolicy,
    reg: &RegisterPublicKeyCredential,
) -> Result<Passkey, Reject> {
    let mut presence = Presence::new(PresencePolicy {
        user_verification: UserVerification::Preferred,
        ..policy
    })
    .unwrap();
    presence.core = WebauthnCore::new_unsafe_experts_only(
        "capture",
        "127.0.0.1",
        vec![Url::parse("http://127.0.0.1:8080").unwrap()],
        std::time::Duration::from_millis(CEREMONY_TIMEOUT_MS),
        Some(false),
        Some(false),
    );
    let (_, state) = presence.registration(&ID, 0).unwrap();
    let state = with_challenge(serde_json::to_value(&state).unwrap(), &[0; 32]).unwrap();
    presence.register(reg, &state)
}

#[test]
fn under_an_allow_list_a_u2f_attestation_cannot_claim_a_model() {
    let listed = parse_aaguid("ee882879-721c-4913-9775-3dfcce97072a").unwrap(); // YubiKey 5
    assert!(
        prod_aaguids()
            .iter()
            .any(|a| parse_aaguid(a) == Some(listed))
    );
    let as_sent = yubikey_u2f_claiming(&[0; 16]);
    let claiming = yubikey_u2f_claiming(&listed);
    // Without an allow-list the vendor's chain is all that counts: the capture enrols, and so
    // does the rewritten one, since the U2F signature does not cover the AAGUID.
    for reg in [&as_sent, &claiming] {
        enrol_yubikey_u2f(strict(&VENDOR_ROOTS, Vec::new()), reg).unwrap();
    }
    // Under prod's models: the zeros as sent are not a listed model, and a listed one written
    // in is only a claim, refused though the chain is Yubico's.
    let prod = || strict(&VENDOR_ROOTS, prod_aaguids());
    assert_eq!(
        enrol_yubikey_u2f(prod(), &as_sent).unwrap_err().code(),
        "aaguid_not_allowed"
    );
    let refused = enrol_yubikey_u2f(prod(), &claiming).unwrap_err();
    assert_eq!(
        refused,
        Reject::AaguidNotAttested {
            format: "fido-u2f".into()
        }
    );
    assert_eq!(refused.code(), "aaguid_not_attested");
}

#[test]
fn only_formats_that_sign_the_aaguid_vouch_for_the_model() {
    let passkey = enrol_yubikey_u2f(
        strict(&VENDOR_ROOTS, Vec::new()),
        &yubikey_u2f_claiming(&[0; 16]),
    )
    .unwrap();
    let claimed = [9; 16];
    let judged = |format: AttestationFormat, metadata: AttestationMetadata| {
        let mut credential = passkey.credential.clone();
        credential.attestation_format = format;
        credential.attestation.metadata = metadata;
        attested_model(&credential, &claimed)
    };
    assert_eq!(
        judged(AttestationFormat::AppleAnonymous, AttestationMetadata::None),
        Ok(claimed)
    );
    for (format, name) in [
        (AttestationFormat::FIDOU2F, "fido-u2f"),
        (AttestationFormat::AndroidKey, "android-key"),
        (AttestationFormat::AndroidSafetyNet, "android-safetynet"),
        (AttestationFormat::None, "none"),
        // Self attestation: the library reports no AAGUID.
        (AttestationFormat::Packed, "packed (self attestation)"),
        (AttestationFormat::Tpm, "tpm"),
    ] {
        assert_eq!(judged(format, AttestationMetadata::None), Err(name));
    }
    // Packed with a certificate: see the Chromium capture, enrolled under its allow-list.
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

    /// The assertion with its authenticator-data flags (the byte at 32: 0x01 user present,
    /// 0x04 user verified, 0x08 backup eligible, 0x10 backed up) changed by `edit`.
    fn edit_flags(assertion: &serde_json::Value, edit: impl FnOnce(u8) -> u8) -> serde_json::Value {
        use base64::Engine;
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let data = assertion["response"]["authenticatorData"].as_str().unwrap();
        let mut bytes = engine.decode(data).unwrap();
        bytes[32] = edit(bytes[32]);
        let mut out = assertion.clone();
        out["response"]["authenticatorData"] = engine.encode(&bytes).into();
        out
    }

    /// The assertion with `mask` cleared in its authenticator-data flags.
    fn clear_flags(assertion: &serde_json::Value, mask: u8) -> serde_json::Value {
        edit_flags(assertion, |flags| flags & !mask)
    }

    /// The registration credential (JSON) with its attestation replaced by `none` over its
    /// authenticator data, the flags changed by `edit` (no signature covers them then).
    fn none_attested(credential: &[u8], edit: impl FnOnce(u8) -> u8) -> Vec<u8> {
        use base64::Engine;
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let mut v: serde_json::Value = serde_json::from_slice(credential).unwrap();
        let object = engine
            .decode(v["response"]["attestationObject"].as_str().unwrap())
            .unwrap();
        let mut data = attestation_auth_data(&object).unwrap().to_vec();
        data[32] = edit(data[32]);
        // {"fmt": "none", "attStmt": {}, "authData": data}
        let mut none = b"\xa3\x63fmt\x64none\x67attStmt\xa0\x68authData\x59".to_vec();
        none.extend((data.len() as u16).to_be_bytes());
        none.extend(data);
        v["response"]["attestationObject"] = engine.encode(&none).into();
        serde_json::to_vec(&v).unwrap()
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
    fn a_ceremony_in_a_frame_of_another_origin_is_wrong_origin() {
        let presence = Presence::new(PresencePolicy::default()).unwrap();
        let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();
        let framed = soft
            .enrol_with_cross_origin(&presence, &ID, 1_000, true)
            .unwrap();
        assert_eq!(
            presence.enrol(&ID, 1_000, &framed).unwrap_err().code(),
            "wrong_origin"
        );
        let top = soft
            .enrol_with_cross_origin(&presence, &ID, 1_000, false)
            .unwrap();
        let keys = [presence.enrol(&ID, 1_000, &top).unwrap()];

        let top = soft
            .assert_with_cross_origin(&presence, &cid(1), &keys, false)
            .unwrap();
        presence.verify_assertion(&cid(1), &top, &keys).unwrap();
        let framed = soft
            .assert_with_cross_origin(&presence, &cid(2), &keys, true)
            .unwrap();
        assert_eq!(
            presence.verify_assertion(&cid(2), &framed, &keys),
            Err(Reject::WrongOrigin)
        );
    }

    #[test]
    fn backed_up_without_backup_eligibility_is_malformed() {
        let presence = Presence::new(PresencePolicy::default()).unwrap();
        let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();
        let credential = soft.enrol(&presence, &ID, 1_000).unwrap();
        // An enrolment with BS = 1, BE = 0 (attestation `none`: no signature over the flags,
        // which a general network accepts). The same enrolment without BS enrols.
        let backed_up = none_attested(&credential, |flags| flags | 0x10);
        assert!(matches!(
            presence.enrol(&ID, 1_000, &backed_up),
            Err(Reject::InvalidEnrolment(why)) if why.contains("(BS)")
        ));
        let passkey = presence
            .enrol(&ID, 1_000, &none_attested(&credential, |flags| flags))
            .unwrap();
        // An assertion with BS = 1, BE = 0.
        let keys = [passkey];
        let answer = soft.assert(&presence, &cid(1), &keys).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&answer).unwrap();
        let backed_up = edit_flags(&json, |flags| flags | 0x10);
        let refused = presence
            .verify_assertion(&cid(1), &serde_json::to_vec(&backed_up).unwrap(), &keys)
            .unwrap_err();
        assert_eq!(refused.code(), "invalid_answer_format", "{refused}");
        presence.verify_assertion(&cid(1), &answer, &keys).unwrap();
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
    fn strict_mode_with_the_vendor_roots_refuses_the_software_authenticator() {
        let policy = strict(&VENDOR_ROOTS, Vec::new());
        assert!(!policy.accepts_software_authenticators());
        let presence = Presence::new(policy).unwrap();
        let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();
        let credential = soft.enrol(&presence, &ID, 1_000).unwrap();
        assert_eq!(
            presence.enrol(&ID, 1_000, &credential).unwrap_err(),
            Reject::AttestationUntrusted
        );
    }

    #[test]
    fn an_aaguid_list_refuses_the_software_authenticator() {
        // The software authenticator reports the all-zero AAGUID: not a listed model, whatever
        // the roots (even under the Chromium test CA, which would not trust it either).
        for cas in [&VENDOR_ROOTS[..], &[CHROMIUM_CA]] {
            let presence = Presence::new(strict(cas, prod_aaguids())).unwrap();
            let mut soft = SoftAuthenticator::new(ORIGIN).unwrap();
            let credential = soft.enrol(&presence, &ID, 1_000).unwrap();
            let refused = presence.enrol(&ID, 1_000, &credential).unwrap_err();
            assert_eq!(
                refused,
                Reject::AaguidNotAllowed {
                    aaguid: "00000000-0000-0000-0000-000000000000".into()
                }
            );
        }
    }

    #[test]
    fn without_zero_counters_every_assertion_must_raise_the_counter() {
        let presence = Presence::new(PresencePolicy {
            allow_zero_counter: false,
            ..PresencePolicy::default()
        })
        .unwrap();
        let (mut soft, passkey) = enrolled(&presence);
        assert_eq!(passkey.counter(), 0);
        let mut keys = [passkey];
        let mut last = 0;
        for n in 1..=3 {
            let answer = soft.assert(&presence, &cid(n), &keys).unwrap();
            let update = presence.verify_assertion(&cid(n), &answer, &keys).unwrap();
            assert!(update.counter > last);
            last = update.counter;
            keys[0] = keys[0].clone().with_counter(last);
            assert_eq!(
                presence
                    .verify_assertion(&cid(n), &answer, &keys)
                    .unwrap_err()
                    .code(),
                "counter_not_increased"
            );
        }
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
