//! The JSON bodies of the HTTP API shared by the gateway and the client.

mod window;

pub use window::{
    AgentCorpusView, CorpusScheduleView, CurrentWindowView, EvidenceListView, EvidenceView,
    PoliciesView, PolicyView, PresenceView, ProgressView, SlotView, SummaryView, WindowView,
};

use hco_oracle::{
    Class, IdentityId, IdentityStatus, MembershipProof, Prompt, SealedAcceptance, SignedChallenge,
    WindowCertificate,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A prompt as JSON: the family's payload parsed when it is JSON, hex otherwise.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Prompt")]
pub struct PromptView {
    /// Family.
    pub family: String,
    /// Instructions.
    pub text: String,
    /// The payload: the family's JSON, or hex when it is not JSON.
    pub data: Value,
}

impl From<Prompt> for PromptView {
    fn from(p: Prompt) -> Self {
        let data =
            serde_json::from_slice(&p.data).unwrap_or_else(|_| Value::String(hex::encode(&p.data)));
        Self {
            family: p.family,
            text: p.text,
            data,
        }
    }
}

/// The body of a successful `POST /v1/identities` (201, also for a repeated registration).
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Registered")]
pub struct RegisteredView {
    /// The identity.
    pub id: IdentityId,
    /// Its class, as this member keeps it (the first registration it heard).
    pub class: Class,
    /// Whether it opted out of visual families.
    pub visual_opt_out: bool,
    /// The window this member recorded it in.
    pub registered_window: u64,
}

/// The body of `GET /v1/identities/{id}`: the registration as kept here and the lifecycle
/// status.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "IdentityStatus")]
pub struct IdentityStatusView {
    /// The registration as kept here.
    #[serde(flatten)]
    pub registered: RegisteredView,
    /// The lifecycle status.
    #[serde(flatten)]
    pub status: IdentityStatus,
    /// Another class the identity also registered with (at another member): it is issued
    /// nothing here then.
    pub conflicting_class: Option<Class>,
}

/// The body of a successful `POST /v1/challenges`.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Challenge")]
pub struct ChallengeView {
    /// The signed envelope to return with the answer.
    pub challenge: SignedChallenge,
    /// What to solve.
    pub prompt: PromptView,
}

/// The body of a successful `POST /v1/challenges/stage`.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Stage")]
pub struct StageView {
    /// The stage now shown (2 after a right stage-1 answer).
    pub stage: usize,
    /// Its prompt.
    pub prompt: PromptView,
}

/// The body of a successful `POST /v1/responses`.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Verdict")]
pub struct VerdictView {
    /// `accepted`.
    #[schemars(extend("const" = "accepted"))]
    pub verdict: String,
    /// Identity.
    pub id: IdentityId,
    /// Window.
    pub window: u64,
    /// Index.
    pub j: u32,
    /// Family.
    pub family: String,
    /// Receipt time at the issuer.
    pub accepted_at: u64,
    /// The sealed acceptance (evidence signed by the issuer).
    pub acceptance: SealedAcceptance,
}

/// The body of `GET /v1/params`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Params")]
pub struct ParamsView {
    /// The parameters' digest (what link statements and summaries name).
    pub digest: hco_oracle::Digest,
    /// Per class: whether only labelled baselines (families a script with the source passes)
    /// can serve its steps, so that its activity proves nothing.
    pub baseline_only: BaselineOnly,
    /// The parameters.
    pub params: hco_oracle::NetworkParams,
}

/// [`ParamsView::baseline_only`].
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct BaselineOnly {
    /// The human class.
    pub human: bool,
    /// The agent class.
    pub agent: bool,
}

/// The body of `GET /v1/windows/{t}/proofs/{id}`.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Proof")]
pub struct ProofView {
    /// The certificate.
    pub certificate: WindowCertificate,
    /// The membership proof.
    pub proof: MembershipProof,
}
