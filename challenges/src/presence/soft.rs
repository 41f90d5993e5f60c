//! The presence family's baseline solver: a software authenticator (webauthn-authenticator-rs's
//! `SoftPasskey`) that any script can run. It passes every `general`-mode challenge — presence
//! proves a WebAuthn authenticator answered, not that a person touched it — and fails `strict`
//! mode, whose CA list does not include it. The benchmark reports exactly that.

use std::time::{Duration, Instant};

use url::Url;
use webauthn_authenticator_rs::WebauthnAuthenticator;
use webauthn_authenticator_rs::softpasskey::SoftPasskey;

use super::{Passkey, Presence, PresenceFamily, PresencePolicy};
use crate::bench::FamilyBench;
use crate::family::Context;
use crate::{Family, Reject};

/// A software passkey for one identity.
pub struct SoftAuthenticator {
    token: SoftPasskey,
    origin: Url,
}

impl std::fmt::Debug for SoftAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoftAuthenticator")
            .field("origin", &self.origin.as_str())
            .finish_non_exhaustive()
    }
}

impl SoftAuthenticator {
    /// An authenticator used from a page at `origin`; it reports user verification.
    pub fn new(origin: &str) -> Result<Self, String> {
        Ok(Self {
            token: SoftPasskey::new(true),
            origin: Url::parse(origin).map_err(|e| format!("origin `{origin}`: {e}"))?,
        })
    }

    /// Runs the enrolment ceremony for `(id, created_at)`; returns the registration credential
    /// as the JSON a browser would send.
    pub fn enrol(
        &mut self,
        presence: &Presence,
        id: &[u8; 32],
        created_at: u64,
    ) -> Result<Vec<u8>, String> {
        let options = presence
            .creation_options(id, created_at)
            .map_err(|e| e.to_string())?;
        let credential = self
            .token
            .do_registration(self.origin.clone(), options)
            .map_err(|e| format!("software authenticator: {e:?}"))?;
        serde_json::to_vec(&credential).map_err(|e| e.to_string())
    }

    /// Makes the assertion answering `challenge_id` with one of `passkeys`.
    pub fn assert(
        &mut self,
        presence: &Presence,
        challenge_id: &[u8; 32],
        passkeys: &[Passkey],
    ) -> Result<Vec<u8>, String> {
        let options = presence
            .request_options(challenge_id, passkeys)
            .map_err(|e| e.to_string())?;
        let assertion = self
            .token
            .do_authentication(self.origin.clone(), options)
            .map_err(|e| format!("software authenticator: {e:?}"))?;
        serde_json::to_vec(&assertion).map_err(|e| e.to_string())
    }
}

/// Ceremonies whose client data says whether the page was framed by another origin
/// (`crossOrigin`), which the browser's client data of [`SoftAuthenticator::enrol`] and
/// [`SoftAuthenticator::assert`] leaves out; the authenticator signs that client data.
#[cfg(test)]
impl SoftAuthenticator {
    const TIMEOUT_MS: u32 = 60_000;

    /// The client data of a `webauthn.create` or `webauthn.get` ceremony over `challenge`.
    fn client_data(&self, type_: &str, challenge: &[u8], cross_origin: bool) -> Vec<u8> {
        let data = webauthn_rs_proto::CollectedClientData {
            type_: type_.into(),
            challenge: challenge.to_vec(),
            origin: self.origin.clone(),
            cross_origin: Some(cross_origin),
            token_binding: None,
            unknown_keys: Default::default(),
        };
        serde_json::to_vec(&data).unwrap_or_default()
    }

    /// [`SoftAuthenticator::enrol`] with `crossOrigin` set in the client data.
    pub(super) fn enrol_with_cross_origin(
        &mut self,
        presence: &Presence,
        id: &[u8; 32],
        created_at: u64,
        cross_origin: bool,
    ) -> Result<Vec<u8>, String> {
        use webauthn_authenticator_rs::AuthenticatorBackendHashedClientData as Hashed;
        let options = presence
            .creation_options(id, created_at)
            .map_err(|e| e.to_string())?
            .public_key;
        let client_data = self.client_data("webauthn.create", &options.challenge, cross_origin);
        let hash = webauthn_rs_core::crypto::compute_sha256(&client_data).to_vec();
        let mut credential =
            Hashed::perform_register(&mut self.token, hash, options, Self::TIMEOUT_MS)
                .map_err(|e| format!("software authenticator: {e:?}"))?;
        credential.response.client_data_json = client_data;
        serde_json::to_vec(&credential).map_err(|e| e.to_string())
    }

    /// [`SoftAuthenticator::assert`] with `crossOrigin` set in the client data.
    pub(super) fn assert_with_cross_origin(
        &mut self,
        presence: &Presence,
        challenge_id: &[u8; 32],
        passkeys: &[Passkey],
        cross_origin: bool,
    ) -> Result<Vec<u8>, String> {
        use webauthn_authenticator_rs::AuthenticatorBackendHashedClientData as Hashed;
        let options = presence
            .request_options(challenge_id, passkeys)
            .map_err(|e| e.to_string())?
            .public_key;
        let client_data = self.client_data("webauthn.get", &options.challenge, cross_origin);
        let hash = webauthn_rs_core::crypto::compute_sha256(&client_data).to_vec();
        let mut assertion = Hashed::perform_auth(&mut self.token, hash, options, Self::TIMEOUT_MS)
            .map_err(|e| format!("software authenticator: {e:?}"))?;
        assertion.response.client_data_json = client_data;
        serde_json::to_vec(&assertion).map_err(|e| e.to_string())
    }
}

fn challenge_id(i: u64) -> [u8; 32] {
    blake3::derive_key("hco bench presence", &i.to_le_bytes())
}

/// Presence figures within `budget`: prompts per second, assertions verified per second (with
/// the challenge binding and the counter check), and the software authenticator's success
/// under the default (`general`) policy.
pub fn bench(budget: Duration) -> Result<FamilyBench, String> {
    let family = PresenceFamily::new(PresencePolicy::default())?;
    let presence = family.presence();
    let slice = budget / 3;
    let params = family.default_params();

    let start = Instant::now();
    let mut generated = 0u64;
    while start.elapsed() < slice && generated < 5_000_000 {
        for i in 0..64 {
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&(generated + i).to_le_bytes());
            std::hint::black_box(family.generate(&crate::Seed(seed), &params));
        }
        generated += 64;
    }
    let generate_per_s = generated as f64 / start.elapsed().as_secs_f64().max(1e-9);

    // Baseline: a script with a software authenticator enrols, then answers challenges.
    let id = [7u8; 32];
    let mut soft = SoftAuthenticator::new("http://localhost:8080")?;
    let enrolment = soft.enrol(presence, &id, 1)?;
    let mut passkey = presence
        .enrol(&id, 1, &enrolment)
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let (mut trials, mut solved) = (0u32, 0u32);
    let mut answers = Vec::new();
    while trials < crate::bench::MAX_BASELINE_TRIALS && (trials < 10 || start.elapsed() < slice) {
        let cid = challenge_id(u64::from(trials));
        let keys = [passkey.clone()];
        if let Ok(answer) = soft.assert(presence, &cid, &keys) {
            let context = Context {
                challenge_id: &cid,
                passkeys: &keys,
            };
            let key = family.generate(&crate::Seed([0; 32]), &params).key;
            if let Ok(Some(update)) = family.verify_in(&key, &answer, &context) {
                solved += 1;
                passkey = passkey.with_counter(update.counter);
                if answers.len() < 256 {
                    answers.push((cid, answer));
                }
            }
        }
        trials += 1;
    }

    // Verification: the stored assertions, each against the passkey as it was before it; in
    // alternating rounds, the same through the WebAuthn library alone (states built beforehand).
    let before = [passkey.with_counter(0)];
    let library: Vec<(webauthn_rs_core::proto::AuthenticationState, &Vec<u8>)> = answers
        .iter()
        .filter_map(|(cid, answer)| {
            let state = super::with_challenge(presence.auth_state.clone(), cid).ok()?;
            Some((state, answer))
        })
        .collect();
    let (mut ours, mut theirs) = (Duration::ZERO, Duration::ZERO);
    let (mut verified, mut library_verified) = (0u64, 0u64);
    let mut failures = 0u64;
    let round = slice / 8;
    while !answers.is_empty() && ours + theirs < slice && verified < 5_000_000 {
        let start = Instant::now();
        while start.elapsed() < round {
            for (cid, answer) in &answers {
                let ok: Result<_, Reject> = presence.verify_assertion(cid, answer, &before);
                failures += u64::from(std::hint::black_box(ok).is_err());
            }
            verified += answers.len() as u64;
        }
        ours += start.elapsed();
        let start = Instant::now();
        while start.elapsed() < round {
            for (state, answer) in &library {
                let ok =
                    serde_json::from_slice::<webauthn_rs_core::proto::PublicKeyCredential>(answer)
                        .map_err(|_| ())
                        .and_then(|rsp| {
                            presence
                                .core
                                .authenticate_single_credential(&rsp, state, &before[0].credential)
                                .map_err(|_| ())
                        });
                failures += u64::from(std::hint::black_box(ok).is_err());
            }
            library_verified += library.len() as u64;
        }
        theirs += start.elapsed();
    }
    if failures > 0 {
        return Err(format!("{failures} stored assertions failed to verify"));
    }
    Ok(FamilyBench {
        class: "human",
        difficulty: params.difficulty,
        generate_per_s,
        verify_per_s: verified as f64 / ours.as_secs_f64().max(1e-9),
        baseline_success: f64::from(solved) / f64::from(trials.max(1)),
        baseline_trials: trials,
        library_verify_per_s: Some(library_verified as f64 / theirs.as_secs_f64().max(1e-9)),
        streams_per_s: None,
    })
}
