//! The attackers we hold our families to (the human ones, `narrative_chain` of the agent class
//! in `agent`, and the labelled baselines in `baseline`): for each family, the strongest automated
//! solver we can write with the whole source in hand and off-the-shelf tools only (Tesseract,
//! image processing, the renderer's own fonts and tables, synthetic human-like timings), no
//! model training and no multimodal model. `hco bench attack` runs them against a node over
//! HTTP, with the network's real deadlines and minimum solve times, and reports first-try
//! success with a 95 % Wilson interval (von Ahn et al.: a family is as strong as the best
//! solver written against it, and only the per-challenge randomness is secret).
//!
//! Every attacker plays a challenge exactly as a client does: it gets the signed envelope and
//! prompt from `POST /v1/challenges`, may use any endpoint the page uses (streams, stages),
//! and ends with one identity-signed answer. Its first verdict is final, as for anyone.

pub mod agent;
pub mod attention;
pub mod baseline;
pub mod interactive;
pub mod ocr;
pub mod oracle;
pub mod presence;
pub mod qa_ranking;
pub mod session;
pub mod stats;
pub mod trained;
pub mod visual;

pub use session::{Session, Verdict};

/// One automated solver for one family.
pub trait Attack: Send + Sync {
    /// The family it attacks.
    fn family(&self) -> &'static str;
    /// A short stable name (`tesseract-lexicon`, `blind-guess`…), reported in the bench JSON.
    fn name(&self) -> &'static str;
    /// Plays the challenge held by `session`, from its prompt to the final verdict.
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict>;
    /// How many attempts the bench runs at once: mostly-waiting attackers (a stream that plays
    /// for seconds) may run many; CPU-bound ones should wrap their heavy work in [`compute`].
    fn concurrency(&self) -> usize {
        16
    }
}

/// Every attacker in the tree, strongest first within each family. `hco bench attack`
/// reports, per family, the attacker with the highest first-try success.
pub fn all() -> Vec<Box<dyn Attack>> {
    let mut all: Vec<Box<dyn Attack>> = vec![
        Box::new(presence::SoftPasskey),
        Box::new(visual::Template),
        Box::new(visual::Tesseract),
        Box::new(visual::BlindGuess),
    ];
    all.extend(interactive::attackers());
    all.extend([
        Box::new(attention::FrameCv) as Box<dyn Attack>,
        Box::new(attention::ScheduleReader),
        Box::new(attention::BlindClick),
        Box::new(agent::StarterLookup),
        Box::new(agent::Keyword),
        Box::new(qa_ranking::QaRanking),
    ]);
    all.extend(baseline::attackers());
    all
}

/// Runs CPU-heavy attacker work (OCR, image search) holding one of the machine's cores, so
/// many concurrent attempts queue for the CPU instead of all missing their deadlines together:
/// the bench measures the attacker, not an overloaded harness.
pub fn compute<T>(work: impl FnOnce() -> T) -> T {
    use std::sync::{Condvar, Mutex, OnceLock};
    static CORES: OnceLock<(Mutex<usize>, Condvar)> = OnceLock::new();
    let (free, changed) = CORES.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        (Mutex::new(cores), Condvar::new())
    });
    {
        let mut n = free.lock().unwrap_or_else(|e| e.into_inner());
        while *n == 0 {
            n = changed.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n -= 1;
    }
    struct Release<'a>(&'a Mutex<usize>, &'a Condvar);
    impl Drop for Release<'_> {
        fn drop(&mut self) {
            *self.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            self.1.notify_one();
        }
    }
    let _release = Release(free, changed);
    work()
}

/// The attackers of one family.
pub fn of_family(family: &str) -> Vec<Box<dyn Attack>> {
    all().into_iter().filter(|a| a.family() == family).collect()
}
