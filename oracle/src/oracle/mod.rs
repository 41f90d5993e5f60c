//! The stateful oracle of one committee node over its [`Ledger`], in one file per job:
//! [`identity`](self) (registration, passkeys), `issue` (the window's step sequence), `verify`
//! (answers, one per challenge, with group commit), `remote` (acceptances of other members),
//! `active` (a window's active set), `close` (summaries, certificates, reveals, audits,
//! status) and `witnesses` (the beat witnesses touch prompts carry). Every method takes `now`; nothing here reads a clock, opens a socket or spawns a
//! task.

mod active;
mod close;
mod commit_log;
mod envelope;
mod identity;
mod integrity;
mod issue;
mod links;
mod live;
mod remote;
mod request;
mod reveals;
mod stage;
mod tries;
mod verify;
mod witnesses;

use std::sync::{Mutex, OnceLock};

use ed25519_dalek::SigningKey;
use hco_challenges::Registry;
use hco_challenges::presence::{Passkey, PresenceFamily};

use crate::ledger::{Ledger, LedgerError};
use crate::secret::node_secret;
use crate::window::{BEACON_LAG, BEACON_LOOKBACK, slot_beacon};
use crate::{Digest, IdentityId, NetworkParams, NodeId, ParamsError, Profile, Reason};

pub use envelope::blames_sender;
pub use identity::{ENROLMENT_TTL_MS, Origin as RegistrationOrigin};
pub use issue::IssuedChallenge;
pub use links::{LinkHeard, LinkedProof, MAX_LINK_LEAD, MAX_LINKED_CHAINS};
pub use live::{STREAM_DOMAIN, stream_digest};
pub use remote::Recorded;
pub use request::CheckedRequest;
pub use stage::{STAGE_PREFIX, parse_stage_answer};
pub use tries::EarlierTries;

/// Told of each piece of evidence once, when it is first stored (see
/// [`Oracle::observe_evidence`]).
pub type EvidenceObserver = Box<dyn Fn(&crate::Evidence) + Send + Sync>;

/// Told of each wrong multi-part answer's verdicts part by part (see
/// [`Oracle::observe_part_verdicts`]).
pub type PartObserver = Box<dyn Fn(&PartVerdicts<'_>) + Send + Sync>;

/// Which parts of a wrong multi-part answer (`narrative_chain`) were right: for the operator's
/// logs and metrics only. The client is told `answer_mismatch`, never which part.
#[derive(Debug)]
pub struct PartVerdicts<'a> {
    /// The family.
    pub family: &'a str,
    /// The window.
    pub t: u64,
    /// The identity that answered.
    pub id: &'a IdentityId,
    /// The step index.
    pub j: u32,
    /// Right (`true`) or wrong, per part in order.
    pub parts: &'a [bool],
}

/// A rejection is `Ok(Err(reason))`; a storage failure is `Err`.
pub type Outcome<T> = Result<Result<T, Reason>, LedgerError>;

/// One committee node's protocol state machine.
pub struct Oracle {
    params: NetworkParams,
    params_digest: Digest,
    registry: Registry,
    key: SigningKey,
    node: NodeId,
    node_secret: [u8; 32],
    ledger: Ledger,
    /// Serialises the replay check and the writes of acceptances and answered-markers, and
    /// holds the log of what the recent commits answered.
    commit: Mutex<commit_log::CommitLog>,
    /// The last commit's number, noted by a batch before its lock-free ledger reads.
    last_commit: commit_log::LastCommit,
    /// Acceptances decided but still being written (see [`commit_log::Unwritten`]).
    unwritten: commit_log::Unwritten,
    /// Parsed identity keys.
    keys: crate::key_cache::KeyCache,
    /// Registered profiles (class, visual opt-out) of identities seen recently.
    profiles: crate::key_cache::IdentityCache<Profile>,
    /// The presence family's relying party under the network's policy (enrolments).
    presence: PresenceFamily,
    /// The last slot beacon computed from final inputs, `(t, beacon)`.
    beacon_cache: Mutex<Option<(u64, Digest)>>,
    /// Told of new evidence, whatever brought it (audit, reveal, summary, gossip, certificate).
    evidence_observer: OnceLock<EvidenceObserver>,
    /// When the running node started (0: always, as in tests): a window that closed before
    /// was decided without it, so it catches up on it from what it holds (see `catching_up`).
    started_at: std::sync::atomic::AtomicU64,
    /// Told of the per-part verdicts of wrong multi-part answers.
    part_observer: OnceLock<PartObserver>,
    /// The active set last summarized or proved from, `(t, set)`: proofs of a certified
    /// window are served from it while its root is the certified one (see
    /// [`Oracle::membership`]), not from a scan of the window per request.
    proof_set: Mutex<Option<(u64, std::sync::Arc<crate::certificate::ActiveSet>)>>,
    /// The committee's beat witnesses of recent windows (see [`crate::witness`]).
    witnesses: witnesses::Held,
    /// Serialises the read-decide-write of an identity's link statements.
    links_lock: Mutex<()>,
}

impl Oracle {
    /// Tells the oracle when the running node started: windows that closed before then were
    /// decided without it (their reveals and late acceptances came while it was away), so it
    /// takes what it holds for them rather than what counted in time (see [`crate::relay`]).
    pub fn set_started_at(&self, now: crate::Timestamp) {
        self.started_at
            .store(now, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether window `t` closed before this node started (see [`Oracle::set_started_at`]).
    pub(crate) fn catching_up(&self, t: u64) -> bool {
        self.params.closes_at(t) < self.started_at.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Oracle {
    /// An oracle for a committee node with `key`, over `ledger`.
    pub fn new(
        params: NetworkParams,
        mut registry: Registry,
        key: SigningKey,
        ledger: Ledger,
    ) -> Result<Self, ParamsError> {
        params.validate(&registry)?;
        // Validated above when the family is enabled; otherwise only its default is used.
        let presence = PresenceFamily::new(params.presence.clone()).unwrap_or_default();
        // The registry's presence family checks assertions under the network's policy (a
        // stand-in of the same name, as the simulator uses, is left alone).
        if registry
            .get(hco_challenges::presence::NAME)
            .is_some_and(|f| f.uses_passkeys())
        {
            registry.insert(presence.clone());
        }
        Ok(Self {
            params_digest: params.digest(),
            node: NodeId(key.verifying_key().to_bytes()),
            node_secret: node_secret(&key),
            params,
            registry,
            key,
            ledger,
            commit: Mutex::new(commit_log::CommitLog::default()),
            last_commit: commit_log::LastCommit::default(),
            unwritten: commit_log::Unwritten::default(),
            beacon_cache: Mutex::new(None),
            evidence_observer: OnceLock::new(),
            started_at: std::sync::atomic::AtomicU64::new(0),
            part_observer: OnceLock::new(),
            proof_set: Mutex::new(None),
            links_lock: Mutex::new(()),
            witnesses: witnesses::Held::default(),
            keys: crate::key_cache::KeyCache::new(1 << 20),
            profiles: crate::key_cache::IdentityCache::new(1 << 20),
            presence,
        })
    }

    /// The network parameters.
    pub fn params(&self) -> &NetworkParams {
        &self.params
    }

    /// This node's id.
    pub fn node_id(&self) -> NodeId {
        self.node
    }

    /// The ledger.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Whether `(t, id, j)` was answered: decided by a batch still writing it, or in the
    /// ledger. In that order: a batch lets its keys go only once they are in the ledger.
    fn is_answered(&self, t: u64, id: &IdentityId, j: u32) -> Result<bool, LedgerError> {
        Ok(self.unwritten.contains(&(t, *id, j)) || self.ledger.is_answered(t, id, j)?)
    }

    /// Sets what is told of each piece of evidence when it is first stored in the ledger
    /// (after it is durable), whenever and however it arrives; once per oracle: `false` if one
    /// was set before (and `observer` is dropped).
    pub fn observe_evidence(
        &self,
        observer: impl Fn(&crate::Evidence) + Send + Sync + 'static,
    ) -> bool {
        self.evidence_observer.set(Box::new(observer)).is_ok()
    }

    /// Sets what is told, once the verdict is durable, of each wrong multi-part answer's
    /// verdicts part by part (an identity-signed first answer, never a forgery or a replay);
    /// once per oracle: `false` if one was set before. Without an observer nothing is
    /// computed.
    pub fn observe_part_verdicts(
        &self,
        observer: impl Fn(&PartVerdicts<'_>) + Send + Sync + 'static,
    ) -> bool {
        self.part_observer.set(Box::new(observer)).is_ok()
    }

    /// The family registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Removes the identities registered before window `registered_before` that were never
    /// active and hold no passkey ([`Ledger::prune_idle_identities`]), and forgets the cached
    /// profiles, so a pruned identity is unknown again to issuance.
    pub fn prune_idle_identities(
        &self,
        registered_before: u64,
    ) -> Result<crate::ledger::PruneStats, LedgerError> {
        let stats = self.ledger.prune_idle_identities(registered_before);
        self.profiles.clear();
        stats
    }

    /// The registered profile of `id` (cached: it never changes once registered, and pruning
    /// clears the cache).
    fn profile_of(&self, id: &IdentityId) -> Result<Option<Profile>, LedgerError> {
        if let Some(profile) = self.profiles.get(id) {
            return Ok(Some(profile));
        }
        let profile = self.ledger.identity(id)?.map(|r| r.register.body.profile());
        if let Some(profile) = profile {
            self.profiles.insert(id, profile);
        }
        Ok(profile)
    }

    /// The passkeys `id` enrolled, decoded, with their stored counters.
    fn passkeys_of(&self, id: &IdentityId) -> Result<Vec<Passkey>, LedgerError> {
        self.ledger
            .passkeys(id)?
            .into_iter()
            .map(|r| {
                Passkey::decode(&r.passkey)
                    .map(|p| p.with_counter(r.counter))
                    .map_err(|detail| LedgerError::Corrupt {
                        tree: "passkeys",
                        detail,
                    })
            })
            .collect()
    }

    /// The beacon that places the slots of window `t` (see [`slot_beacon`]): from the latest
    /// two certified windows before `t − 1`, so every member computes it from certificates
    /// that formed a whole window before `t` starts (the certificate of `t − 1` forms around
    /// `t`'s slot, at different moments on different members, and moved a slot mid-window when
    /// it counted). Cached once its inputs are final: certificates of `t − 2` and `t − 3` never
    /// change once stored.
    pub fn beacon(&self, t: u64) -> Result<Digest, LedgerError> {
        let cached = *self
            .beacon_cache
            .lock()
            .map_err(|_| LedgerError::Poisoned)?;
        if let Some((_, beacon)) = cached.filter(|(ct, _)| *ct == t) {
            return Ok(beacon);
        }
        let roots = self
            .ledger
            .latest_roots_before(t.saturating_sub(BEACON_LAG), BEACON_LOOKBACK)?;
        let beacon = slot_beacon(t, &self.params_digest, &roots);
        let last_two = t.checked_sub(BEACON_LAG + 2).map(|before| {
            roots.iter().map(|(w, _)| *w).collect::<Vec<_>>() == [before + 1, before]
        });
        if last_two == Some(true) {
            *self
                .beacon_cache
                .lock()
                .map_err(|_| LedgerError::Poisoned)? = Some((t, beacon));
        }
        Ok(beacon)
    }

    /// The ceremony slot of `id` in window `t` (an `open` slot needs no beacon: it is the
    /// window, so no certificate is read for it).
    pub fn slot(
        &self,
        t: u64,
        id: &IdentityId,
    ) -> Result<std::ops::Range<crate::Timestamp>, LedgerError> {
        let beacon = match self.params.slot_mode {
            crate::SlotMode::Open => Digest::ZERO,
            crate::SlotMode::Global | crate::SlotMode::Staggered => self.beacon(t)?,
        };
        Ok(self.params.slot(t, id, &beacon))
    }
}

impl std::fmt::Debug for Oracle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oracle")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}
