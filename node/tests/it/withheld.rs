//! Withheld verdicts (`[agent] withhold_verdicts`, on in `configs/prod.toml`): a right and a
//! wrong answer to a per-window `narrative_chain` challenge get the same reply, and nothing the
//! node serves tells them apart before the window closes; then the certificate does.

use std::time::{Duration, Instant};

use hco_challenges::narrative::Corpus;
use hco_oracle::{Response, SignedChallenge, SignedRequest};
use serde_json::Value;

use crate::support::{Single, agent_key_file, get, hco_json, post, register_agent};

/// A 30-second window, the agent class one `narrative_chain` step and no spare.
const CONFIG: &str = "[network]\nslot_mode = \"open\"\nwindow = \"30s\"\ngrace = \"16s\"\n\
    [network.policy.agent]\nsteps = [\"narrative_chain\"]\nspares = 0\n\
    [[network.families]]\nname = \"narrative_chain\"\ndeadline = \"15s\"\ndifficulty = 3\n\
    [agent]\nwithhold_verdicts = true\n";

/// Waits until at least `needed` is left in the current window; its number and close.
fn a_window_with(url: &str, needed: Duration) -> (u64, u64) {
    let began = Instant::now();
    loop {
        let w = get(url, "/v1/windows/current").unwrap();
        let (t, now, end) = (
            w["t"].as_u64().unwrap(),
            w["now"].as_u64().unwrap(),
            w["end"].as_u64().unwrap(),
        );
        if end.saturating_sub(now) >= needed.as_millis() as u64 {
            return (t, w["closes_at"].as_u64().unwrap());
        }
        assert!(
            began.elapsed() < Duration::from_secs(40),
            "no window with {needed:?} left"
        );
        std::thread::sleep(Duration::from_millis(end.saturating_sub(now) + 100));
    }
}

/// Asks for `key`'s challenge `(t, 0)` and answers it, right (the starter key) or wrong.
fn answer(url: &str, key: &ed25519_dalek::SigningKey, t: u64, right: bool) -> (u16, Value) {
    let (status, view) = post(url, "/v1/challenges", &SignedRequest::new(key, t, 0));
    assert_eq!(status, 200, "{view}");
    let challenge: SignedChallenge = serde_json::from_value(view["challenge"].clone()).unwrap();
    let answer = if right {
        let text = view["prompt"]["text"].as_str().unwrap();
        serde_json::to_vec(&starter_key(text)).unwrap()
    } else {
        br#"["none","none","none"]"#.to_vec()
    };
    // Past the family's minimum solve time.
    std::thread::sleep(Duration::from_millis(2_500));
    post(url, "/v1/responses", &Response::new(key, challenge, answer))
}

/// The answers of a chain prompt's parts from the starter corpus's key (the node runs on it).
fn starter_key(text: &str) -> Vec<String> {
    let fold = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    text.split("\n\n=== Part ")
        .skip(1)
        .map(|part| {
            let (_, question) = part.rsplit_once("\n\nQuestion ").unwrap();
            let question = fold(question.split_once(": ").unwrap().1);
            Corpus::embedded()
                .sets()
                .iter()
                .flat_map(|s| &s.parts)
                .flat_map(|p| &p.questions)
                .find(|q| fold(&q.question) == question)
                .map(|q| q.answer.clone())
                .expect("a starter question")
        })
        .collect()
}

#[test]
fn a_right_and_a_wrong_agent_answer_look_alike_until_the_window_closes() {
    let node = Single::start(CONFIG);
    let url = node.url.as_str();
    let (t, closes_at) = a_window_with(url, Duration::from_secs(22));
    let right = register_agent(url, 7_001);
    let wrong = register_agent(url, 7_002);
    let id = |k: &ed25519_dalek::SigningKey| {
        hco_oracle::IdentityId(k.verifying_key().to_bytes()).to_string()
    };

    let (s_right, r_right) = answer(url, &right, t, true);
    let (s_wrong, r_wrong) = answer(url, &wrong, t, false);
    assert_eq!((s_right, s_wrong), (202, 202), "{r_right} {r_wrong}");
    assert_eq!(r_right, r_wrong, "the two replies differ");
    assert_eq!(r_right["code"], "verdict_withheld", "{r_right}");
    assert_eq!(r_right["opens_at"].as_u64(), Some(closes_at), "{r_right}");
    // A second answer is still refused as replayed, whatever the first was.
    let (again, body) = answer(url, &right, t, true);
    assert_eq!(
        (again, body["code"].as_str()),
        (409, Some("already_answered")),
        "{body}"
    );

    // Nothing served before the close tells them apart: not the next try's refusal (a passed
    // window would say `steps_complete`)…
    let next = |k| post(url, "/v1/challenges", &SignedRequest::new(k, t, 1));
    let (n_right, n_wrong) = (next(&right), next(&wrong));
    assert_eq!(n_right, n_wrong);
    assert_eq!(n_right.1["code"], "index_out_of_range", "{n_right:?}");
    // …nor the status, the progress or the local count.
    let status = |k| get(url, &format!("/v1/identities/{}", id(k))).unwrap()["status"].clone();
    assert_eq!(status(&right), status(&wrong));
    let progress = |k| {
        get(url, &format!("/v1/windows/current?id={}", id(k))).unwrap()["identity"]["steps_passed"]
            .clone()
    };
    assert_eq!((progress(&right), progress(&wrong)), (0.into(), 0.into()));
    let window = get(url, &format!("/v1/windows/{t}")).unwrap();
    if window["closed"] == false {
        assert_eq!(window["active_count_local"], 0, "{window}");
    }

    // `hco client solve` says so and exits 0: the answer is recorded, the verdict comes later.
    let key = agent_key_file(&node, "cli-agent");
    let (ok, line) = hco_json(&[
        "client",
        "solve",
        "--node",
        url,
        "--key",
        &key,
        "--answer-cmd",
        r#"echo '["a","b","c"]'"#,
    ]);
    assert!(ok, "{line}");
    assert_eq!(line["verdict"], "withheld", "{line}");
    assert_eq!(line["verdict_at"].as_u64(), Some(closes_at), "{line}");

    // After the close, the certificate has the right one and not the wrong one.
    let began = Instant::now();
    let proof = |k| get(url, &format!("/v1/windows/{t}/proofs/{}", id(k)));
    while proof(&right).is_none() {
        assert!(
            began.elapsed() < Duration::from_secs(90),
            "no proof for the right answer"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(proof(&wrong).is_none(), "the wrong answer was certified");
}
