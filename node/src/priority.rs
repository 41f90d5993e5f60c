//! Who gets the CPU first when a member is saturated: the committee. The network task, the
//! event pump and the gossip validation it spawns, the publishing of this node's gossip and the
//! window driver run on their own runtime, [`PeerRuntime`], at the process's priority; the
//! runtime that serves clients (the HTTP gateway, the verification batcher, challenge requests
//! forwarded by peers, their blocking work) runs its threads `node.client_nice` lower
//! ([`lower_priority`]). Under a client overload the member then still records its peers'
//! acceptances within its share of the CPU, instead of queueing them behind the requests: the
//! clients wait (their p99 is theirs to bear), the committee's view of the window does not.

use tokio::runtime::{Handle, Runtime};

/// Lowers the calling thread's scheduling priority by `nice` (threads it spawns afterwards
/// inherit it; processes it already started keep theirs). Best effort: where the system has
/// no such facility, or refuses, the priority stays as it was. 0 changes nothing.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // one setpriority call on the calling thread
pub fn lower_priority(nice: i32) {
    if nice > 0 {
        // SAFETY: a plain syscall; `who = 0` is the calling thread on Linux, and no memory is
        // passed.
        let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    }
}

/// Elsewhere every thread keeps the process's priority.
#[cfg(not(target_os = "linux"))]
pub fn lower_priority(_nice: i32) {}

/// The committee's runtime: one worker thread (and its own blocking pool) at the process's
/// priority. Shut down without waiting when dropped (from async code too).
pub struct PeerRuntime {
    runtime: Option<Runtime>,
    handle: Handle,
}

impl PeerRuntime {
    /// Starts it.
    pub fn start() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("hco-peers")
            .enable_all()
            .build()?;
        Ok(Self {
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
        })
    }

    /// Its handle: spawn on it, or enter it to create sockets its I/O driver polls.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }
}

impl Drop for PeerRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[allow(unsafe_code)] // getpriority on the calling thread
    fn own_nice() -> i32 {
        // SAFETY: a plain syscall on the calling thread; no memory is passed.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
    }

    #[test]
    fn a_lowered_thread_and_the_threads_it_spawns_run_lower_and_others_keep_theirs() {
        let base = own_nice();
        let (lowered, child) = std::thread::spawn(|| {
            lower_priority(3);
            let child = std::thread::spawn(own_nice).join().unwrap();
            (own_nice(), child)
        })
        .join()
        .unwrap();
        let expected = (base + 3).min(19);
        assert_eq!(lowered, expected);
        assert_eq!(
            child, expected,
            "a spawned thread inherits its creator's priority"
        );
        assert_eq!(own_nice(), base, "only the calling thread is lowered");
        std::thread::spawn(move || {
            lower_priority(0);
            assert_eq!(own_nice(), base);
        })
        .join()
        .unwrap();
    }

    #[tokio::test]
    async fn the_peer_runtime_runs_tasks_and_drops_inside_async_code() {
        let peers = PeerRuntime::start().unwrap();
        let name = peers
            .handle()
            .spawn(async { std::thread::current().name().map(str::to_owned) })
            .await
            .unwrap();
        assert_eq!(name.as_deref(), Some("hco-peers"));
        drop(peers);
    }
}
