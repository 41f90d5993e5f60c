//! `presence`: a WebAuthn assertion bound to the challenge — the hardware-presence family of
//! CAHICHA, with a passkey in place of its TPM quote.
//!
//! A person first **enrols** a passkey for their identity: the WebAuthn registration challenge is
//! `BLAKE3-derive("hco passkey enrolment v1", id ‖ created_at)`, so the ceremony needs no server
//! state and every node can re-verify it; the identity signs the enrolment (see the oracle's
//! `SignedEnrolment`). Each presence challenge then asks for an assertion whose WebAuthn
//! challenge bytes are the **challenge id**, so the assertion is bound to `(id, t, j)` and to
//! the issuer's envelope. Verification ([`Presence::verify_assertion`]) checks, through
//! `webauthn-rs-core`: the credential is one the identity enrolled, the challenge, the origin
//! and relying-party hash, that the page was not framed by another origin (`crossOrigin`, checked
//! here), user presence (required), user verification (per [`UserVerification`]), valid backup
//! flags, the signature, and that the signature counter increased (authenticators that keep no
//! counter report 0 every time, which WebAuthn §6.1.1 allows).
//!
//! There is no authentication state to store, so none can be reused: the state is re-derived
//! from the challenge id, and the oracle's acceptance record for `(id, t, j)` is what makes an
//! assertion single-use (a second answer is `already_answered`), written together with the new
//! counter.
//!
//! In `strict` [`AttestationMode`] an enrolment is accepted only if the authenticator's
//! attestation chains to one of the configured CA certificates, its model (AAGUID) is on the
//! allow-list when there is one — and then signed by the attestation, which `fido-u2f`,
//! `android-key` and self attestation do not do — and the credential is device-bound (not
//! backup-eligible);
//! `general` accepts any authenticator (attestation `none`), software ones included. With
//! `allow_zero_counter = false` an assertion's signature counter must be above zero and above
//! the stored one ([`PresencePolicy::counter_ok`], the rule the oracle applies to the counters
//! it stores).

mod attestation;
mod policy;
#[cfg(feature = "soft-authenticator")]
mod soft;

use serde::Deserialize;
use url::Url;
use webauthn_rs_core::WebauthnCore;
use webauthn_rs_core::error::WebauthnError;
use webauthn_rs_core::proto::{
    AttestationCaList, AttestationConveyancePreference, AuthenticationState,
    CreationChallengeResponse, PublicKeyCredential, RegisterPublicKeyCredential, RegistrationState,
    RequestChallengeResponse,
};

#[cfg(feature = "soft-authenticator")]
pub use soft::{SoftAuthenticator, bench};

use crate::family::{Context, CounterUpdate, check_difficulty};
pub use crate::passkey::Passkey;
use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed};

/// The family's registry name.
pub const NAME: &str = "presence";

/// Passkeys one identity may enrol.
pub const MAX_PASSKEYS: usize = 4;

/// Largest enrolment (the registration credential as JSON), in bytes.
pub const MAX_ENROLMENT_LEN: usize = 16 * 1024;

/// How long a WebAuthn ceremony may take in the browser, in milliseconds.
const CEREMONY_TIMEOUT_MS: u64 = 60_000;

use attestation::{
    attestation_auth_data, attested_aaguid, attested_model, backed_up_without_eligibility,
};
use policy::aaguid_text;
pub use policy::{AttestationMode, PresencePolicy, UserVerification};

/// The one member of an assertion's client data checked here rather than by the library.
#[derive(Deserialize)]
struct ClientDataFraming {
    /// True when the ceremony ran in a frame of another origin's page.
    #[serde(rename = "crossOrigin", default)]
    cross_origin: Option<bool>,
}

/// The relying party: enrolment ceremonies and assertion checks under a [`PresencePolicy`].
#[derive(Debug, Clone)]
pub struct Presence {
    policy: PresencePolicy,
    core: WebauthnCore,
    cas: Option<AttestationCaList>,
    /// The allow-listed AAGUIDs, sorted; empty: any.
    aaguids: Vec<[u8; 16]>,
    /// The authentication state for an assertion, serialised once; only its challenge varies.
    auth_state: serde_json::Value,
}

/// The WebAuthn registration challenge of an enrolment by `id` made at `created_at`.
pub fn enrolment_challenge(id: &[u8; 32], created_at: u64) -> [u8; 32] {
    let mut material = [0u8; 40];
    material[..32].copy_from_slice(id);
    material[32..].copy_from_slice(&created_at.to_be_bytes());
    blake3::derive_key("hco passkey enrolment v1", &material)
}

fn b64url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Replaces the `challenge` of a serialised WebAuthn ceremony state.
fn with_challenge<T: serde::de::DeserializeOwned>(
    mut state: serde_json::Value,
    challenge: &[u8],
) -> Result<T, String> {
    state["challenge"] = serde_json::Value::String(b64url(challenge));
    serde_json::from_value(state).map_err(|e| format!("ceremony state: {e}"))
}

impl Presence {
    /// A relying party under `policy`; fails on an origin that is not a URL, a CA that does not
    /// parse, `strict` mode without a CA, an AAGUID that is not a UUID, or an AAGUID list
    /// without `strict` mode. Errors name the field.
    pub fn new(policy: PresencePolicy) -> Result<Self, String> {
        if policy.rp_id.is_empty() || policy.rp_id.parse::<std::net::IpAddr>().is_ok() {
            return Err(format!(
                "rp_id `{}` must be a domain name (WebAuthn does not allow IP addresses)",
                policy.rp_id
            ));
        }
        let origins = policy
            .origins
            .iter()
            .map(|o| Url::parse(o).map_err(|e| format!("origin `{o}`: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        if origins.is_empty() {
            return Err("at least one origin is needed".into());
        }
        let list = policy.ca_list()?;
        let cas = match policy.attestation {
            AttestationMode::General => None,
            AttestationMode::Strict if list.is_empty() => {
                return Err(
                    "attestation_ca_pem is empty: strict attestation needs at least one \
                     CA certificate (a node config can name PEM files in attestation_ca_files)"
                        .into(),
                );
            }
            AttestationMode::Strict => Some(list),
        };
        let aaguids = policy.parsed_aaguids()?;
        if !aaguids.is_empty() && policy.attestation != AttestationMode::Strict {
            return Err(
                "aaguids needs attestation = \"strict\": without attestation the \
                 AAGUID is only what the authenticator claims (browsers send zeros)"
                    .into(),
            );
        }
        let core = WebauthnCore::new_unsafe_experts_only(
            &policy.rp_name,
            &policy.rp_id,
            origins,
            std::time::Duration::from_millis(CEREMONY_TIMEOUT_MS),
            Some(false),
            Some(policy.allow_any_port),
        );
        let builder = core
            .new_challenge_authenticate_builder(Vec::new(), Some(policy.user_verification.policy()))
            .map_err(|e| format!("authentication state: {e}"))?;
        let (_, state) = core
            .generate_challenge_authenticate(builder)
            .map_err(|e| format!("authentication state: {e}"))?;
        let auth_state =
            serde_json::to_value(&state).map_err(|e| format!("authentication state: {e}"))?;
        Ok(Self {
            policy,
            core,
            cas,
            aaguids,
            auth_state,
        })
    }

    /// The policy.
    pub fn policy(&self) -> &PresencePolicy {
        &self.policy
    }

    fn registration(
        &self,
        id: &[u8; 32],
        created_at: u64,
    ) -> Result<(CreationChallengeResponse, RegistrationState), Reject> {
        let name = format!("hco-{}", &hex::encode(id)[..16]);
        let strict = self.policy.attestation == AttestationMode::Strict;
        let attestation = if strict {
            AttestationConveyancePreference::Direct
        } else {
            AttestationConveyancePreference::None
        };
        let builder = self
            .core
            .new_challenge_register_builder(id, &name, &name)
            .map_err(|e| Reject::InvalidEnrolment(e.to_string()))?
            .attestation(attestation)
            .user_verification_policy(self.policy.user_verification.policy())
            // A strict network takes device-bound credentials only (a synced passkey's key
            // lives on every device of its account).
            .reject_synchronised_authenticators(strict);
        let (mut options, state) = self
            .core
            .generate_challenge_register(builder)
            .map_err(|e| Reject::InvalidEnrolment(e.to_string()))?;
        let challenge = enrolment_challenge(id, created_at);
        options.public_key.challenge = challenge.to_vec();
        let state = serde_json::to_value(&state)
            .map_err(|e| e.to_string())
            .and_then(|s| with_challenge(s, &challenge))
            .map_err(Reject::InvalidEnrolment)?;
        Ok((options, state))
    }

    /// The `navigator.credentials.create()` options of an enrolment by `id` at `created_at`.
    pub fn creation_options(
        &self,
        id: &[u8; 32],
        created_at: u64,
    ) -> Result<CreationChallengeResponse, Reject> {
        self.registration(id, created_at)
            .map(|(options, _)| options)
    }

    /// Verifies a registration credential (the JSON a browser returns from
    /// `navigator.credentials.create()`) made for `(id, created_at)`; returns the new passkey.
    pub fn enrol(
        &self,
        id: &[u8; 32],
        created_at: u64,
        credential: &[u8],
    ) -> Result<Passkey, Reject> {
        if credential.len() > MAX_ENROLMENT_LEN {
            return Err(Reject::InvalidEnrolment(format!(
                "{} bytes, at most {MAX_ENROLMENT_LEN}",
                credential.len()
            )));
        }
        let reg: RegisterPublicKeyCredential = serde_json::from_slice(credential)
            .map_err(|e| Reject::InvalidEnrolment(format!("not a registration credential: {e}")))?;
        let (_, state) = self.registration(id, created_at)?;
        self.register(&reg, &state)
    }

    /// The checks of an enrolment against its registration state: the AAGUID allow-list and the
    /// backup flags, then the library's (challenge, origin, flags, attestation signature and
    /// chain, algorithm), then, under an allow-list, that the attestation vouches for the model.
    fn register(
        &self,
        reg: &RegisterPublicKeyCredential,
        state: &RegistrationState,
    ) -> Result<Passkey, Reject> {
        let object = &reg.response.attestation_object;
        let claimed = if self.aaguids.is_empty() {
            None
        } else {
            let aaguid = attested_aaguid(object).ok_or_else(|| {
                Reject::InvalidEnrolment("no attested credential data (AAGUID)".into())
            })?;
            self.check_aaguid(&aaguid)?;
            Some(aaguid)
        };
        // The library refuses these too, but as a credential that may not be hardware-bound.
        if attestation_auth_data(object).is_some_and(backed_up_without_eligibility) {
            return Err(Reject::InvalidEnrolment(
                "the authenticator data says backed up (BS) but not backup-eligible (BE)".into(),
            ));
        }
        let credential = self
            .core
            .register_credential(reg, state, self.cas.as_ref())
            .map_err(|e| match rejection(&e) {
                Some(reject @ (Reject::WrongOrigin | Reject::AttestationUntrusted)) => reject,
                _ => Reject::InvalidEnrolment(e.to_string()),
            })?;
        // Under an allow-list the model must be one the attestation signed, not a claim: the
        // AAGUID the library verified (packed, TPM), checked again, or Apple's.
        if let Some(claimed) = claimed {
            let aaguid = attested_model(&credential, &claimed).map_err(|format| {
                Reject::AaguidNotAttested {
                    format: format.into(),
                }
            })?;
            self.check_aaguid(&aaguid)?;
        }
        Ok(Passkey { credential })
    }

    fn check_aaguid(&self, aaguid: &[u8; 16]) -> Result<(), Reject> {
        if self.aaguids.is_empty() || self.aaguids.binary_search(aaguid).is_ok() {
            Ok(())
        } else {
            Err(Reject::AaguidNotAllowed {
                aaguid: aaguid_text(aaguid),
            })
        }
    }

    /// The `navigator.credentials.get()` options of the assertion answering `challenge_id`.
    pub fn request_options(
        &self,
        challenge_id: &[u8; 32],
        passkeys: &[Passkey],
    ) -> Result<RequestChallengeResponse, Reject> {
        let builder = self
            .core
            .new_challenge_authenticate_builder(
                passkeys.iter().map(|p| p.credential.clone()).collect(),
                Some(self.policy.user_verification.policy()),
            )
            .map_err(|_| Reject::NoPasskeyEnrolled)?;
        let (mut options, _) = self
            .core
            .generate_challenge_authenticate(builder)
            .map_err(|_| Reject::NoPasskeyEnrolled)?;
        options.public_key.challenge = challenge_id.to_vec();
        Ok(options)
    }

    /// Checks an assertion (the JSON of `navigator.credentials.get()`) answering `challenge_id`
    /// against the identity's passkeys; returns the credential's new counter.
    pub fn verify_assertion(
        &self,
        challenge_id: &[u8; 32],
        answer: &[u8],
        passkeys: &[Passkey],
    ) -> Result<CounterUpdate, Reject> {
        if passkeys.is_empty() {
            return Err(Reject::NoPasskeyEnrolled);
        }
        let rsp: PublicKeyCredential = serde_json::from_slice(answer).map_err(|_| {
            Reject::InvalidAnswerFormat("a WebAuthn assertion (PublicKeyCredential JSON)")
        })?;
        let passkey = passkeys
            .iter()
            .find(|p| p.id() == rsp.raw_id.as_slice())
            .ok_or(Reject::UnknownCredential)?;
        check_assertion_extras(&rsp)?;
        let state: AuthenticationState = with_challenge(self.auth_state.clone(), challenge_id)
            .map_err(|_| Reject::InvalidAnswerFormat("internal: authentication state"))?;
        match self
            .core
            .authenticate_single_credential(&rsp, &state, &passkey.credential)
        {
            Ok(result) => {
                self.policy
                    .counter_ok(passkey.counter(), result.counter())?;
                Ok(CounterUpdate {
                    credential_id: rsp.raw_id.to_vec(),
                    counter: result.counter(),
                })
            }
            Err(WebauthnError::CredentialPossibleCompromise) => Err(Reject::CounterNotIncreased {
                stored: passkey.counter(),
                got: assertion_counter(&rsp).unwrap_or(0),
            }),
            Err(e) => Err(rejection(&e).unwrap_or(Reject::InvalidAnswerFormat(
                "a WebAuthn assertion the relying party can check",
            ))),
        }
    }
}

/// What the library does not check in an assertion, or reports under another reason: client
/// data from a frame of another origin's page (`crossOrigin: true`; the library refuses it at
/// registration only), and authenticator data that says backed up (BS) without backup
/// eligibility (BE), which WebAuthn does not allow (the library calls it a credential that may
/// not be hardware-bound). Both are checked before the signature, as the library's flags are.
fn check_assertion_extras(rsp: &PublicKeyCredential) -> Result<(), Reject> {
    let framing: ClientDataFraming = serde_json::from_slice(&rsp.response.client_data_json)
        .map_err(|_| Reject::InvalidAnswerFormat("WebAuthn client data (JSON)"))?;
    if framing.cross_origin == Some(true) {
        return Err(Reject::WrongOrigin);
    }
    if backed_up_without_eligibility(&rsp.response.authenticator_data) {
        return Err(Reject::InvalidAnswerFormat(
            "authenticator data flagged backed up (BS) only when backup-eligible (BE)",
        ));
    }
    Ok(())
}

/// The credential id and signature counter an assertion (answer JSON) claims, unverified: for
/// a node that records an acceptance another issuer verified, so its counters move too.
pub fn claimed_counter(answer: &[u8]) -> Option<CounterUpdate> {
    let rsp: PublicKeyCredential = serde_json::from_slice(answer).ok()?;
    Some(CounterUpdate {
        counter: assertion_counter(&rsp)?,
        credential_id: rsp.raw_id,
    })
}

/// The signature counter in an assertion's authenticator data (bytes 33..37, big-endian).
fn assertion_counter(rsp: &PublicKeyCredential) -> Option<u32> {
    let data = rsp.response.authenticator_data.as_slice();
    Some(u32::from_be_bytes(data.get(33..37)?.try_into().ok()?))
}

/// The family reason for a WebAuthn error that has one.
fn rejection(e: &WebauthnError) -> Option<Reject> {
    Some(match e {
        WebauthnError::MismatchedChallenge => Reject::AssertionChallengeMismatch,
        WebauthnError::InvalidRPOrigin
        | WebauthnError::InvalidRPIDHash
        | WebauthnError::CredentialCrossOrigin => Reject::WrongOrigin,
        WebauthnError::UserNotPresent => Reject::UserPresenceMissing,
        WebauthnError::UserNotVerified => Reject::UserVerificationMissing,
        WebauthnError::AuthenticationFailure => Reject::BadAssertionSignature,
        WebauthnError::CredentialNotFound => Reject::UnknownCredential,
        WebauthnError::AttestationTrustFailure
        | WebauthnError::AttestationChainNotTrusted(_)
        | WebauthnError::AttestationNotVerifiable
        | WebauthnError::AttestationUntrustedAaguid
        | WebauthnError::AttestationCertificateTrustStoreEmpty
        | WebauthnError::MissingAttestationCaList
        | WebauthnError::AttestationNotSupported
        | WebauthnError::CredentialMayNotBeHardwareBound => Reject::AttestationUntrusted,
        _ => return None,
    })
}

/// The presence family: a prompt to touch the passkey; answers are checked by the oracle
/// through [`Family::verify_in`] against the identity's passkeys.
#[derive(Debug, Clone)]
pub struct PresenceFamily {
    presence: Presence,
}

impl PresenceFamily {
    /// The family under `policy`.
    pub fn new(policy: PresencePolicy) -> Result<Self, String> {
        Presence::new(policy).map(|presence| Self { presence })
    }

    /// The relying party.
    pub fn presence(&self) -> &Presence {
        &self.presence
    }
}

impl Default for PresenceFamily {
    fn default() -> Self {
        Self::new(PresencePolicy::default()).unwrap_or_else(|e| unreachable!("default policy: {e}"))
    }
}

impl Family for PresenceFamily {
    fn name(&self) -> &'static str {
        NAME
    }

    fn class(&self) -> Class {
        Class::Human
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        check_difficulty(params, 1..=1, "unused by presence: use 1")
    }

    fn generate(&self, seed: &Seed, _params: &FamilyParams) -> Generated {
        // The assertion is bound to the challenge id; a nonce from the secret seed in the
        // prompt (hence in the signed prompt digest) makes that id unpredictable, so no
        // assertion can be made before the challenge is issued.
        let mut nonce = [0u8; 16];
        seed.derive("presence nonce").stream().fill(&mut nonce);
        let data = format!(r#"{{"webauthn":"get","nonce":"{}"}}"#, hex::encode(nonce));
        Generated {
            prompt: Prompt {
                family: NAME.into(),
                text: "Confirm that you are here: use your passkey (touch the security key or \
                       unlock your device) when your browser asks."
                    .into(),
                data: data.into_bytes(),
            },
            key: AnswerKey(Vec::new()),
        }
    }

    /// Without the identity's passkeys nothing can be accepted: see [`Family::verify_in`].
    fn verify(&self, _key: &AnswerKey, _answer: &[u8]) -> Result<(), Reject> {
        Err(Reject::NoPasskeyEnrolled)
    }

    fn uses_passkeys(&self) -> bool {
        true
    }

    fn verify_in(
        &self,
        _key: &AnswerKey,
        answer: &[u8],
        context: &Context<'_>,
    ) -> Result<Option<CounterUpdate>, Reject> {
        self.presence
            .verify_assertion(context.challenge_id, answer, context.passkeys)
            .map(Some)
    }

    /// The baseline solver needs an enrolled authenticator: see `SoftAuthenticator`.
    fn solve(&self, _prompt: &Prompt) -> Option<Vec<u8>> {
        None
    }
}

#[cfg(test)]
mod tests;
