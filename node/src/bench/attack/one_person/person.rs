//! The person: one pair of hands touching one prompt at a time, earliest deadline first,
//! letting go of what cannot fit.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, mpsc};
use std::time::Duration;

use hco_oracle::{Clock, SystemClock};

use super::report::{Options, Schedule};

/// What a touch needs on top of itself to reach the node before the deadline, milliseconds.
const MARGIN_MS: u64 = 100;

/// The person: one pair of hands, one touch at a time.
pub(super) struct Person {
    touch: Duration,
    schedule: Schedule,
    desk: Mutex<Desk>,
    bell: Condvar,
    pub(super) touched: AtomicU64,
    pub(super) dropped: AtomicU64,
}

/// The prompts waiting for a touch, and how many identities may still bring one.
#[derive(Default)]
pub(super) struct Desk {
    /// Taken on, in no order.
    waiting: Vec<Waiting>,
    playing: usize,
    arrivals: u64,
    /// When the touch in progress ends (ms since the epoch).
    busy_until: u64,
}

/// A prompt waiting for a touch.
pub(super) struct Waiting {
    deadline: u64,
    /// The identity: its index, steps passed and spare tries left.
    who: usize,
    passed: usize,
    spares_left: usize,
    arrival: u64,
    done: mpsc::Sender<bool>,
}

impl Waiting {
    /// The earliest-deadline-first order.
    fn order(&self) -> (u64, u64) {
        (self.deadline, self.arrival)
    }

    /// Larger: let go first.
    fn expendable(&self) -> (usize, std::cmp::Reverse<usize>, usize) {
        (self.spares_left, std::cmp::Reverse(self.passed), self.who)
    }
}

impl Person {
    pub(super) fn new(opts: &Options) -> Self {
        Self {
            touch: Duration::from_millis(opts.touch_ms),
            schedule: opts.schedule,
            desk: Mutex::new(Desk::default()),
            bell: Condvar::new(),
            touched: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    fn desk(&self) -> std::sync::MutexGuard<'_, Desk> {
        self.desk.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Asks for a touch on a prompt due at `deadline` for identity `who` with `passed` steps
    /// passed and `spares_left` spare tries left; true once the touch is done, false if the
    /// person let the prompt go.
    pub(super) fn ask(&self, deadline: u64, who: usize, passed: usize, spares_left: usize) -> bool {
        let (done, touched) = mpsc::channel();
        {
            let mut desk = self.desk();
            desk.arrivals += 1;
            let arrival = desk.arrivals;
            desk.waiting.push(Waiting {
                deadline,
                who,
                passed,
                spares_left,
                arrival,
                done,
            });
            if self.schedule == Schedule::Triage {
                self.admit(&mut desk, SystemClock.now());
            }
        }
        self.bell.notify_all();
        let wait = deadline.saturating_sub(SystemClock.now()) + 2_000;
        touched
            .recv_timeout(Duration::from_millis(wait))
            .unwrap_or(false)
    }

    pub(super) fn join(&self, identities: usize) {
        self.desk().playing = identities;
    }

    /// An identity will bring no more prompts this window.
    pub(super) fn leave(&self) {
        {
            let mut desk = self.desk();
            desk.playing = desk.playing.saturating_sub(1);
        }
        self.bell.notify_all();
    }

    /// Touches prompts until no identity may bring one, or `until` (ms since the epoch).
    pub(super) fn serve(&self, until: u64) {
        let touch_ms = self.touch.as_millis() as u64;
        loop {
            let next = {
                let mut desk = self.desk();
                loop {
                    let now = SystemClock.now();
                    if (desk.playing == 0 && desk.waiting.is_empty()) || now > until {
                        for w in desk.waiting.drain(..) {
                            let _ = w.done.send(false);
                        }
                        return;
                    }
                    // A prompt a touch started now would answer late is let go.
                    let cutoff = now + touch_ms + MARGIN_MS;
                    let before = desk.waiting.len();
                    desk.waiting.retain(|w| {
                        let keep = w.deadline >= cutoff;
                        if !keep {
                            let _ = w.done.send(false);
                        }
                        keep
                    });
                    let let_go = (before - desk.waiting.len()) as u64;
                    self.dropped.fetch_add(let_go, Ordering::Relaxed);
                    if let Some(i) = pick(&desk.waiting) {
                        desk.busy_until = now + touch_ms;
                        break desk.waiting.swap_remove(i);
                    }
                    desk = self
                        .bell
                        .wait_timeout(desk, Duration::from_millis(100))
                        .map_or_else(|e| e.into_inner().0, |(d, _)| d);
                }
            };
            std::thread::sleep(self.touch);
            self.touched.fetch_add(1, Ordering::Relaxed);
            let _ = next.done.send(true);
        }
    }

    /// Triage on an arrival at `now`: lets prompts go until the earliest-deadline-first order
    /// of those taken on, from when the person is next free, touches each in time.
    pub(super) fn admit(&self, desk: &mut Desk, now: u64) {
        let touch = self.touch.as_millis() as i128;
        let free = i128::from(now.max(desk.busy_until));
        // Bounded: each round lets one prompt go.
        for _ in 0..=desk.waiting.len() {
            desk.waiting.sort_by_key(Waiting::order);
            // Slack of each prompt when all before it are touched first.
            let margins: Vec<i128> = desk
                .waiting
                .iter()
                .enumerate()
                .map(|(k, w)| {
                    i128::from(w.deadline) - free - (k as i128 + 1) * touch - i128::from(MARGIN_MS)
                })
                .collect();
            if margins.iter().all(|&m| m >= 0) {
                return;
            }
            // Letting prompt e go keeps the slack before it and adds a touch to each after it.
            let n = margins.len();
            let mut suffix = vec![i128::MAX; n + 1];
            for k in (0..n).rev() {
                suffix[k] = suffix[k + 1].min(margins[k]);
            }
            let mut prefix = i128::MAX;
            let mut go: Option<usize> = None;
            for e in 0..n {
                if prefix >= 0 && suffix[e + 1].saturating_add(touch) >= 0 {
                    let w = &desk.waiting[e];
                    if go.is_none_or(|g| w.expendable() > desk.waiting[g].expendable()) {
                        go = Some(e);
                    }
                }
                prefix = prefix.min(margins[e]);
            }
            // None restores the order alone (time ran on): the first one late goes.
            let e = go.unwrap_or_else(|| margins.iter().position(|&m| m < 0).unwrap_or(0));
            let w = desk.waiting.remove(e);
            let _ = w.done.send(false);
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The next prompt to touch: the earliest deadline.
fn pick(waiting: &[Waiting]) -> Option<usize> {
    (0..waiting.len()).min_by_key(|&i| waiting[i].order())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(touch_ms: u64, schedule: Schedule) -> Options {
        Options {
            identities: 3,
            windows: 1,
            touch_ms,
            window: Duration::from_secs(180),
            grace: Duration::from_secs(60),
            slot: None,
            schedule,
            serve: None,
            committee: 1,
            malicious_member: false,
        }
    }

    fn waiting(deadline: u64, who: usize, passed: usize, spares_left: usize) -> Waiting {
        Waiting {
            deadline,
            who,
            passed,
            spares_left,
            arrival: who as u64,
            done: mpsc::channel().0,
        }
    }

    #[test]
    fn the_person_touches_the_earliest_deadline_first() {
        let queue = [
            waiting(5_300, 0, 0, 1),
            waiting(5_100, 1, 0, 1),
            waiting(5_900, 2, 2, 1),
        ];
        assert_eq!(pick(&queue), Some(1));
        assert_eq!(pick(&[]), None);
    }

    #[test]
    fn triage_lets_the_most_expendable_prompt_go() {
        // Three prompts due within 2.5 s at a 1 s touch: one must go. Identity 0 has used its
        // spare, identity 2 has passed two steps: identity 1 goes.
        let person = Person::new(&options(1000, Schedule::Triage));
        let mut desk = Desk {
            waiting: vec![
                waiting(12_500, 0, 0, 0),
                waiting(12_400, 1, 0, 1),
                waiting(12_300, 2, 2, 1),
            ],
            ..Desk::default()
        };
        person.admit(&mut desk, 10_000);
        let mut left: Vec<usize> = desk.waiting.iter().map(|w| w.who).collect();
        left.sort_unstable();
        assert_eq!(left, [0, 2]);
        assert_eq!(person.dropped.load(Ordering::Relaxed), 1);
        // When they all fit, none goes.
        person.admit(&mut desk, 10_000);
        assert_eq!(desk.waiting.len(), 2);
    }

    #[test]
    fn an_unheld_prompt_is_let_go_and_a_held_one_touched() {
        for schedule in [Schedule::Edf, Schedule::Triage] {
            let person = Person::new(&options(20, schedule));
            person.join(1);
            std::thread::scope(|s| {
                s.spawn(|| person.serve(SystemClock.now() + 10_000));
                let now = SystemClock.now();
                assert!(!person.ask(now + 50, 0, 0, 1), "no touch answers in time");
                assert!(person.ask(SystemClock.now() + 5_000, 0, 0, 1));
                person.leave();
            });
            assert_eq!(person.touched.load(Ordering::Relaxed), 1);
            assert_eq!(person.dropped.load(Ordering::Relaxed), 1);
        }
    }
}
