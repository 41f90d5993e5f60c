//! The reveal topic's payload: a bincode `SignedReveal`, then its check.
#![no_main]

#[path = "../helpers/common.rs"]
mod common;

use hco_oracle::SignedReveal;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(reveal) = common::decode_round_trip::<SignedReveal>(data) {
        let _ = reveal.check(&common::params());
    }
});
