//! The HTTP gateway: `fn router(state) -> Router`, JSON in and out, errors as `{code, message}`.
//! Testable without a socket through `tower::ServiceExt::oneshot`; [`serve()`] runs it on a
//! listener with the connection limits of [`conns`].

mod agent;
mod conn;
pub mod conns;
mod error;
pub mod fds;
mod handlers;
pub mod limits;
mod links;
mod openapi;
mod page;
#[cfg(test)]
mod registration_tests;
pub mod rtt;
mod serve;
mod stage;
#[cfg(test)]
mod storage_tests;
mod stream;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tower_http::timeout::TimeoutLayer;

pub use error::ApiError;
pub use serve::serve;

use crate::service::Node;

/// What handlers share. Every request clones the state (its middleware and its handler each
/// take a copy), so the parts sit behind one reference count rather than one each.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    /// The state of a router over `shared`.
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The parts of [`AppState`].
pub struct Shared {
    /// The node.
    pub node: Arc<Node>,
    /// The agent-admission game, when enabled.
    pub game: Option<Arc<hco_oracle::admission_game::AdmissionGame>>,
    /// The live streams of `attention` challenges.
    pub streams: Arc<stream::Streams>,
    /// Rate and concurrency limits per client and identity.
    pub limits: Arc<limits::Limits>,
    /// The corpus of the agent class (what the status view says about it).
    pub agent_corpus: Arc<crate::corpus::operator::AgentCorpus>,
}

/// The gateway's routes with body limit and timeout; `admin` adds the test-only routes. Metrics
/// are not among them: they have their own listener ([`crate::metrics_listener`]).
pub fn router(state: AppState, max_body_bytes: usize, timeout: Duration, admin: bool) -> Router {
    let mut router = Router::new();
    if admin {
        router = router
            .route("/admin/peers/{node}/block", post(handlers::block))
            .route("/admin/peers/{node}/unblock", post(handlers::unblock));
    }
    router
        .route("/v1/identities", post(handlers::register))
        .route("/v1/identities/{id}", get(handlers::identity))
        .route(
            "/v1/identities/{id}/passkeys",
            get(handlers::passkeys).post(handlers::enrol_passkey),
        )
        .route(
            "/v1/identities/{id}/passkeys/options",
            get(handlers::passkey_options),
        )
        .route("/v1/challenges", post(handlers::challenge))
        .route("/v1/challenges/stage", post(stage::answer))
        .route("/v1/responses", post(handlers::respond))
        .route("/v1/params", get(handlers::params))
        .route("/v1/agent/sessions", post(agent::start))
        .route(
            "/v1/agent/sessions/{session}/rounds/{token}",
            post(agent::answer),
        )
        .route("/v1/attention/streams", post(stream::open))
        .route("/v1/attention/streams/{token}/events", get(stream::events))
        .route("/v1/attention/streams/{token}/clicks", post(stream::click))
        .route("/v1/windows/current", get(handlers::current_window))
        .route("/v1/windows/{t}", get(handlers::window))
        .route("/v1/windows/{t}/certificate", get(handlers::certificate))
        .route("/v1/windows/{t}/proofs/{id}", get(handlers::proof))
        .route("/v1/windows/{t}/reveals", get(handlers::reveals))
        .route("/v1/windows/{t}/links/{account}", get(links::proof))
        .route("/v1/links", post(links::record))
        .route("/v1/evidence", get(handlers::evidence))
        .route("/healthz", get(handlers::healthz))
        .route("/openapi.json", get(openapi::document))
        .route("/", get(page::index))
        .route("/static/{file}", get(page::asset))
        .fallback(handlers::not_found)
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .layer(TimeoutLayer::with_status_code(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        // Outermost: a client over its limits is refused before anything else is done.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            limits::enforce,
        ))
        .with_state(state)
}
