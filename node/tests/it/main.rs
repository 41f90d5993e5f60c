//! The `hco` binary as a user runs it.
#![allow(clippy::unwrap_used)]

mod agent;
mod browser;
mod cli;
mod corpus;
mod devnet;
mod gossip;
mod support;
