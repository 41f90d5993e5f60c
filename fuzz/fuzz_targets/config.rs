//! The node's configuration file: TOML into the node's own `Config` (included from its
//! source), then the network parameters it yields and their validation.
#![no_main]
#![allow(dead_code, unused_imports)]

#[path = "../../node/src/config.rs"]
mod config;

// What config.rs reads from the node's network module: the gossip frame limit.
#[path = "../../node/src/network/protocol.rs"]
pub mod protocol;
mod network {
    pub use super::protocol;
}

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(config) = toml::from_str::<config::Config>(text) else {
        return;
    };
    let Ok(params) = config.network.params(hco_oracle::NodeId([1; 32])) else {
        return;
    };
    let _ = params.validate(&hco_challenges::Registry::builtin());
    let _ = params.digest();
});
