//! `POST /v1/challenges/stage`: the identity-signed answer to the first stages of a
//! multi-stage challenge (a [`Response`] whose answer reads `stage {k}:{partial answer}`),
//! answered by the issuer with the next stage's prompt. A wrong partial answer is final, like
//! a wrong answer to `POST /v1/responses`; the last stage is answered there, with every stage's
//! answer. A gateway that did not issue the challenge forwards the request to its issuer.

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use hco_oracle::Response;

use super::{ApiError, AppState};
use crate::api::StageView;
use crate::network::protocol::ChallengeReply;

/// Checks the partial answer at its issuer (here, or forwarded like a response) and returns
/// the next stage.
pub async fn answer(
    State(state): State<AppState>,
    body: Result<Json<Response>, JsonRejection>,
) -> Result<Json<StageView>, ApiError> {
    let Json(response) = body?;
    match state.node.answer_stage(response).await? {
        ChallengeReply::Stage { stage, prompt } => Ok(Json(StageView {
            stage: stage as usize,
            prompt: prompt.into(),
        })),
        ChallengeReply::Rejected(r) => Err(r.into()),
        ChallengeReply::Issued { .. } | ChallengeReply::Accepted(_) | ChallengeReply::Status(_) => {
            Err(ApiError::internal(
                "issuer answered a stage request with something else",
            ))
        }
    }
}
