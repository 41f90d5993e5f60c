//! Ready-made parameters and keys for tests, examples and the simulator.

use ed25519_dalek::SigningKey;

use crate::{
    ClassPolicies, FamilyConfig, IdentityId, LifecycleParams, NetworkParams, NodeId, SlotMode,
};

/// Genesis used by test parameters: 2023-11-14T22:13:20Z.
pub const TEST_GENESIS_MS: u64 = 1_700_000_000_000;

/// A deterministic signing key from a small number (never use outside tests).
pub fn key(n: u64) -> SigningKey {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&n.to_le_bytes());
    seed[8] = 0xa5;
    SigningKey::from_bytes(&seed)
}

/// The node id of a key.
pub fn node_id(key: &SigningKey) -> NodeId {
    NodeId(key.verifying_key().to_bytes())
}

/// The identity id of a key.
pub fn identity_id(key: &SigningKey) -> IdentityId {
    IdentityId(key.verifying_key().to_bytes())
}

/// Parameters for tests: 60 s windows with 20 s grace, one drawn step and one spare per class,
/// open slots, no human-speed floor,
/// `proof_of_work` (agents, 8 bits, 10 s) and `arithmetic_reasoning` (humans, 3 steps, 15 s),
/// quorum a majority of `committee`.
pub fn params_for(committee: &[NodeId]) -> NetworkParams {
    NetworkParams {
        genesis_ms: TEST_GENESIS_MS,
        window_ms: 60_000,
        grace_ms: 20_000,
        policies: ClassPolicies::default(),
        slot_mode: SlotMode::Open,
        slot_ms: 0,
        families: vec![
            FamilyConfig {
                name: "proof_of_work".into(),
                deadline_ms: 10_000,
                difficulty: 8,
                min_solve_ms: 0,
            },
            FamilyConfig {
                name: "arithmetic_reasoning".into(),
                deadline_ms: 15_000,
                difficulty: 3,
                min_solve_ms: 0,
            },
        ],
        lifecycle: LifecycleParams::default(),
        committee: committee.to_vec(),
        quorum: committee.len() as u32 / 2 + 1,
        issuer_fallback: 0,
        rotate_issuers: false,
        max_clock_skew_ms: 30_000,
        relay_round_ms: 1_000,
        prompt_jitter_ms: 1000,
        registration_pow_bits: 0,
        presence: Default::default(),
        narrative: crate::params::NarrativeParams::embedded(),
    }
}
