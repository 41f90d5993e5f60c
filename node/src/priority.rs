//! Who gets the CPU first when a member is saturated: the committee. The network task, the
//! event pump and the gossip validation it spawns, the publishing of this node's gossip and the
//! window driver run on their own runtime, [`PeerRuntime`], at the process's priority; the
//! runtime that serves clients (the HTTP gateway, the verification batcher, challenge requests
//! forwarded by peers, their blocking work) runs its threads `node.client_nice` lower
//! ([`lower_priority`]). Under a client overload the member then still records its peers'
//! acceptances within its share of the CPU, instead of queueing them behind the requests: the
//! clients wait (their p99 is theirs to bear), the committee's view of the window does not.

use tokio::runtime::{Handle, Runtime};

/// Sets the calling thread's scheduling priority `nice` steps below the process's (its main
/// thread's), whatever the thread had: relative to the process, so a node started under
/// `nice -n 10` runs its client threads at 10 + `nice`, never above the committee's, and a
/// thread spawned by an already lowered one is not lowered twice. Threads it spawns afterwards
/// inherit it. Capped at 19, the lowest priority. Where the system refuses, the priority stays
/// as it was and a warning says so. 0 changes nothing.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // getpriority and setpriority
pub fn lower_priority(nice: i32) {
    if nice <= 0 {
        return;
    }
    // SAFETY: plain syscalls, no memory passed. On Linux `PRIO_PROCESS` names one thread: the
    // process id is its main thread, 0 the calling thread. getpriority may return -1 as a
    // value, so errno is cleared first and read after.
    let (base, failed) = unsafe {
        *libc::__errno_location() = 0;
        let base = libc::getpriority(libc::PRIO_PROCESS, libc::getpid() as libc::id_t);
        (base, base == -1 && *libc::__errno_location() != 0)
    };
    if failed {
        tracing::warn!("cannot read the process's priority; client threads keep theirs");
        return;
    }
    let target = base.saturating_add(nice).min(19);
    // SAFETY: as above.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, target) } != 0 {
        tracing::warn!(
            process = base,
            to = target,
            "cannot lower a client thread's priority; it keeps the process's"
        );
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
        let expected = (base + 3).min(19);
        let (lowered, child, again) = std::thread::spawn(move || {
            lower_priority(3);
            let child = std::thread::spawn(own_nice).join().unwrap();
            // Lowered again (as a runtime's thread-start hook does for each thread it spawns,
            // from a lowered thread): still 3 below the process, not 6.
            let again = std::thread::spawn(|| {
                lower_priority(3);
                own_nice()
            })
            .join()
            .unwrap();
            (own_nice(), child, again)
        })
        .join()
        .unwrap();
        assert_eq!(lowered, expected);
        assert_eq!(
            child, expected,
            "a spawned thread inherits its creator's priority"
        );
        assert_eq!(
            again, expected,
            "lowering is relative to the process, not the thread"
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
