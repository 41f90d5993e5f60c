//! The WebAuthn registration credential JSON of a passkey enrolment (what a browser returns
//! from `navigator.credentials.create()`), verified by the presence family.
#![no_main]

use hco_challenges::presence::{Presence, PresencePolicy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    static PRESENCE: std::sync::LazyLock<Presence> = std::sync::LazyLock::new(|| {
        Presence::new(PresencePolicy::default()).expect("the default policy is valid")
    });
    let _ = PRESENCE.enrol(&[7; 32], 1_767_225_600_000, data);
});
