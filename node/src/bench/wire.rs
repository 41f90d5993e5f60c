//! The load generator's HTTP/1.1 client: one keep-alive connection per virtual client to a node
//! on loopback, each request written in one `send` and each reply read by its `content-length`.
//!
//! Why the benchmarks do not load a node through the CLI's [`crate::client::Gateway`]: before
//! each request on a pooled connection, ureq checks that the connection is alive (a
//! non-blocking read between two `ioctl`s), sets the socket's read limit again, and writes the
//! head and the body in two sends. Measured under `hco bench http`, that was about 8 system
//! calls per request where 2 do, and the node then received many requests in two segments. On a
//! machine the node shares with its load, every CPU second the load generator wastes is taken
//! from the node it measures. The CLI keeps ureq: it serves one user, over any URL.

use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{Context, bail};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::Reply;

/// The longest reply head accepted, in bytes.
const MAX_HEAD: usize = 16 * 1024;
/// The longest reply body accepted, in bytes (a node's `/metrics` stays well below).
const MAX_BODY: usize = 64 * 1024 * 1024;
/// How long a connect, a send or a read may take.
const LIMIT: Duration = Duration::from_secs(30);

/// One virtual client's connection to the node at `http://host:port`. Not shared between
/// threads: each load thread makes its own.
pub struct Wire {
    /// `host:port`.
    authority: String,
    conn: RefCell<Option<Conn>>,
}

struct Conn {
    stream: TcpStream,
    /// Reused for every reply: its first `filled` bytes are the reply read so far.
    buf: Vec<u8>,
    filled: usize,
    /// The last reply's status, where its body lies in `buf`, and whether the node keeps the
    /// connection open after it.
    status: u16,
    body: std::ops::Range<usize>,
    keep: bool,
}

impl Wire {
    /// A client of the node at `url` (`http://127.0.0.1:8080`); it connects on first use.
    pub fn new(url: &str) -> Self {
        let authority = url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        Self {
            authority,
            conn: RefCell::new(None),
        }
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> anyhow::Result<Reply> {
        self.exchange("GET", path, None, reply)
    }

    /// `POST path` with a JSON body.
    pub fn post<T: Serialize>(&self, path: &str, body: &T) -> anyhow::Result<Reply> {
        let body = serde_json::to_vec(body)?;
        self.exchange("POST", path, Some(&body), reply)
    }

    /// `POST path` with a JSON body; a 2xx reply read straight into `R` (no JSON tree in
    /// between: the load generator's own parsing is part of what the machine spends), any
    /// other reply, or one that is not an `R`, as a [`Reply`].
    pub fn post_for<T: Serialize, R: DeserializeOwned>(
        &self,
        path: &str,
        body: &T,
    ) -> anyhow::Result<Result<R, Reply>> {
        let body = serde_json::to_vec(body)?;
        self.exchange("POST", path, Some(&body), |status, bytes| {
            if (200..300).contains(&status) {
                serde_json::from_slice(bytes).map_err(|_| reply(status, bytes))
            } else {
                Err(reply(status, bytes))
            }
        })
    }

    fn exchange<R>(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        read: impl FnOnce(u16, &[u8]) -> R,
    ) -> anyhow::Result<R> {
        let mut request = format!("{method} {path} HTTP/1.1\r\nhost: {}\r\n", self.authority);
        if let Some(body) = body {
            request.push_str("content-type: application/json\r\n");
            request.push_str(&format!("content-length: {}\r\n", body.len()));
        }
        request.push_str("\r\n");
        let mut request = request.into_bytes();
        request.extend_from_slice(body.unwrap_or_default());

        let mut slot = self.conn.borrow_mut();
        let reused = slot.is_some();
        let first = match slot.take() {
            Some(conn) => conn,
            None => self.connect()?,
        };
        let conn = match round_trip(first, &request) {
            Ok(conn) => conn,
            // A kept connection the node closed while it was idle fails before any reply byte;
            // the request is sent once more on a fresh one. A fresh connection's failure stands.
            Err(Failure::Closed) if reused => {
                round_trip(self.connect()?, &request).map_err(|f| f.into_error(&self.authority))?
            }
            Err(f) => return Err(f.into_error(&self.authority)),
        };
        let result = read(conn.status, &conn.buf[conn.body.clone()]);
        // Anything past the body would be a reply to no request: the connection is not reused.
        *slot = (conn.keep && conn.filled == conn.body.end).then_some(conn);
        Ok(result)
    }

    fn connect(&self) -> anyhow::Result<Conn> {
        let stream = TcpStream::connect(&self.authority)
            .with_context(|| format!("cannot reach {}; is the node running?", self.authority))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(LIMIT))?;
        stream.set_write_timeout(Some(LIMIT))?;
        Ok(Conn {
            stream,
            buf: vec![0; 8 * 1024],
            filled: 0,
            status: 0,
            body: 0..0,
            keep: false,
        })
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
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Self::Other(e.into())
    }
}

/// A reply's status and body as a [`Reply`] (a body that is not JSON as a string).
fn reply(status: u16, body: &[u8]) -> Reply {
    let body = serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    Reply { status, body }
}

/// Sends `request` on `conn` and reads the reply into it.
fn round_trip(mut conn: Conn, request: &[u8]) -> Result<Conn, Failure> {
    // A write refused, or the end or a reset before any byte of the reply: the node had closed
    // the connection. (A read that timed out is not that: the request may be under way.)
    conn.stream.write_all(request).map_err(|e| {
        if closed(&e) {
            Failure::Closed
        } else {
            e.into()
        }
    })?;
    conn.filled = 0;
    let (status, head_len, body_len, close) = loop {
        match read_more(&mut conn) {
            Ok(0) if conn.filled == 0 => return Err(Failure::Closed),
            Err(e) if conn.filled == 0 && closed(&e) => return Err(Failure::Closed),
            Ok(0) => {
                return Err(Failure::Other(anyhow::anyhow!(
                    "the reply's head was cut short"
                )));
            }
            Ok(_) => {}
            Err(e) => return Err(e.into()),
        }
        if let Some(head) = parse_head(&conn.buf[..conn.filled]).map_err(Failure::Other)? {
            break head;
        }
        if conn.filled > MAX_HEAD {
            return Err(Failure::Other(anyhow::anyhow!(
                "a reply head longer than {MAX_HEAD} bytes"
            )));
        }
    };
    let end = head_len + body_len;
    while conn.filled < end {
        if read_more(&mut conn)? == 0 {
            return Err(Failure::Other(anyhow::anyhow!(
                "the reply's body was cut short"
            )));
        }
    }
    conn.status = status;
    conn.body = head_len..end;
    conn.keep = !close;
    Ok(conn)
}

/// Whether `e` says the peer closed the connection.
fn closed(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
    matches!(e.kind(), BrokenPipe | ConnectionAborted | ConnectionReset)
}

/// Reads what the socket has into the connection's buffer (grown when full); the bytes read
/// (0: the end).
fn read_more(conn: &mut Conn) -> std::io::Result<usize> {
    if conn.filled == conn.buf.len() {
        conn.buf.resize(2 * conn.buf.len(), 0);
    }
    let read = conn.stream.read(&mut conn.buf[conn.filled..])?;
    conn.filled += read;
    Ok(read)
}

/// The status, head length, body length and whether the node will close the connection, once
/// `buf` holds the whole head.
fn parse_head(buf: &[u8]) -> anyhow::Result<Option<(u16, usize, usize, bool)>> {
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
    Ok(Some((status, head_len, body_len, close)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_read_once_whole_and_its_length_bounded() {
        let head = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(
            parse_head(head).unwrap(),
            Some((200, head.len() - 2, 2, false))
        );
        assert_eq!(parse_head(&head[..20]).unwrap(), None);
        let close = b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(
            parse_head(close).unwrap(),
            Some((400, close.len(), 0, true))
        );
        let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
        assert!(parse_head(chunked).is_err());
        let huge = b"HTTP/1.1 200 OK\r\ncontent-length: 99999999999\r\n\r\n";
        assert!(parse_head(huge).is_err());
    }

    /// A node that answers one request per connection and then closes it without saying so.
    fn one_request_per_connection(connections: usize) -> String {
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

    #[test]
    fn a_connection_the_node_closed_is_replaced_and_the_request_sent_again() {
        let wire = Wire::new(&one_request_per_connection(3));
        for _ in 0..3 {
            let reply = wire.get("/healthz").unwrap();
            assert_eq!(reply.status, 200);
            assert!(reply.body["seen"].as_u64().unwrap() > 20);
        }
        // The node is gone: a fresh connection's failure is an error, not a retry loop.
        assert!(wire.get("/healthz").is_err());
    }
}
