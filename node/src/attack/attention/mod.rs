//! Attackers of `attention`. Each plays the challenge as the page does: it opens the stream
//! with the identity's signature, reads the frames as the node sends them, posts its clicks
//! with synthetic human-like reaction times (480–900 ms after a frame arrives, or as soon as
//! its reading is done if that is later), and answers with the sealed log the stream ends with.
//!
//! - `frame-cv` reads each event's frame with template matching against the family's own
//!   renderer (`cv.rs`) and clicks where it finds the cue.
//! - `schedule-reader` reads every structured field it is sent (the prompt's data, each frame
//!   event's JSON) for anything that places a target, and clicks that; it finds nothing, so it
//!   clicks nothing.
//! - `blind-click` clicks a random cell centre on each event's frame with probability ½.
//!
//! The trained attacker ([`crate::attack::trained`]) plays the stream the same way, with a
//! reader that hands each event's frame to its solver process.

mod cv;
#[cfg(test)]
mod live_tests;

use std::time::{Duration, Instant};

use anyhow::Context as _;
use base64::Engine as _;
use hco_challenges::attention::{AttentionData, CELL, GRID, STREAM_PATH, VISIBLE_MS, render};
use rand::RngExt as _;
use serde_json::{Value, json};

use super::{Attack, Session, Verdict, compute};

/// What an attacker does with one frame: `Some((x, y))` to click there.
pub(crate) trait Reader: Send + Sync {
    fn read(&self, cue: u8, index: usize, frame: &Value, png: &[u8]) -> Option<(u32, u32)>;
}

/// Plays the stream with `reader`; the final verdict.
pub(crate) fn play(session: &Session<'_>, reader: &dyn Reader) -> anyhow::Result<Verdict> {
    let data: AttentionData = serde_json::from_value(session.data().clone())
        .context("the prompt is not an attention prompt")?;
    let cue = data.cue.bytes().next().unwrap_or(b'A');
    let id = session.view.challenge.challenge.challenge_id();
    let sig = hco_oracle::sign::sign(session.key, &hco_oracle::stream_digest(&id));
    let opened = session.post(
        STREAM_PATH,
        &json!({ "challenge": session.view.challenge, "sig": sig }),
    )?;
    if opened.status != 201 {
        let code = opened.body["code"].as_str().unwrap_or("http_error");
        return Ok(Verdict::Rejected(code.to_owned()));
    }
    let events = opened.body["events"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let clicks = opened.body["clicks"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut answer = None;
    std::thread::scope(|scope| -> anyhow::Result<()> {
        for (event, data) in session.sse(&events)? {
            let received = Instant::now();
            let frame: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
            if event == "log" {
                answer = frame["answer"].as_str().map(str::to_owned);
                break;
            }
            let index = frame["i"].as_u64().unwrap_or(0) as usize;
            let png = b64
                .decode(frame["png"].as_str().unwrap_or_default())
                .unwrap_or_default();
            // Frames 1, 3, 5… release events; the others take the letters away.
            if index.is_multiple_of(2) {
                continue;
            }
            let clicks = &clicks;
            scope.spawn(move || {
                // A reading that would come after the letters have gone is not worth doing.
                let late = Duration::from_millis(u64::from(VISIBLE_MS) - 100);
                let read =
                    || (received.elapsed() < late).then(|| reader.read(cue, index, &frame, &png));
                let Some((x, y)) = compute(read).flatten() else {
                    return;
                };
                let reaction = Duration::from_millis(rand::rng().random_range(480..900));
                if let Some(rest) = (received + reaction).checked_duration_since(Instant::now()) {
                    std::thread::sleep(rest);
                }
                let _ = session.post(clicks, &json!({ "x": x, "y": y }));
            });
        }
        Ok(())
    })?;
    let answer = answer.context("the stream ended without its log")?;
    session.wait_min_solve(Duration::from_millis(50));
    session.respond(answer.as_bytes())
}

struct Cv;

impl Reader for Cv {
    fn read(&self, cue: u8, _: usize, _: &Value, png: &[u8]) -> Option<(u32, u32)> {
        let img = render::decode(png)?;
        cv::decide(&img, cue, cv::MARGIN)
    }
}

struct Fields(Value);

impl Reader for Fields {
    fn read(&self, _: u8, _: usize, frame: &Value, _: &[u8]) -> Option<(u32, u32)> {
        // Any position the server or the prompt lets slip, in any field.
        for v in [frame, &self.0] {
            for (x, y) in [("x", "y"), ("target_x", "target_y")] {
                if let (Some(x), Some(y)) = (v[x].as_u64(), v[y].as_u64()) {
                    return Some((x as u32, y as u32));
                }
            }
            if let Some(t) = v["target"].as_object() {
                let (x, y) = (t.get("x")?.as_u64()?, t.get("y")?.as_u64()?);
                return Some((x as u32, y as u32));
            }
        }
        None
    }
}

struct Blind;

impl Reader for Blind {
    fn read(&self, _: u8, _: usize, _: &Value, _: &[u8]) -> Option<(u32, u32)> {
        let mut rng = rand::rng();
        rng.random_bool(0.5).then(|| {
            let cell = rng.random_range(0..GRID * GRID);
            (cell % GRID * CELL + CELL / 2, cell / GRID * CELL + CELL / 2)
        })
    }
}

/// Template matching against the renderer, frame by frame.
pub struct FrameCv;
/// Whatever structured data is sent.
pub struct ScheduleReader;
/// Random clicks.
pub struct BlindClick;

impl Attack for FrameCv {
    fn family(&self) -> &'static str {
        "attention"
    }
    fn name(&self) -> &'static str {
        "frame-cv"
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        play(session, &Cv)
    }
    fn concurrency(&self) -> usize {
        32
    }
}

impl Attack for ScheduleReader {
    fn family(&self) -> &'static str {
        "attention"
    }
    fn name(&self) -> &'static str {
        "schedule-reader"
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        play(session, &Fields(session.data().clone()))
    }
    fn concurrency(&self) -> usize {
        32
    }
}

impl Attack for BlindClick {
    fn family(&self) -> &'static str {
        "attention"
    }
    fn name(&self) -> &'static str {
        "blind-click"
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        play(session, &Blind)
    }
    fn concurrency(&self) -> usize {
        32
    }
}
