//! One error type for the gateway: every failure renders as `{"code": "...", "message": "..."}`
//! with the core's stable reason codes.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hco_oracle::Reason;
use serde::Serialize;

use crate::network::protocol::Rejection;

/// An error returned by the HTTP API.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Error")]
pub struct ApiError {
    #[serde(skip)]
    status: StatusCode,
    /// The stable code (the document lists every one).
    pub code: String,
    /// What happened and what to do.
    pub message: String,
    /// For `step_not_open`: when to ask again (ms since the Unix epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opens_at: Option<u64>,
    /// For `rate_limited`: how long to wait before asking again (also sent as `Retry-After`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

/// The HTTP status for a code: the core's table for its reason codes, then the gateway's own.
pub fn status_of(code: &str) -> StatusCode {
    if let Some(status) = Reason::http_status_of(code) {
        return StatusCode::from_u16(status).unwrap_or(StatusCode::UNPROCESSABLE_ENTITY);
    }
    match code {
        "bad_request" => StatusCode::BAD_REQUEST,
        "not_found" | "no_certificate" | "not_active" | "not_linked" => StatusCode::NOT_FOUND,
        "issuer_unreachable" | "overloaded" => StatusCode::SERVICE_UNAVAILABLE,
        "rate_limited" | "too_many_sessions" | "registration_quota" => {
            StatusCode::TOO_MANY_REQUESTS
        }
        "internal" => StatusCode::INTERNAL_SERVER_ERROR,
        // Received: the verdict is told after the window closes.
        "verdict_withheld" => StatusCode::ACCEPTED,
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
            opens_at: None,
            retry_after_ms: None,
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

impl From<crate::service::RegisterError> for ApiError {
    fn from(e: crate::service::RegisterError) -> Self {
        match e {
            crate::service::RegisterError::Overloaded => Self::new("overloaded", e.to_string()),
            crate::service::RegisterError::Failed => Self::internal(e),
        }
    }
}

impl From<&Reason> for ApiError {
    fn from(r: &Reason) -> Self {
        let mut e = Self::new(r.code(), r.to_string());
        if let Reason::StepNotOpen { opens_at } = r {
            e.opens_at = Some(*opens_at);
        }
        e
    }
}

impl From<Reason> for ApiError {
    fn from(r: Reason) -> Self {
        Self::from(&r)
    }
}

impl From<Rejection> for ApiError {
    fn from(r: Rejection) -> Self {
        let mut e = Self::new(&r.code, r.message);
        e.opens_at = r.opens_at;
        e
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
        let retry_after = self.retry_after_ms.map(|ms| ms.div_ceil(1000).max(1));
        let mut response = (self.status, Json(self)).into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, seconds.into());
        }
        response
    }
}
