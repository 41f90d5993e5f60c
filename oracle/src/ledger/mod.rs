//! The ledger on sled (DESIGN §6), behind one owner type.
//!
//! Trees, keyed big-endian with the window first:
//!
//! | tree | key | value |
//! |---|---|---|
//! | `identities` | `id` | [`SignedRegister`] and registration window |
//! | `passkeys` | `id ‖ credential id` | [`PasskeyRecord`]: the signed enrolment, the credential, its last counter |
//! | `issued` | `t ‖ id ‖ j` | [`IssuedRecord`]: first issue time, family, envelope id and signature |
//! | `accepted` | `t ‖ id ‖ j` | [`SealedAcceptance`](crate::SealedAcceptance) |
//! | `answered` | `t ‖ id ‖ j` | [`AnsweredRecord`]: a wrong answer's time and code (the first answer is final) |
//! | `credentials` | credential id | the identity that enrolled it (one credential, one identity) |
//! | `summaries` | `t ‖ node` | [`SignedSummary`](crate::SignedSummary) |
//! | `certs` | `t` | [`WindowCertificate`](crate::WindowCertificate) (the first held is kept) |
//! | `reveals` | `t ‖ node` | [`SignedReveal`](crate::SignedReveal) (the first held is kept) |
//! | `counted_reveals` | `t ‖ node` | the [`crate::RelayedReveal`] that made the member's reveal count here (see `counted`) |
//! | `evidence` | `t ‖ node ‖ digest` | [`crate::Evidence`] against that member in window `t` |
//! | `excluded` | `t` | the members whose acceptances of `t` were left out when `t` was summarized |
//! | `narrative_sets` | set id | the window that first used the narrative set (never pruned) |
//! | `links` | `id ‖ chain ‖ 0x00 ‖ from_window` | an account link's [`hco_verify::link::SignedLink`] (see `links`) |
//!
//! A window's active set is derived from `accepted` by one range scan (identities whose accepted
//! challenges cover every step of their class's policy), so there is no second tree to keep
//! consistent across a crash.
//! Acceptances are acknowledged only after [`Ledger::make_durable`], which group-commits.

mod acceptances;
mod compact;
mod conflicts;
mod counted;
mod evidence;
mod first_write;
mod group_commit;
mod identities;
mod idle;
pub mod keys;
mod links;
mod narrative;
mod one_by_one;
mod recent;
mod sequence;
mod windows;

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{Digest, Sig, SignedEnrolment, SignedRegister, Timestamp, codec};
pub use compact::{Compaction, compact};
pub use first_write::FirstWrite;
pub use group_commit::GroupCommit;
pub use narrative::MAX_SET_ID_LEN;
pub use sequence::AnsweredRecord;

/// A storage failure (not a rejection).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// sled failed.
    #[error("storage error: {0}; check the data directory's disk space and permissions")]
    Storage(#[from] sled::Error),
    /// A stored value does not decode.
    #[error("corrupt record in tree `{tree}`: {detail}")]
    Corrupt {
        /// Tree name.
        tree: &'static str,
        /// What failed.
        detail: String,
    },
    /// The data directory belongs to another network.
    #[error(
        "the data directory was created for network parameters {stored}, but the configuration gives {configured}; use another data directory or the original parameters"
    )]
    ParamsMismatch {
        /// Digest stored.
        stored: Digest,
        /// Digest configured.
        configured: Digest,
    },
    /// A lock was poisoned by a panicking thread.
    #[error("internal lock poisoned by an earlier panic")]
    Poisoned,
    /// Another process holds the ledger (a node still running or still stopping).
    #[error("the ledger in {0} is held by another process: is the node still running?")]
    InUse(std::path::PathBuf),
}

/// Whether sled refused to open a database because another handle holds its file lock.
fn lock_held(e: &sled::Error) -> bool {
    matches!(e, sled::Error::Io(io) if io.to_string().contains("could not acquire lock"))
}

/// Opens the database of `config`, retrying for up to two seconds while its file lock is held:
/// a handle dropped a moment ago in this process can leave sled's background flusher holding
/// it (another process holding the lock keeps it, and the error is returned).
fn open_when_free(config: &sled::Config) -> Result<sled::Db, LedgerError> {
    let mut attempts = 0;
    loop {
        match config.open() {
            Ok(db) => return Ok(db),
            Err(e) if attempts < 100 && lock_held(&e) => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The first issue of a challenge: re-requests return the same envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuedRecord {
    /// First issue time.
    pub issued_at: Timestamp,
    /// Its deadline.
    pub deadline: Timestamp,
    /// Family issued.
    pub family: String,
    /// The envelope's id.
    pub challenge_id: Digest,
    /// The issuer's signature over it.
    pub sig: Sig,
    /// The beat witness a touch prompt carries ([`crate::witness`]).
    pub witness: Option<crate::witness::SlotWitness>,
}

/// A registration as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdentityRecord {
    /// The signed registration.
    pub register: SignedRegister,
    /// The window it was recorded in.
    pub window: u64,
}

/// A passkey enrolled for the presence family, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasskeyRecord {
    /// The identity's signed enrolment (what peers re-verify).
    pub enrolment: SignedEnrolment,
    /// The WebAuthn credential id.
    #[serde(with = "crate::hex_bytes")]
    pub credential_id: Vec<u8>,
    /// The verified credential, encoded by the presence family.
    #[serde(with = "crate::hex_bytes")]
    pub passkey: Vec<u8>,
    /// The highest signature counter seen in an accepted assertion.
    pub counter: u32,
}

/// What a prune removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneStats {
    /// Records removed.
    pub removed: usize,
}

/// The node's durable state.
pub struct Ledger {
    db: sled::Db,
    identities: sled::Tree,
    /// A second registration of an identity that contradicts its first (see `conflicts`).
    conflicts: sled::Tree,
    passkeys: sled::Tree,
    issued: sled::Tree,
    accepted: sled::Tree,
    answered: sled::Tree,
    credentials: sled::Tree,
    summaries: sled::Tree,
    certs: sled::Tree,
    reveals: sled::Tree,
    counted_reveals: sled::Tree,
    evidence: sled::Tree,
    excluded: sled::Tree,
    narrative_sets: sled::Tree,
    links: sled::Tree,
    commit: GroupCommit,
    /// What the newest windows' answers and issues are, in memory (see `recent`).
    recent: recent::Recent,
}

const PARAMS_KEY: &[u8] = b"params_digest";

fn decode<T: DeserializeOwned>(tree: &'static str, bytes: &[u8]) -> Result<T, LedgerError> {
    codec::decode(bytes, usize::MAX).map_err(|e| LedgerError::Corrupt {
        tree,
        detail: e.to_string(),
    })
}

impl Ledger {
    /// Opens (or creates) the ledger in `path` for the network with `params` digest.
    ///
    /// Reopening right after the previous handle in this process was dropped can find sled's
    /// file lock still held by its background flusher for a moment; the open is retried for up
    /// to two seconds before the error is returned (another process holding the lock keeps it).
    pub fn open(path: &Path, params: Digest) -> Result<Self, LedgerError> {
        let config = sled::Config::new().path(path).flush_every_ms(Some(500));
        Self::with_db(open_when_free(&config)?, params)
    }

    /// A ledger in a temporary directory, removed when dropped (tests, simulator).
    pub fn temporary(params: Digest) -> Result<Self, LedgerError> {
        Self::with_db(sled::Config::new().temporary(true).open()?, params)
    }

    /// The ledger over an open sled database, which the caller may keep a handle to (tests
    /// that damage a stored record to see how the node copes with a failing store).
    pub fn over(db: sled::Db, params: Digest) -> Result<Self, LedgerError> {
        Self::with_db(db, params)
    }

    fn with_db(db: sled::Db, params: Digest) -> Result<Self, LedgerError> {
        match db.get(PARAMS_KEY)? {
            Some(stored) if stored.as_ref() != params.0 => {
                return Err(LedgerError::ParamsMismatch {
                    stored: Digest::from_slice(&stored).unwrap_or(Digest::ZERO),
                    configured: params,
                });
            }
            Some(_) => {}
            None => {
                db.insert(PARAMS_KEY, &params.0)?;
                db.flush()?;
            }
        }
        Ok(Self {
            identities: db.open_tree("identities")?,
            conflicts: db.open_tree("conflicts")?,
            passkeys: db.open_tree("passkeys")?,
            issued: db.open_tree("issued")?,
            accepted: db.open_tree("accepted")?,
            answered: db.open_tree("answered")?,
            credentials: db.open_tree("credentials")?,
            summaries: db.open_tree("summaries")?,
            certs: db.open_tree("certs")?,
            reveals: db.open_tree("reveals")?,
            counted_reveals: db.open_tree("counted_reveals")?,
            evidence: db.open_tree("evidence")?,
            excluded: db.open_tree("excluded")?,
            narrative_sets: db.open_tree("narrative_sets")?,
            links: db.open_tree("links")?,
            db,
            commit: GroupCommit::default(),
            recent: recent::Recent::new(),
        })
    }

    /// Blocks until everything written so far is on disk. Concurrent callers share one flush.
    pub fn make_durable(&self) -> Result<(), LedgerError> {
        let generation = self.commit.wrote();
        self.commit.make_durable(generation, || {
            self.db.flush()?;
            Ok(())
        })
    }

    /// Fingerprints held in memory for the newest windows' answers and issues (see the
    /// `recent` module: at most 12 million, 10–39 bytes each).
    pub fn remembered(&self) -> usize {
        self.recent.entries()
    }

    /// Flushes performed by [`Ledger::make_durable`] so far.
    pub fn flush_count(&self) -> u64 {
        self.commit.flushes()
    }

    /// Removes every window-keyed record of windows before `t` (identities and evidence are
    /// kept).
    pub fn prune_before(&self, t: u64) -> Result<PruneStats, LedgerError> {
        let end = keys::window(t);
        self.recent.prune_before(t);
        let mut removed = 0;
        for tree in [
            &self.issued,
            &self.accepted,
            &self.answered,
            &self.summaries,
            &self.certs,
            &self.reveals,
            &self.counted_reveals,
            &self.excluded,
        ] {
            // Key by key (see `one_by_one`); sled's iterator resumes after its last key.
            for key in tree.range(..&end[..]).keys() {
                tree.remove(key?)?;
                removed += 1;
            }
        }
        Ok(PruneStats { removed })
    }
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("identities", &self.identities.len())
            .field("accepted", &self.accepted.len())
            .finish_non_exhaustive()
    }
}
