//! `visual_match` through the page in headless Chromium: a person reads each image and types
//! its letters at a human pace (a look of a few seconds, then one key at a time, Enter to
//! send); nearly every answer must be accepted. The answers come from the regenerated key
//! (`Family::reference_answer`), the timing and the controls are the person's.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::browser::{
    ENTER, check_narrow, get_challenge, identity_and_register, node_with, open, reference,
    screenshot, verdict,
};
use crate::support::Browser;

#[test]
fn devnet_browser_visual_person_types_the_letters() {
    let b = Browser::start();
    let (mut node, mut id) = (None, String::new());
    // A window holds at most 16 steps: two people, ten challenges each.
    let (people, each) = (2usize, 10usize);
    let challenges = people * each;
    let (mut accepted, mut times, mut refused) = (0usize, Vec::new(), Vec::new());
    for i in 0..challenges {
        if i % each == 0 {
            node = Some(node_with("visual_match", "60s", each));
            open(&b, node.as_ref().unwrap());
            id = identity_and_register(&b, None);
        }
        let node = node.as_ref().unwrap();
        let (_, generated, family) = get_challenge(&b, node, &id);
        let shown = Instant::now();
        let data: Value = serde_json::from_slice(&generated.prompt.data).unwrap();
        assert_eq!(data["mode"], "transcribe");
        let answer = reference(&generated, family.as_ref());
        if i == 0 {
            screenshot(&b, "visual_match_transcribe");
            check_narrow(&b, "visual_match_transcribe_phone");
        }
        // Looking at the image: 2 to 3.5 s.
        std::thread::sleep(Duration::from_millis(2000 + 500 * (i as u64 % 4)));
        b.script(
            "document.getElementById('answer').focus()",
            serde_json::json!([]),
        );
        for (k, c) in answer.chars().enumerate() {
            // People type in either case; some put a space in the middle.
            let key = if i % 2 == 0 {
                c.to_ascii_lowercase()
            } else {
                c
            }
            .to_string();
            b.keys(&[&key]);
            if k == 2 && i % 3 == 0 {
                b.keys(&[" "]);
            }
            std::thread::sleep(Duration::from_millis(140 + 45 * ((i + k) as u64 % 5)));
        }
        if i == 0 {
            screenshot(&b, "visual_match_typed");
        }
        b.keys(&[ENTER]);
        let code = verdict(&b);
        times.push(shown.elapsed().as_millis() as u64);
        if code == "accepted" {
            accepted += 1;
        } else {
            let typed = b.script(
                "return document.getElementById('answer')?.value || ''",
                serde_json::json!([]),
            );
            refused.push(format!("{code} (key {answer}, typed {typed})"));
        }
        if i == 0 {
            screenshot(&b, "visual_match_accepted");
        }
    }
    times.sort_unstable();
    let median = times[times.len() / 2];
    eprintln!("visual_match by a person: {accepted}/{challenges} accepted, median {median} ms");
    assert!(
        accepted * 100 >= 95 * challenges,
        "{accepted}/{challenges}: {refused:?}"
    );
    // Typing takes about 4 s; a loaded machine adds page and verdict latency on top.
    assert!(median < 12_000, "{median} ms");
}
