//! The passkey topic's payload: a bincode `SignedEnrolment`, then its checks.
#![no_main]

#[path = "../helpers/common.rs"]
mod common;

use hco_oracle::SignedEnrolment;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(enrolment) = common::decode_round_trip::<SignedEnrolment>(data) {
        let _ = enrolment.check();
    }
});
