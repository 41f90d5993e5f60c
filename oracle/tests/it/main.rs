//! Integration tests of the protocol core: one binary, modules per concern.
#![allow(clippy::unwrap_used)] // helpers outside #[test] functions unwrap too

mod committee;
mod ledger_model;
mod policy;
mod presence;
mod rejections;
mod rules_property;
mod stages;
mod support;
