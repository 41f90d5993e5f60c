//! The attackers' first-try rates offline: each strategy against `Family::generate` and the
//! stage-2 prompt, judged by the family's own checks, over many seeds.

use hco_challenges::{Family, FamilyParams, InteractiveReasoning, Seed};

use super::*;
use crate::attack::stats::wilson;

/// Plays `strategy` on `seeds` challenges without the network, on every core; successes at
/// stage 1 and at both stages.
fn offline(strategy: &dyn Strategy, seeds: u64) -> (u64, u64) {
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as u64;
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..cores)
            .map(|c| {
                scope.spawn(move || offline_range(strategy, (c..seeds).step_by(cores as usize)))
            })
            .collect();
        runs.into_iter()
            .map(|r| r.join().unwrap())
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    })
}

fn offline_range(strategy: &dyn Strategy, seeds: impl Iterator<Item = u64>) -> (u64, u64) {
    let f = InteractiveReasoning;
    let params = FamilyParams { difficulty: 2 };
    let mut wins = (0, 0);
    for i in seeds {
        let seed = Seed(*blake3::hash(&(i + 1_000_000).to_le_bytes()).as_bytes());
        let g = f.generate(&seed, &params);
        let data: serde_json::Value = serde_json::from_slice(&g.prompt.data).unwrap();
        let salt = i.to_le_bytes();
        let (first, kind) = strategy.first(&data, &salt);
        if f.check_stage(&g.key, 1, click(first).as_bytes()).is_err() {
            continue;
        }
        wins.0 += 1;
        let second = f.stage_prompt(&seed, &params, 2).unwrap();
        let data: serde_json::Value = serde_json::from_slice(&second.data).unwrap();
        let clicks = strategy.second(&data, kind, &salt);
        if f.verify(&g.key, final_answer(first, &clicks).as_bytes())
            .is_ok()
        {
            wins.1 += 1;
        }
    }
    wins
}

fn report(name: &str, strategy: &dyn Strategy, seeds: u64, at_most: f64) {
    let start = std::time::Instant::now();
    let (first, both) = offline(strategy, seeds);
    let (lo, hi) = wilson(both, seeds, 1.96);
    println!(
        "{name}: stage 1 {first}/{seeds}, both {both}/{seeds} = {:.1} % (Wilson 95 % {:.1}–{:.1} %) in {:.1?}",
        100.0 * both as f64 / seeds as f64,
        100.0 * lo,
        100.0 * hi,
        start.elapsed()
    );
    assert!(hi <= at_most, "{name}: upper bound {hi:.3} above {at_most}");
}

/// About three minutes in a debug build on two cores: `cargo nextest run -p hco-node --bin hco
/// attack::interactive --run-ignored all --no-capture`.
#[test]
#[ignore]
fn scene_cv_offline_rate_is_below_the_goal() {
    report("scene-cv", &SceneCv, 300, 0.25);
}

#[test]
#[ignore]
fn text_and_blind_offline_rates_are_near_zero() {
    report("phrase-parser", &PhraseParser, 300, 0.02);
    report("blind-guess", &BlindGuess, 300, 0.03);
}
