//! Attackers of `visual_match`, written with its source in hand (`challenges/src/visual/`):
//!
//! - `template`: the renderer's own glyph atlas slid over the cleaned, deskewed ink at every
//!   tilt and several scales, and a dynamic programme for the best spaced string of the
//!   prompt's length (`hco_challenges::visual::analysis`).
//! - `tesseract`: Tesseract on the raw image and on the cleaned ink (clutter lines and specks
//!   removed, rotation undone, enlarged), in line, word and raw-line modes with the prompt's
//!   alphabet as whitelist; the most frequent reading of the right length wins. If a prompt
//!   lists labels (`choices`, the PIX of the paper), it answers the label nearest its readings.
//! - `blind-guess`: a uniform string over the prompt's alphabet (or a uniform label).
//!
//! Each waits out the family's minimum solve time, as a careful script does.

use std::time::Duration;

use anyhow::Context;
use base64::Engine as _;
use hco_challenges::visual::analysis;
use serde_json::Value;

use super::ocr::{self, Ocr};
use super::{Attack, Session, Verdict, compute};

const FAMILY: &str = "visual_match";

/// What the attackers read from a prompt.
struct Prompt {
    png: Vec<u8>,
    length: usize,
    alphabet: String,
    choices: Vec<String>,
}

/// The prompt of the session's challenge, which must be a `visual_match` one.
fn session_prompt(session: &Session<'_>) -> anyhow::Result<Prompt> {
    anyhow::ensure!(
        session.prompt().family == FAMILY,
        "not a {FAMILY} challenge"
    );
    prompt(session.data())
}

fn prompt(data: &Value) -> anyhow::Result<Prompt> {
    let image = data["images"][0].as_str().context("no image")?;
    let png = base64::engine::general_purpose::STANDARD.decode(image)?;
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok(Prompt {
        png,
        length: data["length"].as_u64().unwrap_or(5) as usize,
        alphabet: data["alphabet"]
            .as_str()
            .unwrap_or("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
            .to_owned(),
        choices: strings(&data["choices"]),
    })
}

fn json_bytes(data: &Value) -> Vec<u8> {
    serde_json::to_vec(data).unwrap_or_default()
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The answer from OCR readings: the label nearest them all when labels are listed, else the
/// most frequent reading of the right length, else the first reading cut or padded to it.
fn pick(readings: &[String], p: &Prompt) -> String {
    if !p.choices.is_empty() {
        return p
            .choices
            .iter()
            .min_by_key(|c| readings.iter().map(|r| distance(r, c)).sum::<usize>())
            .cloned()
            .unwrap_or_default();
    }
    let fitting: Vec<&String> = readings
        .iter()
        .filter(|r| r.chars().count() == p.length)
        .collect();
    if let Some(best) = fitting
        .iter()
        .max_by_key(|r| fitting.iter().filter(|s| s == r).count())
    {
        return (*best).clone();
    }
    let filler = p.alphabet.chars().next().unwrap_or('A');
    let first = readings
        .iter()
        .max_by_key(|r| r.len())
        .cloned()
        .unwrap_or_default();
    first
        .chars()
        .chain(std::iter::repeat(filler))
        .take(p.length)
        .collect()
}

/// Tesseract with preprocessing written against the family's clutter.
pub struct Tesseract;

impl Tesseract {
    /// Readings of every variant; only the raw image when `quick` (little time left).
    fn readings(p: &Prompt, quick: bool) -> Vec<String> {
        let mut images = vec![p.png.clone()];
        if let Some(img) = analysis::decode_png(&p.png).filter(|_| !quick) {
            if let Some((ink, _, _)) = analysis::cleaned(&img) {
                images.push(analysis::png(&analysis::enlarged(&ink.to_image(), 2)));
            }
            images.push(analysis::png(&analysis::enlarged(&img, 2)));
        }
        let mut out = Vec::new();
        for png in &images {
            // One text line, one word, a raw line; the alphabet as whitelist.
            let whitelist = p.alphabet.as_str();
            for psm in [
                Ocr { psm: 7, whitelist },
                Ocr {
                    whitelist,
                    ..Ocr::WORD
                },
                Ocr { psm: 13, whitelist },
            ] {
                // Tesseract crashes on some inputs (SIGFPE on near-empty images): a failed
                // variant is no reading, the others still count.
                let Ok(read) = psm.read(png) else {
                    continue;
                };
                let clean: String = read
                    .to_ascii_uppercase()
                    .chars()
                    .filter(|c| p.alphabet.contains(*c))
                    .collect();
                if !clean.is_empty() {
                    out.push(clean);
                }
            }
        }
        out
    }
}

impl Attack for Tesseract {
    fn family(&self) -> &'static str {
        FAMILY
    }
    fn name(&self) -> &'static str {
        "tesseract"
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        anyhow::ensure!(ocr::available(), "tesseract is not installed");
        let p = session_prompt(session)?;
        let quick = session.remaining() < Duration::from_secs(3);
        let readings = compute(|| Self::readings(&p, quick));
        let answer = pick(&readings, &p);
        session.wait_min_solve(Duration::from_millis(50));
        session.respond(answer.as_bytes())
    }
    fn concurrency(&self) -> usize {
        std::thread::available_parallelism().map_or(1, usize::from)
    }
}

/// The template matcher over the renderer's glyph atlas.
pub struct Template;

impl Attack for Template {
    fn family(&self) -> &'static str {
        FAMILY
    }
    fn name(&self) -> &'static str {
        "template"
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        let data = json_bytes(session.data());
        let answer = compute(|| analysis::solve(&data)).context("no reading")?;
        session.wait_min_solve(Duration::from_millis(50));
        session.respond(&answer)
    }
    fn concurrency(&self) -> usize {
        std::thread::available_parallelism().map_or(1, usize::from)
    }
}

/// A uniform guess.
pub struct BlindGuess;

impl Attack for BlindGuess {
    fn family(&self) -> &'static str {
        FAMILY
    }
    fn name(&self) -> &'static str {
        "blind-guess"
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        let p = session_prompt(session)?;
        let answer = guess(&p, rand::random::<u64>);
        session.wait_min_solve(Duration::from_millis(50));
        session.respond(answer.as_bytes())
    }
}

fn guess(p: &Prompt, mut random: impl FnMut() -> u64) -> String {
    if !p.choices.is_empty() {
        return p.choices[random() as usize % p.choices.len()].clone();
    }
    let letters: Vec<char> = p.alphabet.chars().collect();
    (0..p.length)
        .map(|_| letters[random() as usize % letters.len().max(1)])
        .collect()
}

#[cfg(test)]
#[path = "visual_tests.rs"]
mod tests;
