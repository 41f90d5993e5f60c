//! Sybil-cost simulator for the Human Challenge Oracle.
//!
//! An adversary hires `m(t)` humans (and may run bots) to keep Sybil identities active; every
//! active identity must pass, in every window, each step of the window policy (e.g. presence
//! then two drawn cognitive steps) with fresh, deadline-bound challenges that open inside the
//! ceremony slot, one final answer per challenge and a spare try or two. The simulator checks
//! the paper's bounds on such runs and prices the attack:
//!
//! * **Lemma 1** — per window, human-run active identities ≤ `m · τh`, where τh is *derived*
//!   from the slot mode, the slot length, the policy and the families' solve-time distributions
//!   ([`model`] explains the derivation); every window above the line is counted;
//! * **Theorem 1** — the attacker's cost `C_A(s)` is measured over a grid of hired humans and
//!   fitted by least squares (slope = money per identity per window, R²);
//! * **Theorem 2** — the running mean of active identities stays below `m̄ · τh`;
//! * the profit-maximising identity count and the break-even reward;
//! * the same attack priced under PoW and PoS baselines;
//! * honest false rejects under each deadline and slot length;
//! * the one-person bound of a node config's policy ([`bound`], `hco sim bound`).
//!
//! Two engines produce the same per-window records ([`engine::WindowRecord`]): the
//! [`engine::aggregate`] engine samples counts in bulk and scales to millions of identities;
//! the [`engine::exact`] engine drives the real `hco-oracle` core on a manual clock.
//! A fixed seed makes every output byte-identical.
//!
//! ```
//! use hco_sim::run::{RunConfig, run};
//! use hco_sim::scenario::Scenario;
//!
//! // The paper scenario (an empty file), shortened.
//! let mut scenario = Scenario::from_toml("windows = 48")?;
//! scenario.analysis.honest_samples = 2000;
//! let out = run(&RunConfig::new(scenario))?;
//! assert_eq!(out.lemma1_violations, 0);
//! assert!(out.fit.r2 >= 0.99, "cost grows linearly in the identities");
//! # Ok::<(), hco_sim::run::SimError>(())
//! ```
//!
//! From the command line (see [`cli`]): `hco sim run configs/sim/paper.toml --out DIR`.

pub mod analysis;
pub mod bench;
pub mod bound;
pub mod cli;
pub mod engine;
pub mod error;
pub mod model;
pub mod report;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod schedule;
