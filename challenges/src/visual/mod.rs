//! `visual_match`: the two image CAPTCHAs of von Ahn, Blum, Hopper and Langford, PIX and
//! MATCHA, over images of words rendered from the bundled DejaVu Sans Bold.
//!
//! The image distribution 𝓘 is a word from the label list (the vocabulary's words of four to
//! seven letters, in capitals, about four hundred) laid out upright; the transformation
//! distribution 𝓣 tilts and shifts each letter, crowds letters together, rotates, shears,
//! scales and sine-warps the word, then erases blobs of it (occlusion), strikes clutter lines
//! through it and sprinkles speckle noise, on a random background gradient. Each challenge
//! draws PIX or MATCHA with equal probability:
//!
//! - **PIX** (paper §4.2): one distorted image `t(i)` and six labels `L` (the true one and five
//!   of similar length). Answer: the label, compared after [`normalize_answer`](crate::normalize::normalize_answer)
//!   (`falcon` and `FALCON` are the same answer).
//! - **MATCHA** (paper §4.1): [`MATCHA_ROUNDS`] rounds, each a clean reference image `i` and a
//!   distorted image `t(j)`; a fair coin per round makes `j = i` ("same") or `j` another word of
//!   the same length ("different"). Answer: one letter per round, `S` or `D`, in order
//!   (`SDS`; case, spaces and commas are ignored). The reference and the distorted word are
//!   drawn alike in both cases, as the paper's first remark recommends.
//!
//! The paper plays MATCHA interactively, round after round until a "same" pair. A stateless
//! verifier cannot hold that conversation, and sending all the rounds of that protocol at once
//! would give its answer away (every round but the last is "different"), so the rounds here
//! are independent and all must be right: guessing succeeds with probability 1/8, against 1/6
//! for PIX.
//!
//! Difficulty (1..=5, default 5) sets the distortion strength `d`: word rotation up to
//! ±(3+3d)°, each letter tilted by up to ±6·min(d,4)° and shifted ±(1+d) px vertically, letter
//! gaps between −d and +2 px, shear up to ±0.05d, sine warp of amplitude 0.8+0.8d px,
//! d−1 occluding blobs, ⌈d/2⌉ clutter lines and 25d speckles.
//!
//! Prompt data (JSON): `{"mode":"pix"|"matcha","width":200,"height":80,"images":[base64 PNG…],
//! "alt":[…],"choices":[…]}` (`choices` for PIX; for MATCHA `rounds`, with the images in
//! reference, distorted order per round). The `alt` texts describe each image's role without
//! its content. This is a visual family: an identity that opts out of visual challenges is
//! served the non-visual families (`interactive_reasoning`, presence) instead.
//!
//! The baseline solver (`baseline.rs`) is template matching against renderings of the
//! candidate labels in the same font, after removing thin clutter and speckles; it is reported
//! as the family's measured ε_auto. It wins at low distortion — on 300 challenges per level it
//! solved about 98%, 95%, 75%, 58% and 28% at difficulties 1 to 5 (guessing: about 15%) — which
//! is why the default is the strongest distortion. Human success at each level is unmeasured.

mod baseline;
mod clutter;
mod encode;
mod font;
mod geometry;
mod render;
#[cfg(test)]
mod tests;
mod trig;

use serde::{Deserialize, Serialize};

use crate::normalize::{normalize_answer, normalize_upper};
use crate::{AnswerKey, Class, Family, FamilyParams, Generated, Prompt, Reject, Seed, SeedStream};
use encode::{clean_base64, labels, png_base64};
use geometry::{HEIGHT, Strength, WIDTH};
use render::distorted;

/// Allowed distortion strengths.
pub const STRENGTHS: std::ops::RangeInclusive<u32> = 1..=5;
/// Labels offered in a PIX challenge.
pub const PIX_CHOICES: usize = 6;
/// Rounds in a MATCHA challenge.
pub const MATCHA_ROUNDS: usize = 3;

/// The visual matching family (PIX and MATCHA).
#[derive(Debug, Default, Clone, Copy)]
pub struct VisualMatch;

/// The prompt payload.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct VisualData {
    pub mode: String,
    pub width: u32,
    pub height: u32,
    pub images: Vec<String>,
    pub alt: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<usize>,
}

impl VisualData {
    /// The JSON form. Written by hand because the images dominate it and base64 needs no
    /// escaping; the short strings go through `serde_json`.
    fn to_json(&self) -> Vec<u8> {
        let strings = |v: &[String]| serde_json::to_string(v).unwrap_or_else(|_| "[]".into());
        let size: usize = self.images.iter().map(|i| i.len() + 3).sum();
        let mut out = String::with_capacity(size + 512);
        out.push_str(&format!(
            "{{\"mode\":\"{}\",\"width\":{},\"height\":{},\"images\":[",
            self.mode, self.width, self.height
        ));
        for (i, image) in self.images.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(image);
            out.push('"');
        }
        out.push_str("],\"alt\":");
        out.push_str(&strings(&self.alt));
        if !self.choices.is_empty() {
            out.push_str(",\"choices\":");
            out.push_str(&strings(&self.choices));
        }
        if let Some(rounds) = self.rounds {
            out.push_str(&format!(",\"rounds\":{rounds}"));
        }
        out.push('}');
        out.into_bytes()
    }
}

/// Indices of labels other than `not` whose length is within `slack` of `len`.
fn similar(len: usize, slack: usize, not: usize) -> Vec<usize> {
    labels()
        .iter()
        .enumerate()
        .filter(|&(i, w)| i != not && w.len().abs_diff(len) <= slack)
        .map(|(i, _)| i)
        .collect()
}

fn pix(s: &mut SeedStream, strength: &Strength) -> (VisualData, String, Vec<u8>) {
    let all = labels();
    let answer = s.below(all.len() as u64) as usize;
    let mut pool = similar(all[answer].len(), 1, answer);
    s.shuffle(&mut pool);
    let mut choices: Vec<String> = std::iter::once(answer)
        .chain(pool.into_iter().take(PIX_CHOICES - 1))
        .map(|i| all[i].clone())
        .collect();
    s.shuffle(&mut choices);
    let image = png_base64(&distorted(&all[answer], strength, s));
    let text = format!(
        "Which word does the distorted image show? Choose one: {}.",
        choices.join(", ")
    );
    let data = VisualData {
        mode: "pix".into(),
        width: WIDTH,
        height: HEIGHT,
        images: vec![image],
        alt: vec!["distorted image of one word".into()],
        choices,
        rounds: None,
    };
    let mut key = b"P".to_vec();
    key.extend_from_slice(all[answer].as_bytes());
    (data, text, key)
}

fn matcha(s: &mut SeedStream, strength: &Strength) -> (VisualData, String, Vec<u8>) {
    let all = labels();
    let mut images = Vec::with_capacity(2 * MATCHA_ROUNDS);
    let mut alt = Vec::with_capacity(2 * MATCHA_ROUNDS);
    let mut key = b"M".to_vec();
    for round in 1..=MATCHA_ROUNDS {
        let reference = s.below(all.len() as u64) as usize;
        let same = s.chance(50);
        let shown = if same {
            reference
        } else {
            let pool = similar(all[reference].len(), 0, reference);
            pool[s.below(pool.len() as u64) as usize]
        };
        images.push(clean_base64(reference).to_owned());
        images.push(png_base64(&distorted(&all[shown], strength, s)));
        alt.push(format!("round {round}: clean reference word"));
        alt.push(format!("round {round}: distorted word to compare"));
        key.push(if same { b'S' } else { b'D' });
    }
    let text = format!(
        "{MATCHA_ROUNDS} rounds follow. In each, say whether the clean word and the distorted one \
         are the same word or differ (as text: one letter per round in order, S for same and D \
         for different, for example SDS)."
    );
    let data = VisualData {
        mode: "matcha".into(),
        width: WIDTH,
        height: HEIGHT,
        images,
        alt,
        choices: Vec::new(),
        rounds: Some(MATCHA_ROUNDS),
    };
    (data, text, key)
}

impl Family for VisualMatch {
    fn name(&self) -> &'static str {
        "visual_match"
    }

    fn class(&self) -> Class {
        Class::Human
    }

    /// A person needs about this long at least (reading two images and choosing).
    fn min_human_solve_ms(&self) -> u64 {
        1500
    }

    fn is_visual(&self) -> bool {
        true
    }

    fn max_answer_len(&self) -> usize {
        64
    }

    fn default_params(&self) -> FamilyParams {
        FamilyParams { difficulty: 5 }
    }

    fn check_params(&self, params: &FamilyParams) -> Result<(), String> {
        crate::check_difficulty(params, STRENGTHS, "distortion strength")
    }

    fn generate(&self, seed: &Seed, params: &FamilyParams) -> Generated {
        let mut s = seed.derive("visual_match").stream();
        let strength = Strength::of(params.difficulty);
        let (data, text, key) = if s.chance(50) {
            pix(&mut s, &strength)
        } else {
            matcha(&mut s, &strength)
        };
        Generated {
            prompt: Prompt {
                family: self.name().to_owned(),
                text,
                data: data.to_json(),
            },
            key: AnswerKey(key),
        }
    }

    fn verify(&self, key: &AnswerKey, answer: &[u8]) -> Result<(), Reject> {
        let corrupt = Reject::InvalidAnswerFormat("corrupt key");
        let (&mode, expected) = key.0.split_first().ok_or(corrupt.clone())?;
        let expected = std::str::from_utf8(expected).map_err(|_| corrupt.clone())?;
        if answer.len() > self.max_answer_len() {
            return Err(Reject::InvalidAnswerFormat("the answer is too long"));
        }
        let text = std::str::from_utf8(answer)
            .map_err(|_| Reject::InvalidAnswerFormat("the answer must be UTF-8"))?;
        if text.trim().is_empty() {
            return Err(Reject::MissingAnswer);
        }
        let right = match mode {
            b'P' => normalize_answer(text) == expected.to_ascii_lowercase(),
            b'M' => {
                let got: String = normalize_upper(text)
                    .chars()
                    .filter(|c| !c.is_whitespace() && *c != ',')
                    .collect();
                if got.len() != expected.len() || !got.bytes().all(|b| b == b'S' || b == b'D') {
                    return Err(Reject::InvalidAnswerFormat(
                        "one letter S or D per round, in order",
                    ));
                }
                got == expected
            }
            _ => return Err(corrupt),
        };
        if right {
            Ok(())
        } else {
            Err(Reject::AnswerMismatch)
        }
    }

    fn solve(&self, prompt: &Prompt) -> Option<Vec<u8>> {
        baseline::solve(&prompt.data)
    }

    fn reference_answer(&self, key: &AnswerKey) -> Option<Vec<u8>> {
        let (&mode, rest) = key.0.split_first()?;
        matches!(mode, b'P' | b'M').then(|| rest.to_vec())
    }
}
