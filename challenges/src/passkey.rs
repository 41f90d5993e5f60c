//! An enrolled WebAuthn passkey, as the [`crate::Family`] interface passes it to the families
//! that check answers against credentials ([`crate::presence`]). It sits below both, so the
//! trait and the presence family do not import each other.

use webauthn_rs_core::proto::Credential;

/// An enrolled passkey: the credential's public key, flags and last seen signature counter.
#[derive(Debug, Clone)]
pub struct Passkey {
    pub(crate) credential: Credential,
}

impl Passkey {
    /// Decodes a passkey stored by [`Passkey::encode`].
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(bytes)
            .map(|credential| Self { credential })
            .map_err(|e| format!("stored passkey: {e}"))
    }

    /// The stored form.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(&self.credential).unwrap_or_default()
    }

    /// The WebAuthn credential id.
    pub fn id(&self) -> &[u8] {
        self.credential.cred_id.as_slice()
    }

    /// The last signature counter seen.
    pub fn counter(&self) -> u32 {
        self.credential.counter
    }

    /// The same passkey with its counter moved to `counter`.
    pub fn with_counter(mut self, counter: u32) -> Self {
        self.credential.counter = counter;
        self
    }

    /// Whether the authenticator verified the user at enrolment.
    pub fn user_verified(&self) -> bool {
        self.credential.user_verified
    }
}
