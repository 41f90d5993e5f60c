//! One hardware key holding a credential per identity, played by webauthn-authenticator-rs's
//! `SoftToken`: a software authenticator that makes its own attestation CA at start and signs
//! `packed` attestations with a certificate under it, naming one fixed model (AAGUID). A bench
//! network that trusts that CA and allow-lists that AAGUID keeps production's strict
//! attestation rules otherwise unchanged (attested model, device-bound credential, user
//! verification, a counter that increases), and the token enrols and answers as one key would:
//! one signature counter across its credentials, one assertion at a time.

use std::sync::Mutex;

use anyhow::Context;
use base64::Engine as _;
use hco_challenges::presence::{Passkey, Presence};
use webauthn_authenticator_rs::WebauthnAuthenticator;
use webauthn_authenticator_rs::prelude::Url;
use webauthn_authenticator_rs::softtoken::{AAGUID, SoftToken};

/// The attacker's key.
pub struct Device {
    token: Mutex<SoftToken>,
    origin: Url,
    ca_pem: String,
}

impl Device {
    /// A new key (with a new attestation CA) used from a page at `origin`; it reports user
    /// verification, as a key with a PIN or a fingerprint does.
    pub fn new(origin: &str) -> anyhow::Result<Self> {
        let (token, _) = SoftToken::new(true)
            .map_err(|e| anyhow::anyhow!("cannot make the software token: {e:?}"))?;
        let ca_pem = ca_pem(&token)?;
        Ok(Self {
            token: Mutex::new(token),
            origin: Url::parse(origin).with_context(|| format!("origin `{origin}`"))?,
            ca_pem,
        })
    }

    /// The PEM of the CA the key's attestations chain to.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The model id the key attests (lower-case UUID text).
    pub fn aaguid() -> String {
        AAGUID.to_string()
    }

    /// Makes a credential for `(id, created_at)`: the registration JSON a browser would send.
    pub fn enrol(
        &self,
        presence: &Presence,
        id: &[u8; 32],
        created_at: u64,
    ) -> anyhow::Result<Vec<u8>> {
        let options = presence
            .creation_options(id, created_at)
            .map_err(|e| anyhow::anyhow!("creation options: {e}"))?;
        let credential = self
            .token
            .lock()
            .map_err(|_| anyhow::anyhow!("the token's lock is poisoned"))?
            .do_registration(self.origin.clone(), options)
            .map_err(|e| anyhow::anyhow!("software token: {e:?}"))?;
        Ok(serde_json::to_vec(&credential)?)
    }

    /// The assertion answering `challenge_id` with `passkey` (one touch).
    pub fn assert(
        &self,
        presence: &Presence,
        challenge_id: &[u8; 32],
        passkey: &Passkey,
    ) -> anyhow::Result<Vec<u8>> {
        let options = presence
            .request_options(challenge_id, std::slice::from_ref(passkey))
            .map_err(|e| anyhow::anyhow!("request options: {e}"))?;
        let assertion = self
            .token
            .lock()
            .map_err(|_| anyhow::anyhow!("the token's lock is poisoned"))?
            .do_authentication(self.origin.clone(), options)
            .map_err(|e| anyhow::anyhow!("software token: {e:?}"))?;
        Ok(serde_json::to_vec(&assertion)?)
    }
}

/// The token's CA certificate as PEM. The token serialises it (unpadded base64url DER under
/// `ca_cert`); serialised before any credential exists, as the token's credential table has
/// byte-string keys JSON cannot hold.
fn ca_pem(token: &SoftToken) -> anyhow::Result<String> {
    let value = serde_json::to_value(token).context("cannot serialise the software token")?;
    let b64 = value["ca_cert"]
        .as_str()
        .context("the software token has no `ca_cert`")?;
    let der = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(b64)
        .context("the software token's CA is not base64url")?;
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in body.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line)?);
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
    Ok(pem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hco_challenges::presence::{AttestationMode, PresencePolicy, UserVerification};

    /// Production's strict rules with the token's CA and model: the token enrols one
    /// credential per identity, and its assertions pass with increasing counters.
    #[test]
    fn the_token_enrols_under_strict_attestation_and_answers() {
        let device = Device::new("https://oracle.example.org").unwrap();
        let presence = Presence::new(PresencePolicy {
            rp_id: "oracle.example.org".into(),
            origins: vec!["https://oracle.example.org".into()],
            allow_any_port: false,
            user_verification: UserVerification::Required,
            attestation: AttestationMode::Strict,
            attestation_ca_pem: vec![device.ca_pem().to_owned()],
            aaguids: vec![Device::aaguid()],
            allow_zero_counter: false,
            ..PresencePolicy::default()
        })
        .unwrap();
        let mut passkeys = Vec::new();
        for i in 0..2u8 {
            let id = [i; 32];
            let credential = device.enrol(&presence, &id, 1_000).unwrap();
            passkeys.push(presence.enrol(&id, 1_000, &credential).unwrap());
        }
        assert_ne!(passkeys[0].id(), passkeys[1].id());
        let mut last = 0;
        for (k, passkey) in passkeys.iter().enumerate() {
            let cid = [k as u8 + 7; 32];
            let answer = device.assert(&presence, &cid, passkey).unwrap();
            let update = presence
                .verify_assertion(&cid, &answer, std::slice::from_ref(passkey))
                .unwrap();
            assert!(update.counter > last);
            last = update.counter;
        }
    }
}
