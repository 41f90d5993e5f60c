//! `/hco/reconcile/3`: a request (at most 64 * 1024 bytes) or a reply (at most 16 << 20 bytes), CBOR, as
//! the node's codec decodes them. The first byte picks which.
#![no_main]

#[path = "../helpers/rpc.rs"]
mod rpc;

use libfuzzer_sys::fuzz_target;
use rpc::protocol::{ReconcileReply, ReconcileRpc};

fuzz_target!(|data: &[u8]| {
    let Some((which, data)) = data.split_first() else {
        return;
    };
    if which % 2 == 0 {
        let _ = rpc::decode::<ReconcileRpc>(data, 64 * 1024);
    } else {
        let _ = rpc::decode::<ReconcileReply>(data, 16 << 20);
    }
});
