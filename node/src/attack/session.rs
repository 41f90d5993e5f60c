//! One issued challenge as an attacker holds it: the identity key, the signed envelope and
//! prompt, the family's timing rules, and the gateway to talk to.

use std::io::BufRead;
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use hco_oracle::Response;
use serde_json::Value;

use crate::api::{ChallengeView, PromptView, VerdictView};
use crate::client::Gateway;
use crate::client::http::Reply;

/// The final verdict on an attacker's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The node accepted the answer.
    Accepted,
    /// The node refused it, with the stable reason code.
    Rejected(String),
}

impl Verdict {
    /// Whether the answer was accepted.
    pub fn accepted(&self) -> bool {
        matches!(self, Verdict::Accepted)
    }
}

/// What the network tells everyone about a family's timing (from `GET /v1/params`).
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// The answer deadline after issue.
    pub deadline: Duration,
    /// Answers sooner than this after issue are refused as `too_fast`.
    pub min_solve: Duration,
}

/// An issued challenge and what an attacker needs to play it.
pub struct Session<'a> {
    /// The node's gateway.
    pub gateway: &'a Gateway,
    /// The identity's signing key.
    pub key: &'a SigningKey,
    /// The challenge as issued.
    pub view: ChallengeView,
    /// The family's timing rules.
    pub timing: Timing,
    /// When the issue reply arrived.
    pub issued: Instant,
}

impl Session<'_> {
    /// The prompt.
    pub fn prompt(&self) -> &PromptView {
        &self.view.prompt
    }

    /// The prompt's JSON payload.
    pub fn data(&self) -> &Value {
        &self.view.prompt.data
    }

    /// Sleeps until a little after the family's minimum solve time since issue, as a careful
    /// script does so as not to be refused as `too_fast`. `margin` is added on top.
    pub fn wait_min_solve(&self, margin: Duration) {
        let due = self.timing.min_solve + margin;
        if let Some(rest) = due.checked_sub(self.issued.elapsed()) {
            std::thread::sleep(rest);
        }
    }

    /// Time left before the deadline (by the local clock, from the issue reply).
    pub fn remaining(&self) -> Duration {
        self.timing.deadline.saturating_sub(self.issued.elapsed())
    }

    /// Signs `answer` with the identity key and sends it; the node's verdict.
    pub fn respond(&self, answer: &[u8]) -> anyhow::Result<Verdict> {
        let response = Response::new(self.key, self.view.challenge.clone(), answer.to_vec());
        Ok(
            match self
                .gateway
                .post("/v1/responses", &response)?
                .into_result::<VerdictView>()
            {
                Ok(_) => Verdict::Accepted,
                Err((code, _)) => Verdict::Rejected(code),
            },
        )
    }

    /// Answers stages `1..=k` of a multi-stage challenge with `partial` (signed as
    /// `stage {k}:{partial}`, `POST /v1/challenges/stage`): the next stage's prompt, or the
    /// rejection code (a wrong partial answer is final).
    pub fn stage(&self, k: usize, partial: &[u8]) -> anyhow::Result<Result<PromptView, String>> {
        let answer = [format!("stage {k}:").as_bytes(), partial].concat();
        let response = Response::new(self.key, self.view.challenge.clone(), answer);
        let reply = self.gateway.post("/v1/challenges/stage", &response)?;
        Ok(reply
            .into_result::<crate::api::StageView>()
            .map(|v| v.prompt)
            .map_err(|(code, _)| code))
    }

    /// `POST path` with a JSON body, for the endpoints a family's page uses.
    pub fn post<T: serde::Serialize>(&self, path: &str, body: &T) -> anyhow::Result<Reply> {
        self.gateway.post(path, body)
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> anyhow::Result<Reply> {
        self.gateway.get(path)
    }

    /// `GET path` read as server-sent events: `(event, data)` pairs, as they arrive.
    pub fn sse(&self, path: &str) -> anyhow::Result<impl Iterator<Item = (String, String)>> {
        let (status, reader) = self.gateway.get_lines(path)?;
        anyhow::ensure!(status == 200, "{path} answered {status}");
        let mut lines = reader.lines();
        Ok(std::iter::from_fn(move || {
            let (mut event, mut data) = (String::from("message"), String::new());
            loop {
                let line = lines.next()?.ok()?;
                if line.is_empty() {
                    if !data.is_empty() {
                        return Some((event, data));
                    }
                } else if let Some(v) = line.strip_prefix("event:") {
                    event = v.trim().to_owned();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
        }))
    }
}
