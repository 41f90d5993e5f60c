//! The summary topic's payload: a bincode `SignedSummary`, then its check.
#![no_main]

#[path = "../helpers/common.rs"]
mod common;

use hco_oracle::SignedSummary;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(summary) = common::decode_round_trip::<SignedSummary>(data) {
        let _ = summary.check(&common::params());
    }
});
