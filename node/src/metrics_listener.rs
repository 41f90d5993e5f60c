//! The metrics listener: `GET /metrics` (OpenMetrics text) on its own address,
//! `[metrics] listen`, apart from the client gateway. The series describe the node's load, its
//! clients' rejections and the committee's health — an operator's view, not a client's — so the
//! gateway does not serve them, and this listener belongs on loopback or a private interface
//! (a warning is logged when it is bound elsewhere). It serves nothing else (404) and is off
//! unless configured.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_http::timeout::TimeoutLayer;

/// The time limit of one scrape.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(10);

/// The listener's routes over `registry`: `/metrics`, nothing else.
pub fn router(registry: Arc<Registry>) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            SCRAPE_TIMEOUT,
        ))
        .with_state(registry)
}

async fn metrics(State(registry): State<Arc<Registry>>) -> Response {
    let mut text = String::new();
    match prometheus_client::encoding::text::encode(&mut text, &registry) {
        Ok(()) => (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "cannot encode the metrics");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// Binds the listener at `addr`, warning when that is not a loopback address.
pub async fn bind(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    if !addr.ip().is_loopback() {
        tracing::warn!(%addr, "the metrics listener is not on loopback: keep it off the public interface (firewall it, or bind it to a private address)");
    }
    TcpListener::bind(addr).await.with_context(|| {
        format!("cannot listen on {addr} (address in use?); choose another metrics.listen")
    })
}

/// Serves `/metrics` from `registry` on `listener` until `stop`.
pub async fn serve(listener: TcpListener, registry: Arc<Registry>, stop: CancellationToken) {
    let served = axum::serve(listener, router(registry))
        .with_graceful_shutdown(stop.cancelled_owned())
        .await;
    if let Err(e) = served {
        tracing::error!(error = %e, "the metrics listener failed");
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    use super::*;

    async fn get(app: &Router, uri: &str) -> (StatusCode, String) {
        let reply = app
            .clone()
            .oneshot(Request::get(uri).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = reply.status();
        let body = axum::body::to_bytes(reply.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn it_serves_the_registry_at_metrics_and_nothing_else() {
        let mut registry = Registry::default();
        let metrics = crate::metrics::Metrics::new(&mut registry);
        metrics.peers_banned.inc();
        let app = router(Arc::new(registry));
        let (status, text) = get(&app, "/metrics").await;
        assert_eq!(status, StatusCode::OK);
        assert!(text.contains("hco_peers_banned_total 1"), "{text}");
        assert_eq!(get(&app, "/").await.0, StatusCode::NOT_FOUND);
        assert_eq!(get(&app, "/v1/params").await.0, StatusCode::NOT_FOUND);
    }
}
