//! The registry topic's payload: a bincode `SignedRegister`, then its checks.
#![no_main]

#[path = "../helpers/common.rs"]
mod common;

use hco_oracle::SignedRegister;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(reg) = common::decode_round_trip::<SignedRegister>(data) {
        let _ = reg.check();
        let _ = reg.check_pow(8);
    }
});
