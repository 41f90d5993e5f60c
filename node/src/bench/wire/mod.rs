//! The load generator's HTTP/1.1 clients: one keep-alive connection per virtual client to a node
//! on loopback, each request written in one `send` and each reply read by its `content-length`.
//! [`Wire`] blocks its thread; [`TaskWire`] is the same client for a task of a tokio runtime,
//! so that many virtual clients share a few threads. Both are built on the I/O-free pieces here:
//! the request's bytes ([`request_bytes`]) and the reply's reader ([`Reading`]).
//!
//! Why the benchmarks do not load a node through the CLI's [`crate::client::Gateway`]: before
//! each request on a pooled connection, ureq checks that the connection is alive (a
//! non-blocking read between two `ioctl`s), sets the socket's read limit again, and writes the
//! head and the body in two sends. Measured under `hco bench http`, that was about 8 system
//! calls per request where 2 do, and the node then received many requests in two segments. On a
//! machine the node shares with its load, every CPU second the load generator wastes is taken
//! from the node it measures. The CLI keeps ureq: it serves one user, over any URL.
//!
//! Why tasks for the measured load: with a thread per virtual client, each reply woke a
//! sleeping thread, and the node paid for that wake-up inside its own send (the loopback path
//! delivers on the sender's core). Under `hco bench http` with 64 clients, the same load from
//! tasks on two threads cost the load generator about a fifth and the node a few percent less
//! CPU per acceptance (see "Serving load" in docs/benchmarks.md).

mod blocking;
mod tasks;

use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

pub use blocking::Wire;
pub use tasks::TaskWire;

use crate::client::Reply;

/// The longest reply head accepted, in bytes.
const MAX_HEAD: usize = 16 * 1024;
/// The longest reply body accepted, in bytes (a node's `/metrics` stays well below).
const MAX_BODY: usize = 64 * 1024 * 1024;
/// How long a connect, a send or a read may take.
const LIMIT: Duration = Duration::from_secs(30);

/// `host:port` of `http://host:port`.
fn authority(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned()
}

/// A request's bytes: head and body, to be written in one send.
fn request_bytes(method: &str, path: &str, authority: &str, body: Option<&[u8]>) -> Vec<u8> {
    let mut request = format!("{method} {path} HTTP/1.1\r\nhost: {authority}\r\n");
    if let Some(body) = body {
        request.push_str("content-type: application/json\r\n");
        request.push_str(&format!("content-length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    let mut request = request.into_bytes();
    request.extend_from_slice(body.unwrap_or_default());
    request
}

/// A reply's head, once whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Head {
    status: u16,
    head_len: usize,
    body_len: usize,
    /// The node closes the connection after this reply.
    close: bool,
}

/// A reply being read on one connection: the bytes so far, in a buffer reused for every reply.
/// The clients read from their socket into [`Reading::space`] and report how much they read
/// to [`Reading::advance`].
struct Reading {
    buf: Vec<u8>,
    filled: usize,
    head: Option<Head>,
}

/// What the bytes read so far make.
enum Progress {
    /// Read more.
    More,
    /// The whole reply is in.
    Done,
}

impl Reading {
    fn new() -> Self {
        Self {
            buf: vec![0; 8 * 1024],
            filled: 0,
            head: None,
        }
    }

    /// Starts reading the next reply.
    fn begin(&mut self) {
        self.filled = 0;
        self.head = None;
    }

    /// Whether no byte of the reply came yet.
    fn nothing_yet(&self) -> bool {
        self.filled == 0
    }

    /// Where the next read goes (the buffer grows when full).
    fn space(&mut self) -> &mut [u8] {
        if self.filled == self.buf.len() {
            self.buf.resize(2 * self.buf.len(), 0);
        }
        &mut self.buf[self.filled..]
    }

    /// Takes `read` more bytes (0: the end of the stream).
    fn advance(&mut self, read: usize) -> Result<Progress, Failure> {
        if read == 0 {
            return Err(if self.nothing_yet() {
                Failure::Closed
            } else {
                Failure::Other(anyhow::anyhow!("the reply was cut short"))
            });
        }
        self.filled += read;
        if self.head.is_none() {
            match parse_head(&self.buf[..self.filled]).map_err(Failure::Other)? {
                Some(head) => self.head = Some(head),
                None if self.filled > MAX_HEAD => {
                    return Err(Failure::Other(anyhow::anyhow!(
                        "a reply head longer than {MAX_HEAD} bytes"
                    )));
                }
                None => return Ok(Progress::More),
            }
        }
        match self.head {
            Some(h) if self.filled >= h.head_len + h.body_len => Ok(Progress::Done),
            _ => Ok(Progress::More),
        }
    }

    /// The whole reply's status and body (after [`Progress::Done`]).
    fn reply(&self) -> (u16, &[u8]) {
        match self.head {
            Some(h) => (h.status, &self.buf[h.head_len..h.head_len + h.body_len]),
            None => (0, &[]),
        }
    }

    /// Whether the connection may carry the next request: the node keeps it open and sent
    /// nothing past the reply (anything more would answer no request).
    fn reusable(&self) -> bool {
        self.head
            .is_some_and(|h| !h.close && self.filled == h.head_len + h.body_len)
    }
}

/// Why a round trip failed.
enum Failure {
    /// The connection was closed before any byte of the reply came back.
    Closed,
    /// Anything else.
    Other(anyhow::Error),
}

impl Failure {
    fn into_error(self, authority: &str) -> anyhow::Error {
        match self {
            Self::Closed => anyhow::anyhow!("the node at {authority} closed the connection"),
            Self::Other(e) => e,
        }
    }

    /// A failed write or read: the node had closed the connection when nothing of the reply
    /// came yet and the socket says so (end, reset, broken pipe). A read that timed out is not
    /// that: the request may be under way.
    fn of_io(e: std::io::Error, reading: &Reading) -> Self {
        use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
        if reading.nothing_yet()
            && matches!(e.kind(), BrokenPipe | ConnectionAborted | ConnectionReset)
        {
            Self::Closed
        } else {
            Self::Other(e.into())
        }
    }
}

/// A reply's status and body as a [`Reply`] (a body that is not JSON as a string).
fn reply(status: u16, body: &[u8]) -> Reply {
    let body = serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    Reply { status, body }
}

/// A 2xx reply read straight into `R` (no JSON tree in between: the load generator's own
/// parsing is part of what the machine spends); any other reply, or one that is not an `R`, as
/// a [`Reply`].
fn typed<R: serde::de::DeserializeOwned>(status: u16, body: &[u8]) -> Result<R, Reply> {
    if (200..300).contains(&status) {
        serde_json::from_slice(body).map_err(|_| reply(status, body))
    } else {
        Err(reply(status, body))
    }
}

/// The reply's head, once `buf` holds it whole.
fn parse_head(buf: &[u8]) -> anyhow::Result<Option<Head>> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut reply = httparse::Response::new(&mut headers);
    let httparse::Status::Complete(head_len) = reply.parse(buf)? else {
        return Ok(None);
    };
    let status = reply.code.context("a reply without a status")?;
    let mut body_len = None;
    let mut close = false;
    for h in reply.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            body_len = Some(std::str::from_utf8(h.value)?.trim().parse::<usize>()?);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            bail!("a chunked reply (the load client reads replies by their length)");
        } else if h.name.eq_ignore_ascii_case("connection") {
            close = h.value.eq_ignore_ascii_case(b"close");
        }
    }
    let body_len = body_len.unwrap_or(0);
    if body_len > MAX_BODY {
        bail!("a reply body of {body_len} bytes");
    }
    Ok(Some(Head {
        status,
        head_len,
        body_len,
        close,
    }))
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    #[test]
    fn a_head_is_read_once_whole_and_its_length_bounded() {
        let head = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
        let whole = Head {
            status: 200,
            head_len: head.len() - 2,
            body_len: 2,
            close: false,
        };
        assert_eq!(parse_head(head).unwrap(), Some(whole));
        assert_eq!(parse_head(&head[..20]).unwrap(), None);
        let close = b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\ncontent-length: 0\r\n\r\n";
        let closing = Head {
            status: 400,
            head_len: close.len(),
            body_len: 0,
            close: true,
        };
        assert_eq!(parse_head(close).unwrap(), Some(closing));
        let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
        assert!(parse_head(chunked).is_err());
        let huge = b"HTTP/1.1 200 OK\r\ncontent-length: 99999999999\r\n\r\n";
        assert!(parse_head(huge).is_err());
    }

    /// Feeds `bytes` to a reader `step` bytes at a time.
    fn feed(reading: &mut Reading, bytes: &[u8], step: usize) -> Result<Progress, Failure> {
        let mut progress = Progress::More;
        for part in bytes.chunks(step) {
            reading.space()[..part.len()].copy_from_slice(part);
            progress = reading.advance(part.len())?;
        }
        Ok(progress)
    }

    #[test]
    fn a_reply_is_whole_once_its_body_is_in_whatever_the_reads() {
        let bytes = b"HTTP/1.1 201 Created\r\ncontent-length: 5\r\n\r\nhello";
        for step in [1, 7, bytes.len()] {
            let mut reading = Reading::new();
            reading.begin();
            assert!(matches!(
                feed(&mut reading, &bytes[..bytes.len() - 1], step),
                Ok(Progress::More)
            ));
            assert!(matches!(
                feed(&mut reading, &bytes[bytes.len() - 1..], step),
                Ok(Progress::Done)
            ));
            assert_eq!(reading.reply(), (201, &b"hello"[..]));
            assert!(reading.reusable());
        }
        // More than the reply: the connection answers no further request.
        let mut reading = Reading::new();
        reading.begin();
        assert!(matches!(
            feed(
                &mut reading,
                b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\nX",
                64
            ),
            Ok(Progress::Done)
        ));
        assert!(!reading.reusable());
    }

    #[test]
    fn an_end_before_any_byte_is_a_closed_connection_and_after_some_an_error() {
        let mut reading = Reading::new();
        reading.begin();
        assert!(matches!(reading.advance(0), Err(Failure::Closed)));
        assert!(matches!(
            feed(&mut reading, b"HTTP/1.1 200", 64),
            Ok(Progress::More)
        ));
        assert!(matches!(reading.advance(0), Err(Failure::Other(_))));
        // A head that never ends is refused once past the limit.
        let mut reading = Reading::new();
        reading.begin();
        let endless = format!("HTTP/1.1 200 OK\r\nx: {}\r\n", "a".repeat(MAX_HEAD));
        assert!(matches!(
            feed(&mut reading, endless.as_bytes(), 4096),
            Err(Failure::Other(_))
        ));
    }

    /// A node that answers one request per connection and then closes it without saying so;
    /// its URL.
    pub(super) fn one_request_per_connection(connections: usize) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming().take(connections) {
                let mut stream = stream.unwrap();
                let mut buf = [0u8; 4096];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = stream.read(&mut buf).unwrap();
                    got.extend_from_slice(&buf[..n]);
                }
                let body = format!("{{\"seen\":{}}}", got.len());
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
                stream.write_all(reply.as_bytes()).unwrap();
            }
        });
        url
    }
}
