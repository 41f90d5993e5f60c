//! The gateway's handlers.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use hco_oracle::ledger::{IdentityRecord, PasskeyRecord};
use hco_oracle::{
    Class, IdentityId, LightVerifier, Reason, Response, SignedEnrolment, SignedRegister,
    SignedRequest, SignedReveal, WindowCertificate,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, AppState};
use crate::api::{
    ChallengeView, CurrentWindowView, EvidenceListView, EvidenceView, IdentityStatusView,
    PoliciesView, PolicyView, PresenceView, ProgressView, ProofView, RegisteredView, SlotView,
    SummaryView, VerdictView, WindowView,
};
use crate::network::protocol::ChallengeReply;

pub(super) type ApiResult<T> = Result<T, ApiError>;

fn parse_id(s: &str) -> ApiResult<IdentityId> {
    s.parse()
        .map_err(|e: String| ApiError::new("bad_request", e))
}

pub(super) async fn blocking<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&hco_oracle::Oracle) -> Result<T, hco_oracle::LedgerError> + Send + 'static,
) -> ApiResult<T> {
    let oracle = state.node.oracle.clone();
    tokio::task::spawn_blocking(move || f(&oracle))
        .await
        .map_err(ApiError::internal)?
        .map_err(|e| {
            state.node.supervisor.storage_failed("an HTTP request", &e);
            ApiError::internal(e)
        })
}

pub async fn register(
    State(state): State<AppState>,
    body: Result<Json<SignedRegister>, JsonRejection>,
) -> ApiResult<impl IntoResponse> {
    let Json(reg) = body?;
    // The network's proof of work first: a flood of registrations without it is refused for
    // the price of one hash, before any signature check, ledger read, quota or queue.
    reg.check_pow(state.node.oracle.params().registration_pow_bits)?;
    state
        .limits
        .charge_identity(&reg.body.id, || reg.check().is_ok())?;
    // A new identity takes one of this window's registrations; a known one gives it back.
    let t = state
        .node
        .oracle
        .params()
        .window_at(state.node.now())
        .unwrap_or(0);
    let id = reg.body.id;
    // One ledger read, on this task: a hop to the blocking pool costs more than the read.
    let known = state.node.oracle.ledger().has_identity(&id).map_err(|e| {
        state.node.supervisor.storage_failed("an HTTP request", &e);
        ApiError::internal(e)
    })?;
    if !known {
        state.limits.take_registration(t)?;
    }
    let outcome = state.node.register(reg).await;
    if !known && !matches!(outcome, Ok(Ok(_))) {
        state.limits.return_registration(t);
    }
    let record = outcome?.map_err(ApiError::from)?;
    Ok((StatusCode::CREATED, Json(registered_view(&record))))
}

pub async fn challenge(
    State(state): State<AppState>,
    body: Result<Json<SignedRequest>, JsonRejection>,
) -> ApiResult<Json<ChallengeView>> {
    let Json(req) = body?;
    // Checked once, here (batched with concurrent requests): only a request the identity
    // signed is charged to it, and issuance on this node does not check it again.
    let checked = state
        .node
        .check_request(req)
        .await?
        .map_err(ApiError::from)?;
    state.limits.check_identity(&checked.request().body.id)?;
    let reply = state.node.issue(checked).await?;
    match reply {
        ChallengeReply::Issued { challenge, prompt } => Ok(Json(ChallengeView {
            challenge,
            prompt: prompt.into(),
        })),
        ChallengeReply::Rejected(r) => Err(r.into()),
        ChallengeReply::Accepted(_) | ChallengeReply::Stage { .. } | ChallengeReply::Status(_) => {
            Err(ApiError::internal(
                "issuer answered a request with something else than a challenge",
            ))
        }
    }
}

pub async fn respond(
    State(state): State<AppState>,
    body: Result<Json<Response>, JsonRejection>,
) -> ApiResult<Json<VerdictView>> {
    let Json(response) = body?;
    match state.node.respond(response).await? {
        ChallengeReply::Accepted(sealed) => {
            let c = sealed.acceptance.challenge().clone();
            Ok(Json(VerdictView {
                verdict: "accepted".into(),
                id: c.id,
                window: c.t,
                j: c.j,
                family: c.family,
                accepted_at: sealed.acceptance.accepted_at,
                acceptance: *sealed,
            }))
        }
        ChallengeReply::Rejected(r) => Err(r.into()),
        ChallengeReply::Issued { .. }
        | ChallengeReply::Stage { .. }
        | ChallengeReply::Status(_) => Err(ApiError::internal(
            "issuer answered a response with something else than a verdict",
        )),
    }
}

pub async fn identity(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<IdentityStatusView>> {
    let id = parse_id(&id)?;
    let now = state.node.now();
    let withheld = state.node.withheld.is_on();
    let (record, conflict, status) = blocking(&state, move |o| {
        let record = o.ledger().identity(&id)?;
        let conflict = o.ledger().conflict(&id)?;
        let agent = record
            .as_ref()
            .is_some_and(|r| r.register.body.class == hco_challenges::Class::Agent);
        let status = if withheld && agent {
            o.status_before_close(&id, now)?
        } else {
            o.status(&id, now)?
        };
        Ok((record, conflict, status))
    })
    .await?;
    let record = record
        .ok_or_else(|| ApiError::new("unknown_identity", "the identity is not registered"))?;
    let status = status.map_err(ApiError::from)?;
    Ok(Json(IdentityStatusView {
        registered: registered_view(&record),
        status,
        // Registered with another class too (at another member): issued nothing here.
        conflicting_class: conflict.map(|reg| reg.body.class),
    }))
}

/// A kept registration as clients see it.
fn registered_view(record: &IdentityRecord) -> RegisteredView {
    RegisteredView {
        id: record.register.body.id,
        class: record.register.body.class,
        visual_opt_out: record.register.body.visual_opt_out,
        registered_window: record.window,
    }
}

/// A stored passkey as clients see it.
fn passkey_view(r: &PasskeyRecord) -> Value {
    use base64::Engine;
    json!({
        "credential_id": base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&r.credential_id),
        "counter": r.counter,
        "enrolled_at": r.enrolment.body.created_at,
    })
}

#[derive(Deserialize)]
pub struct PasskeyOptionsQuery {
    created_at: u64,
}

/// The `navigator.credentials.create()` options of an enrolment started at `created_at`; the
/// WebAuthn challenge is derived from `(id, created_at)`, so the node keeps no ceremony state.
pub async fn passkey_options(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<PasskeyOptionsQuery>,
) -> ApiResult<Json<Value>> {
    let id = parse_id(&id)?;
    let options = state
        .node
        .oracle
        .presence()
        .creation_options(&id.0, q.created_at)
        .map_err(|r| ApiError::from(Reason::Answer(r)))?;
    Ok(Json(json!(options)))
}

pub async fn enrol_passkey(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<SignedEnrolment>, JsonRejection>,
) -> ApiResult<impl IntoResponse> {
    let id = parse_id(&id)?;
    let Json(enrolment) = body?;
    if enrolment.body.id != id {
        return Err(ApiError::new(
            "malformed",
            "the enrolment is for another identity than the path names",
        ));
    }
    state
        .limits
        .charge_identity(&id, || enrolment.check().is_ok())?;
    let record = state
        .node
        .enrol_passkey(enrolment)
        .await?
        .map_err(ApiError::from)?;
    Ok((StatusCode::CREATED, Json(passkey_view(&record))))
}

pub async fn passkeys(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let id = parse_id(&id)?;
    let records = blocking(&state, move |o| o.passkeys(&id)).await?;
    let policy = state.node.oracle.params().presence.clone();
    Ok(Json(json!({
        "passkeys": records.iter().map(passkey_view).collect::<Vec<_>>(),
        "rp_id": policy.rp_id,
        "user_verification": policy.user_verification.as_str(),
    })))
}

pub async fn params(State(state): State<AppState>) -> Json<crate::api::ParamsView> {
    let oracle = &state.node.oracle;
    let p = oracle.params();
    let baseline_only = |c: Class| p.baseline_only(c, oracle.registry());
    Json(crate::api::ParamsView {
        digest: p.digest(),
        baseline_only: crate::api::BaselineOnly {
            human: baseline_only(Class::Human),
            agent: baseline_only(Class::Agent),
        },
        params: p.clone(),
    })
}

#[derive(Deserialize)]
pub struct CurrentQuery {
    id: Option<String>,
}

pub async fn current_window(
    State(state): State<AppState>,
    Query(q): Query<CurrentQuery>,
) -> ApiResult<Json<CurrentWindowView>> {
    let p = state.node.oracle.params().clone();
    let now = state.node.now();
    let t = p.window_at(now).map_err(ApiError::from)?;
    let id =
        q.id.as_deref()
            .map(parse_id)
            .transpose()?
            .unwrap_or(IdentityId([0; 32]));
    let known_id = q.id.is_some();
    let (slot, progress, class) = blocking(&state, move |o| {
        let slot = o.slot(t, &id)?;
        let class = o.ledger().identity(&id)?.map(|r| r.register.body.class);
        let progress = if known_id {
            Some(o.progress(t, &id)?)
        } else {
            None
        };
        Ok((slot, progress, class))
    })
    .await?;
    let policy = |c: hco_challenges::Class| {
        let w = p.policy(c);
        PolicyView {
            steps: w.steps.clone(),
            spares: w.spares,
            tries: w.tries(),
        }
    };
    Ok(Json(CurrentWindowView {
        t,
        now,
        start: p.window_start(t),
        end: p.window_end(t),
        closes_at: p.closes_at(t),
        slot_mode: p.slot_mode,
        slot: SlotView {
            start: slot.start,
            end: slot.end,
        },
        policy: PoliciesView {
            human: policy(hco_challenges::Class::Human),
            agent: policy(hco_challenges::Class::Agent),
        },
        identity: progress.map(|(issued, passed)| ProgressView {
            class,
            next_j: issued,
            // An agent's passes are not told while its verdicts are withheld.
            steps_passed: if state.node.withheld.is_on()
                && class == Some(hco_challenges::Class::Agent)
            {
                0
            } else {
                passed
            },
            steps: class.map(|c| p.policy(c).steps.len()),
        }),
        presence: presence_view(&p),
        agent_corpus: state.agent_corpus.view(t),
        params_digest: p.digest(),
    }))
}

pub async fn window(
    State(state): State<AppState>,
    Path(t): Path<u64>,
) -> ApiResult<Json<WindowView>> {
    let p = state.node.oracle.params().clone();
    // While the window is open, an agent's activity is not told when its verdicts are withheld:
    // the local count is of human identities until the close.
    let humans_only = state.node.withheld.is_on() && state.node.now() < p.closes_at(t);
    let (active, summaries, cert, evidence, excluded) = blocking(&state, move |o| {
        let l = o.ledger();
        let active = o.active_set(t)?;
        let counted = active
            .iter()
            .filter(|(_, class)| !humans_only || *class == hco_challenges::Class::Human)
            .count();
        Ok((
            counted,
            l.summaries(t)?,
            l.certificate(t)?,
            l.evidence(t)?,
            l.excluded(t)?,
        ))
    })
    .await?;
    Ok(Json(WindowView {
        t,
        start: p.window_start(t),
        end: p.window_end(t),
        closes_at: p.closes_at(t),
        closed: state.node.now() >= p.closes_at(t),
        active_count_local: active,
        summaries: summaries
            .iter()
            .map(|s| SummaryView {
                signer: s.signer,
                root: s.summary.root,
                count: s.summary.count,
            })
            .collect(),
        certified: cert.is_some(),
        certificate_root: cert.map(|c| c.summary.root),
        // Members whose acceptances were left out when this node summarized the window, and
        // the evidence it holds (each piece the accused member's own signed messages).
        excluded_members: excluded,
        evidence: evidence.iter().map(|e| evidence_view(e, None)).collect(),
    }))
}

/// A piece of evidence as clients see it; `t` named when several windows are listed.
fn evidence_view(e: &hco_oracle::Evidence, t: Option<u64>) -> EvidenceView {
    EvidenceView {
        t,
        accused: e.accused(),
        kind: e.kind().to_owned(),
        evidence: serde_json::to_value(e).unwrap_or(Value::Null),
    }
}

/// Every piece of evidence this node holds against committee members, by window.
pub async fn evidence(State(state): State<AppState>) -> ApiResult<Json<EvidenceListView>> {
    let all = blocking(&state, move |o| {
        o.ledger().all_evidence().collect::<Result<Vec<_>, _>>()
    })
    .await?;
    Ok(Json(EvidenceListView {
        evidence: all
            .iter()
            .map(|e| evidence_view(e, Some(e.window())))
            .collect(),
    }))
}

pub async fn certificate(
    State(state): State<AppState>,
    Path(t): Path<u64>,
) -> ApiResult<Json<WindowCertificate>> {
    blocking(&state, move |o| o.ledger().certificate(t))
        .await?
        .map(Json)
        .ok_or_else(|| {
            ApiError::new(
                "no_certificate",
                format!("window {t} has no certificate (yet)"),
            )
        })
}

pub async fn proof(
    State(state): State<AppState>,
    Path((t, id)): Path<(u64, String)>,
) -> ApiResult<Json<ProofView>> {
    let id = parse_id(&id)?;
    let found = blocking(&state, move |o| o.membership(t, &id)).await?;
    let (certificate, proof) = found.ok_or_else(|| {
        ApiError::new(
            "not_active",
            format!("no certified proof that {id} was active in window {t}"),
        )
    })?;
    // Never serve a proof that does not verify.
    let p = state.node.oracle.params();
    LightVerifier::new(p.committee.clone(), p.quorum)
        .and_then(|v| v.verify_membership(&certificate, &id, &proof))
        .map_err(ApiError::internal)?;
    Ok(Json(ProofView { certificate, proof }))
}

pub async fn reveals(
    State(state): State<AppState>,
    Path(t): Path<u64>,
) -> ApiResult<Json<Vec<SignedReveal>>> {
    Ok(Json(
        blocking(&state, move |o| o.ledger().reveals(t)).await?,
    ))
}

pub async fn healthz(State(state): State<AppState>) -> Json<Value> {
    let now = state.node.now();
    let p = state.node.oracle.params();
    Json(json!({
        "status": "ok",
        "node": state.node.oracle.node_id(),
        "window": p.window_at(now).ok(),
        "peers": state.node.net.peers().await.len(),
        "classes": [Class::Human, Class::Agent],
        "presence": presence_view(p),
        // A test-only cheating member names its faults (null on an honest node).
        "unsafe_byzantine": state.node.faults().describe(),
    }))
}

/// Whether this network's presence step accepts software authenticators (a development
/// network: `attestation` not `strict`), so the page and operators can say so.
pub(crate) fn presence_view(p: &hco_oracle::NetworkParams) -> PresenceView {
    let enabled = p.family(hco_challenges::presence::NAME).is_some();
    PresenceView {
        enabled,
        software_authenticators_accepted: enabled && p.presence.accepts_software_authenticators(),
    }
}

async fn admin_peer(state: &AppState, node: &str) -> ApiResult<libp2p::PeerId> {
    let node: hco_oracle::NodeId = node
        .parse()
        .map_err(|e: String| ApiError::new("bad_request", e))?;
    state
        .node
        .peer_of(&node)
        .ok_or_else(|| ApiError::new("not_found", format!("{node} is not a committee member")))
}

pub async fn block(
    State(state): State<AppState>,
    Path(node): Path<String>,
) -> ApiResult<Json<Value>> {
    let peer = admin_peer(&state, &node).await?;
    state.node.net.block(peer).await;
    Ok(Json(json!({ "blocked": node })))
}

pub async fn unblock(
    State(state): State<AppState>,
    Path(node): Path<String>,
) -> ApiResult<Json<Value>> {
    let peer = admin_peer(&state, &node).await?;
    state.node.net.unblock(peer).await;
    Ok(Json(json!({ "unblocked": node })))
}

pub async fn not_found() -> ApiError {
    ApiError::new("not_found", "no such endpoint; see /openapi.json")
}
