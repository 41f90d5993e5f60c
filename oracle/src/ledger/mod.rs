//! The ledger on sled (DESIGN §6), behind one owner type.
//!
//! Trees, keyed big-endian with the window first:
//!
//! | tree | key | value |
//! |---|---|---|
//! | `identities` | `id` | [`SignedRegister`] and registration window |
//! | `passkeys` | `id ‖ credential id` | [`PasskeyRecord`]: the signed enrolment, the credential, its last counter |
//! | `issued` | `t ‖ id ‖ j` | [`IssuedRecord`]: first issue time, family, envelope id and signature |
//! | `accepted` | `t ‖ id ‖ j` | [`SealedAcceptance`] |
//! | `answered` | `t ‖ id ‖ j` | [`AnsweredRecord`]: a wrong answer's time and code (the first answer is final) |
//! | `credentials` | credential id | the identity that enrolled it (one credential, one identity) |
//! | `summaries` | `t ‖ node` | [`SignedSummary`] |
//! | `certs` | `t` | [`WindowCertificate`] (the first held is kept) |
//! | `reveals` | `t ‖ node` | [`SignedReveal`] (the first held is kept) |
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

mod compact;
mod conflicts;
mod counted;
mod evidence;
mod first_write;
mod group_commit;
mod idle;
pub mod keys;
mod links;
mod narrative;
mod one_by_one;
mod recent;
mod sequence;

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{
    Digest, IdentityId, NodeId, SealedAcceptance, Sig, SignedEnrolment, SignedRegister,
    SignedReveal, SignedSummary, Timestamp, WindowCertificate, codec,
};
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

    // Identities.

    /// The registration of `id`.
    pub fn identity(&self, id: &IdentityId) -> Result<Option<IdentityRecord>, LedgerError> {
        self.identities
            .get(id.0)?
            .map(|v| decode("identities", &v))
            .transpose()
    }

    /// Whether `id` is registered (no decode).
    pub fn has_identity(&self, id: &IdentityId) -> Result<bool, LedgerError> {
        Ok(self.identities.contains_key(id.0)?)
    }

    /// Stores a registration unless one exists; returns the stored record.
    pub fn put_identity(&self, record: &IdentityRecord) -> Result<IdentityRecord, LedgerError> {
        let id = record.register.body.id;
        match self
            .identities
            .compare_and_swap(id.0, None::<&[u8]>, Some(codec::encode(record)))?
        {
            Ok(()) => Ok(record.clone()),
            Err(current) => match current.current {
                Some(bytes) => decode("identities", &bytes),
                None => Ok(record.clone()),
            },
        }
    }

    /// Registrations with ids after `after`, in id order, at most `limit`.
    pub fn identities_after(
        &self,
        after: Option<&IdentityId>,
        limit: usize,
    ) -> Result<Vec<SignedRegister>, LedgerError> {
        let range = match after {
            Some(id) => self.identities.range::<&[u8], _>((
                std::ops::Bound::Excluded(&id.0[..]),
                std::ops::Bound::Unbounded,
            )),
            None => self.identities.iter(),
        };
        range
            .take(limit)
            .map(|r| decode::<IdentityRecord>("identities", &r?.1).map(|rec| rec.register))
            .collect()
    }

    /// Number of registered identities.
    pub fn identity_count(&self) -> usize {
        self.identities.len()
    }

    // Passkeys.

    fn passkey_key(id: &IdentityId, credential_id: &[u8]) -> Vec<u8> {
        [&id.0[..], credential_id].concat()
    }

    /// The passkeys `id` enrolled, in credential-id order.
    pub fn passkeys(&self, id: &IdentityId) -> Result<Vec<PasskeyRecord>, LedgerError> {
        self.passkeys
            .scan_prefix(id.0)
            .map(|r| decode("passkeys", &r?.1))
            .collect()
    }

    /// Passkey records after the record of `(id, credential id)` `after`, in key order, at most
    /// `limit` (registry synchronisation between nodes).
    pub fn passkeys_after(
        &self,
        after: Option<(&IdentityId, &[u8])>,
        limit: usize,
    ) -> Result<Vec<PasskeyRecord>, LedgerError> {
        let range = match after {
            Some((id, credential)) => self.passkeys.range::<Vec<u8>, _>((
                std::ops::Bound::Excluded(Self::passkey_key(id, credential)),
                std::ops::Bound::Unbounded,
            )),
            None => self.passkeys.iter(),
        };
        range
            .take(limit)
            .map(|r| decode("passkeys", &r?.1))
            .collect()
    }

    /// Stores an enrolled passkey unless its credential is already enrolled (by this identity
    /// or another); true if stored. The credential index is claimed first, so two identities
    /// racing for one credential cannot both enrol it.
    pub fn put_passkey(&self, record: &PasskeyRecord) -> Result<bool, LedgerError> {
        let id = record.enrolment.body.id;
        let claimed = self.credentials.compare_and_swap(
            &record.credential_id,
            None::<&[u8]>,
            Some(&id.0[..]),
        )?;
        if let Err(current) = claimed
            && current.current.as_deref() != Some(&id.0[..])
        {
            return Ok(false);
        }
        let key = Self::passkey_key(&id, &record.credential_id);
        Ok(self
            .passkeys
            .compare_and_swap(key, None::<&[u8]>, Some(codec::encode(record)))?
            .is_ok())
    }

    /// The identity that enrolled the credential `credential_id`, if any.
    pub fn credential_owner(
        &self,
        credential_id: &[u8],
    ) -> Result<Option<IdentityId>, LedgerError> {
        Ok(self
            .credentials
            .get(credential_id)?
            .and_then(|v| IdentityId::from_slice(&v)))
    }

    /// Raises a credential's stored counter to `counter` (never lowers it).
    pub fn raise_counter(
        &self,
        id: &IdentityId,
        credential_id: &[u8],
        counter: u32,
    ) -> Result<(), LedgerError> {
        let key = Self::passkey_key(id, credential_id);
        self.passkeys.fetch_and_update(&key, |old| {
            let mut record: PasskeyRecord = decode("passkeys", old?).ok()?;
            record.counter = record.counter.max(counter);
            Some(codec::encode(&record))
        })?;
        Ok(())
    }

    // Issued challenges.

    /// The first-issue record of `(t, id, j)`.
    pub fn issued(
        &self,
        t: u64,
        id: &IdentityId,
        j: u32,
    ) -> Result<Option<IssuedRecord>, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        self.issued
            .get(key)?
            .map(|v| decode("issued", &v))
            .transpose()
    }

    /// Stores a first-issue record unless one exists; returns the record that holds.
    pub fn put_issued(
        &self,
        t: u64,
        id: &IdentityId,
        j: u32,
        record: &IssuedRecord,
    ) -> Result<IssuedRecord, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        self.meet(t);
        match self
            .issued
            .compare_and_swap(key, None::<&[u8]>, Some(codec::encode(record)))?
        {
            Ok(()) => {
                self.recent
                    .issued(t, &key, &record.challenge_id, &record.sig);
                Ok(record.clone())
            }
            Err(current) => match current.current {
                Some(bytes) => decode("issued", &bytes),
                None => Ok(record.clone()),
            },
        }
    }

    // Acceptances.

    /// Whether `(t, id, j)` was accepted.
    pub fn is_accepted(&self, t: u64, id: &IdentityId, j: u32) -> Result<bool, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        if self.recent.surely_unanswered(t, &key) {
            return Ok(false);
        }
        Ok(self.accepted.contains_key(key)?)
    }

    /// The acceptance of `(t, id, j)`.
    pub fn accepted(
        &self,
        t: u64,
        id: &IdentityId,
        j: u32,
    ) -> Result<Option<SealedAcceptance>, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        self.accepted
            .get(key)?
            .map(|v| decode("accepted", &v))
            .transpose()
    }

    /// Writes acceptances (in memory; call [`Ledger::make_durable`] before acknowledging).
    /// Idempotent: an `(t, id, j)` already present is kept. The caller must serialise calls
    /// that may race on the same key (the [`crate::Oracle`] holds its commit lock).
    pub fn insert_acceptances(&self, batch: &[SealedAcceptance]) -> Result<usize, LedgerError> {
        let mut writes = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for sealed in batch {
            let c = sealed.acceptance.challenge();
            let key = keys::window_id_index(c.t, &c.id, c.j);
            self.meet(c.t);
            if !seen.insert(key)
                || (!self.recent.surely_unanswered(c.t, &key) && self.accepted.contains_key(key)?)
            {
                continue;
            }
            writes.push((key, sealed.encode()));
        }
        let fresh = writes.len();
        self.insert_answers(writes)?;
        Ok(fresh)
    }

    /// Removes the acceptances `(id, j)` of window `t` (in memory; call
    /// [`Ledger::make_durable`] to make it last): those whose seal the audit found broken.
    pub fn remove_acceptances(
        &self,
        t: u64,
        keys: &[(IdentityId, u32)],
    ) -> Result<(), LedgerError> {
        one_by_one::remove_all(
            &self.accepted,
            keys.iter().map(|(id, j)| keys::window_id_index(t, id, *j)),
        )?;
        Ok(())
    }

    /// Writes acceptances the caller has found absent under its commit lock and holds as
    /// answered until this returns (the verification path), skipping the second lookup of
    /// [`Ledger::insert_acceptances`].
    pub(crate) fn insert_checked(&self, batch: &[SealedAcceptance]) -> Result<(), LedgerError> {
        let mut met = None;
        let writes = batch
            .iter()
            .map(|sealed| {
                let c = sealed.acceptance.challenge();
                if met != Some(c.t) {
                    self.meet(c.t);
                    met = Some(c.t);
                }
                (keys::window_id_index(c.t, &c.id, c.j), sealed.encode())
            })
            .collect();
        self.insert_answers(writes)
    }

    /// Writes acceptances of windows already met, and remembers them as answered.
    fn insert_answers(&self, writes: Vec<([u8; 44], Vec<u8>)>) -> Result<(), LedgerError> {
        let keys: Vec<[u8; 44]> = writes.iter().map(|(key, _)| *key).collect();
        let written = one_by_one::insert_all(&self.accepted, writes);
        // Also after a failed write: some keys may have landed, and a key remembered as
        // answered that was not is only a sled read more.
        for key in &keys {
            self.recent.answered(keys::t_of(key).unwrap_or(0), key);
        }
        Ok(written?)
    }

    /// Starts holding window `t` in memory if it is new (see `recent`). Call before writing
    /// an answer or an issue of `t`.
    fn meet(&self, t: u64) {
        self.recent.meet(t, || {
            let prefix = keys::window(t);
            let holds = |tree: &sled::Tree| -> Result<bool, sled::Error> {
                Ok(tree.scan_prefix(prefix).next().transpose()?.is_some())
            };
            Ok(recent::Held {
                answers: holds(&self.accepted)? || holds(&self.answered)?,
                issues: holds(&self.issued)?,
            })
        });
    }

    /// Whether `(challenge_id, sig)` is the envelope first issued as `(t, id, j)`.
    pub fn issued_matches(
        &self,
        t: u64,
        id: &IdentityId,
        j: u32,
        challenge_id: &Digest,
        sig: &Sig,
    ) -> Result<bool, LedgerError> {
        let key = keys::window_id_index(t, id, j);
        if let Some(matches) = self.recent.issued_matches(t, &key, challenge_id, sig) {
            return Ok(matches);
        }
        Ok(self
            .issued(t, id, j)?
            .is_some_and(|rec| rec.sig == *sig && rec.challenge_id == *challenge_id))
    }

    /// All acceptances of window `t`, in key order.
    pub fn acceptances(
        &self,
        t: u64,
    ) -> impl Iterator<Item = Result<SealedAcceptance, LedgerError>> + '_ {
        self.accepted
            .scan_prefix(keys::window(t))
            .map(|r| decode("accepted", &r?.1))
    }

    /// The `(id, j)` accepted in window `t`: what reconciliation exchanges.
    pub fn accepted_keys(&self, t: u64) -> Result<Vec<(IdentityId, u32)>, LedgerError> {
        let mut out = Vec::new();
        for entry in self.accepted.scan_prefix(keys::window(t)).keys() {
            let key = entry?;
            if let (Some(id), Some(j)) = (keys::id_of(&key), key.get(40..44)) {
                out.push((id, u32::from_be_bytes(j.try_into().unwrap_or([0; 4]))));
            }
        }
        Ok(out)
    }

    /// The `(id, j)` accepted in window `t` after `after`, in key order, at most `limit`.
    pub fn accepted_keys_after(
        &self,
        t: u64,
        after: Option<(IdentityId, u32)>,
        limit: usize,
    ) -> Result<Vec<(IdentityId, u32)>, LedgerError> {
        let start = match after {
            Some((id, j)) => std::ops::Bound::Excluded(keys::window_id_index(t, &id, j).to_vec()),
            None => std::ops::Bound::Included(keys::window(t).to_vec()),
        };
        let end = std::ops::Bound::Excluded(keys::window(t + 1).to_vec());
        let mut out = Vec::new();
        for entry in self
            .accepted
            .range::<Vec<u8>, _>((start, end))
            .keys()
            .take(limit)
        {
            let key = entry?;
            if let (Some(id), Some(j)) = (keys::id_of(&key), key.get(40..44)) {
                out.push((id, u32::from_be_bytes(j.try_into().unwrap_or([0; 4]))));
            }
        }
        Ok(out)
    }

    /// The indices `j` of `id`'s accepted challenges in window `t`, ascending.
    pub fn accepted_indices(&self, t: u64, id: &IdentityId) -> Result<Vec<u32>, LedgerError> {
        let mut out = Vec::new();
        for key in self.accepted.scan_prefix(keys::window_id(t, id)).keys() {
            if let Some(j) = key?.get(40..44) {
                out.push(u32::from_be_bytes(j.try_into().unwrap_or([0; 4])));
            }
        }
        Ok(out)
    }

    /// Accepted challenges of `id` in window `t`.
    pub fn solves(&self, t: u64, id: &IdentityId) -> Result<u32, LedgerError> {
        Ok(self
            .accepted
            .scan_prefix(keys::window_id(t, id))
            .keys()
            .count() as u32)
    }

    // Summaries, certificates, reveals.

    /// Stores a node's summary of window `t` (the first one it sent is kept).
    pub fn put_summary(&self, s: &SignedSummary) -> Result<(), LedgerError> {
        let key = keys::window_node(s.summary.t, &s.signer.0);
        self.summaries
            .compare_and_swap(key, None::<&[u8]>, Some(codec::encode(s)))?
            .ok();
        Ok(())
    }

    /// The summaries received for window `t`.
    pub fn summaries(&self, t: u64) -> Result<Vec<SignedSummary>, LedgerError> {
        self.summaries
            .scan_prefix(keys::window(t))
            .map(|r| decode("summaries", &r?.1))
            .collect()
    }

    /// Stores the certificate of a window unless one is held: the first certificate of a
    /// window is kept. One of another summary is returned as [`FirstWrite::Conflict`]; one of
    /// the same summary (other signers) is a [`FirstWrite::Duplicate`].
    pub fn put_certificate(
        &self,
        cert: &WindowCertificate,
    ) -> Result<FirstWrite<WindowCertificate>, LedgerError> {
        let key = keys::window(cert.summary.t);
        first_write::put_first(&self.certs, "certs", &key, cert, |held, new| {
            held.summary == new.summary
        })
    }

    /// The certificate of window `t`.
    pub fn certificate(&self, t: u64) -> Result<Option<WindowCertificate>, LedgerError> {
        self.certs
            .get(keys::window(t))?
            .map(|v| decode("certs", &v))
            .transpose()
    }

    /// The root certified for window `t`, or [`Digest::ZERO`] when there is none.
    pub fn certified_root(&self, t: u64) -> Result<Digest, LedgerError> {
        Ok(self
            .certificate(t)?
            .map(|c| c.summary.root)
            .unwrap_or(Digest::ZERO))
    }

    /// Stores a member's reveal of a window unless one is held: the first is kept (a
    /// different one is returned as [`FirstWrite::Conflict`], evidence of equivocation).
    pub fn put_reveal(&self, r: &SignedReveal) -> Result<FirstWrite<SignedReveal>, LedgerError> {
        let key = keys::window_node(r.reveal.t, &r.reveal.node.0);
        first_write::put_first(&self.reveals, "reveals", &key, r, |_, _| false)
    }

    /// The reveals of window `t`.
    pub fn reveals(&self, t: u64) -> Result<Vec<SignedReveal>, LedgerError> {
        self.reveals
            .scan_prefix(keys::window(t))
            .map(|r| decode("reveals", &r?.1))
            .collect()
    }

    /// The reveal of `node` for window `t`.
    pub fn reveal(&self, t: u64, node: &NodeId) -> Result<Option<SignedReveal>, LedgerError> {
        self.reveals
            .get(keys::window_node(t, &node.0))?
            .map(|v| decode("reveals", &v))
            .transpose()
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
