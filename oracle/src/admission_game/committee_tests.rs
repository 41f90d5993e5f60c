//! The game across a committee: each member shows its own share of a window's questions, so a
//! script that fails sessions at every member still meets each question once.

use std::collections::HashSet;

use hco_challenges::narrative::{RetiredSets, ScheduleParams, SetSchedule};

use super::*;

const HOUR: u64 = 3_600_000;

/// Member `index` of a committee of `members`, over the starter corpus with `per_window` sets
/// a window (the game draws the second half).
fn member(index: usize, members: usize, per_window: u32) -> AdmissionGame {
    let schedule = ScheduleParams {
        start_window: 0,
        sets_per_window: per_window,
        reuse: true,
    };
    AdmissionGame::new(
        GameParams::default(),
        crate::testing::key(100 + index as u64),
        Corpus::embedded().clone(),
        WindowSets {
            schedule: SetSchedule::new(Corpus::embedded(), &RetiredSets::default(), schedule),
            genesis_ms: 0,
            window_ms: HOUR,
            share: Share::of(index, members).unwrap(),
        },
    )
}

/// Plays one session at `g` with wrong answers; the questions it showed, or why none started.
fn fail_once(g: &AdmissionGame, nonce: &[u8], now: Timestamp) -> Result<Vec<String>, GameError> {
    let key = SigningKey::from_bytes(blake3::hash(nonce).as_bytes());
    let start = SessionStart::sign(&key, &g.node(), g.window_at(now), Digest([7; 32]));
    let mut v = g.start(None, &start, now)?;
    let mut shown = Vec::new();
    loop {
        shown.push(format!("{} | {}", v.narrative, v.question));
        match g.answer(&v.session, &v.token, b"surely wrong", 0, now + 10) {
            Ok(Step::Next(next)) => v = next,
            Err(GameError::NotAdmitted) => return Ok(shown),
            other => panic!("a wrong session ended with {other:?}"),
        }
    }
}

#[test]
fn failing_at_every_member_shows_each_question_once_committee_wide() {
    const MEMBERS: usize = 4;
    // Ten sets a window: five game sets of three questions a part.
    let games: Vec<AdmissionGame> = (0..MEMBERS).map(|i| member(i, MEMBERS, 10)).collect();
    let total: usize = {
        let slice = games[0].sets.slice_at(0).unwrap();
        slice
            .iter()
            .map(|id| {
                let set = Corpus::embedded().get(id).unwrap();
                set.parts.iter().map(|p| p.questions.len()).sum::<usize>()
            })
            .sum()
    };
    let mut seen = HashSet::new();
    let mut sessions = 0;
    for (i, g) in games.iter().enumerate() {
        for n in 0u32.. {
            let nonce = [&(i as u32).to_le_bytes()[..], &n.to_le_bytes()].concat();
            match fail_once(g, &nonce, 1_000) {
                Ok(shown) => {
                    sessions += 1;
                    for q in shown {
                        assert!(seen.insert(q.clone()), "member {i} showed {q} again");
                    }
                }
                Err(e) => {
                    assert!(
                        matches!(e, GameError::SetsSpent { .. } | GameError::NotHere { .. }),
                        "{e:?}"
                    );
                    break;
                }
            }
        }
    }
    // Every failed look was at an unseen question, and the members together served sessions
    // (a part's leftovers in a member's share make no session alone, so not every question
    // is shown).
    assert!(sessions >= MEMBERS, "{sessions} sessions");
    assert_eq!(seen.len(), 3 * sessions);
    assert!(seen.len() <= total);
    // The same script against members that each showed every question would have seen each
    // question once per member: here the retirements add up to the questions shown.
    let retired: usize = games.iter().map(AdmissionGame::retired_questions).sum();
    assert_eq!(retired, seen.len());
}

#[test]
fn a_member_whose_share_misses_a_part_says_so_and_a_committee_of_one_serves_all() {
    // One game set of three questions a part among four members: every part leaves one member
    // out, so at least one member serves no session, and says where to go.
    let games: Vec<AdmissionGame> = (0..4).map(|i| member(i, 4, 2)).collect();
    let refusals: Vec<GameError> = games
        .iter()
        .enumerate()
        .filter_map(|(i, g)| fail_once(g, &[i as u8, 0], 1_000).err())
        .collect();
    assert!(!refusals.is_empty());
    // A member knows it before any session: what a node logs at start.
    let silent = games
        .iter()
        .filter(|g| !g.share_serves(1_000).unwrap())
        .count();
    assert_eq!(silent, refusals.len());
    for e in &refusals {
        assert_eq!(e, &GameError::NotHere { members: 4 });
        assert_eq!(e.code(), "game_not_here");
        assert!(GameError::CODES.contains(&e.code()));
    }
    // Alone, a member shows all nine questions, one session of three at a time.
    let alone = member(0, 1, 2);
    let shown: usize = (0u8..3)
        .map(|n| fail_once(&alone, &[9, n], 1_000).unwrap().len())
        .sum();
    assert_eq!(shown, 9);
    assert_eq!(
        fail_once(&alone, &[9, 3], 1_000).unwrap_err(),
        GameError::SetsSpent { t: 0 }
    );
}
