use std::collections::BTreeSet;

use hco_challenges::narrative::{Corpus, RetiredSets, ScheduleParams};
use hco_oracle::Digest;

use super::*;

const HOUR: u64 = 3_600_000;

fn schedule(retired: &RetiredSets, start_window: u64) -> SetSchedule {
    let params = ScheduleParams {
        start_window,
        sets_per_window: 1,
        reuse: false,
    };
    SetSchedule::new(Corpus::embedded(), retired, params)
}

/// The development schedule: the starter corpus, started over when it runs out.
fn reuse_watch(none: &RetiredSets) -> SetsWatch {
    SetsWatch::new(
        SetSchedule::new(
            Corpus::embedded(),
            none,
            ScheduleParams {
                reuse: true,
                ..ScheduleParams::default()
            },
        ),
        true,
        Duration::from_secs(60),
        HOUR,
    )
}

fn watch(retired: &RetiredSets, start_window: u64) -> SetsWatch {
    SetsWatch::new(
        schedule(retired, start_window),
        true,
        Duration::from_secs(4 * 3600),
        HOUR,
    )
}

#[test]
fn a_restart_that_would_show_a_used_set_again_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let none = RetiredSets::default();
    let used: Vec<String> = {
        let ledger = Ledger::open(dir.path(), Digest::ZERO).unwrap();
        let w = watch(&none, 0);
        w.check(&ledger, 3).unwrap();
        assert_eq!(w.record(&ledger, 3).unwrap(), 4, "windows 0..=3");
        assert_eq!(w.record(&ledger, 3).unwrap(), 0, "recorded once");
        ledger.make_durable().unwrap();
        (0..4)
            .map(|t| schedule(&none, 0).slice(t).unwrap()[0].clone())
            .collect()
    };
    let ledger = Ledger::open(dir.path(), Digest::ZERO).unwrap();
    let recorded: BTreeSet<String> = ledger.sets_used().unwrap().into_keys().collect();
    assert_eq!(recorded, used.iter().cloned().collect());
    // The same corpus and schedule start again.
    watch(&none, 0).check(&ledger, 3).unwrap();
    // A corpus without window 0's set: the later sets move a window earlier, so window 3
    // (now) would show window 4's set... and window 2 would get window 3's: refused.
    let shrunk = RetiredSets([used[0].clone()].into());
    let err = watch(&shrunk, 0).check(&ledger, 2).unwrap_err().to_string();
    assert!(err.contains(&used[3]), "{err}");
    assert!(
        err.contains("retired_sets") && err.contains("start_window"),
        "{err}"
    );
    // Moving start_window back to the current window would start the schedule over.
    let err = watch(&none, 3).check(&ledger, 3).unwrap_err().to_string();
    assert!(err.contains("4 set(s)"), "{err}");
    // The fix the error names: retire the used sets and start at the current window.
    let fixed = RetiredSets(used.iter().cloned().collect());
    watch(&fixed, 4).check(&ledger, 4).unwrap();
}

#[test]
fn the_gauge_counts_windows_left_and_the_threshold_is_in_windows() {
    let none = RetiredSets::default();
    let w = watch(&none, 10);
    assert_eq!(w.warn_windows(), 4, "four hours of hour-long windows");
    let n = Corpus::embedded().sets().len() as i64;
    assert_eq!(w.gauge(0), n);
    assert_eq!(w.gauge(10), n);
    assert_eq!(w.gauge(12), n - 2);
    assert_eq!(w.gauge(1000), 0);
    let reuse = reuse_watch(&none);
    assert_eq!(reuse.gauge(1000), -1, "no limit");
    assert_eq!(reuse.warn_windows(), 1, "at least one window");
    // Reuse records nothing and refuses nothing.
    let ledger = Ledger::temporary(Digest::ZERO).unwrap();
    assert_eq!(reuse.record(&ledger, 5).unwrap(), 0);
    assert!(ledger.sets_used().unwrap().is_empty());
}

#[test]
fn a_schedule_already_spent_at_start_is_refused_naming_start_window() {
    let none = RetiredSets::default();
    let ledger = Ledger::temporary(Digest::ZERO).unwrap();
    let n = Corpus::embedded().sets().len() as u64;
    // A new network left at `start_window = 0` while the clock is in window 490_000: every
    // set counts as spent before the agent class has run once.
    let err = watch(&none, 0)
        .check(&ledger, 490_000)
        .unwrap_err()
        .to_string();
    assert!(err.contains("start_window = 490000"), "{err}");
    assert!(err.contains(&format!("windows 0..{n}")), "{err}");
    // The fix it names.
    watch(&none, 490_000).check(&ledger, 490_000).unwrap();
    // The last scheduled window still starts; the one after it does not.
    watch(&none, 0).check(&ledger, n - 1).unwrap();
    watch(&none, 0).check(&ledger, n).unwrap_err();
    // A network whose corpus ran out after serving its windows keeps running (its human
    // class); the node logs an error each window instead.
    watch(&none, 0).record(&ledger, n - 1).unwrap();
    watch(&none, 0).check(&ledger, n + 5).unwrap();
    // Without reuse checks (the starter corpus in development) nothing is refused.
    let reuse = reuse_watch(&none);
    reuse.check(&ledger, 490_000).unwrap();
}
