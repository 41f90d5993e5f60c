//! `POST /v1/challenges/stage`: the identity-signed answer to the first stages of a
//! multi-stage challenge (a [`Response`] whose answer reads `stage {k}:{partial answer}`),
//! answered by the issuer with the next stage's prompt. A wrong partial answer is final, like
//! a wrong answer to `POST /v1/responses`; the last stage is answered there, with every stage's
//! answer.

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use hco_oracle::Response;

use super::{ApiError, AppState};
use crate::api::StageView;

/// Checks the partial answer at the issuer (this node) and returns the next stage.
pub async fn answer(
    State(state): State<AppState>,
    body: Result<Json<Response>, JsonRejection>,
) -> Result<Json<StageView>, ApiError> {
    let Json(response) = body?;
    let now = state.node.now();
    let oracle = state.node.oracle.clone();
    let outcome = tokio::task::spawn_blocking(move || oracle.answer_stage(&response, now))
        .await
        .map_err(ApiError::internal)?
        .map_err(|e| {
            state.node.supervisor.storage_failed("a stage answer", &e);
            ApiError::internal(e)
        })?;
    match outcome {
        Ok((stage, prompt)) => Ok(Json(StageView {
            stage,
            prompt: prompt.into(),
        })),
        Err(reason) => {
            state.node.metrics.reject(reason.code(), None);
            Err(reason.into())
        }
    }
}
