//! Replay protection under concurrent batches: however the right answers to a set of
//! challenges are spread over threads and batches, each challenge is accepted exactly once,
//! including while an accepting batch is still writing after the commit lock, and after a
//! reopen of the ledger.

use hco_challenges::Class;
use hco_oracle::{Response, testing};

use crate::support::{open_node, register_and_issue, solve};

#[test]
fn right_answers_spread_over_threads_are_each_accepted_once() {
    const CHALLENGES: u64 = 64;
    const THREADS: u64 = 4;
    const COPIES: u64 = 8; // of each right answer, spread over the threads' batches
    const BATCH: usize = 12;
    let dir = tempfile::tempdir().unwrap();
    let node_key = testing::key(1);
    let params = testing::params_for(&[testing::node_id(&node_key)]);
    let open = || open_node(dir.path(), &params, &node_key);
    let o = open();
    let now = params.window_start(0) + 1_000;
    let responses: Vec<Response> = (0..CHALLENGES)
        .map(|i| {
            let key = testing::key(500 + i);
            let issued = register_and_issue(&o, &key, Class::Agent, now);
            let right = solve(&o, &issued);
            Response::new(&key, issued.challenge, right)
        })
        .collect();
    for round in 0..2u64 {
        // Thread `k` sends copy `c` of answer `i` when `(i + c + round) % THREADS == k`, in
        // batches of `BATCH` in an order of its own.
        let accepted: Vec<usize> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..THREADS)
                .map(|k| {
                    let (o, responses) = (&o, &responses);
                    s.spawn(move || {
                        let mut mine: Vec<&Response> = (0..CHALLENGES * COPIES)
                            .filter(|n| (n / COPIES + n % COPIES + round) % THREADS == k)
                            .map(|n| &responses[(n / COPIES) as usize])
                            .collect();
                        let turn = (k as usize * 7) % mine.len().max(1);
                        mine.rotate_left(turn);
                        mine.chunks(BATCH)
                            .map(|batch| {
                                let batch: Vec<Response> =
                                    batch.iter().map(|r| (*r).clone()).collect();
                                let results = o.verify_responses(&batch, now + 100).unwrap();
                                for r in &results {
                                    if let Err(reason) = r {
                                        assert_eq!(reason.code(), "already_answered");
                                    }
                                }
                                results.iter().filter(|r| r.is_ok()).count()
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        let expected = if round == 0 { CHALLENGES } else { 0 };
        assert_eq!(
            accepted.iter().sum::<usize>() as u64,
            expected,
            "round {round}: every challenge once, then none again"
        );
    }
    assert_eq!(
        o.ledger().accepted_keys(0).unwrap().len() as u64,
        CHALLENGES
    );
    drop(o);
    let o = open();
    for r in &responses {
        let verdict = o.verify_response(r, now + 200).unwrap();
        assert_eq!(verdict.unwrap_err().code(), "already_answered");
    }
}
