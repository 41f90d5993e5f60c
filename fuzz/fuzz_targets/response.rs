//! `Response::decode`, what a peer's or client's encoded response goes through, then the
//! signature checks that need no ledger.
#![no_main]

use hco_oracle::Response;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(response) = Response::decode(data) {
        let _ = response.signing_digest();
        let _ = response.challenge.check_signature();
    }
});
