//! `interactive_reasoning`: two dependent questions about pictures of shapes, answered by
//! clicking (or pointing with the arrow keys) at a shape.
//!
//! - **Stage 1** (the issued prompt): a cluttered picture of shapes of six kinds (circle,
//!   triangle, square, star, cross, heart) drawn in varied sizes, tilts, colours and styles
//!   (solid, outlined, striped, dotted), partly overlapping, crossed by strokes of the same
//!   colours. One kind appears exactly once, the others at least twice: click that lone shape.
//! - **Stage 2** (shown only after a right stage-1 answer, `POST /v1/challenges/stage`): a new
//!   picture with two to four shapes of the stage-1 kind among shapes of every other kind:
//!   click each of them (and no other).
//!
//! The question texts are fixed: everything that decides the answer is in the pictures, so a
//! text parser has nothing to read. Each stage needs every shape of the picture told apart by
//! the kind a person sees in its outline (no kind owns a colour, a size or a style), and the
//! second picture means nothing without the kind found in the first. A wrong stage-1 answer is
//! final, like any wrong answer.
//!
//! Difficulty (1..=3, default 2) sets the shapes per picture: 9, 10 or 11.
//!
//! Prompt data (JSON): `{"stage":1,"stages":2,"width":360,"height":270,"image":base64 PNG,
//! "alt":…}`. A click is `x,y` in picture pixels; it hits a shape within 90 % of its radius
//! (plus 3 px). The stage request's answer is the stage-1 click; the final answer is the
//! stage-1 click, `|`, then the stage-2 clicks separated by `;` (`40,52|10,20;200,31`), each
//! stage-2 shape hit by exactly one click.
//!
//! The family needs sight ([`Family::is_visual`]): an identity that opted out of visual
//! challenges never draws it, and gets the network's non-visual families instead (presence
//! where it is a step, arithmetic_reasoning where it is enabled).

mod render;
pub mod scene;
#[cfg(test)]
mod tests;

use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed};

pub use render::{covers, draw, paint, png};
pub use scene::{HEIGHT, WIDTH};

/// Allowed sizes.
pub const SIZES: std::ops::RangeInclusive<u32> = 1..=3;
/// Questions per challenge.
pub const STAGES: usize = 2;

/// The question of stage 1.
pub const FIRST_QUESTION: &str =
    "One kind of shape appears only once in this picture. Click that shape.";
/// The question of stage 2.
pub const SECOND_QUESTION: &str =
    "New picture: click every shape of the same kind as the one you just clicked, then Send.";
/// Most stage-2 clicks.
const MAX_CLICKS: usize = 4;

/// The interactive reasoning family.
#[derive(Debug, Default, Clone, Copy)]
pub struct InteractiveReasoning;

/// The prompt payload of either stage.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageData {
    /// 1 or 2.
    pub stage: usize,
    /// [`STAGES`].
    pub stages: usize,
    /// Picture width.
    pub width: u32,
    /// Picture height.
    pub height: u32,
    /// The picture, base64 PNG.
    pub image: String,
    /// Text for the image's `alt`.
    pub alt: String,
}

/// Where a stage's answer lies: centre and radius of the target, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Target {
    x: u16,
    y: u16,
    r: u16,
}

impl Target {
    fn of(scene: &scene::Scene) -> Vec<Self> {
        scene
            .targets
            .iter()
            .map(|&i| {
                let t = &scene.shapes[i];
                Target {
                    x: t.x as u16,
                    y: t.y as u16,
                    r: t.r as u16,
                }
            })
            .collect()
    }

    fn hit(&self, (x, y): (u16, u16)) -> bool {
        let (dx, dy) = (
            i64::from(x) - i64::from(self.x),
            i64::from(y) - i64::from(self.y),
        );
        let reach = i64::from(self.r) * 9 / 10 + 3;
        dx * dx + dy * dy <= reach * reach
    }
}

/// Shapes per picture.
pub fn shapes(params: &FamilyParams) -> usize {
    8 + params.difficulty.clamp(*SIZES.start(), *SIZES.end()) as usize
}

/// Both scenes of a seed (layout only: nothing is drawn).
pub fn scenes(seed: &Seed, params: &FamilyParams) -> (scene::Scene, scene::Scene) {
    let n = shapes(params);
    let (first, lone) = scene::first(&mut seed.derive("interactive_reasoning 1").stream(), n);
    let second = scene::second(
        &mut seed.derive("interactive_reasoning 2").stream(),
        n,
        lone,
    );
    (first, second)
}

fn prompt(stage: usize, scene: &scene::Scene) -> Prompt {
    let data = StageData {
        stage,
        stages: STAGES,
        width: WIDTH,
        height: HEIGHT,
        image: base64::engine::general_purpose::STANDARD.encode(render::png(scene)),
        alt: format!(
            "Picture {stage} of {STAGES}: shapes of several kinds among crossing lines. \
             This challenge needs sight."
        ),
    };
    Prompt {
        family: InteractiveReasoning.name().to_owned(),
        text: if stage == 1 {
            FIRST_QUESTION
        } else {
            SECOND_QUESTION
        }
        .to_owned(),
        data: serde_json::to_vec(&data).unwrap_or_default(),
    }
}

/// The key: the stage-1 target, then the stage-2 targets, each `x, y, r` as `u16` LE.
fn decode_key(key: &AnswerKey) -> Result<(Target, Vec<Target>), Reject> {
    let b = key.0.as_slice();
    let corrupt = Reject::InvalidAnswerFormat("corrupt key");
    if !b.len().is_multiple_of(6) || b.len() < 12 || b.len() > 6 * (1 + MAX_CLICKS) {
        return Err(corrupt);
    }
    let mut targets = b.chunks_exact(6).map(|c| Target {
        x: u16::from_le_bytes([c[0], c[1]]),
        y: u16::from_le_bytes([c[2], c[3]]),
        r: u16::from_le_bytes([c[4], c[5]]),
    });
    let first = targets.next().ok_or(corrupt)?;
    Ok((first, targets.collect()))
}

const FORMAT: &str =
    "give clicks as x,y in picture pixels: the stage-1 click, |, the stage-2 clicks separated by ;";

/// Parses clicks `x,y;x,y…` inside the picture, at most `most`.
fn parse_clicks(text: &str, most: usize) -> Result<Vec<(u16, u16)>, Reject> {
    let clicks = text
        .split(';')
        .map(|click| {
            let (x, y) = click.split_once(',')?;
            let x: u16 = x.trim().parse().ok()?;
            let y: u16 = y.trim().parse().ok()?;
            (u32::from(x) < WIDTH && u32::from(y) < HEIGHT).then_some((x, y))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or(Reject::InvalidAnswerFormat(FORMAT))?;
    if clicks.is_empty() || clicks.len() > most {
        return Err(Reject::InvalidAnswerFormat(FORMAT));
    }
    Ok(clicks)
}

fn answer_text(answer: &[u8]) -> Result<&str, Reject> {
    if answer.len() > InteractiveReasoning.max_answer_len() {
        return Err(Reject::InvalidAnswerFormat("the answer is too long"));
    }
    let text = std::str::from_utf8(answer)
        .map_err(|_| Reject::InvalidAnswerFormat("the answer must be UTF-8"))?
        .trim();
    if text.is_empty() {
        return Err(Reject::MissingAnswer);
    }
    Ok(text)
}

/// Whether each target is hit by its own click, and every click hits a target.
fn all_hit(targets: &[Target], clicks: &[(u16, u16)]) -> bool {
    fn assign(targets: &[Target], clicks: &[(u16, u16)], used: &mut [bool]) -> bool {
        let Some((t, rest)) = targets.split_first() else {
            return true;
        };
        for (i, c) in clicks.iter().enumerate() {
            if !used[i] && t.hit(*c) {
                used[i] = true;
                if assign(rest, clicks, used) {
                    return true;
                }
                used[i] = false;
            }
        }
        false
    }
    targets.len() == clicks.len() && assign(targets, clicks, &mut vec![false; clicks.len()])
}

fn check_first(first: &Target, text: &str) -> Result<(), Reject> {
    let clicks = parse_clicks(text, 1)?;
    if all_hit(std::slice::from_ref(first), &clicks) {
        Ok(())
    } else {
        Err(Reject::AnswerMismatch)
    }
}
impl Family for InteractiveReasoning {
    fn name(&self) -> &'static str {
        "interactive_reasoning"
    }

    fn class(&self) -> Class {
        Class::Human
    }

    /// A person needs about this long at least (two pictures, two clicks).
    fn min_human_solve_ms(&self) -> u64 {
        3000
    }

    fn max_answer_len(&self) -> usize {
        64
    }

    fn default_params(&self) -> FamilyParams {
        FamilyParams { difficulty: 2 }
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        crate::check_difficulty(params, SIZES, "shapes per picture")
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let (first, second) = scenes(seed, params);
        let mut key = Vec::with_capacity(6 * (1 + MAX_CLICKS));
        for t in Target::of(&first).iter().chain(&Target::of(&second)) {
            for v in [t.x, t.y, t.r] {
                key.extend_from_slice(&v.to_le_bytes());
            }
        }
        Generated {
            prompt: prompt(1, &first),
            key: AnswerKey(key),
        }
    }

    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
        let (first, second) = decode_key(key)?;
        let text = answer_text(answer)?;
        let (one, two) = text
            .split_once('|')
            .ok_or(Reject::InvalidAnswerFormat(FORMAT))?;
        let (one, two) = (parse_clicks(one, 1)?, parse_clicks(two, MAX_CLICKS)?);
        if all_hit(std::slice::from_ref(&first), &one) && all_hit(&second, &two) {
            Ok(())
        } else {
            Err(Reject::AnswerMismatch)
        }
    }

    fn is_visual(&self) -> bool {
        true
    }

    fn stages(&self) -> usize {
        STAGES
    }

    fn stage_prompt(&self, seed: &Seed, params: &FamilyParams, stage: usize) -> Option<Prompt> {
        (stage == 2).then(|| prompt(2, &scenes(seed, params).1))
    }

    fn check_stage(&self, key: &AnswerKey, stage: usize, answer: &[u8]) -> Result<(), Reject> {
        if stage != 1 {
            return Err(Reject::InvalidAnswerFormat(
                "only stage 1 is answered alone",
            ));
        }
        let (first, _) = decode_key(key)?;
        check_first(&first, answer_text(answer)?)
    }

    /// No built-in solver: the attackers we measure live in the node (`hco bench attack`).
    fn solve(&self, _prompt: &Prompt) -> Option<Vec<u8>> {
        None
    }

    fn reference_answer(&self, key: &AnswerKey) -> Option<Vec<u8>> {
        let (first, second) = decode_key(key).ok()?;
        let clicks: Vec<String> = second.iter().map(|t| format!("{},{}", t.x, t.y)).collect();
        Some(format!("{},{}|{}", first.x, first.y, clicks.join(";")).into_bytes())
    }
}
