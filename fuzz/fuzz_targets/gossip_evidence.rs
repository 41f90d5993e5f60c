//! The evidence topic's payload: a bincode `Evidence`, then its signature checks.
#![no_main]

#[path = "../helpers/common.rs"]
mod common;

use hco_oracle::Evidence;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(evidence) = common::decode_round_trip::<Evidence>(data) {
        let _ = evidence.check(&common::params());
    }
});
