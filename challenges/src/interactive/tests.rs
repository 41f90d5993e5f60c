//! Unit tests: scenes as specified, answers checked per stage, bad input refused with codes.

use super::scene::{KINDS, Kind, Scene};
use super::*;

fn seed(i: u64) -> Seed {
    Seed(*blake3::hash(&i.to_le_bytes()).as_bytes())
}

fn count(scene: &Scene, kind: Kind) -> usize {
    scene.shapes.iter().filter(|s| s.kind == kind).count()
}

fn params() -> FamilyParams {
    InteractiveReasoning.default_params()
}

#[test]
fn scenes_have_one_lone_kind_then_its_kind_again() {
    for i in 0..300 {
        for difficulty in SIZES {
            let p = FamilyParams { difficulty };
            let (a, b) = scenes(&seed(i), &p);
            assert_eq!(a.shapes.len(), shapes(&p));
            assert_eq!(b.shapes.len(), shapes(&p));
            assert_eq!(a.targets.len(), 1);
            let lone = a.shapes[a.targets[0]].kind;
            let once_a: Vec<Kind> = KINDS.into_iter().filter(|k| count(&a, *k) == 1).collect();
            assert_eq!(once_a, vec![lone], "seed {i}");
            assert!((2..=4).contains(&b.targets.len()), "seed {i}");
            assert_eq!(count(&b, lone), b.targets.len());
            assert!(b.targets.iter().all(|&t| b.shapes[t].kind == lone));
            assert!(KINDS.into_iter().all(|k| count(&b, k) >= 1), "seed {i}");
        }
    }
}

#[test]
fn generation_is_deterministic_and_the_reference_answer_passes() {
    let f = InteractiveReasoning;
    for i in 0..50 {
        let g = f.generate(&seed(i), &params());
        let again = f.generate(&seed(i), &params());
        assert_eq!(g.prompt, again.prompt);
        assert_eq!(g.key, again.key);
        let answer = f.reference_answer(&g.key).unwrap();
        assert_eq!(f.verify(&g.key, &answer), Ok(()));
        let first = std::str::from_utf8(&answer)
            .unwrap()
            .split('|')
            .next()
            .unwrap();
        assert_eq!(f.check_stage(&g.key, 1, first.as_bytes()), Ok(()));
        let data: StageData = serde_json::from_slice(&g.prompt.data).unwrap();
        assert_eq!((data.stage, data.stages), (1, 2));
        assert_eq!(g.prompt.text, FIRST_QUESTION);
    }
}

#[test]
fn stage_two_is_only_the_second_picture() {
    let f = InteractiveReasoning;
    let p = f.stage_prompt(&seed(7), &params(), 2).unwrap();
    let data: StageData = serde_json::from_slice(&p.data).unwrap();
    assert_eq!(data.stage, 2);
    assert_eq!(p.text, SECOND_QUESTION);
    assert_ne!(p, f.generate(&seed(7), &params()).prompt);
    for stage in [0, 1, 3, usize::MAX] {
        assert!(f.stage_prompt(&seed(7), &params(), stage).is_none());
    }
    assert!(f.is_visual());
    assert_eq!(f.stages(), 2);
}

/// A click on the centre of a shape far from every target.
fn far(s: &Scene) -> String {
    let targets: Vec<_> = s.targets.iter().map(|&t| s.shapes[t]).collect();
    s.shapes
        .iter()
        .find(|o| {
            targets
                .iter()
                .all(|t| (o.x - t.x).pow(2) + (o.y - t.y).pow(2) > (2 * t.r + 4).pow(2))
        })
        .map(|o| format!("{},{}", o.x, o.y))
        .unwrap()
}

fn centres(s: &Scene) -> Vec<String> {
    s.targets
        .iter()
        .map(|&t| format!("{},{}", s.shapes[t].x, s.shapes[t].y))
        .collect()
}

#[test]
fn wrong_clicks_are_mismatches() {
    let f = InteractiveReasoning;
    let code = |r: Result<(), Reject>| r.map_err(|e| e.code());
    for i in 0..50 {
        let (a, b) = scenes(&seed(i), &params());
        let g = f.generate(&seed(i), &params());
        let right_a = centres(&a).join(";");
        let right_b = centres(&b);
        let both = format!("{right_a}|{}", right_b.join(";"));
        assert_eq!(code(f.verify(&g.key, both.as_bytes())), Ok(()));
        assert_eq!(
            code(f.check_stage(&g.key, 1, far(&a).as_bytes())),
            Err("answer_mismatch")
        );
        let wrong_first = format!("{}|{}", far(&a), right_b.join(";"));
        assert_eq!(
            code(f.verify(&g.key, wrong_first.as_bytes())),
            Err("answer_mismatch")
        );
        // One stage-2 shape missed, one extra click, one shape clicked twice: all wrong.
        let missed = format!("{right_a}|{}", right_b[1..].join(";"));
        let extra = format!("{right_a}|{};{}", right_b.join(";"), far(&b));
        let twice = format!("{right_a}|{};{}", right_b[1..].join(";"), right_b[1]);
        for wrong in [missed, extra, twice] {
            let clicks = wrong.split(['|', ';']).count() - 1;
            let want = if clicks > 4 || wrong.len() > f.max_answer_len() {
                "invalid_answer_format"
            } else {
                "answer_mismatch"
            };
            assert_eq!(
                code(f.verify(&g.key, wrong.as_bytes())),
                Err(want),
                "{wrong}"
            );
        }
    }
}

#[test]
fn bad_answers_have_stable_codes() {
    let f = InteractiveReasoning;
    let g = f.generate(&seed(1), &params());
    let code = |answer: &[u8]| f.verify(&g.key, answer).unwrap_err().code();
    assert_eq!(code(b""), "missing_answer");
    assert_eq!(code(b"  "), "missing_answer");
    for bad in [
        &b"10,10"[..],
        b"10,10;10,10",
        b"10,10;10,10|10,10",
        b"10,10|1,1;1,1;1,1;1,1;1,1",
        b"10,10|",
        b"a,b|1,2",
        b"10|20",
        b"360,10|1,1",
        b"-1,5|1,1",
        b"\xff\xfe",
        b"stage 1:10,10",
        &[b'1'; 100],
    ] {
        assert_eq!(code(bad), "invalid_answer_format", "{bad:?}");
    }
    let stage = |k: usize, answer: &[u8]| f.check_stage(&g.key, k, answer).unwrap_err().code();
    assert_eq!(stage(2, b"1,1"), "invalid_answer_format");
    assert_eq!(stage(0, b"1,1"), "invalid_answer_format");
    assert_eq!(stage(1, b"1,1;1,1"), "invalid_answer_format");
    assert_eq!(stage(1, b"1,1|1,1"), "invalid_answer_format");
    assert_eq!(
        f.verify(&AnswerKey(vec![1, 2, 3]), b"1,1|1,1")
            .unwrap_err()
            .code(),
        "invalid_answer_format"
    );
    assert!(f.reference_answer(&AnswerKey(vec![])).is_none());
}

#[test]
fn every_kind_and_style_is_drawn_with_visible_pixels() {
    use super::scene::{STYLES, Shape};
    for kind in KINDS {
        for style in STYLES {
            let shape = Shape {
                kind,
                style,
                x: 40,
                y: 40,
                r: 20,
                tilt: 4,
                stretch: (100, 100),
                colour: [0, 0, 0],
                colour2: [9, 9, 9],
                band: 3,
                pattern: 0,
            };
            let painted = (0..80)
                .flat_map(|y| (0..80).map(move |x| (x, y)))
                .filter(|&(x, y)| covers(&shape, x, y))
                .count();
            assert!(painted > 60, "{kind:?} {style:?}: {painted} pixels");
        }
    }
}

/// Writes sample pictures for a person to look at: `HCO_SCENES=dir cargo test … -- --ignored`.
#[test]
#[ignore]
fn write_sample_pictures() {
    let Ok(dir) = std::env::var("HCO_SCENES") else {
        return;
    };
    for i in 0..4 {
        let (a, b) = scenes(&seed(i), &params());
        for (n, s) in [(1, a), (2, b)] {
            std::fs::write(format!("{dir}/scene_{i}_{n}.png"), render::png(&s)).unwrap();
        }
    }
}
