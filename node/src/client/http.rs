//! A small blocking JSON client for the node's gateway.

use std::time::Duration;

use anyhow::Context;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The gateway of one node.
pub struct Gateway {
    base: String,
    agent: ureq::Agent,
}

/// A reply: the HTTP status and the JSON body.
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Body.
    pub body: Value,
}

impl Reply {
    /// The body as `T` if the status is 2xx, else the `{code, message}` error.
    pub fn into_result<T: DeserializeOwned>(self) -> Result<T, (String, String)> {
        if (200..300).contains(&self.status) {
            serde_json::from_value(self.body).map_err(|e| ("malformed".into(), e.to_string()))
        } else {
            let code = self.body["code"]
                .as_str()
                .unwrap_or("http_error")
                .to_owned();
            let message = self.body["message"].as_str().unwrap_or("").to_owned();
            Err((code, message))
        }
    }
}

impl Gateway {
    /// A client for the node at `base` (`http://127.0.0.1:8080`).
    pub fn new(base: &str) -> Self {
        // A limit per phase, not `timeout_global`: with a global limit ureq resolves every
        // request's address on a new thread (so the resolution can time out), even an IP
        // literal on a pooled connection; under `hco bench http` those thread starts and their
        // stacks' mappings were a large part of the load generator's CPU. Without a resolve
        // limit the address is resolved on the calling thread.
        let limit = Some(Duration::from_secs(30));
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(limit)
            .timeout_send_request(limit)
            .timeout_send_body(limit)
            .timeout_recv_response(limit)
            .timeout_recv_body(limit)
            .build()
            .into();
        Self {
            base: base.trim_end_matches('/').to_owned(),
            agent,
        }
    }

    fn read(path: &str, mut response: ureq::http::Response<ureq::Body>) -> anyhow::Result<Reply> {
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .with_context(|| format!("reading the reply to {path}"))?;
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok(Reply { status, body })
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> anyhow::Result<Reply> {
        let url = format!("{}{path}", self.base);
        let response = self
            .agent
            .get(&url)
            .call()
            .with_context(|| format!("cannot reach {url}; is the node running?"))?;
        Self::read(path, response)
    }

    /// `GET path` as a stream of lines (server-sent events), with the HTTP status.
    pub fn get_lines(&self, path: &str) -> anyhow::Result<(u16, Box<dyn std::io::BufRead + Send>)> {
        let url = format!("{}{path}", self.base);
        let response = self
            .agent
            .get(&url)
            .call()
            .with_context(|| format!("cannot reach {url}; is the node running?"))?;
        let status = response.status().as_u16();
        let reader = response.into_body().into_reader();
        Ok((status, Box::new(std::io::BufReader::new(reader))))
    }

    /// `POST path` with a JSON body.
    pub fn post<T: Serialize>(&self, path: &str, body: &T) -> anyhow::Result<Reply> {
        let url = format!("{}{path}", self.base);
        let response = self
            .agent
            .post(&url)
            .send_json(body)
            .with_context(|| format!("cannot reach {url}; is the node running?"))?;
        Self::read(path, response)
    }
}
