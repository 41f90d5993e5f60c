//! `interactive_reasoning` through the page in headless Chromium, at a person's pace: a look at
//! the first picture (2.5 to 4 s), one click on the shape asked for, Send; a look at the second
//! picture, which the page shows only after the first answer, then a click on each shape of
//! the kind asked, Send. The clicks come from the regenerated key
//! (`Family::reference_answer`), the pauses and the controls are the person's; nearly every
//! challenge must be accepted.

use std::time::{Duration, Instant};

use crate::browser::{
    click_scene, get_challenge, identity_and_register, node_with, open, reference, screenshot,
    verdict, wait_text,
};
use crate::support::Browser;

#[test]
fn devnet_browser_interactive_person_clicks_both_pictures() {
    let b = Browser::start();
    let (mut node, mut id) = (None, String::new());
    // A window holds at most 16 steps: two people, ten challenges each.
    let (people, each) = (2usize, 10usize);
    let challenges = people * each;
    let (mut accepted, mut times, mut refused) = (0usize, Vec::new(), Vec::new());
    for i in 0..challenges {
        if i % each == 0 {
            node = Some(node_with("interactive_reasoning", "60s", each));
            open(&b, node.as_ref().unwrap());
            id = identity_and_register(&b, None);
        }
        let node = node.as_ref().unwrap();
        let (_, generated, family) = get_challenge(&b, node, &id);
        let shown = Instant::now();
        let answer = reference(&generated, family.as_ref());
        let (first, second) = answer.split_once('|').unwrap();
        let pause = |base: u64, spread: u64, k: usize| {
            std::thread::sleep(Duration::from_millis(base + spread * ((i + k) as u64 % 4)))
        };
        pause(2500, 500, 0);
        let (x, y) = first.split_once(',').unwrap();
        click_scene(&b, x, y);
        if i == 0 {
            screenshot(&b, "interactive_reasoning_person_stage1");
        }
        pause(300, 100, 1);
        b.click("#send");
        wait_text(&b, "#prompt-text", |t| t.starts_with("New picture"));
        pause(2000, 400, 2);
        for (k, c) in second.split(';').enumerate() {
            let (x, y) = c.split_once(',').unwrap();
            click_scene(&b, x, y);
            pause(450, 120, k);
        }
        if i == 0 {
            screenshot(&b, "interactive_reasoning_person_stage2");
        }
        b.click("#send");
        let code = verdict(&b);
        times.push(shown.elapsed().as_millis() as u64);
        if code == "accepted" {
            accepted += 1;
        } else {
            refused.push(format!("{code} (key {answer})"));
        }
    }
    times.sort_unstable();
    let median = times[times.len() / 2];
    eprintln!(
        "interactive_reasoning by a person: {accepted}/{challenges} accepted, median {median} ms \
         from the first picture to the verdict"
    );
    assert!(
        accepted * 100 >= 95 * challenges,
        "{accepted}/{challenges}: {refused:?}"
    );
}
