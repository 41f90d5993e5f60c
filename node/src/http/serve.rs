//! The gateway's accept loop and connections: HTTP/1.1 over hyper, each connection registered
//! in [`Conns`] (its phase, the per-address cap, the budget) and closed at its timeouts or when
//! shed. The loop never waits on a client: a connection over a cap is answered and closed at
//! once, and room in a full budget is made by telling idle connections to close.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::ConnectInfo;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::conns::{Busy, Conn, ConnLimits, ConnMetrics, Conns, Reason, Registered};
use super::fds;
use super::rtt::ConnInfo;
use crate::config::HttpSection;

/// Serves `app` on `listener` until `stop`, then lets requests in progress finish (for at most
/// the request timeout).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    config: &HttpSection,
    metrics: ConnMetrics,
    stop: CancellationToken,
) -> io::Result<()> {
    let conns = Conns::new(limits(config), metrics);
    tokio::spawn(conns.clone().run_sweeper(stop.clone()));
    let refusals = Refusals::new(config.limits.per_ip_connections);
    let mut warned = None::<Instant>;
    loop {
        let accepted = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                accept_failed(&e, &conns, &mut warned).await;
                continue;
            }
        };
        match conns.admit(peer.ip()) {
            Ok(registered) => {
                tokio::spawn(connection(
                    tcp,
                    peer,
                    registered,
                    app.clone(),
                    config.request_timeout,
                ));
            }
            Err(reason) => refusals.refuse(tcp, reason),
        }
    }
    conns.close_all();
    let deadline = Instant::now() + config.request_timeout;
    while conns.open() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// The registry's limits for `config`, with the budget under this process's descriptor limit
/// (raised to its hard limit first).
pub fn limits(config: &HttpSection) -> ConnLimits {
    let l = &config.limits;
    let nofile = fds::raise_nofile();
    let budget = fds::budget(nofile, l.max_connections, l.reserved_fds);
    tracing::info!(
        budget,
        nofile = nofile.map_or(-1, |n| n as i64),
        max_connections = l.max_connections,
        reserved_fds = l.reserved_fds,
        per_ip = l.per_ip_connections,
        "HTTP connection budget"
    );
    ConnLimits {
        per_ip: l.per_ip_connections,
        budget,
        header_read_timeout: config.header_read_timeout,
        keep_alive_timeout: config.keep_alive_timeout,
        trusted_proxies: l.trusted_proxies.clone(),
    }
}

/// An accept that failed. A connection reset before it was accepted is the client's affair;
/// out of descriptors, room is made (and the closes given a moment); anything else is retried
/// after a moment, so that a lasting error does not spin the loop.
async fn accept_failed(e: &io::Error, conns: &Conns, warned: &mut Option<Instant>) {
    use io::ErrorKind::{ConnectionAborted, ConnectionReset};
    if matches!(e.kind(), ConnectionAborted | ConnectionReset) {
        return;
    }
    let shed = match e.raw_os_error() {
        Some(libc::EMFILE | libc::ENFILE) => conns.shed_for_descriptors(),
        _ => 0,
    };
    if warned.is_none_or(|at| at.elapsed() > Duration::from_secs(10)) {
        *warned = Some(Instant::now());
        tracing::warn!(error = %e, shed, "cannot accept a connection (out of descriptors: raise the limit or lower http.limits.max_connections)");
    }
    tokio::time::sleep(Duration::from_millis(5)).await;
}

/// The answers written to a refused connection before it is closed.
struct Refusals {
    per_ip: Vec<u8>,
    full: Vec<u8>,
}

impl Refusals {
    fn new(per_ip: u32) -> Self {
        let reply = |status: &str, code: &str, message: String| {
            let body =
                serde_json::json!({ "code": code, "message": message, "retry_after_ms": 1000 });
            let body = body.to_string();
            format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 retry-after: 1\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()
        };
        Self {
            per_ip: reply(
                "429 Too Many Requests",
                "rate_limited",
                format!("this address already has {per_ip} connections open; reuse or close one"),
            ),
            full: reply(
                "503 Service Unavailable",
                "overloaded",
                "the gateway has as many connections as it may; retry shortly".into(),
            ),
        }
    }

    /// Answers without waiting (what the socket takes at once) and closes. The request already
    /// received is read first, so that the close is a FIN after the answer, not a reset.
    fn refuse(&self, tcp: TcpStream, reason: Reason) {
        let mut sink = [0u8; 4096];
        while matches!(tcp.try_read(&mut sink), Ok(n) if n == sink.len()) {}
        let reply = if reason == Reason::PerIpLimit {
            &self.per_ip
        } else {
            &self.full
        };
        let _ = tcp.try_write(reply);
    }
}

/// Serves one connection until it ends or the registry closes it.
async fn connection(
    tcp: TcpStream,
    peer: SocketAddr,
    registered: Registered,
    app: Router,
    grace: Duration,
) {
    // Each socket gets `TCP_NODELAY`: an `attention` stream sends its frames as separate small
    // writes at the plan's times, stamping each release as it is written; Nagle's algorithm
    // would hold a frame back until the client acknowledged the one before.
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::debug!(error = %e, "TCP_NODELAY not set");
    }
    let info = ConnInfo::of(&tcp, peer);
    let conn = registered.conn.clone();
    let io = TokioIo::new(Tracked {
        tcp,
        conn: conn.clone(),
    });
    let on = conn.clone();
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(info));
        let busy = on.begin();
        let call = app.clone().oneshot(request.map(Body::new));
        async move {
            let response = call.await?;
            Ok::<_, Infallible>(response.map(|body| Held { body, _busy: busy }))
        }
    });
    let mut http = pin!(
        hyper::server::conn::http1::Builder::new()
            .keep_alive(true)
            .header_read_timeout(None)
            .serve_connection(io, service)
    );
    tokio::select! {
        _ = http.as_mut() => return,
        reason = conn.closing() => {
            tracing::trace!(?reason, %peer, "closing a connection");
        }
    }
    // A request that began as the connection was being closed is finished first.
    if conn.busy() {
        http.as_mut().graceful_shutdown();
        let _ = tokio::time::timeout(grace, http).await;
    }
    drop(registered);
}

/// A connection's socket, reporting arriving bytes to its [`Conn`].
struct Tracked {
    tcp: TcpStream,
    conn: Arc<Conn>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.tcp).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.conn.on_read();
        }
        poll
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, b)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}

/// A response body that keeps its connection busy until it is sent (or dropped).
struct Held {
    body: Body,
    _busy: Busy,
}

impl HttpBody for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
