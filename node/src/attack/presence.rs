//! `presence` against a script: a software passkey (webauthn-authenticator-rs), enrolled for
//! the identity and asked to assert the challenge. It passes every `general`-mode network (what
//! `configs/single.toml` runs in development); a `strict` network refuses its enrolment, since
//! its attestation chains to no configured CA — that refusal is the whole of presence's
//! guarantee against scripts, and this attacker is how the bench shows it.

use anyhow::Context;
use hco_challenges::presence::{AttestationMode, Presence, PresencePolicy, SoftAuthenticator};
use hco_oracle::{Clock, SignedEnrolment, SystemClock};

use super::{Attack, Session, Verdict};

/// A software passkey, enrolled on first use.
pub struct SoftPasskey;

impl Attack for SoftPasskey {
    fn family(&self) -> &'static str {
        "presence"
    }

    fn name(&self) -> &'static str {
        "soft-passkey"
    }

    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        let params = session.get("/v1/params")?.body;
        let policy: PresencePolicy = serde_json::from_value(params["params"]["presence"].clone())
            .context("the node's presence policy")?;
        let origin = policy
            .origins
            .first()
            .context("the presence policy names no origin")?
            .clone();
        // The script checks its own enrolment with any-authenticator rules to learn its passkey;
        // the network applies its own.
        let mine = Presence::new(PresencePolicy {
            attestation: AttestationMode::General,
            attestation_ca_pem: Vec::new(),
            aaguids: Vec::new(),
            ..policy
        })
        .map_err(anyhow::Error::msg)?;
        let mut soft = SoftAuthenticator::new(&origin).map_err(anyhow::Error::msg)?;
        let id = session.key.verifying_key().to_bytes();
        let now = SystemClock.now();
        let credential = soft.enrol(&mine, &id, now).map_err(anyhow::Error::msg)?;
        let passkey = mine
            .enrol(&id, now, &credential)
            .map_err(|e| anyhow::anyhow!("own enrolment check: {e}"))?;
        let enrolment = SignedEnrolment::new(session.key, now, String::from_utf8(credential)?);
        let path = format!("/v1/identities/{}/passkeys", hex::encode(id));
        // Refused under strict attestation; the script answers anyway, as it would.
        let _ = session.post(&path, &enrolment)?;
        let challenge_id = session.view.challenge.challenge.challenge_id();
        let assertion = soft
            .assert(&mine, &challenge_id.0, &[passkey])
            .map_err(anyhow::Error::msg)?;
        session.wait_min_solve(std::time::Duration::from_millis(200));
        session.respond(&assertion)
    }
}
