//! kill -9 of a process writing acceptances: after reopening the ledger, every acceptance that
//! was acknowledged is still there.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use hco_oracle::{IdentityId, Ledger, testing};

#[test]
fn acknowledged_acceptances_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ledger-writer"))
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut acked = Vec::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while acked.len() < 1_000 {
        let Some(line) = lines.next() else { break };
        acked.push(line.unwrap());
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no final flush
    child.wait().unwrap();
    assert!(
        acked.len() >= 1_000,
        "the writer stopped early after {} acks",
        acked.len()
    );

    let params = testing::params_for(&[testing::node_id(&testing::key(1))]);
    let ledger = Ledger::open(dir.path(), params.digest()).unwrap();
    for line in &acked {
        let mut parts = line.split(' ');
        let t: u64 = parts.next().unwrap().parse().unwrap();
        let id: IdentityId = parts.next().unwrap().parse().unwrap();
        let j: u32 = parts.next().unwrap().parse().unwrap();
        assert!(
            ledger.is_accepted(t, &id, j).unwrap(),
            "acknowledged {line} was lost"
        );
        let sealed = ledger.accepted(t, &id, j).unwrap().unwrap();
        sealed.check_seal().unwrap();
    }
}
