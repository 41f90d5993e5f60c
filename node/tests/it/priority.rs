//! Thread priorities are relative to the process: a node started under `nice -n 10` runs its
//! committee threads at 10 and its client threads `node.client_nice` (5) lower, at 15 — never
//! above the committee's, as an absolute `setpriority` once made them (5, under a process at 15).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{get, hco};

/// `(thread name, nice)` of every thread of process `pid`, from `/proc`.
fn threads(pid: u32) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let Ok(stat) = std::fs::read_to_string(task.unwrap().path().join("stat")) else {
            continue; // the thread ended meanwhile
        };
        let (open, close) = (stat.find('(').unwrap(), stat.rfind(')').unwrap());
        let name = stat[open + 1..close].to_owned();
        // After the name: state is field 3, nice is field 19.
        let nice = stat[close + 2..]
            .split(' ')
            .nth(16)
            .unwrap()
            .parse()
            .unwrap();
        out.push((name, nice));
    }
    out
}

#[test]
fn client_threads_run_below_the_committee_relative_to_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = dir.path().join("node.toml");
    std::fs::write(
        &config,
        format!("[node]\nkey_file = \"node.key\"\ndata_dir = \"ledger\"\n[http]\nlisten = \"127.0.0.1:{port}\"\n[network]\ndevelopment = true\n"),
    )
    .unwrap();
    let mut child = Command::new("nice")
        .args(["-n", "10"])
        .arg(hco().get_program())
        .args(["node", "run", "--config"])
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let start = Instant::now();
    while get(&url, "/healthz").is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the node did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Some client work, so the client runtime's threads all exist.
    for _ in 0..20 {
        get(&url, "/v1/windows/current").unwrap();
    }
    let found = threads(child.id());
    let _ = child.kill();
    let _ = child.wait();
    let base = found
        .iter()
        .find(|(name, _)| name == "hco-peers")
        .map(|(_, nice)| *nice)
        .expect("no committee thread");
    assert!(
        base >= 10,
        "the committee runs above the process's nice 10: {found:?}"
    );
    let clients: Vec<i32> = found
        .iter()
        .filter(|(name, _)| name.starts_with("tokio-r"))
        .map(|(_, nice)| *nice)
        .collect();
    assert!(!clients.is_empty(), "no client thread: {found:?}");
    assert!(
        clients.iter().all(|nice| *nice == (base + 5).min(19)),
        "client threads not 5 below the committee's {base}: {found:?}"
    );
    assert!(
        found.iter().all(|(_, nice)| *nice >= base),
        "a thread runs above the process: {found:?}"
    );
}
