//! Attackers of `interactive_reasoning` (two pictures of shapes, the second shown only after a
//! right click on the first):
//!
//! - `scene-cv` — the computer-vision parser of [`vision`], written against the renderer:
//!   stage 1 clicks the blob of the kind it sees once, stage 2 every blob of that kind.
//! - `phrase-parser` — reads everything textual (question, alt text, options): the texts are
//!   fixed, so it has nothing to invert and clicks where shapes are most often placed (the
//!   middle), then a spread of points.
//! - `blind-guess` — finds the blobs (no classification) and clicks one at random, then three.
//!
//! Every attacker plays over the real protocol: the stage-1 click through
//! `POST /v1/challenges/stage`, the final answer after the minimum solve time.

pub mod vision;

use std::time::Duration;

use hco_challenges::interactive::scene::Kind;

use super::{Attack, Session, Verdict};

const FAMILY: &str = "interactive_reasoning";

/// The picture of a prompt's data.
fn picture(data: &serde_json::Value) -> Option<image::RgbImage> {
    vision::decode(data["image"].as_str()?)
}

fn click((x, y): (u16, u16)) -> String {
    format!("{x},{y}")
}

/// The final answer from the stage-1 click and the stage-2 clicks.
pub fn final_answer(first: (u16, u16), second: &[(u16, u16)]) -> String {
    let rest: Vec<String> = second.iter().map(|c| click(*c)).collect();
    format!("{}|{}", click(first), rest.join(";"))
}

/// How a strategy answers each stage.
trait Strategy: Send + Sync {
    /// Stage-1 click, and what it remembers for stage 2.
    fn first(&self, data: &serde_json::Value, salt: &[u8]) -> ((u16, u16), Option<Kind>);
    /// Stage-2 clicks.
    fn second(&self, data: &serde_json::Value, kind: Option<Kind>, salt: &[u8]) -> Vec<(u16, u16)>;
}

/// Plays both stages with `strategy`.
fn play(strategy: &dyn Strategy, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
    let salt = session.view.challenge.sig.0.to_vec();
    let data = session.data().clone();
    let (first, kind) = super::compute(|| strategy.first(&data, &salt));
    let second_prompt = match session.stage(1, click(first).as_bytes())? {
        Ok(prompt) => prompt,
        Err(code) => return Ok(Verdict::Rejected(code)),
    };
    let second = super::compute(|| strategy.second(&second_prompt.data, kind, &salt));
    session.wait_min_solve(Duration::from_millis(150));
    session.respond(final_answer(first, &second).as_bytes())
}

/// The `scene-cv` strategy.
pub struct SceneCv;

impl Strategy for SceneCv {
    fn first(&self, data: &serde_json::Value, _: &[u8]) -> ((u16, u16), Option<Kind>) {
        let found = picture(data)
            .map(|img| vision::parse(&img))
            .unwrap_or_default();
        match vision::solve_first(&found) {
            Some(f) => ((f.x, f.y), Some(f.kind)),
            None => ((180, 135), None),
        }
    }

    fn second(&self, data: &serde_json::Value, kind: Option<Kind>, _: &[u8]) -> Vec<(u16, u16)> {
        let found = picture(data)
            .map(|img| vision::parse(&img))
            .unwrap_or_default();
        vision::solve_second(&found, kind.unwrap_or(Kind::Circle))
    }
}

/// A number in `0..n` from the salt and a counter: independent of the picture's answer.
fn pick(salt: &[u8], i: u8, n: usize) -> usize {
    let h = blake3::hash(&[salt, &[i]].concat());
    (u64::from_le_bytes(h.as_bytes()[..8].try_into().unwrap_or_default()) % n.max(1) as u64)
        as usize
}

/// The `blind-guess` strategy: random blobs.
pub struct BlindGuess;

impl BlindGuess {
    fn blobs(data: &serde_json::Value) -> Vec<(u16, u16)> {
        picture(data)
            .map(|img| {
                vision::blobs(&img)
                    .iter()
                    .map(|b| vision::centre(b))
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Strategy for BlindGuess {
    fn first(&self, data: &serde_json::Value, salt: &[u8]) -> ((u16, u16), Option<Kind>) {
        let blobs = Self::blobs(data);
        let at = blobs.get(pick(salt, 0, blobs.len())).copied();
        (at.unwrap_or((180, 135)), None)
    }

    fn second(&self, data: &serde_json::Value, _: Option<Kind>, salt: &[u8]) -> Vec<(u16, u16)> {
        let mut blobs = Self::blobs(data);
        let mut out = Vec::new();
        for i in 0..3 {
            if blobs.is_empty() {
                break;
            }
            out.push(blobs.remove(pick(salt, i + 1, blobs.len())));
        }
        out
    }
}

/// The `phrase-parser` strategy: the text alone.
pub struct PhraseParser;

impl Strategy for PhraseParser {
    fn first(&self, _: &serde_json::Value, salt: &[u8]) -> ((u16, u16), Option<Kind>) {
        // The question and alt text are the same for every challenge: nothing to parse.
        let x = 60 + pick(salt, 0, 240) as u16;
        let y = 45 + pick(salt, 1, 180) as u16;
        ((x, y), None)
    }

    fn second(&self, _: &serde_json::Value, _: Option<Kind>, salt: &[u8]) -> Vec<(u16, u16)> {
        (0..3)
            .map(|i| {
                (
                    30 + pick(salt, 2 * i + 2, 300) as u16,
                    30 + pick(salt, 2 * i + 3, 210) as u16,
                )
            })
            .collect()
    }
}

struct Named(&'static str, Box<dyn Strategy>);

impl Attack for Named {
    fn family(&self) -> &'static str {
        FAMILY
    }
    fn name(&self) -> &'static str {
        self.0
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        play(self.1.as_ref(), session)
    }
}

/// The family's attackers, strongest first.
pub fn attackers() -> Vec<Box<dyn Attack>> {
    vec![
        Box::new(Named("scene-cv", Box::new(SceneCv))),
        Box::new(Named("phrase-parser", Box::new(PhraseParser))),
        Box::new(Named("blind-guess", Box::new(BlindGuess))),
    ]
}

#[cfg(test)]
mod tests;
