use super::analysis::{prompt_image, read, solve};
use super::encode::decode_base64_png;
use super::*;

fn challenge(i: u64, difficulty: u32) -> Generated {
    let mut seed = [0x33u8; 32];
    seed[..8].copy_from_slice(&i.to_le_bytes());
    VisualMatch.generate(&Seed(seed), &FamilyParams { difficulty })
}

fn data(g: &Generated) -> VisualData {
    serde_json::from_slice(&g.prompt.data).unwrap()
}

#[test]
fn same_seed_same_bytes_png_included_and_known_answer() {
    for i in 0..12 {
        let (a, b) = (challenge(i, 3), challenge(i, 3));
        assert_eq!(a.prompt, b.prompt);
        assert_eq!(a.key, b.key);
        assert_ne!(a.prompt.data, challenge(i + 100, 3).prompt.data);
    }
    // Audits re-derive prompts from revealed seeds: a change to these bytes (renderer, font,
    // PNG encoder) makes past windows unauditable and must be a deliberate, versioned change.
    let g = VisualMatch.generate(&Seed([0; 32]), &VisualMatch.default_params());
    assert_eq!(
        hex::encode(g.prompt.digest()),
        "276c579fa2c68984c36d84a73b03762668687f0375923e18144fb5c3440e0cb1"
    );
}

#[test]
fn handwritten_json_equals_serde_json() {
    for i in 0..6 {
        let g = challenge(i, 2);
        let parsed: serde_json::Value = serde_json::from_slice(&g.prompt.data).unwrap();
        let d = data(&g);
        assert_eq!(parsed, serde_json::to_value(&d).unwrap());
        assert_eq!(d.to_json(), g.prompt.data);
    }
}

#[test]
fn prompts_are_well_formed_and_say_nothing_of_the_letters() {
    let mut keys = std::collections::BTreeSet::new();
    for i in 0..60 {
        let g = challenge(i, 1 + (i % 5) as u32);
        let d = data(&g);
        assert_eq!(d.mode, "transcribe");
        assert_eq!((d.length, d.alphabet.as_str()), (LENGTH, ALPHABET));
        assert_eq!((d.images.len(), d.alt.len()), (1, 1));
        let decoded = decode_base64_png(&d.images[0]).unwrap();
        assert_eq!(decoded.dimensions(), (WIDTH, HEIGHT));
        assert!(
            d.images[0].len() < 16_000,
            "{} base64 bytes",
            d.images[0].len()
        );
        let answer = String::from_utf8(VisualMatch.reference_answer(&g.key).unwrap()).unwrap();
        assert_eq!(answer.len(), LENGTH);
        assert!(answer.bytes().all(|b| ALPHABET.as_bytes().contains(&b)));
        assert!(!g.prompt.text.contains(&answer) && !d.alt[0].contains(&answer));
        keys.insert(answer);
    }
    // Fresh random strings, not a small label list.
    assert_eq!(keys.len(), 60);
}

#[test]
fn answers_verify_and_wrong_or_malformed_ones_get_their_codes() {
    for i in 0..30 {
        let g = challenge(i, 3);
        let right = String::from_utf8(VisualMatch.reference_answer(&g.key).unwrap()).unwrap();
        assert_eq!(VisualMatch.verify(&g.key, right.as_bytes()), Ok(()));
        let spaced = format!(
            " {} {}-{} ",
            &right[..2].to_ascii_lowercase(),
            &right[2..4],
            &right[4..]
        );
        assert_eq!(VisualMatch.verify(&g.key, spaced.as_bytes()), Ok(()));
        let code = |a: &[u8]| VisualMatch.verify(&g.key, a).unwrap_err().code();
        assert_eq!(code(b""), "missing_answer");
        assert_eq!(code(b"  \n"), "missing_answer");
        assert_eq!(code(&[0xff, 0x00]), "invalid_answer_format");
        assert_eq!(code(&[b'A'; 65]), "invalid_answer_format");
        assert_eq!(code(&right.as_bytes()[..4]), "invalid_answer_format");
        assert_eq!(
            code(format!("{right}A").as_bytes()),
            "invalid_answer_format"
        );
        assert_eq!(code(b"AB1DE"), "invalid_answer_format");
        let mut wrong = right.clone().into_bytes();
        wrong[i as usize % LENGTH] = if wrong[i as usize % LENGTH] == b'A' {
            b'C'
        } else {
            b'A'
        };
        assert_eq!(code(&wrong), "answer_mismatch");
    }
    assert!(VisualMatch.verify(&AnswerKey(vec![]), b"x").is_err());
    assert!(
        VisualMatch
            .verify(&AnswerKey(b"AB".to_vec()), b"AB")
            .is_err()
    );
    assert!(VisualMatch.reference_answer(&AnswerKey(vec![1])).is_none());
}

#[test]
fn difficulty_is_the_distortion_strength() {
    for bad in [0, 6] {
        let params = FamilyParams { difficulty: bad };
        assert!(VisualMatch.check_params(&params).is_err());
    }
    for d in STRENGTHS {
        VisualMatch
            .check_params(&FamilyParams { difficulty: d })
            .unwrap();
    }
    let (weak, strong) = (Strength::of(1), Strength::of(5));
    assert!(weak.rotation_deg < strong.rotation_deg && weak.elastic_px < strong.elastic_px);
    assert!(weak.decoys < strong.decoys && weak.speckles < strong.speckles);
}

/// The baseline reads undistorted-enough text (it is a real reader), and never crashes on
/// foreign input.
#[test]
fn baseline_reads_weak_distortion_and_survives_garbage() {
    let trials = 12;
    let letters_right: usize = (0..trials)
        .map(|i| {
            let g = challenge(20_000 + i, 1);
            let got = read(&prompt_image(&g.prompt.data).unwrap()).unwrap().0;
            got.bytes()
                .zip(g.key.0.iter())
                .filter(|(a, b)| a == *b)
                .count()
        })
        .sum();
    let share = letters_right as f64 / (trials as usize * LENGTH) as f64;
    eprintln!("visual_match baseline letters right at difficulty 1: {share:.2}");
    assert!(share > 0.5, "{share}");
    assert!(solve(b"{}").is_none() && solve(b"\xff").is_none());
    assert!(solve(br#"{"mode":"transcribe","width":1,"height":1,"images":["AAAA"],"alt":[],"length":5,"alphabet":""}"#).is_none());
}

/// The baseline's rate per difficulty, for the record: `cargo test -p hco-challenges
/// visual_baseline_rates -- --ignored --nocapture` (set `VISUAL_DUMP=dir` to also write the
/// images there).
#[test]
#[ignore]
fn visual_baseline_rates() {
    let trials: u64 = std::env::var("VISUAL_TRIALS").map_or(40, |v| v.parse().unwrap());
    let dump = std::env::var("VISUAL_DUMP").ok();
    let levels: Vec<u32> = std::env::var("VISUAL_LEVELS").map_or(STRENGTHS.collect(), |v| {
        v.split(',').map(|d| d.parse().unwrap()).collect()
    });
    for d in levels {
        let (mut whole, mut letters) = (0, 0);
        for i in 0..trials {
            let g = challenge(30_000 + i, d);
            let img = prompt_image(&g.prompt.data).unwrap();
            if let Some(dir) = &dump {
                let key = String::from_utf8(g.key.0.clone()).unwrap();
                img.save(format!("{dir}/d{d}_{i}_{key}.png")).unwrap();
            }
            let got = read(&img).map(|r| r.0).unwrap_or_default();
            letters += got
                .bytes()
                .zip(g.key.0.iter())
                .filter(|(a, b)| a == *b)
                .count();
            whole += usize::from(got.as_bytes() == g.key.0.as_slice());
        }
        eprintln!(
            "difficulty {d}: whole {whole}/{trials}, letters {:.2}",
            letters as f64 / (trials as usize * LENGTH) as f64
        );
    }
}

/// Generation speed on one core, for the record (run with `--release`; `hco bench families`
/// measures the same with the rest of the registry).
#[test]
#[ignore]
fn visual_generation_rate() {
    let n = 2_000u64;
    let start = std::time::Instant::now();
    let bytes: usize = (0..n).map(|i| challenge(i, 5).prompt.data.len()).sum();
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "visual_match: {:.0} challenges/s, mean prompt {} bytes",
        n as f64 / secs,
        bytes as u64 / n
    );
}
