//! The round-trip time of an HTTP client's TCP connection, from the kernel (`TCP_INFO`), so the
//! agent-admission budget is charged on effective time without trusting the client's word.

use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::net::{TcpListener, TcpStream};

/// What the gateway records about each connection.
#[derive(Debug, Clone, Copy)]
pub struct ConnInfo {
    /// The connection's socket (valid while a request on it is being handled).
    pub fd: RawFd,
    /// The client's address (what the gateway's per-client limits key on).
    pub peer: SocketAddr,
}

impl ConnInfo {
    fn of(stream: &TcpStream, peer: SocketAddr) -> Self {
        Self {
            fd: stream.as_raw_fd(),
            peer,
        }
    }
}

/// The gateway's listener: each accepted socket gets `TCP_NODELAY`. An `attention` stream sends
/// its frames as separate small writes at the plan's times, stamping each release as it is
/// written; Nagle's algorithm would hold a frame back until the client acknowledged the one
/// before (up to its delayed-ACK time), so the human would see it later than stamped. (For
/// one-write replies it changes nothing measurable: `bench http` is the same with and without.)
pub struct Gateway(pub TcpListener);

impl Listener for Gateway {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        let (tcp, peer) = Listener::accept(&mut self.0).await;
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY not set");
        }
        (tcp, peer)
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Listener::local_addr(&self.0)
    }
}

impl Connected<IncomingStream<'_, Gateway>> for ConnInfo {
    fn connect_info(stream: IncomingStream<'_, Gateway>) -> Self {
        Self::of(stream.io(), *stream.remote_addr())
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
