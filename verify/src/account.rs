//! External accounts an identity links to (CAIP-10 account ids), and the EVM's signature over a
//! text: EIP-191 `personal_sign`, recovered to an address.
//!
//! An [`AccountId`] is parsed per the CAIP-2/CAIP-10 grammar
//! (`namespace:reference:address`, namespace `[-a-z0-9]{3,8}`, reference `[-_a-zA-Z0-9]{1,32}`,
//! address `[-.%a-zA-Z0-9]{1,128}`) and then per its namespace. Only `eip155` (EVM chains) is
//! supported: its reference is the decimal chain id without leading zeros (`1`, `137`), its
//! address `0x` and 40 hex digits, all lower case, all upper case, or mixed case passing the
//! EIP-55 checksum. The canonical form, the one signed, hashed and compared, has the address in
//! lower case: `eip155:1:0xab…`.

use alloc::string::String;
use core::fmt;
use core::str::FromStr;

#[cfg(feature = "eip191")]
use k256::ecdsa::{RecoveryId, Signature, VerifyingKey};
use sha3::{Digest as _, Keccak256};

/// Why an account id is refused. Codes are stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AccountError {
    /// Not a CAIP-10 account id, or not a valid one of its namespace (an `eip155` address that
    /// is not `0x` and 40 hex digits, a chain id that is not a decimal number).
    Malformed,
    /// A well-formed CAIP-10 id of a namespace this code does not support (only `eip155`).
    UnsupportedNamespace,
    /// A mixed-case EVM address whose case does not match its EIP-55 checksum.
    BadChecksum,
}

impl AccountError {
    /// The stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            AccountError::Malformed => "malformed_account",
            AccountError::UnsupportedNamespace => "unsupported_namespace",
            AccountError::BadChecksum => "bad_checksum",
        }
    }
}

impl fmt::Display for AccountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AccountError::Malformed => {
                "not a CAIP-10 account id (`eip155:<chain id>:0x<40 hex digits>`)"
            }
            AccountError::UnsupportedNamespace => {
                "the account's namespace is not supported (only eip155)"
            }
            AccountError::BadChecksum => "the mixed-case address fails its EIP-55 checksum",
        })
    }
}

impl core::error::Error for AccountError {}

/// A CAIP-10 account id in canonical form (see the module documentation).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AccountId {
    canonical: String,
}

/// Whether every byte of `s` is in `allowed` and its length is in `min..=max`.
fn grammar(s: &str, min: usize, max: usize, allowed: fn(u8) -> bool) -> bool {
    (min..=max).contains(&s.len()) && s.bytes().all(allowed)
}

impl AccountId {
    /// The EVM namespace, the one supported.
    pub const EIP155: &'static str = "eip155";

    /// Parses and validates, canonicalising the address to lower case.
    pub fn parse(s: &str) -> Result<Self, AccountError> {
        let mut parts = s.splitn(3, ':');
        let (Some(namespace), Some(reference), Some(address)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(AccountError::Malformed);
        };
        let caip = grammar(namespace, 3, 8, |b| {
            b == b'-' || b.is_ascii_lowercase() || b.is_ascii_digit()
        }) && grammar(reference, 1, 32, |b| {
            b == b'-' || b == b'_' || b.is_ascii_alphanumeric()
        }) && grammar(address, 1, 128, |b| {
            b == b'-' || b == b'.' || b == b'%' || b.is_ascii_alphanumeric()
        });
        if !caip {
            return Err(AccountError::Malformed);
        }
        if namespace != Self::EIP155 {
            return Err(AccountError::UnsupportedNamespace);
        }
        // The chain id: decimal, no leading zero, so one chain has one spelling.
        if !reference.bytes().all(|b| b.is_ascii_digit()) || reference.starts_with('0') {
            return Err(AccountError::Malformed);
        }
        let hex = address
            .strip_prefix("0x")
            .filter(|h| h.len() == 40 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or(AccountError::Malformed)?;
        let lower = hex.bytes().any(|b| b.is_ascii_lowercase());
        let upper = hex.bytes().any(|b| b.is_ascii_uppercase());
        if lower && upper && eip55(hex) != hex.as_bytes() {
            return Err(AccountError::BadChecksum);
        }
        let mut canonical = String::with_capacity(s.len());
        canonical.push_str(namespace);
        canonical.push(':');
        canonical.push_str(reference);
        canonical.push_str(":0x");
        canonical.extend(hex.chars().map(|c| c.to_ascii_lowercase()));
        Ok(Self { canonical })
    }

    /// The canonical text (`eip155:1:0x` and 40 lower-case hex digits).
    pub fn as_str(&self) -> &str {
        &self.canonical
    }

    /// The namespace (`eip155`).
    pub fn namespace(&self) -> &str {
        self.canonical.split(':').next().unwrap_or_default()
    }

    /// The CAIP-2 chain id (`eip155:1`): the scope of "one account per identity".
    pub fn chain_id(&self) -> &str {
        self.canonical
            .rsplit_once(':')
            .map(|(chain, _)| chain)
            .unwrap_or_default()
    }

    /// The 20-byte EVM address.
    pub fn address(&self) -> [u8; 20] {
        let hex = self.canonical.rsplit_once(":0x").map(|(_, h)| h);
        let mut out = [0u8; 20];
        for (byte, pair) in out
            .iter_mut()
            .zip(hex.unwrap_or_default().as_bytes().chunks_exact(2))
        {
            *byte = (nibble(pair[0]) << 4) | nibble(pair[1]);
        }
        out
    }
}

fn nibble(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// The EIP-55 spelling of 40 hex digits (either case in): a letter is upper case where the
/// matching nibble of `keccak256(lower-case digits)` is 8 or more.
fn eip55(hex: &str) -> [u8; 40] {
    let mut lower = [0u8; 40];
    for (l, c) in lower.iter_mut().zip(hex.bytes()) {
        *l = c.to_ascii_lowercase();
    }
    let hash = keccak256(&[&lower]);
    let mut out = lower;
    for (i, c) in out.iter_mut().enumerate() {
        let n = (hash[i / 2] >> (if i % 2 == 0 { 4 } else { 0 })) & 0x0f;
        if n >= 8 {
            *c = c.to_ascii_uppercase();
        }
    }
    out
}

/// The EIP-55 checksummed spelling of an address (`0x…`), as wallets show it.
pub fn checksummed(address: &[u8; 20]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = [0u8; 40];
    for (pair, b) in hex.chunks_exact_mut(2).zip(address) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 0x0f)];
    }
    let mixed = eip55(core::str::from_utf8(&hex).unwrap_or_default());
    let mut out = String::from("0x");
    out.extend(mixed.iter().map(|b| char::from(*b)));
    out
}

impl fmt::Display for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical)
    }
}

impl fmt::Debug for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AccountId({})", self.canonical)
    }
}

impl FromStr for AccountId {
    type Err = AccountError;
    fn from_str(s: &str) -> Result<Self, AccountError> {
        Self::parse(s)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for AccountId {
    fn schema_name() -> alloc::borrow::Cow<'static, str> {
        "AccountId".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "a CAIP-10 account id of the eip155 namespace, canonical: eip155:{chain id}:0x{40 lower-case hex digits}",
            "pattern": "^eip155:[1-9][0-9]{0,31}:0x[0-9a-fA-F]{40}$",
        })
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for AccountId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.canonical)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for AccountId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let s = <alloc::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
        AccountId::parse(&s).map_err(|e| D::Error::custom(alloc::format!("{}: {e}", e.code())))
    }
}

/// Keccak-256 of the concatenated parts.
pub fn keccak256(parts: &[&[u8]]) -> [u8; 32] {
    let mut hasher = Keccak256::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// The EIP-191 (version `0x45`, `personal_sign`) hash of a message:
/// `keccak256("\x19Ethereum Signed Message:\n" ‖ decimal byte length ‖ message)`.
pub fn personal_message_hash(message: &[u8]) -> [u8; 32] {
    let mut len = [0u8; 20];
    let digits = decimal(message.len() as u64, &mut len);
    keccak256(&[b"\x19Ethereum Signed Message:\n", digits, message])
}

/// `n` in decimal ASCII, written at the end of `buf`.
fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[at..]
}

/// The EVM address of a secp256k1 public key: the last 20 bytes of the Keccak-256 of its
/// uncompressed point without the `0x04` prefix.
#[cfg(feature = "eip191")]
pub fn address_of(key: &VerifyingKey) -> [u8; 20] {
    let point = key.to_sec1_point(false);
    let hash = keccak256(&[&point.as_bytes()[1..]]);
    let mut out = [0u8; 20];
    out.copy_from_slice(&hash[12..]);
    out
}

/// The address that made `sig` (`r ‖ s ‖ v`, 65 bytes, `v` 27/28 or 0/1) over `message` with
/// `personal_sign`, or `None`: `v` out of range, `r` or `s` zero or not below the group order,
/// `s` in the upper half (malleable: Ethereum has refused high-s since EIP-2), or no point to
/// recover.
#[cfg(feature = "eip191")]
pub fn recover_personal_sign(message: &[u8], sig: &[u8; 65]) -> Option<[u8; 20]> {
    let recovery = match sig[64] {
        0 | 27 => RecoveryId::new(false, false),
        1 | 28 => RecoveryId::new(true, false),
        _ => return None,
    };
    let signature = Signature::from_slice(&sig[..64]).ok()?;
    if signature.normalize_s() != signature {
        return None;
    }
    let prehash = personal_message_hash(message);
    let key = VerifyingKey::recover_from_prehash(&prehash, &signature, recovery).ok()?;
    Some(address_of(&key))
}

#[cfg(test)]
#[cfg(feature = "eip191")]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use k256::ecdsa::SigningKey;

    fn hex_bytes<const N: usize>(s: &str) -> [u8; N] {
        hex::decode(s.trim_start_matches("0x"))
            .unwrap()
            .try_into()
            .unwrap()
    }

    #[test]
    fn caip10_grammar_and_the_eip155_rules() {
        let good = "eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
        let id = AccountId::parse(good).unwrap();
        assert_eq!(id.as_str(), good);
        assert_eq!(id.namespace(), "eip155");
        assert_eq!(id.chain_id(), "eip155:1");
        assert_eq!(hex::encode(id.address()), &good[11..]);
        // Checksummed, all upper case: the same canonical account.
        for spelling in [
            "eip155:1:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
            "eip155:1:0xF39FD6E51AAD88F6F4CE6AB8827279CFFFB92266",
        ] {
            assert_eq!(AccountId::parse(spelling).unwrap(), id, "{spelling}");
        }
        assert_eq!(
            AccountId::parse("eip155:137:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266")
                .unwrap()
                .chain_id(),
            "eip155:137"
        );
        let code = |s: &str| AccountId::parse(s).unwrap_err().code();
        // One checksum letter's case flipped.
        assert_eq!(
            code("eip155:1:0xf39fd6e51aad88F6F4ce6aB8827279cffFb92266"),
            "bad_checksum"
        );
        for other in [
            "cosmos:cosmoshub-3:cosmos1t2uflqwqe0fsj0shcfkrvpukewcw40yjj6hdc0",
            "bip122:000000000019d6689c085ae165831e93:128Lkh3S7CkDTBZ8W7BbpsN3YYizJMp8p6",
            "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:7S3P4HxJpyyigGzodYwHtCxZyUQe9JiBMHyRWXArAaKv",
        ] {
            assert_eq!(code(other), "unsupported_namespace", "{other}");
        }
        for bad in [
            "",
            "eip155",
            "eip155:1",
            "eip155:1:",
            "eip155::0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "EIP155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "ei:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "eip155:01:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "eip155:0:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "eip155:mainnet:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "eip155:1:f39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "eip155:1:0Xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb9226",
            "eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb922660",
            "eip155:1:0xg39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266:x",
            " eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266\n",
            "eip155:123456789012345678901234567890123:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
        ] {
            assert_eq!(code(bad), "malformed_account", "{bad:?}");
        }
        // The grammar's limits hold for other namespaces too (malformed before unsupported).
        assert_eq!(code("toolongnamespace:1:abc"), "malformed_account");
        assert_eq!(
            code(&alloc::format!("cosmos:1:{}", "a".repeat(129))),
            "malformed_account"
        );
        assert_eq!(
            code(&alloc::format!("cosmos:1:{}", "a".repeat(128))),
            "unsupported_namespace"
        );
    }

    /// The four examples of EIP-55 itself.
    #[test]
    fn eip55_test_vectors() {
        for address in [
            "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
            "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
            "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
            "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
        ] {
            let bytes: [u8; 20] = hex_bytes(address);
            assert_eq!(checksummed(&bytes), address);
            let id = AccountId::parse(&alloc::format!("eip155:1:{address}")).unwrap();
            assert_eq!(id.address(), bytes);
            let mut broken: Vec<u8> = address.bytes().collect();
            let at = broken
                .iter()
                .rposition(|b| b.is_ascii_alphabetic() && *b != b'x');
            let at = at.unwrap();
            broken[at] ^= 0x20; // flip one letter's case
            let broken = alloc::format!("eip155:1:{}", core::str::from_utf8(&broken).unwrap());
            assert_eq!(
                AccountId::parse(&broken).unwrap_err().code(),
                "bad_checksum"
            );
        }
    }

    /// A published vector, not our own signer: web3.js documents `accounts.sign("Some data",
    /// 0x4c08…2318)` with this message hash and signature (docs.web3js.org, web3-eth-accounts
    /// `sign`); the key's address is web3.js's documented account 0x2c75…5c23.
    #[test]
    fn eip191_recovery_matches_a_published_web3js_signature() {
        let key: [u8; 32] =
            hex_bytes("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318");
        let address: [u8; 20] = hex_bytes("2c7536E3605D9C16a7a3D7b1898e529396a65c23");
        let key = SigningKey::from_slice(&key).unwrap();
        assert_eq!(address_of(key.verifying_key()), address);
        assert_eq!(
            checksummed(&address),
            "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"
        );
        assert_eq!(
            hex::encode(personal_message_hash(b"Some data")),
            "1da44b586eb0729ff70a73c326926f6ed5a25f5b056e7f47fbc6e58d86871655"
        );
        let sig: [u8; 65] = hex_bytes(
            "b91467e570a6466aa9e9876cbcd013baba02900b8979d43fe208a4a4f339f5fd\
             6007e74cd82e037b800186422fc2da167c747ef045e5d18a5f5d4300f8e1a0291c",
        );
        assert_eq!(recover_personal_sign(b"Some data", &sig), Some(address));
        // v as 0/1 as well as 27/28.
        let mut zero_one = sig;
        zero_one[64] = 1;
        assert_eq!(
            recover_personal_sign(b"Some data", &zero_one),
            Some(address)
        );
        // Another message or the other parity recovers another address; bad v, none.
        assert_ne!(recover_personal_sign(b"Some date", &sig), Some(address));
        let mut other = sig;
        other[64] = 27;
        assert_ne!(recover_personal_sign(b"Some data", &other), Some(address));
        for v in [2, 26, 29, 30, 255] {
            let mut bad = sig;
            bad[64] = v;
            assert_eq!(recover_personal_sign(b"Some data", &bad), None, "v = {v}");
        }
        // RFC 6979 is deterministic: k256 signs the same bytes web3.js published.
        let (ours, recovery) = key.sign_prehash_recoverable(&personal_message_hash(b"Some data"));
        assert_eq!(&ours.to_bytes()[..], &sig[..64]);
        assert_eq!(recovery.to_byte() + 27, sig[64]);
    }

    #[test]
    fn high_s_and_out_of_range_scalars_are_refused() {
        let key = SigningKey::from_slice(&[7; 32]).unwrap();
        let message = b"HCO account link v1";
        let (sig, recovery) = key.sign_prehash_recoverable(&personal_message_hash(message));
        let mut good = [0u8; 65];
        good[..64].copy_from_slice(&sig.to_bytes());
        good[64] = 27 + recovery.to_byte();
        let address = address_of(key.verifying_key());
        assert_eq!(recover_personal_sign(message, &good), Some(address));
        // The same signature with s' = n − s (and the other parity) is valid ECDSA, refused.
        let n: [u8; 32] =
            hex_bytes("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141");
        let s = &good[32..64];
        let mut high = good;
        let mut borrow = 0i16;
        for i in (0..32).rev() {
            let d = i16::from(n[i]) - i16::from(s[i]) - borrow;
            high[32 + i] = d.rem_euclid(256) as u8;
            borrow = i16::from(d < 0);
        }
        high[64] = 27 + (1 - recovery.to_byte());
        assert_eq!(recover_personal_sign(message, &high), None);
        let mut zero = good;
        zero[..32].fill(0);
        assert_eq!(recover_personal_sign(message, &zero), None);
        let mut over = good;
        over[32..64].copy_from_slice(&n);
        assert_eq!(recover_personal_sign(message, &over), None);
    }
}
