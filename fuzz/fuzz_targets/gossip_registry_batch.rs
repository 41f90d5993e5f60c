//! The members' registry batch topic's payload: a bincode `Vec<SignedRegister>`, then each
//! entry's checks.
#![no_main]

#[path = "../helpers/common.rs"]
mod common;

use hco_oracle::SignedRegister;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(batch) = common::decode_round_trip::<Vec<SignedRegister>>(data) {
        for reg in &batch {
            let _ = reg.check();
            let _ = reg.check_pow(8);
        }
    }
});
