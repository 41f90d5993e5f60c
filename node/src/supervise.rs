//! Supervision of the node's long tasks. The node cannot serve correctly without its network
//! task, window driver, verification batcher or event pump, nor with a ledger that fails: each
//! is started with [`Supervisor::spawn_critical`], and a storage failure is reported with
//! [`Supervisor::fatal`]. Either stops the whole node through its shutdown token with one clear
//! log line, rather than leaving it up but limping (answering without recording, or not
//! answering at all).

use std::future::Future;
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

/// Stops the node when a critical task ends or a fatal failure is reported.
#[derive(Clone, Default)]
pub struct Supervisor {
    shutdown: CancellationToken,
    cause: Arc<OnceLock<String>>,
}

impl Supervisor {
    /// A supervisor with its own shutdown token.
    pub fn new() -> Self {
        Self::default()
    }

    /// The token cancelled when the node must stop (also by a signal or the operator).
    pub fn shutdown(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Why the node was stopped by a failure, if it was.
    pub fn cause(&self) -> Option<&str> {
        self.cause.get().map(String::as_str)
    }

    /// Stops the node after a failure it cannot carry on from; the first cause is logged.
    pub fn fatal(&self, what: &str, error: impl std::fmt::Display) {
        let cause = format!("{what}: {error}");
        if self.cause.set(cause.clone()).is_ok() {
            tracing::error!(%cause, "fatal failure; stopping the node");
        }
        self.shutdown.cancel();
    }

    /// Stops the node after a storage (ledger) failure in `what`.
    pub fn storage_failed(&self, what: &str, error: impl std::fmt::Display) {
        self.fatal(&format!("storage failure in {what}"), error);
    }

    /// Spawns a task the node cannot run without: if it ends or panics before the node is
    /// stopping, the node stops.
    pub fn spawn_critical<F>(&self, name: &'static str, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.spawn_critical_on(&tokio::runtime::Handle::current(), name, task);
    }

    /// [`Supervisor::spawn_critical`] on the runtime `on` (supervised from the calling one).
    pub fn spawn_critical_on<F>(&self, on: &tokio::runtime::Handle, name: &'static str, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let handle = on.spawn(task);
        let supervisor = self.clone();
        tokio::spawn(async move {
            let outcome = match handle.await {
                Ok(()) => "ended".to_owned(),
                Err(e) if e.is_panic() => format!("panicked: {}", panic_text(e.into_panic())),
                Err(e) => format!("was cancelled: {e}"),
            };
            if !supervisor.shutdown.is_cancelled() {
                supervisor.fatal(&format!("critical task `{name}`"), outcome);
            }
        });
    }
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic".into())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    async fn stopped(s: &Supervisor) {
        tokio::time::timeout(Duration::from_secs(10), s.shutdown().cancelled())
            .await
            .expect("the node is told to stop");
    }

    #[tokio::test]
    async fn a_critical_task_that_panics_stops_the_node_and_says_why() {
        let s = Supervisor::new();
        s.spawn_critical("verification batcher", async { panic!("boom") });
        stopped(&s).await;
        let cause = s.cause().unwrap();
        assert!(cause.contains("verification batcher"), "{cause}");
        assert!(cause.contains("panicked: boom"), "{cause}");
    }

    #[tokio::test]
    async fn a_critical_task_that_ends_stops_the_node() {
        let s = Supervisor::new();
        s.spawn_critical("event pump", async {});
        stopped(&s).await;
        assert!(s.cause().unwrap().contains("`event pump`: ended"));
    }

    #[tokio::test]
    async fn tasks_ending_at_shutdown_are_not_failures_and_the_first_cause_stays() {
        let s = Supervisor::new();
        let token = s.shutdown();
        s.spawn_critical("driver", async move { token.cancelled().await });
        s.shutdown().cancel();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(s.cause(), None, "an orderly stop names no failure");

        let s = Supervisor::new();
        s.storage_failed("the verification batcher", "corrupt record");
        s.fatal("later", "something else");
        assert_eq!(
            s.cause(),
            Some("storage failure in the verification batcher: corrupt record")
        );
        assert!(s.shutdown().is_cancelled());
    }
}
