//! Integration tests of the protocol core: one binary, modules per concern.
#![allow(clippy::unwrap_used)] // helpers outside #[test] functions unwrap too

mod audit;
mod byzantine;
mod committee;
mod conflicts;
mod integrity;
mod js_fixtures;
mod ledger_model;
mod link_race;
mod links;
mod policy;
mod presence;
mod proofs;
mod rejections;
mod remote_property;
mod replay;
mod rotation;
mod rules_property;
mod split_views;
mod stages;
mod support;
mod witness;
