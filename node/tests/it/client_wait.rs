//! `hco client solve` against a real node: started before the identity's ceremony slot it waits
//! for the slot (and says so), and a request the gateway refuses for load (429 with
//! `Retry-After`) is sent again after the wait it asks for.

use std::io::Read;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::support::{Single, agent_key_file, get, hco, metric, next_window};

/// Waits for `child` at most `limit` (killed past it); its success, stdout lines and stderr.
fn finish(mut child: Child, limit: Duration) -> (bool, Vec<Value>, String) {
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            let mut out = String::new();
            child.stdout.take().unwrap().read_to_string(&mut out).ok();
            panic!("the client ran past {limit:?}; it printed:\n{out}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let lines = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect();
    (status.success(), lines, err)
}

fn solve(node: &Single, key: &str, extra: &[&str]) -> Child {
    hco()
        .args(["client", "solve", "--node", &node.url, "--key", key])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn rfc3339(text: &str) -> u64 {
    humantime::parse_rfc3339(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn client_solve_waits_for_the_slot() {
    // Window 0 starts as the node does; a global slot of 30 s starts 10–30 s into each 60 s
    // window, after the grace, so a client started now is early. (The second step opens at a
    // drawn moment of the slot's second half and must be asked for before the slot ends: with
    // 15 s slots, an opening in the last few hundred milliseconds now and then left the client
    // too late on a loaded machine.)
    let now = hco_oracle::Clock::now(&hco_oracle::SystemClock);
    let genesis = humantime::format_rfc3339_seconds(
        SystemTime::UNIX_EPOCH + Duration::from_millis(now - 1_000),
    );
    let node = Single::start(&format!(
        "[network]\ndevelopment = true\ngenesis = \"{genesis}\"\nwindow = \"60s\"\ngrace = \"10s\"\n\
         slot_mode = \"global\"\nslot = \"30s\"\n\
         [network.policy.agent]\nsteps = [\"cognitive\", \"cognitive\"]\nspares = 0\n\
         [[network.families]]\nname = \"proof_of_work\"\ndeadline = \"8s\"\ndifficulty = 12\n\
         [[network.families]]\nname = \"arithmetic_reasoning\"\ndeadline = \"8s\"\ndifficulty = 3\n"
    ));
    let key = agent_key_file(&node, "early");
    let id = crate::support::identity_id_of(&key);
    let window = |id: &str| get(&node.url, &format!("/v1/windows/current?id={id}")).unwrap();
    // Normally window 0 from its first seconds; if the node was slow to start, the next one.
    let mut w = window(&id);
    if w["now"].as_u64().unwrap() + 3_000 > w["slot"]["start"].as_u64().unwrap() {
        next_window(&node.url);
        w = window(&id);
    }
    let (t, now) = (w["t"].as_u64().unwrap(), w["now"].as_u64().unwrap());
    let slot = (
        w["slot"]["start"].as_u64().unwrap(),
        w["slot"]["end"].as_u64().unwrap(),
    );
    assert!(now + 2_000 < slot.0, "{w}");

    let started = Instant::now();
    let (ok, lines, err) = finish(solve(&node, &key, &[]), Duration::from_secs(80));
    assert!(ok, "{lines:?} {err}");
    for line in &lines {
        eprintln!("{line}");
    }
    let waiting = &lines[0];
    assert_eq!(waiting["waiting"], "slot", "{lines:?}");
    assert_eq!(waiting["window"], t);
    assert_eq!(waiting["opens_at"], slot.0);
    assert_eq!(
        rfc3339(waiting["at"].as_str().unwrap()),
        slot.0,
        "{waiting}"
    );
    let opens_in = waiting["opens_in_s"].as_u64().unwrap();
    assert!(opens_in * 1000 + 1500 >= slot.0 - now, "{waiting}");
    // It slept until the slot instead of asking outside it.
    assert!(
        started.elapsed() >= Duration::from_millis(slot.0 - now - 1_000),
        "{:?}",
        started.elapsed()
    );
    let verdicts = &lines[1..];
    assert_eq!(verdicts.len(), 2, "{lines:?}");
    for (j, v) in verdicts.iter().enumerate() {
        assert_eq!(v["verdict"], "accepted", "{v}");
        assert_eq!(
            (v["window"].as_u64(), v["j"].as_u64()),
            (Some(t), Some(j as u64))
        );
        assert!(v["accepted_at"].as_u64().unwrap() >= slot.0, "{v}");
    }

    // After the slot: said plainly, with the slot's times, and a failure. (Should the window
    // have turned meanwhile, the next slot is ahead: beyond a 1 s --max-wait.)
    let late = agent_key_file(&node, "late");
    let now = get(&node.url, "/v1/windows/current").unwrap()["now"]
        .as_u64()
        .unwrap();
    std::thread::sleep(Duration::from_millis(slot.1.saturating_sub(now) + 100));
    let (ok, lines, err) = finish(
        solve(&node, &late, &["--max-wait", "1s"]),
        Duration::from_secs(20),
    );
    assert!(!ok, "{lines:?}");
    let v = lines.last().unwrap();
    eprintln!("{v}");
    assert_eq!(v["verdict"], "outside_slot", "{lines:?} {err}");
    let message = v["message"].as_str().unwrap();
    if v["window"] == t {
        assert!(message.contains("has passed"), "{message}");
        let start = humantime::format_rfc3339_millis(
            SystemTime::UNIX_EPOCH + Duration::from_millis(slot.0),
        );
        assert!(message.contains(&start.to_string()), "{message}");
    } else {
        assert!(message.contains("--max-wait"), "{message}");
    }
    assert!(
        !message.contains(&slot.0.to_string()),
        "no raw timestamps: {message}"
    );
}

#[test]
fn client_retries_after_429() {
    // One request a second from an address: each of the client's requests after the first
    // comes within the second, is refused 429 with `Retry-After: 1`, and is sent again.
    let node = Single::start(
        "[http.limits]\nper_ip_rate = 1\nper_ip_burst = 1\n\
         [network]\ndevelopment = true\nslot_mode = \"open\"\n\
         [network.policy.agent]\nsteps = [\"cognitive\"]\nspares = 0\n",
    );
    let key = node.dir.path().join("me.key");
    assert!(
        hco()
            .args(["identity", "new", "--out"])
            .arg(&key)
            .output()
            .unwrap()
            .status
            .success()
    );
    let key = key.to_str().unwrap();
    // Registration: GET /v1/params, then POST /v1/identities at once.
    let out = hco()
        .args([
            "client", "register", "--node", &node.url, "--key", key, "--class", "agent",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(r#""retrying":"rate_limited""#), "{err}");
    assert!(err.contains(r#""request":"POST /v1/identities""#), "{err}");

    let (ok, lines, err) = finish(solve(&node, key, &[]), Duration::from_secs(30));
    assert!(ok, "{lines:?} {err}");
    eprint!("{err}");
    assert_eq!(lines.last().unwrap()["verdict"], "accepted", "{lines:?}");
    let retries: Vec<Value> = err
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &Value| v["retrying"] == "rate_limited")
        .collect();
    assert!(!retries.is_empty(), "{err}");
    for r in &retries {
        assert_eq!(r["status"], 429, "{r}");
        assert_eq!(r["in_ms"], 1000, "{r}");
    }
    // The node counted its refusals (on its metrics listener, outside the gateway's limits).
    assert!(
        metric(
            &node.metrics_url,
            r#"hco_rejections_total{reason="rate_limited""#
        ) >= 1.0,
        "the node refused some"
    );
}
