//! [`Wire`]: the load generator's client for a thread of its own (blocking reads and writes).

use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::TcpStream;

use anyhow::Context;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Failure, LIMIT, Progress, Reading, authority, reply, request_bytes, typed};
use crate::client::Reply;

/// One virtual client's connection to the node at `http://host:port`. Not shared between
/// threads: each load thread makes its own.
pub struct Wire {
    /// `host:port`.
    authority: String,
    conn: RefCell<Option<Conn>>,
}

struct Conn {
    stream: TcpStream,
    reading: Reading,
}

impl Wire {
    /// A client of the node at `url` (`http://127.0.0.1:8080`); it connects on first use.
    pub fn new(url: &str) -> Self {
        Self {
            authority: authority(url),
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

    /// `POST path` with a JSON body; a 2xx reply read straight into `R`, any other reply, or
    /// one that is not an `R`, as a [`Reply`].
    pub fn post_for<T: Serialize, R: DeserializeOwned>(
        &self,
        path: &str,
        body: &T,
    ) -> anyhow::Result<Result<R, Reply>> {
        let body = serde_json::to_vec(body)?;
        self.exchange("POST", path, Some(&body), typed)
    }

    fn exchange<R>(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        read: impl FnOnce(u16, &[u8]) -> R,
    ) -> anyhow::Result<R> {
        let request = request_bytes(method, path, &self.authority, body);
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
        let (status, bytes) = conn.reading.reply();
        let result = read(status, bytes);
        *slot = conn.reading.reusable().then_some(conn);
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
            reading: Reading::new(),
        })
    }
}

/// Sends `request` on `conn` and reads the reply into it.
fn round_trip(mut conn: Conn, request: &[u8]) -> Result<Conn, Failure> {
    conn.reading.begin();
    conn.stream
        .write_all(request)
        .map_err(|e| Failure::of_io(e, &conn.reading))?;
    loop {
        let read = conn
            .stream
            .read(conn.reading.space())
            .map_err(|e| Failure::of_io(e, &conn.reading))?;
        if let Progress::Done = conn.reading.advance(read)? {
            return Ok(conn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::one_request_per_connection;
    use super::*;

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
