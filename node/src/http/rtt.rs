//! The round-trip time of an HTTP client's TCP connection, from the kernel (`TCP_INFO`), so the
//! agent-admission budget is charged on effective time without trusting the client's word.

use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};

use tokio::net::TcpStream;

/// What the gateway records about each connection.
#[derive(Debug, Clone, Copy)]
pub struct ConnInfo {
    /// The connection's socket (valid while a request on it is being handled).
    pub fd: RawFd,
    /// The client's address (what the gateway's per-client limits key on).
    pub peer: SocketAddr,
}

impl ConnInfo {
    /// The record of `stream`, a connection from `peer`.
    pub fn of(stream: &TcpStream, peer: SocketAddr) -> Self {
        Self {
            fd: stream.as_raw_fd(),
            peer,
        }
    }
}

/// The kernel's smoothed RTT of the connection in milliseconds (rounded up), or 0 when the
/// kernel cannot tell.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // one getsockopt call into a properly sized, zeroed struct
pub fn rtt_ms(fd: RawFd) -> u64 {
    // SAFETY: `info` is a plain C struct, zero-initialised, and `len` is its exact size; the
    // kernel writes at most `len` bytes. A closed or foreign fd makes the call fail, not UB.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if rc == 0 {
        u64::from(info.tcpi_rtt).div_ceil(1000)
    } else {
        0
    }
}

/// Elsewhere there is no portable source: no RTT is subtracted.
#[cfg(not(target_os = "linux"))]
pub fn rtt_ms(_fd: RawFd) -> u64 {
    0
}
