//! Account links over HTTP: `POST /v1/links` records a statement signed by the identity and
//! the account (and gossips it to the committee with this member's receipt),
//! `GET /v1/windows/{t}/links/{account}` serves the certificate, the account's link in it and
//! its identity's membership proof.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use hco_oracle::account::AccountId;
use hco_oracle::link::SignedLink;
use hco_oracle::{LightVerifier, LinkedProof, RelayedLink, codec};
use serde_json::json;

use super::handlers::ApiResult;
use super::handlers::blocking;
use super::{ApiError, AppState};
use crate::network::protocol::Topic;

/// Records a link statement; 201 when new, 200 when already held.
pub async fn record(
    State(state): State<AppState>,
    body: Result<Json<SignedLink>, JsonRejection>,
) -> ApiResult<impl IntoResponse> {
    let Json(signed) = body?;
    // Charged to the identity like its other requests, once its signature holds.
    state.limits.charge_identity(&signed.link.identity, || {
        hco_oracle::sign::verify(
            &signed.link.identity.0,
            &signed.link.signing_digest(),
            &signed.identity_sig,
        )
    })?;
    let now = state.node.now();
    let link = RelayedLink::new(signed.clone());
    let heard = blocking(&state, move |o| o.hear_link(&link, now))
        .await?
        .map_err(ApiError::from)?;
    // With this member's receipt, so that members the client did not reach still keep it.
    if let Some(relay) = heard.relay {
        state.node.net.publish(Topic::Link, codec::encode(&relay));
    }
    let fresh = heard.fresh;
    let status = if fresh {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(json!({
            "new": fresh,
            "account": signed.link.account,
            "id": signed.link.identity,
            "from_window": signed.link.from_window,
        })),
    ))
}

/// The certificate of window `t`, `account`'s link in it and the membership proof of the
/// identity it is linked to.
pub async fn proof(
    State(state): State<AppState>,
    Path((t, account)): Path<(u64, String)>,
) -> ApiResult<Json<LinkedProof>> {
    let account = AccountId::parse(&account)
        .map_err(|e| ApiError::new("malformed", format!("{}: {e}", e.code())))?;
    let lookup = account.clone();
    let found = blocking(&state, move |o| o.link_proof(t, &lookup)).await?;
    let served = found.ok_or_else(|| {
        ApiError::new(
            "not_linked",
            format!("no certified link of {account} to an active identity in window {t}"),
        )
    })?;
    // Never serve a proof that does not verify.
    let p = state.node.oracle.params();
    LightVerifier::new(p.committee.clone(), p.quorum)
        .and_then(|v| {
            v.verify_linked(
                &served.certificate,
                account.as_str(),
                &served.link.identity,
                &served.link,
                &served.proof,
                served.proof.class,
            )
        })
        .map_err(ApiError::internal)?;
    Ok(Json(served))
}
