//! Helpers for tests that run real node processes on 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn hco() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hco"))
}

/// A devnet in a temporary directory, stopped when dropped.
pub struct Devnet {
    pub dir: tempfile::TempDir,
    pub nodes: Vec<Value>,
}

impl Devnet {
    pub fn up(n: usize, window: &str, admin: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = hco();
        cmd.args([
            "devnet",
            "up",
            "--nodes",
            &n.to_string(),
            "--window",
            window,
            "--dir",
        ])
        .arg(dir.path());
        if admin {
            cmd.arg("--admin");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "devnet up: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let nodes: Vec<Value> =
            serde_json::from_slice(&std::fs::read(dir.path().join("devnet.json")).unwrap())
                .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), n);
        Self { dir, nodes }
    }

    pub fn url(&self, i: usize) -> String {
        self.nodes[i]["http"].as_str().unwrap().to_owned()
    }

    pub fn node_id(&self, i: usize) -> String {
        self.nodes[i]["node"].as_str().unwrap().to_owned()
    }

    pub fn pid(&self, i: usize) -> u32 {
        self.nodes[i]["pid"].as_u64().unwrap() as u32
    }

    pub fn config(&self, i: usize) -> PathBuf {
        PathBuf::from(self.nodes[i]["config"].as_str().unwrap())
    }

    pub fn kill(&self, i: usize, signal: &str) {
        Command::new("kill")
            .args([signal, &self.pid(i).to_string()])
            .status()
            .unwrap();
        let start = Instant::now();
        while Command::new("kill")
            .args(["-0", &self.pid(i).to_string()])
            .status()
            .unwrap()
            .success()
        {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "node {i} did not stop"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Restarts node `i` on its config (same key, ledger and ports) and records the new pid.
    pub fn restart(&mut self, i: usize) {
        let log = self.dir.path().join(format!("node{i}.log"));
        let pid = spawn_node(&self.config(i), &log);
        self.nodes[i]["pid"] = pid.into();
        wait_until(Duration::from_secs(20), || {
            get(&self.url(i), "/healthz").is_some()
        });
    }
}

impl Drop for Devnet {
    fn drop(&mut self) {
        // Keep the logs of a failed test visible.
        if std::thread::panicking() {
            for i in 0..self.nodes.len() {
                let log = std::fs::read_to_string(self.dir.path().join(format!("node{i}.log")))
                    .unwrap_or_default();
                let tail: Vec<_> = log.lines().rev().take(30).collect();
                eprintln!("--- node{i} log (last lines) ---");
                for line in tail.into_iter().rev() {
                    eprintln!("{line}");
                }
            }
        }
        let json = self.dir.path().join("devnet.json");
        std::fs::write(&json, serde_json::to_vec(&self.nodes).unwrap()).ok();
        let _ = hco()
            .args(["devnet", "down", "--dir"])
            .arg(self.dir.path())
            .output();
    }
}

pub fn spawn_node(config: &Path, log: &Path) -> u32 {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    hco()
        .args(["node", "run", "--config"])
        .arg(config)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap()
        .id()
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into()
}

/// GET returning the JSON body of a 2xx reply.
pub fn get(base: &str, path: &str) -> Option<Value> {
    let mut r = agent().get(&format!("{base}{path}")).call().ok()?;
    if r.status().as_u16() >= 300 {
        return None;
    }
    r.body_mut().read_json().ok()
}

/// POST returning the status and the JSON body (status 0 when the node cannot be reached).
pub fn post(base: &str, path: &str, body: &impl serde::Serialize) -> (u16, Value) {
    match agent().post(&format!("{base}{path}")).send_json(body) {
        Ok(mut r) => (
            r.status().as_u16(),
            r.body_mut().read_json().unwrap_or(Value::Null),
        ),
        Err(_) => (0, Value::Null),
    }
}

pub fn wait_until(limit: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < limit,
            "condition not reached in {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Sleeps until the next window has just started; returns it.
pub fn next_window(base: &str) -> u64 {
    let w = get(base, "/v1/windows/current").unwrap();
    let wait = w["end"]
        .as_u64()
        .unwrap()
        .saturating_sub(w["now"].as_u64().unwrap())
        + 150;
    std::thread::sleep(Duration::from_millis(wait));
    w["t"].as_u64().unwrap() + 1
}

/// Runs `hco` with args; returns exit success and stdout JSON.
pub fn hco_json(args: &[&str]) -> (bool, Value) {
    let out = hco().args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (out.status.success(), v)
}

/// One node started from a config written by the test (for parameters devnet does not set).
pub struct Single {
    pub dir: tempfile::TempDir,
    pub url: String,
    pub pid: u32,
}

impl Single {
    /// Starts a one-node network with `extra` appended to its config.
    pub fn start(extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let http = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = format!(
            "[node]\nkey_file = \"node.key\"\ndata_dir = \"ledger\"\n[http]\nlisten = \"127.0.0.1:{http}\"\n{extra}\n"
        );
        let path = dir.path().join("node.toml");
        std::fs::write(&path, config).unwrap();
        let pid = spawn_node(&path, &dir.path().join("node.log"));
        let url = format!("http://127.0.0.1:{http}");
        wait_until(Duration::from_secs(20), || get(&url, "/healthz").is_some());
        Self { dir, url, pid }
    }
}

impl Drop for Single {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "{}",
                std::fs::read_to_string(self.dir.path().join("node.log")).unwrap_or_default()
            );
        }
        let _ = Command::new("kill").arg(self.pid.to_string()).status();
    }
}
