//! The binary codec of every message: bincode 2 (standard configuration) through serde, with a
//! size limit on every decode and no trailing bytes allowed.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Largest encoded message accepted from a peer or client.
pub const MAX_MESSAGE_LEN: usize = 64 * 1024;

/// Largest input any [`decode`] reads, whatever limit its caller passes. Gossip payloads are
/// sized to fit it.
pub const MAX_DECODE_LEN: usize = 2 * MAX_MESSAGE_LEN;

/// The bincode limit of a decode: what the length prefixes inside a message may claim, counted
/// in memory (a `Vec<T>` of `n` claims `n * size_of::<T>()`), so a forged length cannot make the
/// decoder allocate more. Decoded values take more memory than their encoding (a payload of
/// [`MAX_DECODE_LEN`] bytes of sealed acceptances exceeds a claim limit of the same size), hence
/// the margin.
pub const MAX_DECODE_MEMORY: usize = 8 * MAX_DECODE_LEN;

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

/// Encodes `items` as a sequence of `Vec<T>` encodings, in order, each at most `max_bytes` long
/// (sized from the encoded bytes, not from a count). An item whose encoding alone does not fit
/// is left out; the second value counts those.
pub fn encode_chunks<T: Serialize>(items: &[T], max_bytes: usize) -> (Vec<Vec<u8>>, usize) {
    // A `Vec<T>` encodes as its length (a `u64` varint) followed by the items' encodings.
    let frame = |body: &[u8], count: usize| {
        let mut out = encode(&(count as u64));
        out.extend_from_slice(body);
        out
    };
    let mut chunks = Vec::new();
    let mut skipped = 0;
    let (mut body, mut count) = (Vec::new(), 0usize);
    for item in items {
        let bytes = encode(item);
        let needed = |count: usize, body: &[u8]| {
            encode(&(count as u64 + 1)).len() + body.len() + bytes.len()
        };
        if count > 0 && needed(count, &body) > max_bytes {
            chunks.push(frame(&body, count));
            (body, count) = (Vec::new(), 0);
        }
        if needed(count, &body) > max_bytes {
            skipped += 1;
            continue;
        }
        body.extend_from_slice(&bytes);
        count += 1;
    }
    if count > 0 {
        chunks.push(frame(&body, count));
    }
    (chunks, skipped)
}

/// Decodes a message of at most `limit` bytes (and never more than [`MAX_DECODE_LEN`]).
pub fn decode<T: DeserializeOwned>(bytes: &[u8], limit: usize) -> Result<T, DecodeError> {
    let limit = limit.min(MAX_DECODE_LEN);
    if bytes.len() > limit {
        return Err(DecodeError::TooLarge {
            len: bytes.len(),
            limit,
        });
    }
    // The codec's own limit bounds any length prefix inside the message (in memory).
    let cfg = config().with_limit::<MAX_DECODE_MEMORY>();
    let (value, read) = bincode::serde::decode_from_slice(bytes, cfg)
        .map_err(|e| DecodeError::Malformed(e.to_string()))?;
    if read != bytes.len() {
        return Err(DecodeError::TrailingBytes(bytes.len() - read));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_the_encoding_of_their_items_and_fit_the_limit() {
        let items: Vec<Vec<u8>> = (0..600u32)
            .map(|i| vec![i as u8; 100 + (i % 7) as usize])
            .collect();
        let (chunks, skipped) = encode_chunks(&items, 4096);
        assert_eq!(skipped, 0);
        assert!(chunks.len() > 1);
        let mut decoded = Vec::new();
        for chunk in &chunks {
            assert!(chunk.len() <= 4096);
            let part: Vec<Vec<u8>> = decode(chunk, 4096).unwrap();
            assert_eq!(*chunk, encode(&part));
            decoded.extend(part);
        }
        assert_eq!(decoded, items);
    }

    #[test]
    fn an_item_too_large_for_any_chunk_is_left_out_and_counted() {
        let items = vec![vec![1u8; 10], vec![2u8; 5000], vec![3u8; 10]];
        let (chunks, skipped) = encode_chunks(&items, 1000);
        assert_eq!(skipped, 1);
        let kept: Vec<Vec<u8>> = chunks
            .iter()
            .flat_map(|c| decode::<Vec<Vec<u8>>>(c, 1000).unwrap())
            .collect();
        assert_eq!(kept, vec![vec![1u8; 10], vec![3u8; 10]]);
    }

    #[test]
    fn the_decoder_never_reads_beyond_its_own_limit() {
        let big = vec![0u8; MAX_DECODE_LEN + 1];
        let bytes = encode(&big);
        assert!(matches!(
            decode::<Vec<u8>>(&bytes, usize::MAX),
            Err(DecodeError::TooLarge {
                limit: MAX_DECODE_LEN,
                ..
            })
        ));
    }
}
