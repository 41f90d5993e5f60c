//! [`TaskWire`]: the load generator's client for a task of a tokio runtime, so that many virtual
//! clients share a few threads.

use anyhow::Context;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

use super::{Failure, LIMIT, Progress, Reading, authority, request_bytes, typed};
use crate::client::Reply;

/// One virtual client's connection to the node at `http://host:port`, owned by one task.
pub struct TaskWire {
    /// `host:port`.
    authority: String,
    conn: Option<Conn>,
}

struct Conn {
    stream: TcpStream,
    reading: Reading,
}

impl TaskWire {
    /// A client of the node at `url` (`http://127.0.0.1:8080`); it connects on first use.
    pub fn new(url: &str) -> Self {
        Self {
            authority: authority(url),
            conn: None,
        }
    }

    /// `POST path` with a JSON body; a 2xx reply read straight into `R`, any other reply, or
    /// one that is not an `R`, as a [`Reply`].
    pub async fn post_for<T: Serialize, R: DeserializeOwned>(
        &mut self,
        path: &str,
        body: &T,
    ) -> anyhow::Result<Result<R, Reply>> {
        let body = serde_json::to_vec(body)?;
        let request = request_bytes("POST", path, &self.authority, Some(&body));
        let reused = self.conn.is_some();
        let first = match self.conn.take() {
            Some(conn) => conn,
            None => self.connect().await?,
        };
        let conn = match round_trip(first, &request).await {
            Ok(conn) => conn,
            // As the blocking client: a kept connection closed while idle is replaced once.
            Err(Failure::Closed) if reused => round_trip(self.connect().await?, &request)
                .await
                .map_err(|f| f.into_error(&self.authority))?,
            Err(f) => return Err(f.into_error(&self.authority)),
        };
        let (status, bytes) = conn.reading.reply();
        let result = typed(status, bytes);
        self.conn = conn.reading.reusable().then_some(conn);
        Ok(result)
    }

    async fn connect(&self) -> anyhow::Result<Conn> {
        let stream = timeout(LIMIT, TcpStream::connect(&self.authority))
            .await
            .context("connecting timed out")?
            .with_context(|| format!("cannot reach {}; is the node running?", self.authority))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            reading: Reading::new(),
        })
    }
}

/// Sends `request` on `conn` and reads the reply into it, each send and read within [`LIMIT`].
async fn round_trip(mut conn: Conn, request: &[u8]) -> Result<Conn, Failure> {
    let timed_out = || Failure::Other(anyhow::anyhow!("no reply within {LIMIT:?}"));
    conn.reading.begin();
    timeout(LIMIT, conn.stream.write_all(request))
        .await
        .map_err(|_| timed_out())?
        .map_err(|e| Failure::of_io(e, &conn.reading))?;
    loop {
        let read = timeout(LIMIT, conn.stream.read(conn.reading.space()))
            .await
            .map_err(|_| timed_out())?
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

    #[tokio::test]
    async fn a_connection_the_node_closed_is_replaced_and_the_request_sent_again() {
        let mut wire = TaskWire::new(&one_request_per_connection(3));
        for _ in 0..3 {
            let Ok(Ok(reply)) = wire
                .post_for::<_, serde_json::Value>("/v1/any", &serde_json::json!({"a": 1}))
                .await
            else {
                panic!("no 2xx reply");
            };
            assert!(reply["seen"].as_u64().unwrap() > 20);
        }
        // The node is gone: a fresh connection's failure is an error, not a retry loop.
        assert!(
            wire.post_for::<_, serde_json::Value>("/v1/any", &1)
                .await
                .is_err()
        );
    }
}
