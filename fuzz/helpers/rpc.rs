//! The request-response messages as the node's libp2p CBOR codec reads them
//! (`cbor4ii::serde::from_slice` over at most the protocol's size limit). The message types
//! are the node's own, included from its source.
#![allow(dead_code, unused_imports)]

#[path = "../../node/src/network/protocol.rs"]
pub mod protocol;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Decodes `data` as the codec does (after its size cap) and checks that what decodes
/// encodes and decodes again.
pub fn decode<T: DeserializeOwned + Serialize>(data: &[u8], limit: usize) -> Option<T> {
    let data = &data[..data.len().min(limit)];
    let value: T = cbor4ii::serde::from_slice(data).ok()?;
    let bytes = cbor4ii::serde::to_vec(Vec::new(), &value).expect("a decoded value encodes");
    let _: T = cbor4ii::serde::from_slice(&bytes).expect("an encoded value decodes");
    Some(value)
}
