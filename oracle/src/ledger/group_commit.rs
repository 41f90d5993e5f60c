//! Group commit: many writers wait for one flush. A writer bumps the write generation after its
//! in-memory write; `make_durable` returns once a flush that started after that write finished.
//! The first waiter leads the flush; the others arriving meanwhile ride on the next one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

use super::LedgerError;

#[derive(Debug, Default)]
struct State {
    flushed: u64,
    flushing: bool,
}

/// Coordinates flushes among threads.
#[derive(Debug, Default)]
pub struct GroupCommit {
    written: AtomicU64,
    state: Mutex<State>,
    done: Condvar,
    flushes: AtomicU64,
}

impl GroupCommit {
    /// Records a write; returns its generation.
    pub fn wrote(&self) -> u64 {
        self.written.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Flushes performed so far.
    pub fn flushes(&self) -> u64 {
        self.flushes.load(Ordering::Relaxed)
    }

    /// Blocks until every write up to `generation` is durable, flushing with `flush` if no other
    /// thread is already doing so.
    pub fn make_durable(
        &self,
        generation: u64,
        flush: impl Fn() -> Result<(), LedgerError>,
    ) -> Result<(), LedgerError> {
        let mut state = self.state.lock().map_err(|_| LedgerError::Poisoned)?;
        loop {
            if state.flushed >= generation {
                return Ok(());
            }
            if !state.flushing {
                break;
            }
            state = self.done.wait(state).map_err(|_| LedgerError::Poisoned)?;
        }
        state.flushing = true;
        // Everything written before this point is covered by the flush below.
        let covered = self.written.load(Ordering::SeqCst);
        drop(state);
        let result = flush();
        let mut state = self.state.lock().map_err(|_| LedgerError::Poisoned)?;
        state.flushing = false;
        if result.is_ok() {
            state.flushed = state.flushed.max(covered);
            self.flushes.fetch_add(1, Ordering::Relaxed);
        }
        self.done.notify_all();
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn concurrent_writers_share_flushes() {
        let gc = Arc::new(GroupCommit::default());
        let flushed_upto = Arc::new(AtomicU64::new(0));
        std::thread::scope(|s| {
            for _ in 0..8 {
                let gc = gc.clone();
                let flushed_upto = flushed_upto.clone();
                s.spawn(move || {
                    for _ in 0..50 {
                        let g = gc.wrote();
                        gc.make_durable(g, || {
                            let w = gc.written.load(Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_micros(200));
                            flushed_upto.fetch_max(w, Ordering::SeqCst);
                            Ok(())
                        })
                        .unwrap();
                        assert!(
                            flushed_upto.load(Ordering::SeqCst) >= g,
                            "acknowledged before durable"
                        );
                    }
                });
            }
        });
        assert!(
            gc.flushes() < 400,
            "flushes were not shared: {}",
            gc.flushes()
        );
    }
}
