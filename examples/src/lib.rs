//! Runnable examples for the two audiences of the Human Challenge Oracle.
//!
//! - `verify_membership` (integrators): how a chain's validator-set logic or a DAO voting tool
//!   checks a window certificate and an identity's membership proof offline, with nothing but
//!   the committee keys it already trusts.
//! - `operator.sh` (operators): a local committee from start to certified window.
