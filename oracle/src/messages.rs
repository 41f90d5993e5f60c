//! The signed messages of the protocol (DESIGN §3, §5): registration, challenge request,
//! challenge envelope, response and acceptance. Each carries a version; each signature covers a
//! domain-separated digest of the encoded body.

use ed25519_dalek::SigningKey;
use hco_challenges::Class;
use serde::{Deserialize, Serialize};

use crate::{Digest, IdentityId, NodeId, Reason, Sig, Timestamp, codec, sign};

/// The message version this code speaks (`hco-verify`'s: the window summary carries it too).
pub use hco_verify::VERSION;

/// Largest passkey enrolment credential (the WebAuthn registration JSON), in bytes.
pub const MAX_ENROLMENT_LEN: usize = hco_challenges::presence::MAX_ENROLMENT_LEN;

pub(crate) fn check_version(got: u8) -> Result<(), Reason> {
    if got == VERSION {
        Ok(())
    } else {
        Err(Reason::UnknownVersion {
            got,
            supported: VERSION,
        })
    }
}

/// Checks a message the identity `id` signed itself: a valid, safe key and its signature
/// (strict); returns the parsed key, decompressed once.
fn check_self_signed(
    id: &IdentityId,
    digest: &Digest,
    sig: &Sig,
) -> Result<ed25519_dalek::VerifyingKey, Reason> {
    let key = sign::public_key(&id.0).ok_or(Reason::BadIdentityKey)?;
    let sig = ed25519_dalek::Signature::from_bytes(&sig.0);
    if key.verify_strict(&digest.0, &sig).is_err() {
        return Err(Reason::BadIdentitySignature);
    }
    Ok(key)
}

/// An identity announcing itself (open registration: the cost is paid per window).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Register {
    /// Message version.
    pub version: u8,
    /// The identity's public key.
    pub id: IdentityId,
    /// Human or agent.
    pub class: Class,
    /// When the identity made the registration.
    pub created_at: Timestamp,
    /// The person opted out of visual families (accessibility): they draw only the network's
    /// non-visual human families, with the same `k` and `r`.
    #[serde(default)]
    pub visual_opt_out: bool,
    /// The registration's proof of work (see [`crate::register_pow`]): required when the
    /// network's `registration_pow_bits` is above 0.
    #[serde(default)]
    pub pow_nonce: Option<u64>,
}

impl Register {
    /// What decides the families the identity draws.
    pub fn profile(&self) -> Profile {
        Profile {
            class: self.class,
            visual_opt_out: self.visual_opt_out,
        }
    }
}

/// What decides which families an identity draws: its class, and for a person whether they
/// opted out of visual families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Profile {
    /// Human or agent.
    pub class: Class,
    /// Only non-visual families.
    pub visual_opt_out: bool,
}

impl Profile {
    /// A profile of `class`.
    pub fn new(class: Class, visual_opt_out: bool) -> Self {
        Self {
            class,
            visual_opt_out,
        }
    }
}

impl From<Class> for Profile {
    fn from(class: Class) -> Self {
        Self {
            class,
            visual_opt_out: false,
        }
    }
}

/// A registration signed by the identity itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SignedRegister {
    /// The registration.
    pub body: Register,
    /// The identity's signature.
    pub sig: Sig,
}

impl SignedRegister {
    /// Makes and signs a registration.
    pub fn new(key: &SigningKey, class: Class, created_at: Timestamp) -> Self {
        Self::with_profile(key, class.into(), created_at)
    }

    /// Makes and signs a registration with an accessibility choice, without a proof of work
    /// (accepted only where `registration_pow_bits` is 0).
    pub fn with_profile(key: &SigningKey, profile: Profile, created_at: Timestamp) -> Self {
        Self::with_nonce(key, profile, created_at, None)
    }

    /// Makes and signs a registration carrying a proof of work of `pow_bits` leading zero bits
    /// (the network's `registration_pow_bits`; 0 leaves the proof out). Costs about
    /// `2^pow_bits` hashes.
    pub fn proven(
        key: &SigningKey,
        profile: Profile,
        created_at: Timestamp,
        pow_bits: u32,
    ) -> Self {
        let id = IdentityId(key.verifying_key().to_bytes());
        let nonce = (pow_bits > 0).then(|| crate::register_pow::solve(&id, created_at, pow_bits));
        Self::with_nonce(key, profile, created_at, nonce)
    }

    /// Makes and signs a registration with the given proof-of-work nonce (computed elsewhere,
    /// or none).
    pub fn with_nonce(
        key: &SigningKey,
        profile: Profile,
        created_at: Timestamp,
        pow_nonce: Option<u64>,
    ) -> Self {
        let body = Register {
            version: VERSION,
            id: IdentityId(key.verifying_key().to_bytes()),
            class: profile.class,
            created_at,
            visual_opt_out: profile.visual_opt_out,
            pow_nonce,
        };
        let sig = sign::sign(key, &Self::signing_digest(&body));
        Self { body, sig }
    }

    /// The signed digest. The nonce is a sixth part only when present, so a registration
    /// without a proof signs the same bytes as before the proof existed.
    pub(crate) fn signing_digest(body: &Register) -> Digest {
        let version = [body.version];
        let created_at = body.created_at.to_be_bytes();
        let opt_out = [u8::from(body.visual_opt_out)];
        let nonce = body.pow_nonce.map(u64::to_be_bytes);
        let mut parts: Vec<&[u8]> = vec![
            &version,
            &body.id.0,
            body.class.as_str().as_bytes(),
            &created_at,
            &opt_out,
        ];
        if let Some(nonce) = &nonce {
            parts.push(nonce);
        }
        sign::digest("hco register v1", &parts)
    }

    /// Checks the proof of work against `bits` (the network's `registration_pow_bits`).
    pub fn check_pow(&self, bits: u32) -> Result<(), Reason> {
        if bits == 0 {
            return Ok(());
        }
        let Some(nonce) = self.body.pow_nonce else {
            return Err(Reason::RegistrationProofMissing { required: bits });
        };
        let got = crate::register_pow::leading_zero_bits(&crate::register_pow::hash(
            &self.body.id,
            self.body.created_at,
            nonce,
        ));
        if got < bits {
            return Err(Reason::RegistrationProofInsufficient {
                required: bits,
                got,
            });
        }
        Ok(())
    }

    /// Checks version, key and signature; returns the identity's parsed key.
    pub fn check(&self) -> Result<ed25519_dalek::VerifyingKey, Reason> {
        check_version(self.body.version)?;
        check_self_signed(&self.body.id, &Self::signing_digest(&self.body), &self.sig)
    }
}

/// A passkey enrolled by an identity for the presence family: the WebAuthn registration
/// credential exactly as the browser returned it (JSON), made for the registration challenge
/// derived from `(id, created_at)` (see `hco_challenges::presence`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Enrolment {
    /// Message version.
    pub version: u8,
    /// The identity enrolling.
    pub id: IdentityId,
    /// When the ceremony started; part of the WebAuthn challenge.
    pub created_at: Timestamp,
    /// The registration credential (`navigator.credentials.create()` result) as JSON.
    pub credential: String,
}

/// An enrolment signed by the identity: nobody else can attach a passkey to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SignedEnrolment {
    /// The enrolment.
    pub body: Enrolment,
    /// The identity's signature.
    pub sig: Sig,
}

impl SignedEnrolment {
    /// Makes and signs an enrolment.
    pub fn new(key: &SigningKey, created_at: Timestamp, credential: String) -> Self {
        let body = Enrolment {
            version: VERSION,
            id: IdentityId(key.verifying_key().to_bytes()),
            created_at,
            credential,
        };
        let sig = sign::sign(key, &Self::signing_digest(&body));
        Self { body, sig }
    }

    fn signing_digest(body: &Enrolment) -> Digest {
        sign::digest(
            "hco passkey enrolment v1",
            &[
                &[body.version],
                &body.id.0,
                &body.created_at.to_be_bytes(),
                body.credential.as_bytes(),
            ],
        )
    }

    /// Checks version, size and the identity's signature (not the WebAuthn ceremony: that is
    /// the presence family's, under the network's policy).
    pub fn check(&self) -> Result<(), Reason> {
        check_version(self.body.version)?;
        if self.body.credential.len() > MAX_ENROLMENT_LEN {
            return Err(Reason::MessageTooLarge {
                len: self.body.credential.len(),
                limit: MAX_ENROLMENT_LEN,
            });
        }
        check_self_signed(&self.body.id, &Self::signing_digest(&self.body), &self.sig).map(|_| ())
    }
}

/// An identity asking for challenge `(id, t, j)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChallengeRequest {
    /// Message version.
    pub version: u8,
    /// The identity.
    pub id: IdentityId,
    /// The window.
    pub t: u64,
    /// The challenge index, below `k`.
    pub j: u32,
}

/// A challenge request signed by the identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SignedRequest {
    /// The request.
    pub body: ChallengeRequest,
    /// The identity's signature.
    pub sig: Sig,
}

impl SignedRequest {
    /// Makes and signs a request.
    pub fn new(key: &SigningKey, t: u64, j: u32) -> Self {
        let body = ChallengeRequest {
            version: VERSION,
            id: IdentityId(key.verifying_key().to_bytes()),
            t,
            j,
        };
        let sig = sign::sign(key, &Self::signing_digest(&body));
        Self { body, sig }
    }

    pub(crate) fn signing_digest(body: &ChallengeRequest) -> Digest {
        sign::digest(
            "hco challenge request v1",
            &[
                &[body.version],
                &body.id.0,
                &body.t.to_be_bytes(),
                &body.j.to_be_bytes(),
            ],
        )
    }

    /// Checks version and signature.
    pub fn check_signature(&self) -> Result<(), Reason> {
        let key = ed25519_dalek::VerifyingKey::from_bytes(&self.body.id.0)
            .map_err(|_| Reason::BadIdentitySignature)?;
        self.check_signature_with(&key)
    }

    /// Checks version and signature with the identity's key already parsed.
    pub fn check_signature_with(&self, key: &ed25519_dalek::VerifyingKey) -> Result<(), Reason> {
        check_version(self.body.version)?;
        let digest = Self::signing_digest(&self.body);
        let sig = ed25519_dalek::Signature::from_bytes(&self.sig.0);
        if key.as_bytes() == &self.body.id.0 && key.verify_strict(&digest.0, &sig).is_ok() {
            Ok(())
        } else {
            Err(Reason::BadIdentitySignature)
        }
    }
}

/// The challenge envelope the issuer signs: everything that binds the challenge to
/// `(issuer, id, t, j)`, its family, its timing and (by digest) its prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ChallengeEnvelope"))]
pub struct Challenge {
    /// Message version.
    pub version: u8,
    /// The issuing node.
    pub issuer: NodeId,
    /// The identity the challenge is bound to.
    pub id: IdentityId,
    /// The window.
    pub t: u64,
    /// The index within the window.
    pub j: u32,
    /// The family's name.
    pub family: String,
    /// First issue time (re-requests return the same).
    pub issued_at: Timestamp,
    /// Answers received after this are late.
    pub deadline: Timestamp,
    /// Digest of the prompt, so an audit can check the regenerated prompt.
    pub prompt_digest: Digest,
    /// For a touch prompt of a `global` slot, another member's witness that the prompt's beat
    /// has begun ([`crate::witness`]); `None` for every other challenge.
    pub witness: Option<crate::witness::SlotWitness>,
}

impl Challenge {
    /// The challenge id: the digest the issuer signs and the identity's response refers to
    /// (for a presence prompt, the WebAuthn challenge the assertion signs). A witness adds
    /// its member and signature as two more parts, so the id cannot be known before the
    /// witness is.
    pub fn challenge_id(&self) -> Digest {
        let (version, issued_at, deadline) = (
            [self.version],
            self.issued_at.to_be_bytes(),
            self.deadline.to_be_bytes(),
        );
        let (t, j) = (self.t.to_be_bytes(), self.j.to_be_bytes());
        let mut parts: Vec<&[u8]> = vec![
            &version,
            &self.issuer.0,
            &self.id.0,
            &t,
            &j,
            self.family.as_bytes(),
            &issued_at,
            &deadline,
            &self.prompt_digest.0,
        ];
        if let Some(w) = &self.witness {
            parts.push(&w.node.0);
            parts.push(&w.sig.0);
        }
        sign::digest("hco challenge id v1", &parts)
    }
}

/// A challenge envelope with the issuer's signature over its id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SignedChallenge {
    /// The envelope.
    pub challenge: Challenge,
    /// The issuer's signature over [`Challenge::challenge_id`].
    pub sig: Sig,
}

impl SignedChallenge {
    /// Signs an envelope. Ed25519 signing is deterministic: the same envelope gives the same
    /// signature, which is how a re-request returns the identical challenge.
    pub fn new(key: &SigningKey, challenge: Challenge) -> Self {
        let sig = sign::sign(key, &challenge.challenge_id());
        Self { challenge, sig }
    }

    /// Verifies the issuer's signature.
    pub fn check_signature(&self) -> Result<(), Reason> {
        check_version(self.challenge.version)?;
        if sign::verify(
            &self.challenge.issuer.0,
            &self.challenge.challenge_id(),
            &self.sig,
        ) {
            Ok(())
        } else {
            Err(Reason::BadIssuerSignature)
        }
    }
}

/// An identity's answer to a challenge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Response {
    /// Message version.
    pub version: u8,
    /// The challenge answered, as issued.
    pub challenge: SignedChallenge,
    /// The answer, in the family's format (hex in JSON).
    #[serde(with = "crate::bytes::hex_bytes")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "String", regex(pattern = r"^([0-9a-fA-F]{2})*$"))
    )]
    pub answer: Vec<u8>,
    /// The identity's signature over [`Response::signing_digest`].
    pub sig: Sig,
}

impl Response {
    /// Makes and signs a response.
    pub fn new(key: &SigningKey, challenge: SignedChallenge, answer: Vec<u8>) -> Self {
        let sig = sign::sign(
            key,
            &Self::digest_for(&challenge.challenge.challenge_id(), &answer),
        );
        Self {
            version: VERSION,
            challenge,
            answer,
            sig,
        }
    }

    /// `blake3("hco response v1" ‖ challenge_id ‖ answer)`: what the identity signs.
    pub fn digest_for(challenge_id: &Digest, answer: &[u8]) -> Digest {
        sign::digest("hco response v1", &[&challenge_id.0, answer])
    }

    /// The digest this response's signature must cover.
    pub fn signing_digest(&self) -> Digest {
        Self::digest_for(&self.challenge.challenge.challenge_id(), &self.answer)
    }

    /// Decodes a response from a client or peer.
    pub fn decode(bytes: &[u8]) -> Result<Self, Reason> {
        let response: Response = codec::decode(bytes, codec::MAX_MESSAGE_LEN)?;
        check_version(response.version)?;
        Ok(response)
    }
}

/// An accepted response: the whole signed response, so anyone can check that the identity
/// really answered, plus the issuer's receipt time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Acceptance {
    /// Message version.
    pub version: u8,
    /// The response, as received.
    pub response: Response,
    /// Receipt time on the issuer's clock.
    pub accepted_at: Timestamp,
}

impl Acceptance {
    /// The challenge envelope accepted.
    pub fn challenge(&self) -> &Challenge {
        &self.response.challenge.challenge
    }

    /// Time from issue to receipt.
    pub fn latency_ms(&self) -> u64 {
        self.accepted_at.saturating_sub(self.challenge().issued_at)
    }

    /// The leaf digest of this acceptance in its batch seal.
    pub fn digest(&self) -> Digest {
        sign::digest("hco acceptance v1", &[&codec::encode(self)])
    }
}
