//! What a network asks of presence: user verification, attestation, the trusted roots and
//! the models that may enrol.

use serde::{Deserialize, Serialize};
use webauthn_rs_core::proto::{AttestationCaList, UserVerificationPolicy};

use crate::Reject;

/// Whether the authenticator must verify the user (PIN, biometric) as well as their presence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum UserVerification {
    /// Every assertion must carry the UV flag; authenticators that cannot verify are refused.
    Required,
    /// Asked for; required on later assertions only for passkeys that verified at enrolment.
    #[default]
    Preferred,
}

impl UserVerification {
    pub(super) fn policy(self) -> UserVerificationPolicy {
        match self {
            UserVerification::Required => UserVerificationPolicy::Required,
            UserVerification::Preferred => UserVerificationPolicy::Preferred,
        }
    }

    /// The WebAuthn `userVerification` value a client puts in its request.
    pub fn as_str(self) -> &'static str {
        match self {
            UserVerification::Required => "required",
            UserVerification::Preferred => "preferred",
        }
    }
}

/// Which authenticators may be enrolled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AttestationMode {
    /// Any authenticator (attestation is not requested).
    #[default]
    General,
    /// Only authenticators whose attestation chains to a configured CA.
    Strict,
}

/// The relying party and the rules of the presence family. Part of the network parameters:
/// every node verifies enrolments and assertions the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct PresencePolicy {
    /// The WebAuthn relying-party id: the domain of the page (an IP address is not allowed).
    pub rp_id: String,
    /// The relying-party name authenticators show.
    pub rp_name: String,
    /// Origins the page is served from (`https://oracle.example`); with `allow_any_port` the
    /// port is not compared.
    pub origins: Vec<String>,
    /// Accept the origins on any port (development setups where each node has its own port).
    pub allow_any_port: bool,
    /// User verification policy.
    pub user_verification: UserVerification,
    /// Attestation policy.
    pub attestation: AttestationMode,
    /// PEM texts of the attestation CAs trusted in `strict` mode. Each entry holds one or more
    /// `CERTIFICATE` blocks; text around the blocks (comments) is ignored. A node config can
    /// name files instead (`attestation_ca_files`), read into this list when it loads.
    pub attestation_ca_pem: Vec<String>,
    /// The authenticator models (AAGUIDs, UUID text, any case) that may be enrolled; empty:
    /// any model the CAs attest. Needs `strict` attestation: without attestation the AAGUID is
    /// only what the authenticator claims (and browsers send zeros).
    pub aaguids: Vec<String>,
    /// Accept assertions whose signature counter is 0 while the stored counter is 0 too
    /// (authenticators that keep no counter, as WebAuthn allows; most synced passkeys). `false`:
    /// every assertion's counter must be above zero and above the stored one.
    pub allow_zero_counter: bool,
}

impl Default for PresencePolicy {
    fn default() -> Self {
        Self {
            rp_id: "localhost".into(),
            rp_name: "Human Challenge Oracle".into(),
            origins: vec!["http://localhost".into()],
            allow_any_port: true,
            user_verification: UserVerification::Preferred,
            attestation: AttestationMode::General,
            attestation_ca_pem: Vec::new(),
            aaguids: Vec::new(),
            allow_zero_counter: true,
        }
    }
}

impl PresencePolicy {
    /// Whether an assertion with signature counter `got` may follow the `stored` counter of
    /// its credential: `got` must be above `stored`, except that 0 after 0 (an authenticator
    /// without a counter) passes when [`PresencePolicy::allow_zero_counter`] is set. The rule
    /// for every counter the oracle stores, including those of a batch checked together.
    pub fn counter_ok(&self, stored: u32, got: u32) -> Result<(), Reject> {
        if got > stored || (self.allow_zero_counter && got == 0 && stored == 0) {
            Ok(())
        } else {
            Err(Reject::CounterNotIncreased { stored, got })
        }
    }

    /// Whether a software authenticator (a script) can enrol: true unless attestation is
    /// `strict` with at least one CA. (This assumes the CAs are hardware vendors' roots: a
    /// network that trusts a test CA, such as the browser's virtual authenticator's, accepts
    /// that software authenticator.)
    pub fn accepts_software_authenticators(&self) -> bool {
        self.attestation != AttestationMode::Strict || self.attestation_ca_pem.is_empty()
    }

    /// The allow-listed AAGUIDs, parsed; an error names the entry that is not a UUID.
    pub(super) fn parsed_aaguids(&self) -> Result<Vec<[u8; 16]>, String> {
        let mut out = self
            .aaguids
            .iter()
            .enumerate()
            .map(|(i, text)| {
                parse_aaguid(text).ok_or_else(|| {
                    format!(
                        "aaguids[{i}] `{text}` is not a UUID (8-4-4-4-12 hex digits, e.g. \
                         `cb69481e-8ff7-4039-93ec-0a2729a154a8`)"
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// The trusted CAs, every `CERTIFICATE` block of every entry; an error names the entry.
    pub(super) fn ca_list(&self) -> Result<AttestationCaList, String> {
        let mut list = AttestationCaList::default();
        for (i, text) in self.attestation_ca_pem.iter().enumerate() {
            let blocks = pem_certificates(text);
            if blocks.is_empty() {
                return Err(format!(
                    "attestation_ca_pem[{i}] holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
                ));
            }
            for (k, block) in blocks.iter().enumerate() {
                let one = AttestationCaList::try_from(block.as_bytes())
                    .map_err(|e| format!("attestation_ca_pem[{i}], certificate {k}: {e:?}"))?;
                list.union(&one);
            }
        }
        Ok(list)
    }
}

/// An AAGUID in UUID text (`8-4-4-4-12` hex digits, any case).
pub(super) fn parse_aaguid(text: &str) -> Option<[u8; 16]> {
    let bytes = text.as_bytes();
    if bytes.len() != 36 || [8, 13, 18, 23].iter().any(|&i| bytes[i] != b'-') {
        return None;
    }
    let digits: String = text.chars().filter(|&c| c != '-').collect();
    let mut out = [0u8; 16];
    hex::decode_to_slice(digits, &mut out).ok()?;
    Some(out)
}

/// An AAGUID as lower-case UUID text.
pub(super) fn aaguid_text(aaguid: &[u8; 16]) -> String {
    let h = hex::encode(aaguid);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// The `CERTIFICATE` blocks of a PEM text, each with its BEGIN and END lines.
fn pem_certificates(text: &str) -> Vec<String> {
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(BEGIN) {
        let Some(len) = rest[start..].find(END) else {
            // An unterminated block: handed on whole, so that parsing it reports the error.
            out.push(rest[start..].to_owned());
            break;
        };
        let end = start + len + END.len();
        out.push(format!("{}\n", &rest[start..end]));
        rest = &rest[end..];
    }
    out
}
