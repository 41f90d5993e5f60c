use std::collections::{BTreeMap, BTreeSet};

use super::*;

fn params(start_window: u64, sets_per_window: u32, reuse: bool) -> ScheduleParams {
    ScheduleParams {
        start_window,
        sets_per_window,
        reuse,
    }
}

fn schedule(p: ScheduleParams) -> SetSchedule {
    SetSchedule::new(Corpus::embedded(), &RetiredSets::default(), p)
}

#[test]
fn slices_of_different_windows_are_disjoint_and_cover_full_slices_only() {
    let n = Corpus::embedded().sets().len() as u64;
    let s = schedule(params(100, 3, false));
    assert_eq!(s.windows(), n / 3);
    assert_eq!(s.end_window(), 100 + n / 3);
    let mut seen = BTreeSet::new();
    for t in 100..s.end_window() {
        let slice = s.slice(t).unwrap();
        assert_eq!(slice.len(), 3);
        for id in slice {
            assert!(seen.insert(id.clone()), "{id} given to two windows");
            assert_eq!(s.window_of(id), Some(t));
        }
    }
    assert_eq!(seen.len() as u64, (n / 3) * 3);
}

#[test]
fn the_schedule_is_deterministic_and_keyed_by_the_corpus() {
    let a = schedule(params(0, 1, false));
    assert_eq!(a, schedule(params(0, 1, false)));
    let ids: Vec<String> = Corpus::embedded()
        .sets()
        .iter()
        .map(|s| s.id.clone())
        .collect();
    let order: Vec<String> = (0..a.windows())
        .map(|t| a.slice(t).unwrap()[0].clone())
        .collect();
    assert_ne!(order, ids, "the order is not the id order");
    // An edited corpus (another Merkle root) orders its sets otherwise.
    let mut sets = Corpus::embedded().sets().to_vec();
    sets[0].parts[0].narrative.push_str(" Revised.");
    let edited = Corpus::from_sets(sets).unwrap();
    let b = SetSchedule::new(&edited, &RetiredSets::default(), params(0, 1, false));
    let order_b: Vec<String> = (0..b.windows())
        .map(|t| b.slice(t).unwrap()[0].clone())
        .collect();
    assert_ne!(order, order_b);
}

#[test]
fn windows_outside_the_schedule_have_no_sets_unless_it_is_reused() {
    let s = schedule(params(10, 2, false));
    assert_eq!(s.slice(9), None, "before start_window");
    assert_eq!(s.slice(s.end_window()), None, "exhausted");
    assert_eq!(s.slice(u64::MAX), None);
    assert_eq!(s.windows_left(0), Some(s.windows()));
    assert_eq!(s.windows_left(11), Some(s.windows() - 1));
    assert_eq!(s.windows_left(s.end_window()), Some(0));
    let r = schedule(params(10, 2, true));
    assert_eq!(r.slice(r.end_window()), r.slice(10), "reuse starts over");
    assert!(r.slice(u64::MAX).is_some());
    assert_eq!(r.windows_left(10), None);
    // More sets per window than the corpus holds: no window has sets, reuse or not.
    let big = schedule(params(0, 1000, true));
    assert_eq!(big.windows(), 0);
    assert_eq!(big.slice(0), None);
    assert_eq!(big.windows_left(0), Some(0));
}

#[test]
fn retired_sets_are_never_scheduled() {
    let corpus = Corpus::embedded();
    let retired = RetiredSets(corpus.sets().iter().take(4).map(|s| s.id.clone()).collect());
    let s = SetSchedule::new(corpus, &retired, params(0, 1, false));
    assert_eq!(s.windows(), corpus.sets().len() as u64 - 4);
    for t in 0..s.windows() {
        assert!(!retired.contains(&s.slice(t).unwrap()[0]));
    }
}

#[test]
fn a_shrunk_corpus_or_an_earlier_start_would_reuse_sets_and_is_reported() {
    let s = schedule(params(0, 1, false));
    // Windows 0..3 used their sets.
    let used: BTreeMap<String, u64> = (0..3)
        .map(|t| (s.slice(t).unwrap()[0].clone(), t))
        .collect();
    assert_eq!(
        s.reused(&used, 3),
        vec![],
        "the same schedule is consistent"
    );
    assert_eq!(s.reused(&used, 1), vec![], "even mid-schedule");
    // Starting again at window 3 hands window 0's set to window 3.
    let moved = schedule(params(3, 1, false));
    let reused = moved.reused(&used, 3);
    assert_eq!(reused.len(), 3);
    assert!(reused.iter().all(|r| r.scheduled_for >= 3 && r.used_in < 3));
    // Taking window 0's set out of the schedule shifts the later ones back a window: at
    // window 1, window 2's set would be shown again in window 1.
    let first = RetiredSets([s.slice(0).unwrap()[0].clone()].into());
    let shrunk = SetSchedule::new(Corpus::embedded(), &first, params(0, 1, false));
    assert_eq!(
        shrunk.reused(&used, 1),
        vec![Reused {
            set: s.slice(2).unwrap()[0].clone(),
            used_in: 2,
            scheduled_for: 1,
        }]
    );
    // The fix: retire the used sets and start at the current window.
    let retired = RetiredSets(used.keys().cloned().collect());
    let fixed = SetSchedule::new(Corpus::embedded(), &retired, params(3, 1, false));
    assert_eq!(fixed.reused(&used, 3), vec![]);
    // Reuse never reports.
    assert_eq!(schedule(params(3, 1, true)).reused(&used, 3), vec![]);
}

#[test]
fn params_are_checked() {
    assert!(params(0, 0, false).check().is_err());
    assert!(params(0, MAX_SETS_PER_WINDOW + 1, false).check().is_err());
    assert!(ScheduleParams::default().check().is_ok());
}
