//! Integration tests of the simulator: one test binary, one module per concern.

mod cli;
mod determinism;
mod engines;
mod paper;
mod scenarios;

use std::path::PathBuf;

/// A file under the workspace's `configs/sim/`.
pub fn config(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../configs/sim")
        .join(name)
}
