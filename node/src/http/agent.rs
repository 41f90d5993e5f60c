//! The agent-admission game over HTTP (aCAPTCHA): `POST /v1/agent/sessions` starts a session
//! for a registered agent identity that signed the start ([`SessionStart`]) and shows round 1; each reply names the endpoint for the next answer, so an entity must act
//! on the reply, not only answer it. Round time is charged net of the kernel's RTT estimate.

use axum::Json;
use axum::body::Bytes;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use hco_challenges::Class;
use hco_oracle::admission_game::{GameError, RoundView, Step};
use hco_oracle::{Digest, SessionStart};
use serde_json::{Value, json};

use super::handlers::blocking;
use super::limits::Client;
use super::rtt::{ConnInfo, rtt_ms};
use super::{ApiError, AppState};

/// Largest body of an answer.
const MAX_ANSWER_BODY: usize = 4096;

impl From<GameError> for ApiError {
    fn from(e: GameError) -> Self {
        let mut err = ApiError::new(e.code(), e.to_string());
        err.set_status(match e {
            GameError::UnknownSession | GameError::WrongEndpoint => StatusCode::NOT_FOUND,
            GameError::SessionClosed => StatusCode::CONFLICT,
            GameError::Overloaded
            | GameError::NoCorpus
            | GameError::SetsSpent { .. }
            | GameError::Busy
            | GameError::NotHere { .. }
            | GameError::CorpusExhausted { .. } => StatusCode::SERVICE_UNAVAILABLE,
            GameError::TooManySessions { .. } | GameError::IdentityLimit { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            _ => StatusCode::UNPROCESSABLE_ENTITY,
        });
        err
    }
}

fn round_json(v: &RoundView) -> Value {
    json!({
        "session": v.session,
        "round": v.round,
        "domain": v.domain,
        "narrative": v.narrative,
        "question": v.question,
        "answer_endpoint": format!("/v1/agent/sessions/{}/rounds/{}", v.session, v.token),
        "budget_ms": v.budget_ms,
        "session_deadline": v.session_deadline,
    })
}

/// `POST /v1/agent/sessions` with a [`SessionStart`] as JSON (`identity`, `window`, `nonce`,
/// `sig`): the identity must be registered as an agent (with no conflicting registration).
pub async fn start(
    State(state): State<AppState>,
    client: Option<Extension<Client>>,
    body: Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let game = state.game.as_ref().ok_or_else(|| {
        ApiError::new(
            "not_found",
            "the agent-admission game is disabled on this node",
        )
    })?;
    let start: SessionStart =
        serde_json::from_slice(&body).map_err(|e| ApiError::new("malformed", e.to_string()))?;
    let id = start.identity;
    let (record, conflict) = blocking(&state, move |o| {
        Ok((o.ledger().identity(&id)?, o.ledger().conflict(&id)?))
    })
    .await?;
    let record = record.ok_or_else(|| {
        ApiError::new(
            "unknown_identity",
            "the identity is not registered: register it as an agent first",
        )
    })?;
    if record.register.body.class != Class::Agent {
        return Err(ApiError::new(
            "wrong_class",
            "the agent-admission game is for identities registered as agents",
        ));
    }
    if conflict.is_some() {
        return Err(ApiError::new(
            "class_conflict",
            "the identity was also registered with another class",
        ));
    }
    let client = client.map(|Extension(Client(key))| key);
    let view = game.start(client, &start, state.node.now())?;
    Ok((StatusCode::CREATED, Json(round_json(&view))))
}

/// The answer: `{"answer": "..."}` as JSON, or the raw body as the answer bytes.
fn answer_bytes(body: &[u8]) -> Result<Vec<u8>, ApiError> {
    if body.len() > MAX_ANSWER_BODY {
        return Err(ApiError::new(
            "message_too_large",
            format!("answers are limited to {MAX_ANSWER_BODY} bytes"),
        ));
    }
    if body.first() == Some(&b'{') {
        let v: Value =
            serde_json::from_slice(body).map_err(|e| ApiError::new("malformed", e.to_string()))?;
        let answer = v["answer"].as_str().ok_or_else(|| {
            ApiError::new("missing_answer", "the body needs a string field `answer`")
        })?;
        return Ok(answer.as_bytes().to_vec());
    }
    Ok(body.to_vec())
}

pub async fn answer(
    State(state): State<AppState>,
    conn: Option<Extension<ConnectInfo<ConnInfo>>>,
    Path((session, token)): Path<(String, String)>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let now = state.node.now();
    let game = state.game.as_ref().ok_or_else(|| {
        ApiError::new(
            "not_found",
            "the agent-admission game is disabled on this node",
        )
    })?;
    let session: Digest = session
        .parse()
        .map_err(|_| ApiError::from(GameError::UnknownSession))?;
    let token: Digest = token
        .parse()
        .map_err(|_| ApiError::from(GameError::WrongEndpoint))?;
    let answer = answer_bytes(&body)?;
    let rtt = conn
        .map(|Extension(ConnectInfo(c))| rtt_ms(c.fd))
        .unwrap_or(0);
    match game.answer(&session, &token, &answer, rtt, now)? {
        Step::Next(view) => Ok(Json(round_json(&view))),
        Step::Admitted(credential) => Ok(Json(
            json!({ "admitted": true, "credential": credential, "rtt_ms": rtt }),
        )),
    }
}
