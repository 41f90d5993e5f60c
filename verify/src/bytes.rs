//! Fixed-size byte strings: identity and node keys, digests, signatures.
//!
//! In JSON (the `serde` feature) they are lower-case hex strings; in a binary format they are
//! length-prefixed bytes. Decoding checks the length, so a wrong-sized key is a decode error,
//! never a panic.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use core::fmt;
use core::str::FromStr;

/// Writes `bytes` as lower-case hex into `out` (twice as long), without allocating: every key,
/// digest and signature of every JSON reply goes through here.
fn lower_hex<'a>(bytes: &[u8], out: &'a mut [u8]) -> &'a str {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (pair, b) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 0x0f)];
    }
    // Only ASCII digits were written.
    core::str::from_utf8(out).unwrap_or_default()
}

/// The value of each hex digit (either case), 0xff for any other byte.
const NIBBLES: [u8; 256] = {
    let mut table = [0xff; 256];
    let mut c = 0;
    while c < 10 {
        table[b'0' as usize + c] = c as u8;
        c += 1;
    }
    let mut c = 0;
    while c < 6 {
        table[b'a' as usize + c] = 10 + c as u8;
        table[b'A' as usize + c] = 10 + c as u8;
        c += 1;
    }
    table
};

/// Decodes `hex` (either case) into `out`, which it must fill exactly; a table lookup per digit,
/// since every key, digest and signature of every JSON request comes through here.
fn decode_hex(hex: &[u8], out: &mut [u8]) -> Option<()> {
    if hex.len() != 2 * out.len() {
        return None;
    }
    let mut bad = 0u8;
    for (pair, byte) in hex.chunks_exact(2).zip(out.iter_mut()) {
        let (high, low) = (NIBBLES[usize::from(pair[0])], NIBBLES[usize::from(pair[1])]);
        // Any digit's value fits in 4 bits; a non-digit sets the high bit.
        bad |= high | low;
        *byte = (high << 4) | (low & 0x0f);
    }
    (bad & 0x80 == 0).then_some(())
}

macro_rules! fixed_bytes {
    ($(#[$doc:meta])* $name:ident, $len:expr) => {
        fixed_bytes!($(#[$doc])* $name, $len, "");
    };
    // `$prefix`: a prefix parsing accepts and drops (`0x` for the EVM's signatures).
    ($(#[$doc:meta])* $name:ident, $len:expr, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub [u8; $len]);

        impl $name {
            /// Length in bytes.
            pub const LEN: usize = $len;

            /// The raw bytes.
            pub fn as_bytes(&self) -> &[u8; $len] {
                &self.0
            }

            /// Lower-case hex.
            pub fn to_hex(&self) -> String {
                let mut buf = [0u8; 2 * $len];
                lower_hex(&self.0, &mut buf).to_owned()
            }

            /// Parses from a slice of exactly the right length.
            pub fn from_slice(bytes: &[u8]) -> Option<Self> {
                bytes.try_into().ok().map(Self)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut buf = [0u8; 2 * $len];
                f.write_str(lower_hex(&self.0, &mut buf))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({}…)", stringify!($name), &self.to_hex()[..12])
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                let mut out = [0u8; $len];
                let s = s.trim();
                let s = s.strip_prefix($prefix).unwrap_or(s);
                decode_hex(s.as_bytes(), &mut out).ok_or_else(|| {
                    format!("expected {} hex characters for {}", 2 * $len, stringify!($name))
                })?;
                Ok(Self(out))
            }
        }

        #[cfg(feature = "schema")]
        impl schemars::JsonSchema for $name {
            fn schema_name() -> alloc::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let prefix = if $prefix.is_empty() {
                    String::new()
                } else {
                    alloc::format!("({})?", $prefix)
                };
                schemars::json_schema!({
                    "type": "string",
                    "description": alloc::format!("{} bytes, lower-case hex", $len),
                    "pattern": alloc::format!("^{prefix}[0-9a-fA-F]{{{}}}$", 2 * $len),
                })
            }
        }

        #[cfg(feature = "serde")]
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                if s.is_human_readable() {
                    let mut buf = [0u8; 2 * $len];
                    s.serialize_str(lower_hex(&self.0, &mut buf))
                } else {
                    s.serialize_bytes(&self.0)
                }
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use serde::de::Error as _;
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        write!(f, "{} bytes or {} hex characters", $len, 2 * $len)
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        v.parse().map_err(E::custom)
                    }
                    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<$name, E> {
                        $name::from_slice(v).ok_or_else(|| E::invalid_length(v.len(), &self))
                    }
                    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<$name, A::Error> {
                        let mut out = [0u8; $len];
                        for (i, b) in out.iter_mut().enumerate() {
                            *b = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(i, &self))?;
                        }
                        Ok($name(out))
                    }
                }
                if d.is_human_readable() {
                    d.deserialize_str(V)
                } else {
                    d.deserialize_bytes(V)
                }
            }
        }
    };
}

fixed_bytes!(
    /// An identity: its ed25519 public key.
    IdentityId, 32
);
fixed_bytes!(
    /// An oracle node: its ed25519 public key (the libp2p identity key).
    NodeId, 32
);
fixed_bytes!(
    /// A BLAKE3 digest or Merkle root.
    Digest, 32
);
fixed_bytes!(
    /// An ed25519 signature.
    Sig, 64
);

fixed_bytes!(
    /// An EVM account's signature, as `personal_sign` returns it: `r ‖ s ‖ v` (65 bytes; `v` 27
    /// or 28, or 0 or 1). Lower-case hex in JSON; parsing also takes the wallets' `0x` prefix.
    AccountSig, 65, "0x"
);

impl Digest {
    /// The all-zero digest, used where no earlier root exists.
    pub const ZERO: Digest = Digest([0; 32]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn hex_is_lower_case_and_round_trips_in_every_form() {
        let mut bytes = [0u8; 64];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37).wrapping_add(11);
        }
        bytes[0] = 0x00;
        bytes[1] = 0xff;
        let sig = Sig(bytes);
        let expected = hex::encode(bytes);
        assert_eq!(sig.to_hex(), expected);
        assert_eq!(sig.to_string(), expected);
        #[cfg(feature = "serde")]
        assert_eq!(
            serde_json::to_string(&sig).unwrap(),
            format!("\"{expected}\"")
        );
        assert_eq!(expected.parse::<Sig>().unwrap(), sig);
        assert_eq!(expected.to_uppercase().parse::<Sig>().unwrap(), sig);
        let id = IdentityId(bytes[..32].try_into().unwrap());
        assert_eq!(id.to_string(), hex::encode(&bytes[..32]));
        #[cfg(feature = "serde")]
        assert_eq!(
            serde_json::from_str::<IdentityId>(&serde_json::to_string(&id).unwrap()).unwrap(),
            id
        );
    }

    #[test]
    fn hex_parsing_refuses_every_non_digit_and_every_wrong_length() {
        let good = "0123456789abcdefABCDEF".repeat(3)[..64].to_owned();
        let parsed: IdentityId = good.parse().unwrap();
        assert_eq!(hex::encode(parsed.0), good.to_lowercase());
        for at in [0, 1, 31, 63] {
            for c in (0u8..=255).filter(|c| !c.is_ascii_hexdigit()) {
                let mut bad = good.clone().into_bytes();
                bad[at] = c;
                let bad = String::from_utf8_lossy(&bad).into_owned();
                assert!(bad.parse::<IdentityId>().is_err(), "{at} {c}");
            }
        }
        assert!(good[..62].parse::<IdentityId>().is_err());
        assert!(format!("{good}00").parse::<IdentityId>().is_err());
        assert!("".parse::<IdentityId>().is_err());
    }

    #[test]
    fn account_signatures_take_the_wallets_0x_prefix_and_other_types_do_not() {
        let hex = "ab".repeat(65);
        let sig: AccountSig = hex.parse().unwrap();
        assert_eq!(format!("0x{hex}").parse::<AccountSig>().unwrap(), sig);
        assert_eq!(
            format!(" 0x{} ", hex.to_uppercase())
                .parse::<AccountSig>()
                .unwrap(),
            sig
        );
        assert_eq!(sig.to_string(), hex);
        assert!(format!("0x0x{hex}").parse::<AccountSig>().is_err());
        assert!(
            format!("0x{}", "ab".repeat(32))
                .parse::<IdentityId>()
                .is_err()
        );
        #[cfg(feature = "serde")]
        assert_eq!(
            serde_json::from_str::<AccountSig>(&format!("\"0x{hex}\"")).unwrap(),
            sig
        );
    }
}
