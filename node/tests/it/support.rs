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
        Self::up_with(n, window, admin, &[])
    }

    /// [`Devnet::up`] with extra arguments to `hco devnet up`.
    pub fn up_with(n: usize, window: &str, admin: bool, extra: &[&str]) -> Self {
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
        cmd.args(extra);
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

    /// Node `i`'s metrics listener (`GET /metrics` there; its gateway does not serve them).
    pub fn metrics_url(&self, i: usize) -> String {
        self.nodes[i]["metrics"].as_str().unwrap().to_owned()
    }

    pub fn node_id(&self, i: usize) -> String {
        self.nodes[i]["node"].as_str().unwrap().to_owned()
    }

    pub fn pid(&self, i: usize) -> u32 {
        self.nodes[i]["pid"].as_u64().unwrap() as u32
    }

    /// What node `i` has logged so far.
    #[cfg_attr(not(feature = "unsafe-byzantine"), allow(dead_code))]
    pub fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("node{i}.log"))).unwrap_or_default()
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

/// What a node's metrics listener at `base` serves at `/metrics` (Prometheus text).
pub fn metrics_text(base: &str) -> String {
    agent()
        .get(&format!("{base}/metrics"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap()
}

/// The sum of a node's Prometheus series named `name` (every label set), from its metrics
/// listener at `base`.
pub fn metric(base: &str, name: &str) -> f64 {
    metrics_text(base)
        .lines()
        .filter(|l| l.starts_with(name))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
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

/// Runs `hco` with args; returns exit success and the last JSON line it printed.
pub fn hco_json(args: &[&str]) -> (bool, Value) {
    let out = hco().args(args).output().unwrap();
    if !out.status.success() {
        // What the command said, for the failing test's report.
        eprintln!(
            "hco {} exited with {}: {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.trim().lines().last().unwrap_or("");
    let v = serde_json::from_str(last).unwrap_or(Value::Null);
    (out.status.success(), v)
}

/// One node started from a config written by the test (for parameters devnet does not set).
pub struct Single {
    pub dir: tempfile::TempDir,
    /// The client gateway.
    pub url: String,
    /// The metrics listener (`GET /metrics` there).
    pub metrics_url: String,
    pub pid: u32,
}

impl Single {
    /// Starts a one-node network with `extra` appended to its config (after its `[http]`
    /// section's `listen`, so bare keys there are gateway settings).
    pub fn start(extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        // The node binds ports the kernel picks and says which in `ledger/node.json`: a port
        // chosen here and released could be taken by another test's connection meanwhile.
        let config = format!(
            "[node]\nkey_file = \"node.key\"\ndata_dir = \"ledger\"\n\
             [metrics]\nlisten = \"127.0.0.1:0\"\n\
             [http]\nlisten = \"127.0.0.1:0\"\n{extra}\n"
        );
        let path = dir.path().join("node.toml");
        std::fs::write(&path, config).unwrap();
        let pid = spawn_node(&path, &dir.path().join("node.log"));
        let start = std::time::Instant::now();
        let give_up = |what: &str| -> ! {
            let log = std::fs::read_to_string(dir.path().join("node.log")).unwrap_or_default();
            panic!("the node {what} in 20 s; its log:\n{log}");
        };
        let announced = loop {
            let read = std::fs::read(dir.path().join("ledger/node.json")).ok();
            if let Some(v) = read.and_then(|b| serde_json::from_slice::<Value>(&b).ok()) {
                break v;
            }
            if start.elapsed() > Duration::from_secs(20) {
                give_up("did not announce its addresses");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let url = announced["http"].as_str().unwrap().to_owned();
        let metrics_url = announced["metrics"].as_str().unwrap().to_owned();
        while get(&url, "/healthz").is_none() {
            if start.elapsed() > Duration::from_secs(20) {
                give_up("did not become healthy");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            dir,
            url,
            metrics_url,
            pid,
        }
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

/// Where browser tests keep their screenshots: `target/browser-artifacts/`.
pub fn browser_artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("browser-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// The W3C WebDriver element key.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A chromedriver process driving one headless Chromium session; both end when dropped.
pub struct Browser {
    driver: std::process::Child,
    session: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver on a free port and opens a session with a fresh profile.
    pub fn start() -> Self {
        let chromedriver = on_path(&["chromedriver"]).unwrap_or_else(|| {
            panic!(
                "chromedriver is not installed: the browser tests need the Debian packages \
                 `chromium` and `chromium-driver` (scripts/test.sh installs them)"
            )
        });
        let chromium = on_path(&["chromium", "chromium-browser", "google-chrome"])
            .unwrap_or_else(|| panic!("chromium is not installed (Debian package `chromium`)"));
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(chromedriver)
            .args([format!("--port={port}"), "--allowed-ips=127.0.0.1".into()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let root = format!("http://127.0.0.1:{port}");
        wait_until(Duration::from_secs(20), || {
            get(&root, "/status").is_some_and(|s| s["value"]["ready"] == true)
        });
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1000,1400",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([format!("--user-data-dir={}", profile.path().display())])
        .collect::<Vec<_>>();
        let caps = serde_json::json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": chromium, "args": args },
        }}});
        let (status, body) = post(&root, "/session", &caps);
        assert_eq!(status, 200, "cannot start Chromium: {body}");
        let session = format!(
            "{root}/session/{}",
            body["value"]["sessionId"].as_str().unwrap()
        );
        let browser = Self {
            driver,
            session,
            _profile: profile,
        };
        browser.command(
            "POST",
            "/timeouts",
            serde_json::json!({ "script": 20_000, "pageLoad": 20_000 }),
        );
        browser
    }

    /// One WebDriver command; panics with the driver's message when it fails.
    pub fn command(&self, method: &str, path: &str, body: Value) -> Value {
        let (status, reply) = self.try_command(method, path, body);
        assert_eq!(status, 200, "WebDriver {method} {path}: {reply}");
        reply["value"].clone()
    }

    fn try_command(&self, method: &str, path: &str, body: Value) -> (u16, Value) {
        let url = format!("{}{path}", self.session);
        let reply = match method {
            "GET" => agent().get(&url).call(),
            "DELETE" => agent().delete(&url).call(),
            _ => agent().post(&url).send_json(&body),
        };
        match reply {
            Ok(mut r) => (
                r.status().as_u16(),
                r.body_mut().read_json().unwrap_or(Value::Null),
            ),
            Err(e) => (0, Value::String(e.to_string())),
        }
    }

    pub fn goto(&self, url: &str) {
        self.command("POST", "/url", serde_json::json!({ "url": url }));
    }

    /// The element matching `css`, if any.
    pub fn find(&self, css: &str) -> Option<String> {
        let (status, reply) = self.try_command(
            "POST",
            "/element",
            serde_json::json!({ "using": "css selector", "value": css }),
        );
        (status == 200).then(|| reply["value"][ELEMENT].as_str().unwrap().to_owned())
    }

    /// Waits for an element matching `css` to be displayed.
    pub fn wait_for(&self, css: &str) -> String {
        let mut found = None;
        wait_until(Duration::from_secs(20), || {
            found = self.find(css).filter(|e| {
                self.command("GET", &format!("/element/{e}/displayed"), Value::Null) == true
            });
            found.is_some()
        });
        found.unwrap()
    }

    pub fn click(&self, css: &str) {
        let e = self.wait_for(css);
        self.command(
            "POST",
            &format!("/element/{e}/click"),
            serde_json::json!({}),
        );
    }

    /// Clears a field and types `text` into it.
    pub fn fill(&self, css: &str, text: &str) {
        let e = self.wait_for(css);
        self.command(
            "POST",
            &format!("/element/{e}/clear"),
            serde_json::json!({}),
        );
        self.command(
            "POST",
            &format!("/element/{e}/value"),
            serde_json::json!({ "text": text }),
        );
    }

    pub fn text(&self, css: &str) -> String {
        let e = self.wait_for(css);
        let text = self.command("GET", &format!("/element/{e}/text"), Value::Null);
        text.as_str().unwrap().to_owned()
    }

    /// Runs `body` as a function of `arguments` in the page and returns its result.
    pub fn script(&self, body: &str, args: Value) -> Value {
        self.command(
            "POST",
            "/execute/sync",
            serde_json::json!({ "script": body, "args": args }),
        )
    }

    /// Runs an asynchronous script: it calls `arguments[arguments.length - 1]` with its result.
    pub fn script_async(&self, body: &str, args: Value) -> Value {
        self.command(
            "POST",
            "/execute/async",
            serde_json::json!({ "script": body, "args": args }),
        )
    }

    /// Presses keys (WebDriver key values, e.g. `\u{E007}` for Enter) on the focused element.
    pub fn keys(&self, keys: &[&str]) {
        let actions: Vec<Value> = keys
            .iter()
            .flat_map(|k| {
                [
                    serde_json::json!({ "type": "keyDown", "value": k }),
                    serde_json::json!({ "type": "keyUp", "value": k }),
                ]
            })
            .collect();
        self.command(
            "POST",
            "/actions",
            serde_json::json!({ "actions": [{ "type": "key", "id": "keyboard", "actions": actions }] }),
        );
    }

    /// Resizes the window (the page's viewport follows in headless mode).
    pub fn resize(&self, width: u32, height: u32) {
        self.command(
            "POST",
            "/window/rect",
            serde_json::json!({ "width": width, "height": height }),
        );
    }

    /// Saves a screenshot of the viewport as `target/browser-artifacts/{name}.png`.
    pub fn screenshot(&self, name: &str) -> PathBuf {
        use base64::Engine;
        let png = self.command("GET", "/screenshot", Value::Null);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap())
            .unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "not a PNG screenshot");
        let path = browser_artifacts().join(format!("{name}.png"));
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.try_command("DELETE", "", Value::Null);
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Registers a fresh agent identity at `base` (a key drawn from `seed`); returns its key.
pub fn register_agent(base: &str, seed: u64) -> ed25519_dalek::SigningKey {
    let key = hco_oracle::testing::key(seed);
    let now = get(base, "/v1/windows/current").unwrap()["now"]
        .as_u64()
        .unwrap();
    let reg = hco_oracle::SignedRegister::new(&key, hco_oracle::Class::Agent, now);
    let (status, body) = post(base, "/v1/identities", &reg);
    assert!(status == 201 || status == 200, "{status} {body}");
    key
}

/// A session start of the agent identity `key` at the node `base`, signed for its current
/// window.
pub fn agent_start(base: &str, key: &ed25519_dalek::SigningKey) -> hco_oracle::SessionStart {
    let health = get(base, "/healthz").unwrap();
    let node: hco_oracle::NodeId = serde_json::from_value(health["node"].clone()).unwrap();
    let window = health["window"].as_u64().unwrap();
    hco_oracle::SessionStart::sign(key, &node, window, hco_oracle::Digest(rand::random()))
}

/// A key file of a new identity registered as an agent at `node` (through the CLI).
pub fn agent_key_file(node: &Single, name: &str) -> String {
    let key = node.dir.path().join(format!("{name}.key"));
    let out = hco()
        .args(["identity", "new", "--out"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(out.status.success());
    let key = key.to_str().unwrap().to_owned();
    let (ok, v) = hco_json(&[
        "client", "register", "--node", &node.url, "--key", &key, "--class", "agent",
    ]);
    assert!(ok, "{v}");
    key
}

/// Node.js 20.19 or newer on PATH (the floor of the JavaScript packages), or why not.
pub fn node_js() -> Result<(), String> {
    let version = Command::new("node")
        .arg("--version")
        .output()
        .map_err(|e| format!("no `node` on PATH ({e})"))?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    let parts: Vec<u32> = version
        .trim_start_matches('v')
        .split('.')
        .filter_map(|p| p.parse().ok())
        .collect();
    if parts.len() < 2 || (parts[0], parts[1]) < (20, 19) {
        return Err(format!("Node.js {version} is older than 20.19"));
    }
    Ok(())
}

/// Runs `cmd` to its end and asserts that it succeeded (its stderr is the failure message).
pub fn succeed(mut cmd: impl std::borrow::BorrowMut<Command>) -> std::process::Output {
    let out = cmd.borrow_mut().output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The identity id (hex) of an identity key file, as `hco identity show` prints it.
pub fn identity_id_of(key: &str) -> String {
    let out = succeed(hco().args(["identity", "show", "--key", key]));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Serves `app` on a free loopback port from a thread of its own, for the rest of the test
/// binary's life (stand-ins for model endpoints and misbehaving members); its base URL.
pub fn serve_stub(app: axum::Router) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    format!("http://{addr}")
}
