//! `attention` through the page in headless Chromium: the node streams the frames, the page
//! shows them and posts the clicks, the node times them and seals the log the page answers
//! with. The "person" knows the plan from the answer key (the test holds the node's key file)
//! and clicks each cue with a varied, human reaction time: with the pointer at the letter, or
//! for one cue per challenge with the arrow keys and Enter. Screenshots under
//! `target/browser-artifacts/`.

use std::time::{Duration, Instant};

use hco_challenges::attention::{FRAME, GRID, Live};
use serde_json::{Value, json};

use crate::browser::{
    ENTER, check_narrow, get_challenge, identity_and_register, node_with, open, screenshot, verdict,
};
use crate::support::Browser;

/// Waits until the page shows frame `i`.
fn wait_frame(b: &Browser, i: usize) {
    b.script_async(
        "const [i, done] = arguments;
         const poll = () => {
           const a = document.getElementById('arena');
           if (a && Number(a.dataset.frame) >= i) done(true); else requestAnimationFrame(poll);
         };
         poll();",
        json!([i]),
    );
}

/// A pointer click on the arena at frame pixel `(x, y)` (viewport coordinates from the
/// arena's box).
fn click_at(b: &Browser, x: u32, y: u32) {
    let rect = b.script(
        "const r = document.getElementById('arena').getBoundingClientRect();
         return [r.left, r.top, r.width];",
        json!([]),
    );
    let (left, top, side) = (
        rect[0].as_f64().unwrap(),
        rect[1].as_f64().unwrap(),
        rect[2].as_f64().unwrap(),
    );
    let at = |origin: f64, v: u32| (origin + f64::from(v) / f64::from(FRAME) * side).round() as i64;
    b.command(
        "POST",
        "/actions",
        json!({ "actions": [{ "type": "pointer", "id": "mouse", "parameters": { "pointerType": "mouse" }, "actions": [
            { "type": "pointerMove", "duration": 0, "origin": "viewport", "x": at(left, x), "y": at(top, y) },
            { "type": "pointerDown", "button": 0 },
            { "type": "pointerUp", "button": 0 }
        ] }] }),
    );
}

/// The cell of a frame position, selected with the arrow keys from the focused cell; Enter.
fn keyboard_at(b: &Browser, x: u32, y: u32) {
    let at = b.script(
        "const c = document.querySelector('#arena .cell[tabindex=\"0\"]');
         c.focus();
         return [Number(c.dataset.row), Number(c.dataset.col)];",
        json!([]),
    );
    let (row, col) = (at[0].as_i64().unwrap(), at[1].as_i64().unwrap());
    let cell = FRAME / GRID;
    let (want_row, want_col) = (i64::from(y / cell), i64::from(x / cell));
    let step = |n: i64, less: &'static str, more: &'static str| {
        std::iter::repeat_n(if n < 0 { less } else { more }, n.unsigned_abs() as usize)
    };
    let mut keys: Vec<&str> = step(want_row - row, "\u{E013}", "\u{E015}").collect();
    keys.extend(step(want_col - col, "\u{E012}", "\u{E014}"));
    keys.push(ENTER);
    b.keys(&keys);
}

/// A person plays two challenges through the page (the pointer, then the keyboard for one cue
/// of each); both are accepted.
#[test]
fn devnet_browser_attention_person_passes_the_stream() {
    person_plays(2);
}

/// The same at a person's pace over eight challenges, every one accepted: a completeness
/// figure, in the long command (`scripts/test.sh --long`).
#[test]
fn devnet_browser_attention_person_passes_eight_streams() {
    person_plays(8);
}

/// A person plays `tries` challenges through the page; every one is accepted.
fn person_plays(tries: usize) {
    let b = Browser::start();
    let node = node_with("attention", "60s", tries);
    open(&b, &node);
    let id = identity_and_register(&b, None);
    let delays = [610, 540, 780, 690, 860, 575, 720, 650];
    let (mut accepted, mut times) = (0, Vec::new());
    for k in 0..tries {
        let (_, generated, _) = get_challenge(&b, &node, &id);
        let live = Live::from_key(&generated.key).unwrap();
        let data: Value = serde_json::from_slice(&generated.prompt.data).unwrap();
        assert_eq!(data["cue"], char::from(live.plan.cue).to_string());
        if k == 0 {
            screenshot(&b, "attention_ready");
        }
        let started = Instant::now();
        b.click("#attention-start");
        let last_target = live.plan.events.iter().rposition(|e| e.target.is_some());
        for (e, event) in live.plan.events.iter().enumerate() {
            wait_frame(&b, 2 * e + 1);
            let seen = Instant::now();
            let Some(t) = event.target else {
                if k == 0 && e < 3 {
                    screenshot(&b, &format!("attention_flash_{e}_no_cue"));
                }
                continue;
            };
            if k == 0 {
                screenshot(&b, &format!("attention_flash_{e}_cue"));
            }
            let g = event.glyphs[t];
            let delay = Duration::from_millis(delays[(e + k) % delays.len()]);
            std::thread::sleep(delay.saturating_sub(seen.elapsed()));
            if Some(e) == last_target {
                keyboard_at(&b, g.x, g.y);
            } else {
                click_at(&b, g.x.saturating_sub(4), g.y + 3);
            }
        }
        let code = verdict(&b);
        times.push(started.elapsed());
        if code == "accepted" {
            accepted += 1;
        }
        eprintln!("attention try {k}: {code} after {:?}", started.elapsed());
        if k == 0 {
            screenshot(&b, "attention_accepted");
            check_narrow(&b, "attention_phone");
        }
    }
    times.sort();
    eprintln!(
        "attention person through the page: {accepted}/{tries}, median {:?} from Start to verdict",
        times[times.len() / 2]
    );
    assert_eq!(accepted, tries);
}
