//! The server's log of one stream, and its MAC. The stream endpoint stamps each release when it
//! sends it and each click when it receives it, on its own clock (milliseconds since the stream
//! started), with the click connection's round-trip time; at the end it hands the client the log
//! with a MAC under a key derived from the challenge seed. The client signs the log as its
//! answer; the verifier recomputes the MAC from the key, so nothing is stored and an auditor can
//! re-check the log once the seed is revealed.
//!
//! The answer's JSON: `{"releases":[1412,3630,…],"clicks":[{"at":2350,"rtt":1,"x":210,"y":95}],
//! "end":19400,"mac":"<64 hex digits>"}`.

use serde::{Deserialize, Serialize};

use crate::Reject;

/// Largest answer, in bytes.
pub const MAX_LOG: usize = 4096;
/// Most clicks a stream records (the endpoint refuses more).
pub const MAX_CLICKS: usize = 40;
/// Most events a plan has.
pub const MAX_EVENTS: usize = 16;

/// One click as the server received it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Click {
    /// Receipt, milliseconds after the stream started (server clock).
    pub at: u32,
    /// Round-trip time of the connection that carried it, milliseconds (kernel estimate).
    pub rtt: u32,
    /// Position, frame pixels.
    pub x: u32,
    /// Position, frame pixels.
    pub y: u32,
}

/// The server's log of a stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Log {
    /// When each event's frame was sent, milliseconds after the stream started.
    pub releases: Vec<u32>,
    /// Clicks in order of receipt.
    pub clicks: Vec<Click>,
    /// When the stream ended.
    pub end: u32,
    /// The MAC, hex.
    #[serde(default)]
    pub mac: String,
}

/// The MAC key of a plan seed.
pub fn mac_key(plan_seed: &[u8; 32]) -> [u8; 32] {
    blake3::derive_key("hco attention log mac v2", plan_seed)
}

impl Log {
    fn tag(&self, key: &[u8; 32]) -> [u8; 32] {
        let mut h = blake3::Hasher::new_keyed(key);
        h.update(b"hco attention log v2");
        h.update(&(self.releases.len() as u32).to_le_bytes());
        for r in &self.releases {
            h.update(&r.to_le_bytes());
        }
        h.update(&(self.clicks.len() as u32).to_le_bytes());
        for c in &self.clicks {
            for v in [c.at, c.rtt, c.x, c.y] {
                h.update(&v.to_le_bytes());
            }
        }
        h.update(&self.end.to_le_bytes());
        *h.finalize().as_bytes()
    }

    /// Sets the MAC under `key`.
    pub fn seal(mut self, key: &[u8; 32]) -> Self {
        self.mac = hex::encode(self.tag(key));
        self
    }

    /// The answer bytes (the log as JSON).
    pub fn to_answer(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Parses an answer and checks its MAC: `missing_answer`, `invalid_answer_format`, or
    /// `log_mac_mismatch` when the log was not sealed under `key` (edited, or forged).
    pub fn open(answer: &[u8], key: &[u8; 32]) -> Result<Self, Reject> {
        if answer.len() > MAX_LOG {
            return Err(Reject::InvalidAnswerFormat("the log is too long"));
        }
        if answer.iter().all(u8::is_ascii_whitespace) {
            return Err(Reject::MissingAnswer);
        }
        let log: Log = serde_json::from_slice(answer).map_err(|_| {
            Reject::InvalidAnswerFormat("the stream's log: {releases, clicks, end, mac}")
        })?;
        if log.releases.len() > MAX_EVENTS || log.clicks.len() > MAX_CLICKS {
            return Err(Reject::InvalidAnswerFormat("too many entries in the log"));
        }
        let mut mac = [0u8; 32];
        if hex::decode_to_slice(&log.mac, &mut mac).is_err() {
            return Err(Reject::InvalidAnswerFormat("the MAC is 64 hex digits"));
        }
        // Constant-time comparison through blake3's Hash equality.
        if blake3::Hash::from(mac) != blake3::Hash::from(log.tag(key)) {
            return Err(Reject::LogMacMismatch);
        }
        Ok(log)
    }
}
