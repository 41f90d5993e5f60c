//! The oracle learner against the starter corpus's sets, judged offline as the game judges.

use hco_challenges::narrative::Corpus;

use super::*;

/// Plays `sessions` sessions over set `set` of the starter corpus, judged jointly or (the game
/// before) stopping at a wrong answer; the admissions among the last `tail`.
fn play(set: usize, sessions: u64, tail: u64, game: Game) -> (u64, Learner) {
    let r = replay(Corpus::embedded(), set, sessions, tail, game);
    (r.admitted_tail, r.learner)
}

fn set(prefix: &str) -> usize {
    Corpus::embedded()
        .sets()
        .iter()
        .position(|s| s.id.starts_with(prefix))
        .unwrap()
}

#[test]
fn a_game_that_stops_on_a_wrong_answer_gives_its_key_away_and_the_joint_verdict_does_not() {
    // food-safety-01: the reader lists six of its nine answers, three within its first
    // four candidates. Measured: 61 of the last 100 sessions admitted, 8 answers confirmed
    // when a wrong answer ends the session; nothing under the joint verdict.
    let food = set("food-safety-01");
    let (old, learnt) = play(food, 300, 100, Game::StopsOnWrong);
    assert!(learnt.early_stops > 0);
    assert!(learnt.confirmed() >= 6, "{}", learnt.confirmed());
    assert!(old >= 15, "{old}");
    let (new, learnt) = play(food, 300, 100, Game::Joint);
    assert!(new < old, "{new} {old}");
    assert_eq!(learnt.early_stops, 0);
}

#[test]
fn the_joint_verdict_still_teaches_a_set_whose_answers_the_reader_ranks_high() {
    // biochemistry-01: the reader ranks one answer of each part first or second, so one
    // triple is right within a handful of tries, and every admission confirms three
    // answers that then rule out the third of a session exactly. Measured: 6 answers
    // confirmed and 49 of the last 200 of 800 sessions admitted (food-safety-01 takes
    // about 3000 sessions; the other eight starter sets give nothing in 10 000). This is
    // the attacker's strength, kept so the bench does not go quiet with a weaker one. The draws
    // here are seeded at random, as a per-window challenge's are: a script holding 800 agent
    // identities gets these 800 verdicts in one window whose challenge set this is (open).
    let (admitted, learnt) = play(set("biochemistry-01"), 800, 200, Game::Joint);
    assert!(learnt.confirmed() >= 3, "{}", learnt.confirmed());
    assert!(admitted >= 20, "{admitted}");
}

#[test]
fn a_refused_session_is_not_repeated_and_two_confirmed_answers_rule_the_third_out() {
    let corpus = Corpus::embedded();
    let set = &corpus.sets()[0];
    let q = |p: usize, k: usize| {
        (
            set.parts[p].narrative.as_str(),
            set.parts[p].questions[k].question.as_str(),
        )
    };
    let mut learner = Learner::default();
    let session = |learner: &mut Learner, ks: [usize; 3]| {
        let mut given = Vec::new();
        for (p, k) in ks.into_iter().enumerate() {
            let (n, text) = q(p, k);
            let (_, g) = learner.answer(p, n, text, &given, false);
            given.push(g);
        }
        given
    };
    let first = session(&mut learner, [0, 0, 0]);
    learner.session_verdict(&first, false);
    let again = session(&mut learner, [0, 0, 0]);
    let combo = |g: &[Given]| g.iter().map(|g| g.candidate).collect::<Vec<_>>();
    assert_ne!(
        combo(&first),
        combo(&again),
        "a refused session is not replayed"
    );

    // Admitted: all three confirmed; then a refusal with two of them rules out the third.
    let admitted = session(&mut learner, [1, 1, 1]);
    learner.session_verdict(&admitted, true);
    assert_eq!(learner.confirmed(), 3);
    let before = learner.ruled_out();
    let mixed = session(&mut learner, [1, 1, 2]);
    assert_eq!(combo(&mixed)[..2], combo(&admitted)[..2]);
    learner.session_verdict(&mixed, false);
    assert_eq!(learner.ruled_out(), before + 1);
    let next = session(&mut learner, [1, 1, 2]);
    assert_ne!(combo(&next)[2], combo(&mixed)[2]);
}
