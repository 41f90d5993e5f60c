//! The binary codec of every message: bincode 2 (standard configuration) through serde, with a
//! size limit on every decode and no trailing bytes allowed.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Largest encoded message accepted from a peer or client.
pub const MAX_MESSAGE_LEN: usize = 64 * 1024;

/// Why bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// More bytes than the limit for this message.
    #[error("message of {len} bytes exceeds the limit of {limit}")]
    TooLarge {
        /// Bytes received.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// Not a valid encoding of the message.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// Valid prefix followed by extra bytes.
    #[error("{0} unexpected trailing bytes")]
    TrailingBytes(usize),
}

fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Encodes a message. Encoding plain data structures cannot fail.
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(value, config()).unwrap_or_default()
}

/// Decodes a message of at most `limit` bytes.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], limit: usize) -> Result<T, DecodeError> {
    if bytes.len() > limit {
        return Err(DecodeError::TooLarge {
            len: bytes.len(),
            limit,
        });
    }
    // The codec's own limit bounds any length prefix inside the message, so a forged length
    // cannot make the decoder allocate more than the message could hold.
    let cfg = config().with_limit::<{ MAX_MESSAGE_LEN * 2 }>();
    let (value, read) = bincode::serde::decode_from_slice(bytes, cfg)
        .map_err(|e| DecodeError::Malformed(e.to_string()))?;
    if read != bytes.len() {
        return Err(DecodeError::TrailingBytes(bytes.len() - read));
    }
    Ok(value)
}
