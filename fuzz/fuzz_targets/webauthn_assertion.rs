//! The WebAuthn assertion JSON that answers a presence challenge (what a browser returns from
//! `navigator.credentials.get()`), checked against a real passkey made at start by the
//! software authenticator; and the counter a client claims in it.
#![no_main]

use std::sync::LazyLock;

use hco_challenges::presence::SoftAuthenticator;
use hco_challenges::presence::{Passkey, Presence, PresencePolicy, claimed_counter};
use libfuzzer_sys::fuzz_target;

const ID: [u8; 32] = [7; 32];
const CREATED_AT: u64 = 1_767_225_600_000;

static STATE: LazyLock<(Presence, Vec<Passkey>)> = LazyLock::new(|| {
    let presence = Presence::new(PresencePolicy::default()).expect("the default policy is valid");
    let mut authenticator = SoftAuthenticator::new("http://localhost").expect("an origin");
    let credential = authenticator
        .enrol(&presence, &ID, CREATED_AT)
        .expect("the software authenticator enrols");
    let passkey = presence
        .enrol(&ID, CREATED_AT, &credential)
        .expect("its credential is accepted");
    (presence, vec![passkey])
});

fuzz_target!(|data: &[u8]| {
    let (presence, passkeys) = &*STATE;
    let _ = presence.verify_assertion(&[9; 32], data, passkeys);
    let _ = claimed_counter(data);
});
