//! What the targets share: the node's gossip limit, a round-trip check and test parameters.
#![allow(dead_code)]

use hco_oracle::{NetworkParams, codec};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Largest gossip payload the node decodes (`MAX_GOSSIP` in the node).
pub const MAX_GOSSIP: usize = 1 << 20;

/// Decodes `data` as the node does; whatever decodes must encode back to a value that decodes
/// to the same thing (bincode is canonical for these types).
pub fn decode_round_trip<T>(data: &[u8]) -> Option<T>
where
    T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug,
{
    let value: T = codec::decode(data, MAX_GOSSIP).ok()?;
    let again: T = codec::decode(&codec::encode(&value), MAX_GOSSIP)
        .expect("an encoded value decodes");
    assert_eq!(value, again);
    Some(value)
}

/// Parameters of a one-node network, for the checks that need them.
pub fn params() -> NetworkParams {
    let key = hco_oracle::testing::key(1);
    hco_oracle::testing::params_for(&[hco_oracle::testing::node_id(&key)])
}
