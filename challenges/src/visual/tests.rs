use super::baseline::solve;
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
        "762f5742dd9f5a18316f27f291d6fd42dc8e7976cad3dcbc27bf4e554f57109b"
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
fn prompts_are_well_formed_in_both_modes() {
    let (mut pix, mut matcha) = (0, 0);
    for i in 0..60 {
        let g = challenge(i, 1 + (i % 5) as u32);
        let d = data(&g);
        assert_eq!(d.images.len(), d.alt.len());
        for img in &d.images {
            let decoded = decode_base64_png(img).unwrap();
            assert_eq!(decoded.dimensions(), (WIDTH, HEIGHT));
            assert!(img.len() < 12_000, "{} base64 bytes", img.len());
        }
        let answer = String::from_utf8(VisualMatch.reference_answer(&g.key).unwrap()).unwrap();
        match d.mode.as_str() {
            "pix" => {
                pix += 1;
                assert_eq!(d.images.len(), 1);
                assert_eq!(d.choices.len(), PIX_CHOICES);
                assert!(d.choices.contains(&answer));
                assert!(
                    d.choices
                        .iter()
                        .all(|c| c.len().abs_diff(answer.len()) <= 1)
                );
                assert!(g.prompt.text.contains(&answer));
            }
            "matcha" => {
                matcha += 1;
                assert_eq!(d.images.len(), 2 * MATCHA_ROUNDS);
                assert_eq!(d.rounds, Some(MATCHA_ROUNDS));
                assert_eq!(answer.len(), MATCHA_ROUNDS);
                // The clean reference is the same image whenever the word is.
                for (pair, verdict) in d.images.chunks(2).zip(answer.bytes()) {
                    assert_ne!(pair[0], pair[1]);
                    assert!(verdict == b'S' || verdict == b'D');
                }
            }
            other => panic!("mode {other}"),
        }
        // Text alternatives describe roles, never the word.
        for alt in &d.alt {
            assert!(!alt.to_ascii_uppercase().contains(&answer), "{alt}");
        }
    }
    assert!(pix > 15 && matcha > 15, "{pix} pix, {matcha} matcha");
}

#[test]
fn answers_verify_and_wrong_or_malformed_ones_get_their_codes() {
    for i in 0..30 {
        let g = challenge(i, 3);
        let right = String::from_utf8(VisualMatch.reference_answer(&g.key).unwrap()).unwrap();
        assert_eq!(VisualMatch.verify(&g.key, right.as_bytes()), Ok(()));
        let code = |a: &[u8]| VisualMatch.verify(&g.key, a).unwrap_err().code();
        assert_eq!(code(b""), "missing_answer");
        assert_eq!(code(b"  \n"), "missing_answer");
        assert_eq!(code(&[0xff, 0x00]), "invalid_answer_format");
        assert_eq!(code(&[b'S'; 65]), "invalid_answer_format");
        if data(&g).mode == "pix" {
            let lower = format!("  {} ", right.to_ascii_lowercase());
            assert_eq!(VisualMatch.verify(&g.key, lower.as_bytes()), Ok(()));
            let other = data(&g).choices.into_iter().find(|c| *c != right).unwrap();
            assert_eq!(code(other.as_bytes()), "answer_mismatch");
        } else {
            let spaced: String = right
                .to_ascii_lowercase()
                .chars()
                .flat_map(|c| [c, ' '])
                .collect();
            assert_eq!(VisualMatch.verify(&g.key, spaced.as_bytes()), Ok(()));
            let flipped: String = right
                .chars()
                .enumerate()
                .map(|(k, c)| {
                    if k == 0 {
                        if c == 'S' { 'D' } else { 'S' }
                    } else {
                        c
                    }
                })
                .collect();
            assert_eq!(code(flipped.as_bytes()), "answer_mismatch");
            assert_eq!(code(b"SD"), "invalid_answer_format");
            assert_eq!(code(b"SDX"), "invalid_answer_format");
        }
    }
    assert!(VisualMatch.verify(&AnswerKey(vec![]), b"x").is_err());
    assert!(
        VisualMatch
            .verify(&AnswerKey(b"Q1".to_vec()), b"x")
            .is_err()
    );
    assert!(
        VisualMatch
            .verify(&AnswerKey(vec![b'P', 0xff]), b"x")
            .is_err()
    );
}

#[test]
fn difficulty_is_the_distortion_strength() {
    assert!(
        VisualMatch
            .check_params(&FamilyParams { difficulty: 0 })
            .is_err()
    );
    assert!(
        VisualMatch
            .check_params(&FamilyParams { difficulty: 6 })
            .is_err()
    );
    for d in STRENGTHS {
        VisualMatch
            .check_params(&FamilyParams { difficulty: d })
            .unwrap();
    }
    let (weak, strong) = (Strength::of(1), Strength::of(5));
    assert!(weak.rotation_deg < strong.rotation_deg && weak.warp_px < strong.warp_px);
    assert!(weak.blobs < strong.blobs && weak.speckles < strong.speckles);
}

/// The baseline's success per difficulty, printed for the record (`--nocapture`); it must at
/// least work (beat guessing at the weakest distortion) and never crash.
#[test]
fn baseline_success_is_measured_per_difficulty() {
    let trials = 40;
    let mut rates = Vec::new();
    for d in STRENGTHS {
        let solved = (0..trials)
            .filter(|&i| {
                let g = challenge(10_000 + i, d);
                solve(&g.prompt.data).is_some_and(|a| VisualMatch.verify(&g.key, &a).is_ok())
            })
            .count();
        rates.push(solved as f64 / trials as f64);
    }
    eprintln!("visual_match baseline success by difficulty 1..=5: {rates:?}");
    assert!(rates[0] > 0.3, "{rates:?}");
    assert!(solve(b"{}").is_none() && solve(b"\xff").is_none());
    assert!(solve(br#"{"mode":"pix","width":1,"height":1,"images":["AAAA"],"alt":[]}"#).is_none());
}
