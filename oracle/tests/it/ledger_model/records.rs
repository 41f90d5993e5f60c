//! The records the model test writes: small domains (identities, nodes, credentials and
//! windows of a few values each) so random sequences collide, replay and prune often.

use hco_challenges::Class;
use hco_oracle::ledger::{IdentityRecord, PasskeyRecord};
use hco_oracle::{
    Acceptance, Challenge, Digest, IdentityId, NodeId, Response, Sig, SignedChallenge,
    SignedEnrolment, SignedRegister, SignedReveal, SignedSummary, VERSION, WindowCertificate,
    WindowSummary, testing,
};

/// The parameters digest the test ledger is opened under.
pub const PARAMS: Digest = Digest([9; 32]);

pub fn identity_key(who: u8) -> ed25519_dalek::SigningKey {
    testing::key(u64::from(who) + 7000)
}

pub fn id(who: u8) -> IdentityId {
    testing::identity_id(&identity_key(who))
}

pub fn node_key(node: u8) -> ed25519_dalek::SigningKey {
    testing::key(u64::from(node) + 8000)
}

pub fn node(node: u8) -> NodeId {
    testing::node_id(&node_key(node))
}

pub fn identity(who: u8, window: u64) -> IdentityRecord {
    IdentityRecord {
        register: SignedRegister::new(&identity_key(who), Class::Agent, 5),
        window,
    }
}

/// A passkey record for credential `[cred]` (the ledger stores, it does not verify).
pub fn passkey(who: u8, cred: u8, counter: u32) -> PasskeyRecord {
    PasskeyRecord {
        enrolment: SignedEnrolment::new(&identity_key(who), 5, "{}".into()),
        credential_id: vec![cred],
        passkey: vec![who, cred],
        counter,
    }
}

pub fn summary(t: u64, signer: u8, root: u8) -> SignedSummary {
    let summary = WindowSummary {
        version: VERSION,
        t,
        root: Digest([root; 32]),
        count: u64::from(root),
        links_root: hco_oracle::merkle::empty_root(),
        params: PARAMS,
    };
    SignedSummary::new(&node_key(signer), summary)
}

pub fn certificate(t: u64, root: u8) -> WindowCertificate {
    WindowCertificate {
        summary: summary(t, 0, root).summary,
        signatures: Vec::new(),
    }
}

pub fn reveal(t: u64, by: u8, secret: u8) -> SignedReveal {
    SignedReveal::new(&node_key(by), t, Digest([secret; 32]), Digest::ZERO)
}

pub fn acceptance(t: u64, who: u8, j: u32) -> Acceptance {
    let challenge = Challenge {
        version: VERSION,
        issuer: NodeId([1; 32]),
        id: id(who),
        t,
        j,
        family: "proof_of_work".into(),
        issued_at: 1,
        deadline: 2,
        prompt_digest: Digest::ZERO,
        witness: None,
    };
    let signed = SignedChallenge {
        challenge,
        sig: Sig([0; 64]),
    };
    Acceptance {
        version: VERSION,
        response: Response::new(&identity_key(who), signed, vec![who]),
        accepted_at: 2,
    }
}
