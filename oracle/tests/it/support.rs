//! A small committee of in-process oracles on temporary ledgers, driven on a manual clock.

use ed25519_dalek::SigningKey;
use hco_challenges::{Class, Registry};
use hco_oracle::secret::{derive_challenge, issuer_order, node_secret, window_secret};
use hco_oracle::{
    IdentityId, IssuedChallenge, Ledger, NetworkParams, NodeId, Oracle, Response, SignedRegister,
    SignedRequest, testing,
};

pub struct Net {
    pub params: NetworkParams,
    pub oracles: Vec<Oracle>,
}

impl Net {
    pub fn new(nodes: u64) -> Self {
        Self::with(nodes, |_| {})
    }

    pub fn with(nodes: u64, tweak: impl FnOnce(&mut NetworkParams)) -> Self {
        let keys: Vec<SigningKey> = (1..=nodes).map(testing::key).collect();
        let ids: Vec<NodeId> = keys.iter().map(testing::node_id).collect();
        let mut params = testing::params_for(&ids);
        tweak(&mut params);
        let oracles = keys
            .into_iter()
            .map(|k| {
                let ledger = Ledger::temporary(params.digest()).unwrap();
                Oracle::new(params.clone(), Registry::builtin(), k, ledger).unwrap()
            })
            .collect();
        Self { params, oracles }
    }

    /// Registers on every node (as gossip would), with the proof of work the params require.
    pub fn register(&self, key: &SigningKey, class: Class, now: u64) {
        let reg = SignedRegister::proven(key, class.into(), now, self.params.registration_pow_bits);
        for o in &self.oracles {
            o.register(&reg, now).unwrap().unwrap();
        }
    }

    pub fn issuer_for(&self, id: &SigningKey, t: u64) -> &Oracle {
        let order = issuer_order(&self.params.committee, &testing::identity_id(id), t);
        self.oracles
            .iter()
            .find(|o| o.node_id() == order[0])
            .unwrap()
    }

    pub fn start(&self, t: u64) -> u64 {
        self.params.window_start(t)
    }

    /// Every member records every member's acceptances of window `t`, as gossip would.
    pub fn share_acceptances(&self, t: u64) {
        let all: Vec<hco_oracle::SealedAcceptance> = self
            .oracles
            .iter()
            .flat_map(|o| {
                o.ledger()
                    .acceptances(t)
                    .map(Result::unwrap)
                    .collect::<Vec<_>>()
            })
            .collect();
        for o in &self.oracles {
            o.record_remote(&all, at_once(&all)).unwrap().unwrap();
        }
    }

    /// Every member reveals its secret of window `t` when it closes and records everyone's;
    /// returns that moment.
    pub fn reveal_all(&self, t: u64) -> u64 {
        let closed = self.params.closes_at(t);
        let reveals: Vec<_> = self
            .oracles
            .iter()
            .map(|o| o.reveal(t, closed).unwrap().unwrap().reveal)
            .collect();
        for o in &self.oracles {
            for r in &reveals {
                o.add_reveal(r, closed).unwrap().unwrap();
            }
        }
        closed
    }
}

/// Node `key` under `params` over the ledger in `dir`, opened anew at each call (a restart).
pub fn open_node(dir: &std::path::Path, params: &NetworkParams, key: &SigningKey) -> Oracle {
    let ledger = Ledger::open(dir, params.digest()).unwrap();
    Oracle::new(params.clone(), Registry::builtin(), key.clone(), ledger).unwrap()
}

/// Registers `key` on `o` at `now` and has it issued challenge 0 of window 0.
pub fn register_and_issue(o: &Oracle, key: &SigningKey, class: Class, now: u64) -> IssuedChallenge {
    o.register(&SignedRegister::new(key, class, now), now)
        .unwrap()
        .unwrap();
    o.issue(&SignedRequest::new(key, 0, 0), now)
        .unwrap()
        .unwrap()
}

pub fn solve(oracle: &Oracle, issued: &IssuedChallenge) -> Vec<u8> {
    oracle
        .registry()
        .get(&issued.prompt.family)
        .unwrap()
        .solve(&issued.prompt)
        .unwrap()
}

/// Requests `(id, t, j)` from its issuer and answers correctly at `answer_at`.
pub fn solve_one(
    net: &Net,
    key: &SigningKey,
    t: u64,
    j: u32,
    now: u64,
    answer_at: u64,
) -> Response {
    let issuer = net.issuer_for(key, t);
    let issued = issuer
        .issue(&SignedRequest::new(key, t, j), now)
        .unwrap()
        .unwrap();
    let response = Response::new(key, issued.challenge.clone(), solve(issuer, &issued));
    issuer
        .verify_response(&response, answer_at)
        .unwrap()
        .unwrap();
    response
}

/// What the window trees hold for `id` in `t`: challenges issued to it, answered-markers of the
/// window (anyone's), its acceptances.
pub fn footprint(o: &Oracle, t: u64, id: &IdentityId) -> (usize, usize, u32) {
    (
        o.ledger().issued_in(t, id).unwrap().len(),
        o.ledger().answered_count(t),
        o.ledger().solves(t, id).unwrap(),
    )
}

/// The right answer to an issued challenge, read off the answer key regenerated with the
/// issuer's window secret (the node key's secret): what a script holding every answer sends.
pub fn reference(o: &Oracle, node_key: &SigningKey, issued: &IssuedChallenge) -> Vec<u8> {
    let c = &issued.challenge.challenge;
    let w_t = window_secret(&node_secret(node_key), c.t);
    let profile = o
        .ledger()
        .identity(&c.id)
        .unwrap()
        .unwrap()
        .register
        .body
        .profile();
    let (_, generated) = derive_challenge(
        o.params(),
        o.registry(),
        &w_t,
        profile,
        &c.id,
        c.t,
        c.j,
        &c.family,
    )
    .unwrap();
    assert_eq!(
        generated.prompt, issued.prompt,
        "regenerated another prompt"
    );
    o.registry()
        .get(&c.family)
        .unwrap()
        .reference_answer(&generated.key)
        .unwrap()
}

/// When gossip delivers `batch` to another member: at once, just after its last acceptance.
pub fn at_once(batch: &[hco_oracle::SealedAcceptance]) -> hco_oracle::Timestamp {
    batch
        .iter()
        .map(|s| s.acceptance.accepted_at)
        .max()
        .unwrap_or(0)
        + 1
}
