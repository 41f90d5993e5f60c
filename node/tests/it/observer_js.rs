//! An observer in another libp2p implementation (js-libp2p, `scripts/observer-js/`) against a
//! real node process: it connects over TCP with Noise and Yamux, answers the node's pings, stays
//! connected past the point where a peer without a ping responder is dropped (15–20 s), and
//! receives as gossip the registrations the node accepted over HTTP, with the network's message
//! ids.
//!
//! Needs Node.js 20.19 or newer and the package's dependencies (`npm ci` in
//! `scripts/observer-js/`, which `scripts/test.sh` runs; this test runs it too where they are
//! missing). Without Node.js, or when the install fails (no registry), it is skipped with a
//! warning, as `scripts/test.sh` skips the JavaScript verifier's tests.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hco_oracle::{SignedRegister, codec};
use serde_json::Value;

use crate::support::{Single, get, metric, register_agent};

/// How long the observer stays: past two of the node's pings (every 15 s) and past the
/// 10–20 s after which a peer that does not answer them was seen dropped.
const SECONDS: u64 = 35;
/// What the observer prints of each message's payload (`head`, in hex).
const HEAD_BYTES: usize = 512;

fn observer_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/observer-js")
}

/// Node.js 20.19 or newer with the observer's dependencies installed, or why not.
fn ready_observer() -> Result<(), String> {
    crate::support::node_js()?;
    let dir = observer_dir();
    if dir.join("node_modules").is_dir() {
        return Ok(());
    }
    let out = Command::new("npm")
        .args([
            "ci",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--fetch-retries=1",
            "--fetch-timeout=20000",
        ])
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("no `npm` on PATH to install the observer's dependencies ({e})"))?;
    if !out.status.success() {
        // A half-made node_modules would make the next run skip the install.
        let _ = std::fs::remove_dir_all(dir.join("node_modules"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<_> = stderr.lines().rev().take(5).collect();
        return Err(format!(
            "`npm ci` in scripts/observer-js failed (no registry?): {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    Ok(())
}

/// The node's p2p address (ending in its peer id) and its peer id, from its `node.json`.
fn node_p2p(node: &Single) -> (String, String) {
    let info: Value =
        serde_json::from_slice(&std::fs::read(node.dir.path().join("ledger/node.json")).unwrap())
            .unwrap();
    let addr = info["p2p"][0].as_str().unwrap().to_owned();
    let peer = addr.rsplit("/p2p/").next().unwrap().to_owned();
    (addr, peer)
}

/// The observer process and the JSON lines it printed so far.
struct Observer {
    child: std::process::Child,
    lines: Arc<Mutex<Vec<Value>>>,
    stderr: Arc<Mutex<String>>,
}

impl Observer {
    fn start(addr: &str) -> Self {
        let mut child = Command::new("node")
            .arg("observer.mjs")
            .arg(addr)
            .arg(SECONDS.to_string())
            .current_dir(observer_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().unwrap();
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|_| Value::String(format!("(not JSON) {line}")));
                sink.lock().unwrap().push(value);
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            sink.lock().unwrap().push_str(&text);
        });
        Self {
            child,
            lines,
            stderr,
        }
    }

    fn events(&self, kind: &str) -> Vec<Value> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l["event"] == kind)
            .cloned()
            .collect()
    }

    /// Everything it printed, for a failure's message.
    fn transcript(&self) -> String {
        let mut text: Vec<String> = self
            .lines
            .lock()
            .unwrap()
            .iter()
            .map(Value::to_string)
            .collect();
        text.push(format!("stderr: {}", self.stderr.lock().unwrap()));
        text.join("\n")
    }

    fn wait_for(&self, kind: &str, limit: Duration) -> Value {
        let start = Instant::now();
        loop {
            if let Some(event) = self.events(kind).pop() {
                return event;
            }
            assert!(
                start.elapsed() < limit,
                "no `{kind}` from the observer in {limit:?}:\n{}",
                self.transcript()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the process to end on its own (it stops after `SECONDS`).
    fn finish(&mut self, limit: Duration) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader threads take the last lines.
                std::thread::sleep(Duration::from_millis(100));
                return status;
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                panic!(
                    "the observer did not stop in {limit:?}:\n{}",
                    self.transcript()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn observer_js_stays_connected_answers_pings_and_reads_registrations() {
    if let Err(why) = ready_observer() {
        eprintln!(
            "!!!! SKIPPED: the js-libp2p observer test needs Node.js >= 20.19 with npm and the \
             packages of scripts/observer-js (npm ci there): {why} !!!!"
        );
        return;
    }
    let node = Single::start("[network]\ndevelopment = true\n");
    let (addr, peer) = node_p2p(&node);
    let mut observer = Observer::start(&addr);
    let connected = observer.wait_for("connected", Duration::from_secs(15));
    assert_eq!(connected["encryption"], "/noise", "{connected}");
    assert_eq!(connected["multiplexer"], "/yamux/1.0.0", "{connected}");
    let started = Instant::now();

    // Registrations over HTTP, early and after the point where a peer that does not answer
    // pings is dropped; the node publishes each on hco/registry-batch/1.
    std::thread::sleep(Duration::from_secs(2));
    let mut ids = Vec::new();
    for seed in 0..2 {
        ids.push(
            register_agent(&node.url, 31_000 + seed)
                .verifying_key()
                .to_bytes(),
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    std::thread::sleep(Duration::from_secs(22).saturating_sub(started.elapsed()));
    for seed in 2..4 {
        ids.push(
            register_agent(&node.url, 31_000 + seed)
                .verifying_key()
                .to_bytes(),
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    // The node counts it among its peers near the end.
    std::thread::sleep(Duration::from_secs(30).saturating_sub(started.elapsed()));
    let peers = get(&node.url, "/healthz").unwrap()["peers"].clone();

    let status = observer.finish(Duration::from_secs(15));
    let transcript = observer.transcript();
    assert!(
        status.success(),
        "observer exited with {status}:\n{transcript}"
    );
    assert_eq!(peers, 1, "the node's peers 30 s in:\n{transcript}");
    let summary = observer.wait_for("summary", Duration::from_secs(1));
    eprintln!("observer summary: {summary}");

    // Stayed connected the whole time, answering the node's pings.
    assert!(summary["error"].is_null(), "{transcript}");
    assert_eq!(summary["disconnects"], 0, "{transcript}");
    assert!(observer.events("disconnected").is_empty(), "{transcript}");
    assert_eq!(summary["connected_at_end"], true, "{transcript}");
    let connected_ms = summary["connected_ms"].as_u64().unwrap();
    assert!(
        connected_ms >= (SECONDS - 2) * 1000,
        "connected {connected_ms} ms of {SECONDS} s:\n{transcript}"
    );
    // The node pings at once and every 15 s after, all on one stream: at 0, 15 and 30 s.
    let pongs = summary["pings_answered"].as_u64().unwrap();
    assert!(pongs >= 3, "{pongs} pings answered:\n{transcript}");
    assert_eq!(metric(&node.metrics_url, "hco_peers_banned_total"), 0.0);
    // What identify said: a member's strings.
    let agent = summary["identify"]["agent_version"].as_str().unwrap_or("");
    assert!(agent.contains(" params="), "{transcript}");
    // The node subscribed to every topic, and the observer saw it.
    let node_topics: Vec<&str> = summary["node_topics"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for topic in [
        "hco/registry/1",
        "hco/registry-batch/1",
        "hco/acceptance/1",
        "hco/summary/1",
        "hco/reveal/2",
        "hco/passkey/1",
        "hco/evidence/1",
        "hco/witness/2",
        "hco/link/3",
    ] {
        assert!(node_topics.contains(&topic), "{topic}:\n{transcript}");
    }

    // Every registration arrived as gossip, signed by the node, under the network's message id
    // (the lower-case hex of BLAKE3 of the payload).
    let messages = observer.events("message");
    let mut heard = Vec::new();
    for m in &messages {
        assert_eq!(m["from"], peer.as_str(), "{m}");
        let len = m["len"].as_u64().unwrap() as usize;
        let data = hex::decode(m["head"].as_str().unwrap()).unwrap();
        if len > HEAD_BYTES {
            continue;
        }
        assert_eq!(data.len(), len, "{m}");
        assert_eq!(
            m["id"].as_str().unwrap(),
            blake3::hash(&data).to_hex().as_str(),
            "{m}"
        );
        if m["topic"] == "hco/registry-batch/1" {
            let regs: Vec<SignedRegister> = codec::decode(&data, 1 << 16).unwrap();
            heard.extend(
                regs.iter()
                    .map(|r| (r.body.id.0, m["at_ms"].as_u64().unwrap())),
            );
        }
    }
    for (i, id) in ids.iter().enumerate() {
        assert!(
            heard.iter().any(|(h, _)| h == id),
            "registration {i} never reached the observer:\n{transcript}"
        );
    }
    // The late ones came after a non-answering peer would have been dropped.
    assert!(heard.iter().any(|(_, at)| *at >= 20_000), "{transcript}");
}
