//! The acceptance topic's payload: a bincode batch of `SealedAcceptance`, then each seal and
//! signature check.
#![no_main]

#[path = "../helpers/common.rs"]
mod common;

use hco_oracle::SealedAcceptance;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(batch) = common::decode_round_trip::<Vec<SealedAcceptance>>(data) {
        for sealed in &batch {
            let _ = sealed.check_seal();
        }
    }
});
