//! What nodes say to each other: gossip topics and the request-response protocols.
//! Gossip payloads use the oracle's size-limited binary codec; request-response uses CBOR with
//! size limits set on the codec.

use hco_oracle::{
    IdentityId, Prompt, RelayedLink, RelayedReveal, Response, SealReceipt, SealedAcceptance,
    SignedChallenge, SignedEnrolment, SignedRegister, SignedRequest, TryStatus, WindowCertificate,
};
use serde::{Deserialize, Serialize};

/// The gossip topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Topic {
    /// Identity registrations ([`SignedRegister`]), one per message: what observers publish.
    Registry,
    /// Registrations a member accepted at its gateway, coalesced (`Vec<SignedRegister>`);
    /// members only.
    RegistryBatch,
    /// Sealed acceptances, a batch per message (`Vec<SealedAcceptance>`).
    Acceptance,
    /// Another member's acceptances relayed with receipts for their seals in the last relay
    /// round before their arrival deadline ([`AcceptanceRelay`]); members only.
    AcceptanceRelay,
    /// Signed window summaries.
    Summary,
    /// Revealed window secrets.
    Reveal,
    /// Passkey enrolments ([`hco_oracle::SignedEnrolment`]) for the presence family.
    Passkey,
    /// Evidence against a committee member ([`hco_oracle::Evidence`]).
    Evidence,
    /// Beat witnesses ([`hco_oracle::witness::SlotWitness`]); members only.
    Witness,
    /// Account links ([`hco_oracle::link::SignedLink`]), one per message.
    Link,
}

impl Topic {
    /// Every topic.
    pub const ALL: [Topic; 10] = [
        Topic::Registry,
        Topic::RegistryBatch,
        Topic::Acceptance,
        Topic::AcceptanceRelay,
        Topic::Summary,
        Topic::Reveal,
        Topic::Passkey,
        Topic::Evidence,
        Topic::Witness,
        Topic::Link,
    ];

    /// The gossipsub topic name.
    pub fn name(self) -> &'static str {
        match self {
            Topic::Registry => "hco/registry/1",
            Topic::RegistryBatch => "hco/registry-batch/1",
            Topic::Acceptance => "hco/acceptance/1",
            Topic::AcceptanceRelay => "hco/acceptance-relay/1",
            Topic::Summary => "hco/summary/1",
            Topic::Reveal => "hco/reveal/2",
            Topic::Passkey => "hco/passkey/1",
            Topic::Evidence => "hco/evidence/1",
            Topic::Witness => "hco/witness/2",
            Topic::Link => "hco/link/3",
        }
    }

    /// A short label for logs and metrics.
    pub fn label(self) -> &'static str {
        match self {
            Topic::Registry => "registry",
            Topic::RegistryBatch => "registry_batch",
            Topic::Acceptance => "acceptance",
            Topic::AcceptanceRelay => "acceptance_relay",
            Topic::Summary => "summary",
            Topic::Reveal => "reveal",
            Topic::Passkey => "passkey",
            Topic::Evidence => "evidence",
            Topic::Witness => "witness",
            Topic::Link => "link",
        }
    }

    /// The topic of a gossipsub topic name.
    pub fn from_name(name: &str) -> Option<Topic> {
        Topic::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// A beat witness as gossiped: the witness and the publication's sequence number. Gossip ids
/// are content hashes, so the number makes each repetition (for members that start or
/// reconnect late) a new message rather than a duplicate peers drop.
pub type WitnessGossip = (hco_oracle::witness::SlotWitness, u64);

/// A protocol rejection carried over the wire: the stable code and a readable message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    /// Stable snake_case code.
    pub code: String,
    /// What went wrong.
    pub message: String,
    /// For `step_not_open`: when the challenge opens.
    #[serde(default)]
    pub opens_at: Option<u64>,
}

impl From<&hco_oracle::Reason> for Rejection {
    fn from(r: &hco_oracle::Reason) -> Self {
        Self {
            code: r.code().into(),
            message: r.to_string(),
            opens_at: match r {
                hco_oracle::Reason::StepNotOpen { opens_at } => Some(*opens_at),
                _ => None,
            },
        }
    }
}

/// `/hco/challenge/1`: challenge requests and responses from libp2p-native clients, and
/// forwarding from a gateway node to the assigned issuer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ChallengeRpc {
    /// Issue `(id, t, j)`.
    Issue(SignedRequest),
    /// Verify a response.
    Respond(Box<Response>),
    /// Check the answer to the first stages of a multi-stage challenge (see
    /// `POST /v1/challenges/stage`).
    Stage(Box<Response>),
    /// What the receiver knows of try `(id, t, j)` it may have issued (asked by the member
    /// about to issue a later try when issuers rotate).
    Status {
        /// The identity.
        id: IdentityId,
        /// The window.
        t: u64,
        /// The try.
        j: u32,
    },
}

/// Replies on `/hco/challenge/1`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)] // short-lived; boxing the common case buys nothing
pub enum ChallengeReply {
    /// The issued challenge.
    Issued {
        /// Envelope.
        challenge: SignedChallenge,
        /// Prompt.
        prompt: Prompt,
    },
    /// The acceptance (durable at the issuer).
    Accepted(Box<SealedAcceptance>),
    /// The next stage of a multi-stage challenge, after a right partial answer.
    Stage {
        /// Its number (2 after stage 1).
        stage: u32,
        /// Its prompt.
        prompt: Prompt,
    },
    /// The status of a try (the answer to [`ChallengeRpc::Status`]).
    Status(TryStatus),
    /// A rejection.
    Rejected(Rejection),
}

/// `/hco/reconcile/3`: a window's acceptances and the registry between nodes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ReconcileRpc {
    /// The `(id, j)` accepted in window `t` after `after`, in order.
    Keys {
        /// Window.
        t: u64,
        /// Exclusive lower bound.
        after: Option<(IdentityId, u32)>,
        /// At most this many (capped at [`MAX_KEYS`]).
        limit: u32,
    },
    /// These acceptances of window `t`.
    Fetch {
        /// Window.
        t: u64,
        /// Keys wanted (at most [`MAX_FETCH`]).
        keys: Vec<(IdentityId, u32)>,
    },
    /// Registrations with ids after `after`, in id order.
    Identities {
        /// Exclusive lower bound.
        after: Option<IdentityId>,
        /// At most this many (capped at [`MAX_FETCH`]).
        limit: u32,
    },
    /// The reveals of window `t` held (at most one per committee member), with receipts.
    Reveals {
        /// Window.
        t: u64,
    },
    /// Passkey enrolments after `(id, credential id)`, in that order.
    Passkeys {
        /// Exclusive lower bound.
        after: Option<(IdentityId, Vec<u8>)>,
        /// At most this many (capped at [`MAX_PASSKEY_FETCH`]).
        limit: u32,
    },
    /// Account link statements whose first window is in `from..=to`, after `(id, CAIP-2 chain
    /// id, first window)` in that order.
    Links {
        /// First window, inclusive.
        from: u64,
        /// Last window, inclusive.
        to: u64,
        /// Exclusive lower bound.
        after: Option<(IdentityId, String, u64)>,
        /// At most this many (capped at [`MAX_LINK_FETCH`]).
        limit: u32,
    },
}

/// Replies on `/hco/reconcile/3`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ReconcileReply {
    /// Accepted keys of the window, in order, after the request's `after`.
    Keys {
        /// The keys (at most the request's `limit`, and at most what the replying node puts
        /// in one reply).
        keys: Vec<(IdentityId, u32)>,
        /// Whether the window holds keys after the last one here: ask again with `after` set
        /// to it.
        more: bool,
    },
    /// Acceptances, with the replying member's receipts for their seals (those it did not
    /// issue): each counts one signer more at the receiver (`hco_oracle::relay`).
    Acceptances(Vec<SealedAcceptance>, Vec<SealReceipt>),
    /// Registrations.
    Identities(Vec<SignedRegister>),
    /// Passkey enrolments with their credential ids.
    Passkeys(Vec<(SignedEnrolment, Vec<u8>)>),
    /// Reveals of a window, as the replying node holds them: those that count there with their
    /// receipts (see `hco_oracle::relay`), the others bare.
    Reveals(Vec<RelayedReveal>),
    /// Link statements, each with the replying member's receipt (`hco_oracle::relay`); fewer
    /// than the request's limit when no more follow.
    Links(Vec<RelayedLink>),
    /// A rejection.
    Rejected(Rejection),
}

/// `/hco/cert/1`: the certificate of a window.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CertRpc {
    /// Window.
    pub t: u64,
}

/// Reply on `/hco/cert/1`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CertReply(pub Option<WindowCertificate>);

/// Largest gossip payload a node publishes or decodes: the codec's own decode limit, so whatever
/// one node sends every other decodes. Acceptance batches are split to fit it
/// ([`acceptance_payloads`]).
pub const MAX_GOSSIP_PAYLOAD: usize = hco_oracle::codec::MAX_DECODE_LEN;

/// Room for gossipsub's envelope around a payload (protobuf framing, topic, author key, sequence
/// number, signature: about 200 bytes).
pub const GOSSIP_ENVELOPE: usize = 4 * 1024;

/// Largest gossipsub frame a node sends: a full payload in its envelope.
pub const MAX_GOSSIP_FRAME: usize = MAX_GOSSIP_PAYLOAD + GOSSIP_ENVELOPE;

/// The gossip payloads of a batch of sealed acceptances: each the codec's encoding of a
/// `Vec<SealedAcceptance>` of at most [`MAX_GOSSIP_PAYLOAD`] bytes, in order. The split follows
/// the encoded sizes (proofs grow with the batch, families' answers differ in length).
pub fn acceptance_payloads(batch: &[SealedAcceptance]) -> Vec<Vec<u8>> {
    payloads(batch, "sealed acceptances")
}

/// A relay of acceptances (`hco/acceptance-relay/1`): the acceptances and receipts of members
/// other than the issuer for their seals (`hco_oracle::relay`).
pub type AcceptanceRelay = (Vec<SealedAcceptance>, Vec<SealReceipt>);

/// Headroom a relay payload leaves for its receipts.
const RECEIPTS_ROOM: usize = 16 * 1024;

/// The gossip payloads relaying `batch` with `receipts`: each an [`AcceptanceRelay`] of at most
/// [`MAX_GOSSIP_PAYLOAD`] bytes holding the receipts of the seals in its acceptances.
pub fn relay_payloads(batch: &[SealedAcceptance], receipts: &[SealReceipt]) -> Vec<Vec<u8>> {
    let (chunks, _) = hco_oracle::codec::encode_chunks(batch, MAX_GOSSIP_PAYLOAD - RECEIPTS_ROOM);
    chunks
        .iter()
        .filter_map(|c| hco_oracle::codec::decode::<Vec<SealedAcceptance>>(c, usize::MAX).ok())
        .map(|part| {
            let seals: Vec<_> = part
                .iter()
                .map(|s| hco_oracle::relay::seal_subject(&s.seal))
                .collect();
            let mine: Vec<SealReceipt> = receipts
                .iter()
                .filter(|r| seals.contains(&r.seal))
                .cloned()
                .collect();
            hco_oracle::codec::encode(&(part, mine))
        })
        .collect()
}

/// The gossip payloads of registrations a member accepted: each the codec's encoding of a
/// `Vec<SignedRegister>` of at most [`MAX_GOSSIP_PAYLOAD`] bytes, in order.
pub fn registration_payloads(batch: &[SignedRegister]) -> Vec<Vec<u8>> {
    payloads(batch, "registrations")
}

fn payloads<T: Serialize>(batch: &[T], what: &str) -> Vec<Vec<u8>> {
    let (payloads, skipped) = hco_oracle::codec::encode_chunks(batch, MAX_GOSSIP_PAYLOAD);
    if skipped > 0 {
        // Cannot happen with the message types as they are (a registration is a few hundred
        // bytes, an acceptance a few kilobytes at most); reconciliation would not carry such an
        // item either.
        tracing::error!(
            skipped,
            what,
            "items larger than a gossip payload were not gossiped"
        );
    }
    payloads
}

/// Most items asked for or returned in one reconciliation message.
pub const MAX_FETCH: usize = 1000;

/// Most accepted keys per reconciliation reply (about 40 bytes each in CBOR).
pub const MAX_KEYS: usize = 100_000;

/// Most key replies a node asks one peer for about one window (each continuing from the last
/// key of the one before): [`MAX_KEYS`] times this bounds the keys reconciled per window.
pub const MAX_KEY_ROUNDS: usize = 64;

/// Most passkey enrolments per reconciliation reply (each is at most 16 KiB).
pub const MAX_PASSKEY_FETCH: usize = 32;

/// Most link statements per reconciliation reply (each about 400 bytes with its receipt).
pub const MAX_LINK_FETCH: usize = 512;

/// Most link replies a node asks one peer for in one pull: with [`MAX_LINK_FETCH`], the
/// statements a node pulls from one peer at once.
pub const MAX_LINK_ROUNDS: usize = 1024;
