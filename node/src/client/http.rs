//! A small blocking JSON client for the node's gateway.
//!
//! A gateway built with [`Gateway::client`] (the command-line client's) retries a request the
//! node refused for load — 429 `rate_limited`, 503 `overloaded`, or any 429/503 that carries a
//! `Retry-After` — after the wait the node asks for ([`Retry`]), a bounded number of times and
//! never past a deadline the caller names (a challenge's answer deadline, the window's close).
//! [`Gateway::new`] sends each request once, as the benchmarks and tools want.

use std::time::Duration;

use anyhow::Context;
use hco_oracle::{Clock, SystemClock, Timestamp};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The gateway of one node.
pub struct Gateway {
    base: String,
    agent: ureq::Agent,
    retry: Retry,
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
        // 202 with a code (`verdict_withheld`): received, no result yet.
        let pending = self.status == 202 && self.body["code"].is_string();
        if (200..300).contains(&self.status) && !pending {
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

/// When to send a request again that the gateway refused for load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Retries after the first attempt (0: none).
    pub retries: u32,
    /// The longest single wait, whatever `Retry-After` says.
    pub max_wait: Duration,
    /// The wait when `Retry-After` is missing or not a number of seconds.
    pub default_wait: Duration,
}

impl Retry {
    /// Each request once.
    pub const NONE: Self = Self {
        retries: 0,
        max_wait: Duration::ZERO,
        default_wait: Duration::ZERO,
    };

    /// The command-line client's: five retries, each after `Retry-After` (1 s without one),
    /// at most 30 s.
    pub const CLIENT: Self = Self {
        retries: 5,
        max_wait: Duration::from_secs(30),
        default_wait: Duration::from_secs(1),
    };

    /// The wait before sending again a request whose reply had `status`, error `code` and
    /// `Retry-After` header `retry_after`, after `attempt` attempts (1 after the first), at
    /// `now`; `None` when the reply stands: it is not a refusal for load, the retries are spent,
    /// or the retry would be sent at or after `deadline` (ms since the Unix epoch).
    pub fn wait(
        &self,
        status: u16,
        code: &str,
        retry_after: Option<&str>,
        attempt: u32,
        now: Timestamp,
        deadline: Option<Timestamp>,
    ) -> Option<Duration> {
        let for_load = matches!(status, 429 | 503)
            && (retry_after.is_some() || matches!(code, "rate_limited" | "overloaded"));
        if !for_load || attempt > self.retries {
            return None;
        }
        let wait = parse_retry_after(retry_after)
            .unwrap_or(self.default_wait)
            .min(self.max_wait);
        let resend_at = now.saturating_add(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX));
        match deadline {
            Some(deadline) if resend_at >= deadline => None,
            _ => Some(wait),
        }
    }
}

/// A `Retry-After` header's delay: a whole number of seconds (the gateway's form). An HTTP date
/// or anything else is `None`, for the caller's default.
pub fn parse_retry_after(value: Option<&str>) -> Option<Duration> {
    value?.trim().parse::<u64>().ok().map(Duration::from_secs)
}

impl Gateway {
    /// A client for the node at `base` (`http://127.0.0.1:8080`) that sends each request once.
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
            retry: Retry::NONE,
        }
    }

    /// The command-line client's gateway: [`Retry::CLIENT`] (each retry noted on stderr as a
    /// JSON line).
    pub fn client(base: &str) -> Self {
        Self::new(base).with_retry(Retry::CLIENT)
    }

    /// This gateway with `retry`.
    pub fn with_retry(mut self, retry: Retry) -> Self {
        self.retry = retry;
        self
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

    /// Sends a request (`call` with the URL) until its reply stands (see [`Retry::wait`]).
    fn send(
        &self,
        method: &str,
        path: &str,
        deadline: Option<Timestamp>,
        call: impl Fn(&str) -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> anyhow::Result<Reply> {
        let url = format!("{}{path}", self.base);
        let mut attempt = 0;
        loop {
            let response =
                call(&url).with_context(|| format!("cannot reach {url}; is the node running?"))?;
            attempt += 1;
            let retry_after = response
                .headers()
                .get(ureq::http::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let reply = Self::read(path, response)?;
            let code = reply.body["code"].as_str().unwrap_or("");
            let Some(wait) = self.retry.wait(
                reply.status,
                code,
                retry_after.as_deref(),
                attempt,
                SystemClock.now(),
                deadline,
            ) else {
                return Ok(reply);
            };
            eprintln!(
                "{}",
                json!({
                    "retrying": code,
                    "status": reply.status,
                    "request": format!("{method} {path}"),
                    "in_ms": wait.as_millis() as u64,
                    "retry": attempt,
                    "of": self.retry.retries,
                })
            );
            std::thread::sleep(wait);
        }
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> anyhow::Result<Reply> {
        self.get_before(path, None)
    }

    /// `GET path`, retried only while a retry would be sent before `deadline` (ms since the
    /// Unix epoch).
    pub fn get_before(&self, path: &str, deadline: Option<Timestamp>) -> anyhow::Result<Reply> {
        self.send("GET", path, deadline, |url| self.agent.get(url).call())
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
        self.post_before(path, body, None)
    }

    /// `POST path` with a JSON body, retried only while a retry would be sent before
    /// `deadline` (ms since the Unix epoch).
    pub fn post_before<T: Serialize>(
        &self,
        path: &str,
        body: &T,
        deadline: Option<Timestamp>,
    ) -> anyhow::Result<Reply> {
        self.send("POST", path, deadline, |url| {
            self.agent.post(url).send_json(body)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn retry_after_is_whole_seconds_else_none() {
        assert_eq!(parse_retry_after(Some("3")), Some(3 * S));
        assert_eq!(parse_retry_after(Some(" 0 ")), Some(Duration::ZERO));
        assert_eq!(parse_retry_after(Some("1.5")), None);
        assert_eq!(parse_retry_after(Some("-1")), None);
        assert_eq!(
            parse_retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT")),
            None
        );
        assert_eq!(parse_retry_after(Some("")), None);
        assert_eq!(parse_retry_after(None), None);
    }

    #[test]
    fn refusals_for_load_are_retried_after_retry_after_capped() {
        let r = Retry::CLIENT;
        assert_eq!(
            r.wait(429, "rate_limited", Some("2"), 1, 0, None),
            Some(2 * S)
        );
        // Missing or unparsable: the default; too long: the cap.
        assert_eq!(r.wait(503, "overloaded", None, 1, 0, None), Some(S));
        assert_eq!(
            r.wait(429, "rate_limited", Some("soon"), 1, 0, None),
            Some(S)
        );
        assert_eq!(
            r.wait(429, "rate_limited", Some("3600"), 1, 0, None),
            Some(30 * S)
        );
        // Any 429/503 the node asks to retry, whatever its code.
        assert_eq!(
            r.wait(503, "issuer_unreachable", Some("1"), 1, 0, None),
            Some(S)
        );
    }

    #[test]
    fn other_replies_and_spent_retries_stand() {
        let r = Retry::CLIENT;
        assert_eq!(r.wait(200, "", None, 1, 0, None), None);
        assert_eq!(r.wait(422, "outside_slot", Some("1"), 1, 0, None), None);
        // Quotas that last the window carry no Retry-After: not retried.
        assert_eq!(r.wait(429, "registration_quota", None, 1, 0, None), None);
        assert_eq!(r.wait(429, "too_many_sessions", None, 1, 0, None), None);
        assert_eq!(r.wait(503, "issuer_unreachable", None, 1, 0, None), None);
        // Five retries: the sixth attempt's reply stands.
        assert_eq!(r.wait(429, "rate_limited", None, 5, 0, None), Some(S));
        assert_eq!(r.wait(429, "rate_limited", None, 6, 0, None), None);
        assert_eq!(
            Retry::NONE.wait(429, "rate_limited", Some("1"), 1, 0, None),
            None
        );
    }

    #[test]
    fn no_retry_at_or_past_the_deadline() {
        let r = Retry::CLIENT;
        let now = 1_000_000;
        assert_eq!(
            r.wait(429, "rate_limited", Some("2"), 1, now, Some(now + 2001)),
            Some(2 * S)
        );
        assert_eq!(
            r.wait(429, "rate_limited", Some("2"), 1, now, Some(now + 2000)),
            None
        );
        assert_eq!(
            r.wait(429, "rate_limited", None, 1, now, Some(now + 500)),
            None
        );
        // The cap counts, not the header: a 30 s wait fits a deadline 31 s away.
        assert_eq!(
            r.wait(503, "overloaded", Some("600"), 1, now, Some(now + 31_000)),
            Some(30 * S)
        );
        // A deadline already past.
        assert_eq!(
            r.wait(429, "rate_limited", Some("0"), 1, now, Some(now)),
            None
        );
    }
}
