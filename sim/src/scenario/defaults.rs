//! Defaults: the paper scenario (Table 3 families, hour-long windows) under the ceremony of
//! `configs/prod.toml`: a 100 s global slot whose last beats are three presence steps as touch
//! prompts, one spare.

use std::time::Duration;

use super::family::paper_families;
use super::{
    Adversary, Analysis, Availability, Baselines, Cohort, Honest, Scenario, SlotMode, Slots,
};

const MINUTE: u64 = 60;
const HOUR: u64 = 3600;

impl Default for Scenario {
    fn default() -> Self {
        Self {
            name: "paper".to_owned(),
            seed: 1,
            windows: 1000,
            window_len: Duration::from_secs(HOUR),
            steps: ["presence", "presence", "presence"]
                .map(str::to_owned)
                .to_vec(),
            spares: 1,
            slots: Slots::default(),
            families: paper_families(),
            honest: Honest::default(),
            adversary: Adversary::default(),
            baselines: Baselines::default(),
            analysis: Analysis::default(),
        }
    }
}

impl Default for Slots {
    fn default() -> Self {
        Self {
            mode: SlotMode::Global,
            len: Duration::from_secs(100),
            prompt_jitter: Duration::from_millis(500),
        }
    }
}

impl Default for Cohort {
    fn default() -> Self {
        Self {
            name: "typical".to_owned(),
            share: 1.0,
            speed: 1.0,
        }
    }
}

impl Default for Honest {
    fn default() -> Self {
        let cohort = |name: &str, share, speed| Cohort {
            name: name.to_owned(),
            share,
            speed,
        };
        Self {
            population: 100_000,
            participation: 0.9,
            arrival_delay: Duration::from_secs(20),
            cohorts: vec![
                cohort("typical", 0.80, 1.0),
                cohort("slow", 0.15, 1.6),
                cohort("assisted", 0.05, 2.5),
            ],
        }
    }
}

impl Default for Availability {
    fn default() -> Self {
        Self {
            from_window: 0,
            humans: 100,
            swing: 0.0,
            period: 24,
        }
    }
}

impl Default for Adversary {
    fn default() -> Self {
        Self {
            availability: vec![Availability {
                swing: 0.3,
                ..Availability::default()
            }],
            wage_per_hour: 3.0,
            shift: Duration::from_secs(8 * HOUR),
            identities: 0,
            bot_identities: 0,
            automation_cost_per_attempt: 0.002,
            reward_per_identity_window: 0.005,
        }
    }
}

impl Default for Baselines {
    fn default() -> Self {
        Self {
            pow_hashes_per_identity: 2f64.powi(30),
            pow_device_hash_rate: 1e9,
            pow_device_cost: 1500.0,
            pow_device_lifetime_windows: 3.0 * 365.0 * 24.0,
            pow_energy_cost_per_hash: 1e-15,
            pos_attack_stake: 100_000.0,
            pos_min_stake_per_identity: 0.0,
            pos_interest_per_window: 0.05 / (365.0 * 24.0),
        }
    }
}

impl Default for Analysis {
    fn default() -> Self {
        Self {
            cost_points: 12,
            cost_windows: 40,
            cost_max_humans: 0,
            tau_z: 3.0,
            load_samples: 400,
            deadline_scales: vec![0.5, 0.75, 1.0, 1.5, 2.0],
            slot_lens: [MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE]
                .into_iter()
                .map(|s| Duration::from_secs(s).into())
                .collect(),
            honest_samples: 20_000,
        }
    }
}
