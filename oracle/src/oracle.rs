//! The stateful oracle of one committee node: registration, issuance, verification with group
//! commit, summaries, certificates, reveals and audits over its [`Ledger`]. Every method takes
//! `now`; nothing here reads a clock, opens a socket or spawns a task.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use ed25519_dalek::SigningKey;
use hco_challenges::presence::{Passkey, PresenceFamily};
use hco_challenges::{Context, CounterUpdate, Prompt, Registry};

use crate::audit::{AuditReport, SignedReveal, audit_window};
use crate::certificate::{
    MembershipProof, SignedSummary, WindowCertificate, WindowSummary, assemble,
};
use crate::ledger::{IdentityRecord, IssuedRecord, Ledger, LedgerError, PasskeyRecord};
use crate::lifecycle::{IdentityStatus, status};
use crate::secret::{check_issuer, derive_challenge, node_secret, window_secret};
use crate::{
    Acceptance, Challenge, Digest, IdentityId, NetworkParams, NodeId, ParamsError, Profile, Reason,
    Response, SealedAcceptance, SignedChallenge, SignedEnrolment, SignedRegister, SignedRequest,
    Timestamp, messages::VERSION, seal::seal_batch, sign,
};

/// How long after its start a passkey enrolment ceremony is accepted from a client.
pub const ENROLMENT_TTL_MS: u64 = 10 * 60 * 1000;

/// A rejection is `Ok(Err(reason))`; a storage failure is `Err`.
pub type Outcome<T> = Result<Result<T, Reason>, LedgerError>;

/// A challenge as sent to the identity: the signed envelope and the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedChallenge {
    /// The signed envelope (the identity returns it with its answer).
    pub challenge: SignedChallenge,
    /// What to solve.
    pub prompt: Prompt,
}

/// One committee node's protocol state machine.
pub struct Oracle {
    params: NetworkParams,
    params_digest: Digest,
    registry: Registry,
    key: SigningKey,
    node: NodeId,
    node_secret: [u8; 32],
    ledger: Ledger,
    /// Serialises the replay check and the insert of acceptances.
    commit: Mutex<()>,
    /// Parsed identity keys.
    keys: crate::key_cache::KeyCache,
    /// Registered profiles (class, visual opt-out) of identities seen recently.
    profiles: crate::key_cache::IdentityCache<Profile>,
    /// The presence family's relying party under the network's policy (enrolments).
    presence: PresenceFamily,
    /// The last certified root looked up, `(t, root)`: certificates never change once stored.
    root_cache: Mutex<Option<(u64, Digest)>>,
}

/// A response that passed every check but the identity signature and the replay check.
struct Checked<'a> {
    response: &'a Response,
    /// What the identity must have signed.
    signing_digest: Digest,
    /// The answer's verdict, with the counter it moves (presence).
    answer: Result<Option<CounterUpdate>, Reason>,
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
            commit: Mutex::new(()),
            root_cache: Mutex::new(None),
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

    /// The family registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Registers an identity (idempotent for the same class). Durable when it returns.
    pub fn register(&self, reg: &SignedRegister, now: Timestamp) -> Outcome<IdentityRecord> {
        if let Err(reason) = reg.check() {
            return Ok(Err(reason));
        }
        if reg.body.created_at > now.saturating_add(self.params.max_clock_skew_ms) {
            return Ok(Err(Reason::RegistrationFromFuture {
                created_at: reg.body.created_at,
                now,
            }));
        }
        let profile = reg.body.profile();
        if profile.visual_opt_out && self.params.families_for(profile, &self.registry).is_empty() {
            return Ok(Err(Reason::NoFamilyForProfile));
        }
        if let Some(existing) = self.ledger.identity(&reg.body.id)? {
            return Ok(if existing.register.body.class == reg.body.class {
                Ok(existing)
            } else {
                Err(Reason::ClassConflict(existing.register.body.class))
            });
        }
        let record = IdentityRecord {
            register: reg.clone(),
            window: self.params.window_at(now).unwrap_or(0),
        };
        let stored = self.ledger.put_identity(&record)?;
        self.ledger.make_durable()?;
        Ok(if stored.register.body.class == reg.body.class {
            Ok(stored)
        } else {
            Err(Reason::ClassConflict(stored.register.body.class))
        })
    }

    /// The registered profile of `id` (cached: it never changes once registered).
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

    /// The presence family's relying party (enrolment options for clients).
    pub fn presence(&self) -> &hco_challenges::presence::Presence {
        self.presence.presence()
    }

    /// The passkeys `id` enrolled, as stored.
    pub fn passkeys(&self, id: &IdentityId) -> Result<Vec<PasskeyRecord>, LedgerError> {
        self.ledger.passkeys(id)
    }

    /// Enrols a passkey for the presence family from a client: the identity's signature, a
    /// fresh ceremony (`created_at` within the clock skew of `now` and not older than the
    /// ceremony timeout), a registered human identity, the passkey limit, then the WebAuthn
    /// registration under the network's policy. Idempotent for the same credential. Durable
    /// when it returns.
    pub fn enrol_passkey(&self, e: &SignedEnrolment, now: Timestamp) -> Outcome<PasskeyRecord> {
        let created_at = e.body.created_at;
        if created_at > now.saturating_add(self.params.max_clock_skew_ms) {
            return Ok(Err(Reason::RegistrationFromFuture { created_at, now }));
        }
        let oldest = now.saturating_sub(ENROLMENT_TTL_MS + self.params.max_clock_skew_ms);
        if created_at < oldest {
            return Ok(Err(Reason::EnrolmentStale { created_at, now }));
        }
        self.record_enrolment(e)
    }

    /// Records a passkey enrolment relayed by a peer (or a client, after the freshness check):
    /// everything [`Oracle::enrol_passkey`] checks except the time.
    pub fn record_enrolment(&self, e: &SignedEnrolment) -> Outcome<PasskeyRecord> {
        if let Err(reason) = e.check() {
            return Ok(Err(reason));
        }
        let id = e.body.id;
        let Some(profile) = self.profile_of(&id)? else {
            return Ok(Err(Reason::UnknownIdentity));
        };
        if profile.class != hco_challenges::Class::Human {
            return Ok(Err(Reason::WrongClass {
                registered: profile.class,
                required: hco_challenges::Class::Human,
            }));
        }
        let passkey = match self.presence.presence().enrol(
            &id.0,
            e.body.created_at,
            e.body.credential.as_bytes(),
        ) {
            Ok(passkey) => passkey,
            Err(reject) => return Ok(Err(Reason::Answer(reject))),
        };
        let existing = self.ledger.passkeys(&id)?;
        if let Some(same) = existing.iter().find(|r| r.credential_id == passkey.id()) {
            return Ok(Ok(same.clone()));
        }
        if existing.len() >= hco_challenges::presence::MAX_PASSKEYS {
            return Ok(Err(Reason::TooManyPasskeys {
                max: hco_challenges::presence::MAX_PASSKEYS,
            }));
        }
        let record = PasskeyRecord {
            enrolment: e.clone(),
            credential_id: passkey.id().to_vec(),
            passkey: passkey.encode(),
            counter: passkey.counter(),
        };
        self.ledger.put_passkey(&record)?;
        self.ledger.make_durable()?;
        Ok(Ok(record))
    }

    /// The root certified for `t − 1`, which places the slots of window `t`.
    fn prev_root(&self, t: u64) -> Result<Digest, LedgerError> {
        let Some(prev) = t.checked_sub(1) else {
            return Ok(Digest::ZERO);
        };
        let cached = *self.root_cache.lock().map_err(|_| LedgerError::Poisoned)?;
        if let Some((_, root)) = cached.filter(|(ct, _)| *ct == prev) {
            return Ok(root);
        }
        match self.ledger.certificate(prev)? {
            Some(cert) => {
                *self.root_cache.lock().map_err(|_| LedgerError::Poisoned)? =
                    Some((prev, cert.summary.root));
                Ok(cert.summary.root)
            }
            None => Ok(Digest::ZERO),
        }
    }

    /// The envelope and prompt of `(id, t, j)` first issued at `issued_at`. Deterministic: the
    /// same inputs give the same bytes and the same signature.
    fn envelope(
        &self,
        record: &IdentityRecord,
        t: u64,
        j: u32,
        issued_at: Timestamp,
    ) -> Result<IssuedChallenge, Reason> {
        let id = record.register.body.id;
        let w_t = window_secret(&self.node_secret, t);
        let (config, generated) = derive_challenge(
            &self.params,
            &self.registry,
            &w_t,
            record.register.body.profile(),
            &id,
            t,
            j,
        )?;
        let challenge = Challenge {
            version: VERSION,
            issuer: self.node,
            id,
            t,
            j,
            family: config.name.clone(),
            issued_at,
            deadline: issued_at.saturating_add(config.deadline_ms),
            prompt_digest: Digest(generated.prompt.digest()),
        };
        Ok(IssuedChallenge {
            challenge: SignedChallenge::new(&self.key, challenge),
            prompt: generated.prompt,
        })
    }

    /// Issues challenge `(id, t, j)` (DESIGN §5.1–5.2). A repeated request returns the same
    /// challenge with the same deadline. Nothing is stored for a rejected request.
    pub fn issue(&self, req: &SignedRequest, now: Timestamp) -> Outcome<IssuedChallenge> {
        let ChallengeRequestParts { id, t, j } = match self.check_request(req, now)? {
            Ok(parts) => parts,
            Err(reason) => return Ok(Err(reason)),
        };
        let Some(record) = self.ledger.identity(&id)? else {
            return Ok(Err(Reason::UnknownIdentity));
        };
        self.profiles.insert(&id, record.register.body.profile());
        if let Some(existing) = self.ledger.issued(t, &id, j)? {
            return Ok(self.envelope(&record, t, j, existing.issued_at));
        }
        if let Err(reason) = self.params.check_slot(t, &id, &self.prev_root(t)?, now) {
            return Ok(Err(reason));
        }
        let issued = match self.envelope(&record, t, j, now) {
            Ok(issued) => issued,
            Err(reason) => return Ok(Err(reason)),
        };
        let fresh = IssuedRecord {
            issued_at: now,
            family: issued.challenge.challenge.family.clone(),
            challenge_id: issued.challenge.challenge.challenge_id(),
            sig: issued.challenge.sig,
        };
        let kept = self.ledger.put_issued(t, &id, j, &fresh)?;
        if kept == fresh {
            Ok(Ok(issued))
        } else {
            // Another request for the same (id, t, j) won the race: return its challenge.
            Ok(self.envelope(&record, t, j, kept.issued_at))
        }
    }

    fn check_request(&self, req: &SignedRequest, now: Timestamp) -> Outcome<ChallengeRequestParts> {
        let b = &req.body;
        let checks = || -> Result<ChallengeRequestParts, Reason> {
            // Parsing the key here also warms the cache for the response that follows.
            let key = self.keys.key(&b.id).ok_or(Reason::BadIdentitySignature)?;
            req.check_signature_with(&key)?;
            let current = self.params.window_at(now)?;
            if b.t != current {
                return Err(Reason::WrongWindow { t: b.t, current });
            }
            if b.j >= self.params.challenges_per_window {
                return Err(Reason::IndexOutOfRange {
                    j: b.j,
                    k: self.params.challenges_per_window,
                });
            }
            check_issuer(&self.params, &self.node, &b.id, b.t)?;
            Ok(ChallengeRequestParts {
                id: b.id,
                t: b.t,
                j: b.j,
            })
        };
        Ok(checks())
    }

    /// Verifies one response; see [`Oracle::verify_responses`].
    pub fn verify_response(
        &self,
        response: &Response,
        now: Timestamp,
    ) -> Outcome<SealedAcceptance> {
        let mut results = self.verify_responses(std::slice::from_ref(response), now)?;
        Ok(results
            .pop()
            .unwrap_or(Err(Reason::Malformed("empty batch".into()))))
    }

    /// Verifies responses received at `now` in the order of DESIGN §5.4, accepts the valid
    /// ones, and returns once their acceptances are durable. Identity signatures are checked in
    /// one batch; acceptances are sealed with one signature and flushed with one group commit.
    /// Nothing is written for a rejected response.
    pub fn verify_responses(
        &self,
        responses: &[Response],
        now: Timestamp,
    ) -> Result<Vec<Result<SealedAcceptance, Reason>>, LedgerError> {
        let mut results: Vec<Result<Checked<'_>, Reason>> = Vec::with_capacity(responses.len());
        for r in responses {
            results.push(self.precheck(r, now)?);
        }
        // Identity signatures, in one batch.
        let digests: Vec<(usize, Digest)> = results
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.as_ref().ok().map(|c| (i, c.signing_digest)))
            .collect();
        let keys: Vec<_> = digests
            .iter()
            .map(|(i, _)| self.keys.key(&responses[*i].challenge.challenge.id))
            .collect();
        let items: Vec<_> = digests
            .iter()
            .zip(&keys)
            .map(|((i, d), key)| (key.as_ref(), d, &responses[*i].sig))
            .collect();
        for ((i, _), ok) in digests.iter().zip(sign::verify_many_parsed(&items)) {
            if !ok {
                results[*i] = Err(Reason::BadIdentitySignature);
            }
        }
        // Replay check, answer verdict, seal and write, under the commit lock.
        let mut out: Vec<Option<Result<SealedAcceptance, Reason>>> =
            Vec::with_capacity(responses.len());
        let mut accepted_at: Vec<usize> = Vec::new();
        {
            let _guard = self.commit.lock().map_err(|_| LedgerError::Poisoned)?;
            let mut by_window: BTreeMap<u64, Vec<(usize, Acceptance)>> = BTreeMap::new();
            let mut in_batch = HashSet::new();
            // Counters moved by this batch's presence answers, checked against the ledger and
            // each other here, under the lock, so two assertions cannot both claim one count.
            let mut counters: HashMap<(IdentityId, Vec<u8>), u32> = HashMap::new();
            for (i, checked) in results.into_iter().enumerate() {
                let verdict = match checked {
                    Err(reason) => Some(Err(reason)),
                    Ok(checked) => {
                        let c = &checked.response.challenge.challenge;
                        if !in_batch.insert((c.t, c.id, c.j))
                            || self.ledger.is_accepted(c.t, &c.id, c.j)?
                        {
                            Some(Err(Reason::AlreadyAccepted))
                        } else if let Err(reason) = match checked.answer {
                            Ok(update) => self.claim_counter(&c.id, update, &mut counters)?,
                            Err(reason) => Err(reason),
                        } {
                            in_batch.remove(&(c.t, c.id, c.j));
                            Some(Err(reason))
                        } else {
                            by_window.entry(c.t).or_default().push((
                                i,
                                Acceptance {
                                    version: VERSION,
                                    response: checked.response.clone(),
                                    accepted_at: now,
                                },
                            ));
                            None // sealed below
                        }
                    }
                };
                out.push(verdict);
            }
            for (t, entries) in by_window {
                let (indices, acceptances): (Vec<usize>, Vec<Acceptance>) =
                    entries.into_iter().unzip();
                let sealed = seal_batch(&self.key, t, acceptances);
                self.ledger.insert_checked(&sealed)?;
                for ((id, credential), counter) in counters.drain() {
                    self.ledger.raise_counter(&id, &credential, counter)?;
                }
                for (i, s) in indices.into_iter().zip(sealed) {
                    out[i] = Some(Ok(s));
                    accepted_at.push(i);
                }
            }
        }
        if !accepted_at.is_empty() {
            self.ledger.make_durable()?;
        }
        Ok(out
            .into_iter()
            .map(|v| {
                v.unwrap_or_else(|| {
                    Err(Reason::Malformed("internal: acceptance not sealed".into()))
                })
            })
            .collect())
    }

    /// Takes the counter an accepted presence answer moves to, if it is above the stored one
    /// and above any other claim in the batch (both zero: an authenticator without a counter).
    fn claim_counter(
        &self,
        id: &IdentityId,
        update: Option<CounterUpdate>,
        claimed: &mut HashMap<(IdentityId, Vec<u8>), u32>,
    ) -> Outcome<()> {
        let Some(update) = update else {
            return Ok(Ok(()));
        };
        let key = (*id, update.credential_id);
        let stored = match claimed.get(&key) {
            Some(c) => *c,
            None => self
                .ledger
                .passkeys(id)?
                .into_iter()
                .find(|r| r.credential_id == key.1)
                .map_or(0, |r| r.counter),
        };
        if (update.counter > 0 || stored > 0) && update.counter <= stored {
            return Ok(Err(Reason::Answer(
                hco_challenges::Reject::CounterNotIncreased {
                    stored,
                    got: update.counter,
                },
            )));
        }
        claimed.insert(key, update.counter);
        Ok(Ok(()))
    }

    /// Steps 1–6 of §5.4 and the answer check (whose verdict is reported after the replay check).
    fn precheck<'a>(&self, r: &'a Response, now: Timestamp) -> Outcome<Checked<'a>> {
        let c = &r.challenge.challenge;
        if let Err(reason) = crate::messages::check_version(r.version) {
            return Ok(Err(reason));
        }
        // 1. Issuer signature: ours is checked against our own record of what we issued.
        if c.issuer != self.node {
            return Ok(Err(match r.challenge.check_signature() {
                Ok(()) => Reason::NotAssignedIssuer { assigned: c.issuer },
                Err(reason) => reason,
            }));
        }
        let issued = self.ledger.issued(c.t, &c.id, c.j)?;
        let challenge_id = c.challenge_id();
        let matches = issued
            .as_ref()
            .is_some_and(|rec| rec.sig == r.challenge.sig && rec.challenge_id == challenge_id);
        if !matches {
            return Ok(Err(match r.challenge.check_signature() {
                Ok(()) => Reason::UnknownChallenge,
                Err(reason) => reason,
            }));
        }
        // 2. The window is open (current, or within grace).
        if let Err(reason) = self.params.window_open(c.t, now) {
            return Ok(Err(reason));
        }
        // The challenge was issued inside the identity's slot.
        if let Err(reason) = self
            .params
            .check_slot(c.t, &c.id, &self.prev_root(c.t)?, c.issued_at)
        {
            return Ok(Err(reason));
        }
        // 3. Deadline, on this node's clock.
        if now > c.deadline {
            return Ok(Err(Reason::ChallengeExpired {
                now,
                deadline: c.deadline,
            }));
        }
        // 4. Registered, with the family's class.
        let Some(profile) = self.profile_of(&c.id)? else {
            return Ok(Err(Reason::UnknownIdentity));
        };
        let class = profile.class;
        let Some(family) = self
            .registry
            .get(&c.family)
            .filter(|_| self.params.family(&c.family).is_some())
        else {
            return Ok(Err(Reason::UnknownFamily(c.family.clone())));
        };
        if family.class() != class {
            return Ok(Err(Reason::WrongClass {
                registered: class,
                required: family.class(),
            }));
        }
        if r.answer.len() > family.max_answer_len() {
            return Ok(Err(Reason::AnswerTooLarge {
                len: r.answer.len(),
                max: family.max_answer_len(),
            }));
        }
        // 7. The answer against the regenerated key (reported after signature and replay).
        // The envelope matched our record, so only the answer key is needed: no re-signing.
        let w_t = window_secret(&self.node_secret, c.t);
        let passkeys = if family.uses_passkeys() {
            self.passkeys_of(&c.id)?
        } else {
            Vec::new()
        };
        let context = Context {
            challenge_id: &challenge_id.0,
            passkeys: &passkeys,
        };
        let answer =
            match derive_challenge(&self.params, &self.registry, &w_t, profile, &c.id, c.t, c.j) {
                Ok((_, generated)) => family
                    .verify_in(&generated.key, &r.answer, &context)
                    .map_err(Reason::Answer),
                Err(reason) => Err(reason),
            };
        Ok(Ok(Checked {
            response: r,
            signing_digest: Response::digest_for(&challenge_id, &r.answer),
            answer,
        }))
    }

    /// Records acceptances sealed by another committee member (gossip or reconciliation).
    /// Checks each seal, the issuer's assignment and the identity's signature; returns how many
    /// were new. Durable when it returns.
    pub fn record_remote(&self, batch: &[SealedAcceptance]) -> Outcome<usize> {
        let mut good_seals = HashSet::new();
        for s in batch {
            let c = s.acceptance.challenge();
            if !self.params.committee.contains(&c.issuer) {
                return Ok(Err(Reason::NotInCommittee(c.issuer)));
            }
            if let Err(reason) = check_issuer(&self.params, &c.issuer, &c.id, c.t) {
                return Ok(Err(reason));
            }
            let proof_ok = s.proof.leaf_count == u64::from(s.seal.count)
                && s.proof.verify(&s.seal.root, &s.acceptance.digest())
                && c.issuer == s.seal.issuer
                && c.t == s.seal.t;
            if !proof_ok {
                return Ok(Err(Reason::BadIssuerSignature));
            }
            if good_seals.insert(s.seal.sig)
                && let Err(reason) = s.seal.check_signature()
            {
                return Ok(Err(reason));
            }
        }
        let digests: Vec<Digest> = batch
            .iter()
            .map(|s| s.acceptance.response.signing_digest())
            .collect();
        let items: Vec<_> = batch
            .iter()
            .zip(&digests)
            .map(|(s, d)| {
                (
                    &s.acceptance.challenge().id.0,
                    d,
                    &s.acceptance.response.sig,
                )
            })
            .collect();
        if sign::verify_many(&items).iter().any(|ok| !ok) {
            return Ok(Err(Reason::BadIdentitySignature));
        }
        let fresh = {
            let _guard = self.commit.lock().map_err(|_| LedgerError::Poisoned)?;
            let fresh = self.ledger.insert_acceptances(batch)?;
            // Presence assertions accepted by other issuers move this node's counters too, so
            // a cloned authenticator cannot replay counts at another issuer.
            for s in batch {
                let c = s.acceptance.challenge();
                let bound = self
                    .registry
                    .get(&c.family)
                    .is_some_and(|f| f.uses_passkeys());
                if let Some(update) = bound
                    .then(|| {
                        hco_challenges::presence::claimed_counter(&s.acceptance.response.answer)
                    })
                    .flatten()
                {
                    self.ledger
                        .raise_counter(&c.id, &update.credential_id, update.counter)?;
                }
            }
            fresh
        };
        if fresh > 0 {
            self.ledger.make_durable()?;
        }
        Ok(Ok(fresh))
    }

    fn check_closed(&self, t: u64, now: Timestamp) -> Result<(), Reason> {
        let closes_at = self.params.closes_at(t);
        if now < closes_at {
            Err(Reason::WindowNotClosed { t, closes_at })
        } else {
            Ok(())
        }
    }

    /// Signs this node's summary of closed window `t` and stores it (and a certificate if a
    /// quorum now agrees).
    pub fn summarize(&self, t: u64, now: Timestamp) -> Outcome<SignedSummary> {
        if let Err(reason) = self.check_closed(t, now) {
            return Ok(Err(reason));
        }
        let active = self.ledger.active_set(t, self.params.solves_required)?;
        let (summary, _) = WindowSummary::of(t, active, self.params_digest);
        let signed = SignedSummary::new(&self.key, summary);
        self.ledger.put_summary(&signed)?;
        self.try_certify(t)?;
        Ok(Ok(signed))
    }

    /// Records a peer's summary; returns the window's certificate if one now exists.
    pub fn add_summary(&self, s: &SignedSummary) -> Outcome<Option<WindowCertificate>> {
        if let Err(reason) = s.check(&self.params) {
            return Ok(Err(reason));
        }
        self.ledger.put_summary(s)?;
        Ok(Ok(self.try_certify(s.summary.t)?))
    }

    fn try_certify(&self, t: u64) -> Result<Option<WindowCertificate>, LedgerError> {
        if let Some(cert) = self.ledger.certificate(t)? {
            return Ok(Some(cert));
        }
        let summaries = self.ledger.summaries(t)?;
        let cert = assemble(&summaries, self.params.quorum);
        if let Some(cert) = &cert {
            self.ledger.put_certificate(cert)?;
            self.ledger.make_durable()?;
        }
        Ok(cert)
    }

    /// Stores a certificate received from a peer after checking it with the light verifier.
    pub fn add_certificate(&self, cert: &WindowCertificate) -> Outcome<()> {
        let verifier = crate::LightVerifier::new(self.params.committee.clone(), self.params.quorum)
            .with_params(self.params_digest);
        if let Err(e) = verifier.verify_certificate(cert) {
            return Ok(Err(Reason::Malformed(e.to_string())));
        }
        self.ledger.put_certificate(cert)?;
        Ok(Ok(()))
    }

    /// The certificate of window `t` and the proof that `id` is in it. `None` when there is no
    /// certificate yet, the identity was not active, or this node's set differs from the
    /// certified one (it must reconcile first).
    pub fn membership(
        &self,
        t: u64,
        id: &IdentityId,
    ) -> Result<Option<(WindowCertificate, MembershipProof)>, LedgerError> {
        let Some(cert) = self.ledger.certificate(t)? else {
            return Ok(None);
        };
        let active = self.ledger.active_set(t, self.params.solves_required)?;
        let (summary, set) = WindowSummary::of(t, active, self.params_digest);
        if summary.root != cert.summary.root {
            return Ok(None);
        }
        Ok(set.proof(id).map(|proof| (cert, proof)))
    }

    /// Publishes this node's secret of closed window `t`.
    pub fn reveal(&self, t: u64, now: Timestamp) -> Outcome<SignedReveal> {
        if let Err(reason) = self.check_closed(t, now) {
            return Ok(Err(reason));
        }
        let reveal = SignedReveal::new(&self.key, t, window_secret(&self.node_secret, t));
        self.ledger.put_reveal(&reveal)?;
        Ok(Ok(reveal))
    }

    /// Records a peer's reveal, refusing one for a window not yet closed at `now`.
    pub fn add_reveal(&self, reveal: &SignedReveal, now: Timestamp) -> Outcome<()> {
        if let Err(reason) = reveal
            .check(&self.params)
            .and_then(|()| self.check_closed(reveal.reveal.t, now))
        {
            return Ok(Err(reason));
        }
        self.ledger.put_reveal(reveal)?;
        Ok(Ok(()))
    }

    /// Audits every acceptance of window `t` this node holds against the reveals it holds.
    pub fn audit(&self, t: u64) -> Result<AuditReport, LedgerError> {
        let reveals: BTreeMap<NodeId, Digest> = self
            .ledger
            .reveals(t)?
            .into_iter()
            .filter(|r| r.check(&self.params).is_ok())
            .map(|r| (r.reveal.node, r.reveal.secret))
            .collect();
        let acceptances: Vec<SealedAcceptance> =
            self.ledger.acceptances(t).collect::<Result<_, _>>()?;
        let prev_root = self.prev_root(t)?;
        let ledger = &self.ledger;
        Ok(audit_window(
            &self.params,
            &self.registry,
            t,
            &prev_root,
            &reveals,
            |id| {
                let profile = ledger.identity(id).ok().flatten()?.register.body.profile();
                // The audit re-checks each assertion's binding and signature; counters moved
                // since, so each passkey is taken at counter 0.
                let passkeys = self
                    .passkeys_of(id)
                    .ok()?
                    .into_iter()
                    .map(|p| p.with_counter(0))
                    .collect();
                Some(crate::audit::Audited { profile, passkeys })
            },
            &acceptances,
        ))
    }

    /// The lifecycle status of `id` at `now`.
    pub fn status(&self, id: &IdentityId, now: Timestamp) -> Outcome<IdentityStatus> {
        let Some(record) = self.ledger.identity(id)? else {
            return Ok(Err(Reason::UnknownIdentity));
        };
        let current = match self.params.window_at(now) {
            Ok(t) => t,
            Err(reason) => return Ok(Err(reason)),
        };
        let r = self.params.solves_required;
        let mut failure = None;
        let s = status(
            &self.params.lifecycle,
            current,
            record.window,
            |t| match self.ledger.solves(t, id) {
                Ok(n) => n >= r,
                Err(e) => {
                    failure = Some(e);
                    false
                }
            },
        );
        match failure {
            Some(e) => Err(e),
            None => Ok(Ok(s)),
        }
    }
}

struct ChallengeRequestParts {
    id: IdentityId,
    t: u64,
    j: u32,
}

impl std::fmt::Debug for Oracle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oracle")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}
