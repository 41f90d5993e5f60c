//! What an enrolment's attestation says of the authenticator: its model (AAGUID) as the
//! attestation signed it, and the backup flags, read from the authenticator data with a small
//! CBOR reader.

use webauthn_rs_core::proto::{AttestationFormat, AttestationMetadata, Credential};

/// Authenticator-data flag (byte 32): backup eligible (BE), the credential may be synced.
const FLAG_BACKUP_ELIGIBLE: u8 = 0x08;
/// Authenticator-data flag (byte 32): backed up (BS), the credential is synced.
const FLAG_BACKED_UP: u8 = 0x10;

/// Whether authenticator data claims a backup (BS) without backup eligibility (BE), which
/// WebAuthn (§6.1) does not allow. `false` for data too short to hold the flags.
pub(super) fn backed_up_without_eligibility(auth_data: &[u8]) -> bool {
    auth_data
        .get(32)
        .is_some_and(|&flags| flags & FLAG_BACKED_UP != 0 && flags & FLAG_BACKUP_ELIGIBLE == 0)
}

/// The AAGUID in a registration's attestation object (CBOR), read before the attestation is
/// verified so that a model off the allow-list is named as such: the AAGUID at byte 37 of the
/// authenticator data, where its attested credential data (flag 0x40) starts. Only some
/// attestation formats sign these bytes: see [`attested_model`]. `None` if the object holds no
/// authenticator data ([`attestation_auth_data`]) or none with credential data.
pub(super) fn attested_aaguid(attestation_object: &[u8]) -> Option<[u8; 16]> {
    let data = attestation_auth_data(attestation_object)?;
    if data.get(32)? & 0x40 == 0 {
        return None;
    }
    data.get(37..53)?.try_into().ok()
}

/// The authenticator data of a registration's attestation object: its `authData` byte string.
/// `None` if the object is not a definite-length CBOR map with exactly one `authData`.
pub(super) fn attestation_auth_data(attestation_object: &[u8]) -> Option<&[u8]> {
    let mut cbor = Cbor(attestation_object);
    let (5, entries) = cbor.head()? else {
        return None;
    };
    let mut auth_data = None;
    for _ in 0..entries {
        let (3, len) = cbor.head()? else {
            return None;
        };
        if cbor.take(len)? == b"authData" {
            let (2, len) = cbor.head()? else {
                return None;
            };
            if auth_data.replace(cbor.take(len)?).is_some() {
                return None;
            }
        } else {
            cbor.skip(0)?;
        }
    }
    auth_data
}

/// The model (AAGUID) a verified attestation vouches for, or, when its format's signature does
/// not cover the AAGUID, that format's name. `claimed` is the AAGUID of the attestation
/// object's authenticator data ([`attested_aaguid`]). The match names every format, so that a
/// format the library adds is judged here before it compiles.
pub(super) fn attested_model(
    credential: &Credential,
    claimed: &[u8; 16],
) -> Result<[u8; 16], &'static str> {
    let metadata = &credential.attestation.metadata;
    match credential.attestation_format {
        // The certificate's key signs the authenticator data; the library reports the AAGUID it
        // verified (and matched with the certificate's AAGUID extension, when there is one).
        // Without a certificate (self attestation) only the credential's own key signed.
        AttestationFormat::Packed => match metadata {
            AttestationMetadata::Packed { aaguid } => Ok(*aaguid.as_bytes()),
            _ => Err("packed (self attestation)"),
        },
        // The TPM's quote covers a hash of the authenticator data.
        AttestationFormat::Tpm => match metadata {
            AttestationMetadata::Tpm { aaguid, .. } => Ok(*aaguid.as_bytes()),
            _ => Err("tpm"),
        },
        // Apple's CA certifies a nonce that hashes the authenticator data, AAGUID included.
        AttestationFormat::AppleAnonymous => Ok(*claimed),
        // The U2F signature covers the RP id hash, client data hash, credential id and key:
        // the AAGUID is filled in by the client (zeros) and anyone can rewrite it.
        AttestationFormat::FIDOU2F => Err("fido-u2f"),
        // Signed with the credential's key, which any app on the device can create and sign
        // any authenticator data with: the chain vouches for the key store, not the model.
        AttestationFormat::AndroidKey => Err("android-key"),
        // Not verified by the library (refused before this); it names no model either.
        AttestationFormat::AndroidSafetyNet => Err("android-safetynet"),
        AttestationFormat::None => Err("none"),
    }
}

/// A reader of definite-length CBOR items (all WebAuthn clients send).
struct Cbor<'a>(&'a [u8]);

impl<'a> Cbor<'a> {
    /// The next item's major type and argument.
    fn head(&mut self) -> Option<(u8, u64)> {
        let (&first, rest) = self.0.split_first()?;
        self.0 = rest;
        let (major, info) = (first >> 5, first & 0x1f);
        let n = match info {
            0..=23 => return Some((major, u64::from(info))),
            24 => 1,
            25 => 2,
            26 => 4,
            27 => 8,
            _ => return None,
        };
        let arg = self.take(n)?;
        Some((
            major,
            arg.iter().fold(0u64, |a, &b| (a << 8) | u64::from(b)),
        ))
    }

    fn take(&mut self, len: u64) -> Option<&'a [u8]> {
        let len = usize::try_from(len).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (out, rest) = self.0.split_at(len);
        self.0 = rest;
        Some(out)
    }

    /// Skips one item (nested at most 16 deep).
    fn skip(&mut self, depth: u8) -> Option<()> {
        if depth > 16 {
            return None;
        }
        let (major, arg) = self.head()?;
        match major {
            0 | 1 | 7 => {}
            2 | 3 => {
                self.take(arg)?;
            }
            4 => (0..arg).try_for_each(|_| self.skip(depth + 1))?,
            5 => (0..arg).try_for_each(|_| {
                self.skip(depth + 1)?;
                self.skip(depth + 1)
            })?,
            _ => self.skip(depth + 1)?, // 6: a tag, then its item
        }
        Some(())
    }
}
