//! `hco sim bench`: the aggregate engine's speed and memory.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::engine::aggregate::Aggregate;
use crate::error::SimError;
use crate::model::Model;
use crate::run::progress_bar;
use crate::scenario::{Availability, Scenario};

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BenchConfig {
    /// Identities simulated per window (90 % honest, 10 % puppeteer pool).
    pub identities: u64,
    /// Windows per pass.
    pub windows: u32,
    /// Worker threads.
    pub threads: usize,
    /// Passes are repeated until this much time has gone by (at least one pass).
    pub min_time: Duration,
}

impl Default for BenchConfig {
    fn default() -> Self {
        Self {
            identities: 1_000_000,
            windows: 1000,
            threads: 2,
            min_time: Duration::from_secs(1),
        }
    }
}

/// Bench results, printed as JSON by `hco sim bench --json`.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Identity-windows simulated per second.
    pub identity_windows_per_s: f64,
    /// Peak resident memory of the process in MiB (`VmHWM`), if the OS reports it.
    pub peak_rss_mb: Option<f64>,
    /// Identities per window.
    pub identities: u64,
    /// Windows per pass.
    pub windows: u32,
    /// Passes run.
    pub passes: u32,
    /// Wall time, seconds.
    pub elapsed_s: f64,
    /// Threads used.
    pub threads: usize,
    /// Engine measured.
    pub engine: &'static str,
}

/// The bench scenario: the paper's parameters at `identities` scale.
pub fn bench_scenario(cfg: &BenchConfig) -> Scenario {
    let mut s = Scenario {
        name: "bench".to_owned(),
        windows: cfg.windows,
        ..Scenario::default()
    };
    let pool = cfg.identities / 10;
    s.honest.population = cfg.identities - pool;
    s.adversary.identities = pool;
    s.adversary.availability = vec![Availability {
        humans: (pool / 25).max(1),
        swing: 0.3,
        ..Availability::default()
    }];
    s
}

/// Peak resident set size from `/proc/self/status`, in MiB.
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Run the bench.
pub fn bench(cfg: &BenchConfig, progress: bool) -> Result<BenchReport, SimError> {
    let s = bench_scenario(cfg);
    s.validate()?;
    let model = Model::new(&s, s.seed)?;
    let start = Instant::now();
    let mut passes = 0u32;
    while passes == 0 || (start.elapsed() < cfg.min_time && passes < 10_000) {
        let engine = Aggregate::new(&s, &model, s.seed.wrapping_add(u64::from(passes)));
        let bar = progress_bar(u64::from(s.windows), progress && passes == 0);
        let records = engine.run(cfg.threads, &bar);
        bar.finish_and_clear();
        std::hint::black_box(records);
        passes += 1;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let work = cfg.identities as f64 * f64::from(cfg.windows) * f64::from(passes);
    Ok(BenchReport {
        identity_windows_per_s: work / elapsed,
        peak_rss_mb: peak_rss_mb(),
        identities: cfg.identities,
        windows: cfg.windows,
        passes,
        elapsed_s: elapsed,
        threads: cfg.threads,
        engine: "aggregate",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_bench_reports_speed_and_memory() {
        let cfg = BenchConfig {
            identities: 10_000,
            windows: 20,
            threads: 2,
            min_time: Duration::ZERO,
        };
        let r = bench(&cfg, false).unwrap();
        assert_eq!(r.passes, 1);
        assert!(r.identity_windows_per_s > 0.0);
        if cfg!(target_os = "linux") {
            assert!(r.peak_rss_mb.unwrap() > 0.0);
        }
    }
}
