//! The `hco` binary as a user runs it.
#![allow(clippy::unwrap_used)]

mod agent;
mod attack_one_person;
mod attack_oracle;
mod attack_visual;
mod attention;
mod browser;
mod browser_attention;
mod browser_interactive;
mod browser_link;
mod browser_prompts;
mod browser_visual;
// Needs a node built with the `unsafe-byzantine` feature (the test command turns it on).
#[cfg(feature = "unsafe-byzantine")]
mod byzantine;
mod class_split;
mod cli;
mod client_wait;
mod committee;
mod connection_limits;
mod corpus;
mod devnet;
mod forwarding;
mod gossip;
mod limits;
mod links;
mod metrics_listener;
mod observer_js;
mod priority;
mod support;
mod withheld;
mod witness;
