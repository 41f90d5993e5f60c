//! One error type for the gateway: every failure renders as `{"code": "...", "message": "..."}`
//! with the core's stable reason codes.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hco_oracle::Reason;
use serde::Serialize;

use crate::network::protocol::Rejection;

/// An error returned by the HTTP API.
#[derive(Debug, Clone, Serialize)]
pub struct ApiError {
    #[serde(skip)]
    status: StatusCode,
    /// The stable code.
    pub code: String,
    /// What happened and what to do.
    pub message: String,
}

/// The HTTP status for a reason code.
pub fn status_of(code: &str) -> StatusCode {
    match code {
        "malformed"
        | "message_too_large"
        | "unknown_version"
        | "index_out_of_range"
        | "answer_too_large"
        | "bad_identity_key"
        | "bad_identity_signature"
        | "bad_issuer_signature"
        | "bad_request" => StatusCode::BAD_REQUEST,
        "unknown_identity" | "unknown_challenge" | "not_found" | "no_certificate"
        | "not_active" => StatusCode::NOT_FOUND,
        "already_accepted" | "class_conflict" | "not_assigned_issuer" | "too_many_passkeys" => {
            StatusCode::CONFLICT
        }
        "issuer_unreachable" | "overloaded" => StatusCode::SERVICE_UNAVAILABLE,
        "internal" => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

impl ApiError {
    /// An error with a code and message; the status follows from the code.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            status: status_of(code),
            code: code.into(),
            message: message.into(),
        }
    }

    /// Overrides the status derived from the code.
    pub fn set_status(&mut self, status: StatusCode) {
        self.status = status;
    }

    /// A failure of the node itself (storage, task), logged and reported without details.
    pub fn internal(e: impl std::fmt::Display) -> Self {
        tracing::error!(error = %e, "internal error in an HTTP request");
        Self::new(
            "internal",
            "the node failed to handle the request; see its log",
        )
    }
}

impl From<&Reason> for ApiError {
    fn from(r: &Reason) -> Self {
        Self::new(r.code(), r.to_string())
    }
}

impl From<Reason> for ApiError {
    fn from(r: Reason) -> Self {
        Self::from(&r)
    }
}

impl From<Rejection> for ApiError {
    fn from(r: Rejection) -> Self {
        Self::new(&r.code, r.message)
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        Self::internal(e)
    }
}

impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(e: axum::extract::rejection::JsonRejection) -> Self {
        let code = if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            "message_too_large"
        } else {
            "malformed"
        };
        let mut err = Self::new(code, e.body_text());
        if code == "message_too_large" {
            err.status = StatusCode::PAYLOAD_TOO_LARGE;
        }
        err
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self)).into_response()
    }
}
