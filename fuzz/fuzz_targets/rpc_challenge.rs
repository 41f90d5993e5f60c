//! `/hco/challenge/1`: a request (at most 96 * 1024 bytes) or a reply (at most 1 << 20 bytes), CBOR, as
//! the node's codec decodes them. The first byte picks which.
#![no_main]

#[path = "../helpers/rpc.rs"]
mod rpc;

use libfuzzer_sys::fuzz_target;
use rpc::protocol::{ChallengeReply, ChallengeRpc};

fuzz_target!(|data: &[u8]| {
    let Some((which, data)) = data.split_first() else {
        return;
    };
    if which % 2 == 0 {
        let _ = rpc::decode::<ChallengeRpc>(data, 96 * 1024);
    } else {
        let _ = rpc::decode::<ChallengeReply>(data, 1 << 20);
    }
});
