//! `hco bench attack dataset`: labelled challenges of an image family, rendered by the very
//! generator the issuer runs (`Family::generate`, and `Family::stage_prompt` for a later
//! stage), for training an attacker (`scripts/train-attacker/`).
//!
//! Writes the prompt images as PNG files in `--out` and one JSON line per challenge to
//! `--out/labels.jsonl`:
//!
//! - `visual_match`: `{"id", "seed", "difficulty", "answer": "KDMPR", "images": ["000000.png"]}`.
//! - `interactive_reasoning`: `{"id", "seed", "difficulty", "answer": "x,y|x,y;x,y",
//!   "images": ["000000-1.png", "000000-2.png"], "stages": [{"shapes": [{"kind", "x", "y",
//!   "r"}…], "targets": [i…]}, …]}`: every shape of each stage's picture with its kind, centre
//!   and radius, and which of them answer the stage.
//! - `attention`: `{"id", "seed", "difficulty", "answer": "<sealed log>", "cue": "K",
//!   "end_ms", "images": ["000000-1.png", …], "events": [{"image", "at_ms", "target": i|null,
//!   "glyphs": [{"letter", "cell", "x", "y"}…]}…]}`: each event's frame exactly as the stream
//!   sends it (frame `2k + 1` of the stream for event `k`; the blank frames between events are
//!   not written), every letter on it with its cell (row-major on the 3×3 grid) and centre, and
//!   which of them is the cue, if any. A per-cell classifier learns the letter (or none) of
//!   each cell; the answer clicks the cue's cell in each event that shows it.
//!
//! `answer` is the family's reference answer for the challenge's key, so the family's own
//! `verify` accepts it: the labels are right by construction (for `attention`, the log of a
//! person who clicked every cue, sealed with the challenge's key; a test also checks that a log
//! built from the event labels alone is accepted). Challenge `i` of seed `S` is
//! generated from `blake3("hco attack dataset v1" ‖ S ‖ i)`: the same command writes the same
//! set, and sets of different seeds do not overlap.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use base64::Engine as _;
use clap::Args;
use hco_challenges::attention::Live;
use hco_challenges::interactive::scene::{Kind, Scene};
use hco_challenges::{Family, FamilyParams, Generated, Seed};
use serde_json::{Value, json};

/// The families the command renders.
pub const FAMILIES: [&str; 3] = ["visual_match", "interactive_reasoning", "attention"];

/// Options of `hco bench attack dataset`.
#[derive(Debug, Args)]
pub struct DatasetArgs {
    /// The family (`visual_match`, `interactive_reasoning` or `attention`).
    #[arg(long)]
    pub family: String,
    /// Challenges to render.
    #[arg(long, default_value_t = 1000)]
    pub count: u64,
    /// The set's seed; sets of different seeds are disjoint.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The difficulty; by default the family's own (what `configs/single.toml` serves).
    #[arg(long)]
    pub difficulty: Option<u32>,
    /// Directory to write the images and `labels.jsonl` into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Rendering threads (by default one per core).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// The seed of challenge `index` of set `seed`.
pub fn item_seed(seed: u64, index: u64) -> Seed {
    let mut h = blake3::Hasher::new();
    h.update(b"hco attack dataset v1\0");
    h.update(&seed.to_le_bytes());
    h.update(&index.to_le_bytes());
    Seed(*h.finalize().as_bytes())
}

/// One labelled challenge: its label line and its images (file name, PNG bytes).
pub struct Item {
    /// The line written to `labels.jsonl`.
    pub label: Value,
    /// The images, in stage order.
    pub images: Vec<(String, Vec<u8>)>,
}

fn family_of(name: &str) -> anyhow::Result<std::sync::Arc<dyn Family>> {
    anyhow::ensure!(
        FAMILIES.contains(&name),
        "the dataset command renders {} only, not `{name}`",
        FAMILIES.join(", ")
    );
    hco_challenges::Registry::builtin()
        .get(name)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("unknown family `{name}`"))
}

fn png_of(data: &[u8], field: &str) -> anyhow::Result<Vec<u8>> {
    let data: Value = serde_json::from_slice(data)?;
    let image = match &data[field] {
        Value::Array(images) => images.first().and_then(Value::as_str),
        other => other.as_str(),
    }
    .with_context(|| format!("the prompt has no `{field}`"))?;
    Ok(base64::engine::general_purpose::STANDARD.decode(image)?)
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Circle => "circle",
        Kind::Triangle => "triangle",
        Kind::Square => "square",
        Kind::Star => "star",
        Kind::Cross => "cross",
        Kind::Heart => "heart",
    }
}

fn scene_label(scene: &Scene) -> Value {
    let shapes: Vec<Value> = scene
        .shapes
        .iter()
        .map(|s| json!({"kind": kind_name(s.kind), "x": s.x, "y": s.y, "r": s.r}))
        .collect();
    json!({"shapes": shapes, "targets": scene.targets})
}

/// Renders challenge `index` of set `seed` of `family` at `params`.
pub fn item(f: &dyn Family, seed: u64, index: u64, params: &FamilyParams) -> anyhow::Result<Item> {
    let s = item_seed(seed, index);
    let Generated { prompt, key } = f.generate(&s, params);
    let answer = f
        .reference_answer(&key)
        .context("the family gives no reference answer")?;
    let id = format!("{index:06}");
    let mut label = json!({
        "id": id,
        "seed": hex::encode(s.0),
        "difficulty": params.difficulty,
        "answer": String::from_utf8(answer)?,
    });
    let images = if f.name() == hco_challenges::attention::NAME {
        attention_label(&mut label, &key, &id)?
    } else if f.name() == "visual_match" {
        vec![(format!("{id}.png"), png_of(&prompt.data, "images")?)]
    } else {
        let second = f.stage_prompt(&s, params, 2).context("no stage-2 prompt")?;
        let (one, two) = hco_challenges::interactive::scenes(&s, params);
        label["stages"] = json!([scene_label(&one), scene_label(&two)]);
        vec![
            (format!("{id}-1.png"), png_of(&prompt.data, "image")?),
            (format!("{id}-2.png"), png_of(&second.data, "image")?),
        ]
    };
    label["images"] = json!(images.iter().map(|(n, _)| n).collect::<Vec<_>>());
    Ok(Item { label, images })
}

/// The `attention` labels of `key` into `label` (cue, events, letters); the event frames.
fn attention_label(
    label: &mut Value,
    key: &hco_challenges::AnswerKey,
    id: &str,
) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let live = Live::from_key(key).context("not an attention key")?;
    let mut images = Vec::with_capacity(live.plan.events.len());
    let mut events = Vec::with_capacity(live.plan.events.len());
    for (k, e) in live.plan.events.iter().enumerate() {
        let name = format!("{id}-{}.png", k + 1);
        // Frame 0 is blank; event k is released by frame 2k + 1 (see `Live::frames`).
        images.push((name.clone(), live.render(2 * k + 1)));
        let glyphs: Vec<Value> = e
            .glyphs
            .iter()
            .map(|g| {
                json!({"letter": char::from(g.letter).to_string(), "cell": g.cell, "x": g.x, "y": g.y})
            })
            .collect();
        events.push(json!({"image": name, "at_ms": e.at_ms, "target": e.target, "glyphs": glyphs}));
    }
    label["cue"] = json!(char::from(live.plan.cue).to_string());
    label["end_ms"] = json!(live.plan.end_ms);
    label["events"] = json!(events);
    Ok(images)
}

/// Runs the command: prints `{"family", "count", "out", "seconds"}` when done.
pub fn run(args: &DatasetArgs) -> anyhow::Result<()> {
    let f = family_of(&args.family)?;
    let params = FamilyParams {
        difficulty: args.difficulty.unwrap_or(f.default_params().difficulty),
    };
    f.check_params(&params).map_err(|e| anyhow::anyhow!(e))?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let started = std::time::Instant::now();
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    // Each thread renders every `threads`-th challenge and writes its images; the labels are
    // written in order afterwards.
    let rendered: Vec<anyhow::Result<Vec<(u64, Value)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads as u64)
            .map(|first| {
                let (f, params) = (f.as_ref(), &params);
                s.spawn(move || -> anyhow::Result<Vec<(u64, Value)>> {
                    let mut out = Vec::new();
                    for i in (first..args.count).step_by(threads) {
                        let item = item(f, args.seed, i, params)?;
                        for (name, png) in &item.images {
                            std::fs::write(args.out.join(name), png)?;
                        }
                        out.push((i, item.label));
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a rendering thread panicked")))
            })
            .collect()
    });
    let mut lines = Vec::with_capacity(args.count as usize);
    for part in rendered {
        lines.extend(part?);
    }
    lines.sort_by_key(|(i, _)| *i);
    let mut labels = std::io::BufWriter::new(std::fs::File::create(args.out.join("labels.jsonl"))?);
    for (_, label) in &lines {
        writeln!(labels, "{label}")?;
    }
    labels.flush()?;
    println!(
        "{}",
        json!({
            "family": args.family,
            "count": args.count,
            "difficulty": params.difficulty,
            "out": args.out.display().to_string(),
            "seconds": started.elapsed().as_secs_f64(),
        })
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a small set and checks every label against the family's own verify.
    fn labels_verify(family: &str) {
        let dir = tempfile::tempdir().unwrap();
        let f = family_of(family).unwrap();
        let args = DatasetArgs {
            family: family.to_owned(),
            count: 4,
            seed: 7,
            difficulty: None,
            out: dir.path().to_owned(),
            threads: None,
        };
        run(&args).unwrap();
        let text = std::fs::read_to_string(dir.path().join("labels.jsonl")).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        for (i, label) in lines.iter().enumerate() {
            let key = f.generate(&item_seed(7, i as u64), &f.default_params()).key;
            let answer = label["answer"].as_str().unwrap();
            assert_eq!(f.verify(&key, answer.as_bytes()), Ok(()), "{label}");
            for image in label["images"].as_array().unwrap() {
                let png = std::fs::read(dir.path().join(image.as_str().unwrap())).unwrap();
                assert!(png.starts_with(b"\x89PNG"), "{image}");
            }
        }
        // A label of another challenge is (almost surely) refused: the key is the challenge's.
        let other = f.generate(&item_seed(8, 0), &f.default_params()).key;
        let first = lines[0]["answer"].as_str().unwrap();
        assert!(f.verify(&other, first.as_bytes()).is_err());
    }

    #[test]
    fn visual_match_labels_are_accepted_by_verify() {
        labels_verify("visual_match");
    }

    #[test]
    fn interactive_labels_are_accepted_and_name_the_targets() {
        labels_verify("interactive_reasoning");
        let params = FamilyParams { difficulty: 2 };
        let f = family_of("interactive_reasoning").unwrap();
        let item = item(f.as_ref(), 1, 0, &params).unwrap();
        let stages = item.label["stages"].as_array().unwrap();
        // Stage 1's one target is the kind seen once; stage 2's targets are all of that kind.
        let kind = |stage: &Value, i: &Value| {
            stage["shapes"][i.as_u64().unwrap() as usize]["kind"].clone()
        };
        let lone = kind(&stages[0], &stages[0]["targets"][0]);
        let seen = stages[0]["shapes"].as_array().unwrap();
        assert_eq!(seen.iter().filter(|s| s["kind"] == lone).count(), 1);
        for t in stages[1]["targets"].as_array().unwrap() {
            assert_eq!(kind(&stages[1], t), lone);
        }
        assert_eq!(item.images.len(), 2);
    }

    /// The attention labels: a log built from the event labels alone (a click on the cue's
    /// cell centre in each event that shows it, none elsewhere) is accepted, and one that
    /// clicks a letter that is not the cue is refused; each image is the stream's frame.
    #[test]
    fn attention_labels_are_accepted_and_place_the_cue() {
        use hco_challenges::attention::{CELL, Click, GRID, Log};
        labels_verify("attention");
        let f = family_of("attention").unwrap();
        let params = f.default_params();
        for index in 0..3 {
            let item = item(f.as_ref(), 5, index, &params).unwrap();
            let label = &item.label;
            let key = f.generate(&item_seed(5, index), &params).key;
            let live = Live::from_key(&key).unwrap();
            let cue = label["cue"].as_str().unwrap();
            assert_eq!(cue, char::from(live.plan.cue).to_string());
            let events = label["events"].as_array().unwrap();
            assert_eq!(events.len(), live.plan.events.len());
            assert_eq!(item.images.len(), events.len());
            let centre = |cell: u64| {
                let c = |i: u64| (i * u64::from(CELL) + u64::from(CELL) / 2) as u32;
                (c(cell % u64::from(GRID)), c(cell / u64::from(GRID)))
            };
            let (mut clicks, mut wrong) = (Vec::new(), Vec::new());
            for (k, e) in events.iter().enumerate() {
                assert_eq!(item.images[k].1, live.render(2 * k + 1), "event {k}");
                let glyphs = e["glyphs"].as_array().unwrap();
                let cues: Vec<&Value> = glyphs.iter().filter(|g| g["letter"] == cue).collect();
                let at = e["at_ms"].as_u64().unwrap() as u32 + 500 + 37 * k as u32;
                match e["target"].as_u64() {
                    Some(t) => {
                        assert_eq!(cues.len(), 1);
                        assert_eq!(&glyphs[t as usize], cues[0]);
                        let (x, y) = centre(cues[0]["cell"].as_u64().unwrap());
                        clicks.push(Click { at, rtt: 2, x, y });
                        // Wrong: the next letter of the event instead.
                        let other = &glyphs[(t as usize + 1) % glyphs.len()];
                        let (x, y) = centre(other["cell"].as_u64().unwrap());
                        wrong.push(Click { at, rtt: 2, x, y });
                    }
                    None => assert!(cues.is_empty()),
                }
            }
            let log = |clicks: Vec<Click>| {
                Log {
                    releases: events
                        .iter()
                        .map(|e| e["at_ms"].as_u64().unwrap() as u32)
                        .collect(),
                    clicks,
                    end: label["end_ms"].as_u64().unwrap() as u32,
                    mac: String::new(),
                }
                .seal(&live.mac_key)
                .to_answer()
            };
            assert_eq!(f.verify(&key, &log(clicks)), Ok(()), "{label}");
            let refused = f.verify(&key, &log(wrong)).unwrap_err();
            assert_eq!(refused.code(), "wrong_target_position", "{label}");
        }
    }

    #[test]
    fn other_families_are_refused() {
        let e = family_of("presence").err().unwrap();
        assert!(e.to_string().contains("renders"), "{e}");
    }
}
