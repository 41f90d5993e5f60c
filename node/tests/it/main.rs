//! The `hco` binary as a user runs it.
#![allow(clippy::unwrap_used)]

mod cli;
mod devnet;
mod support;
