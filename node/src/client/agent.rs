//! `hco client agent` plays a whole agent-admission session, calling a command per round — the
//! plug for a real LLM agent; `hco client admission verify` checks a credential offline.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use ed25519_dalek::SigningKey;
use hco_oracle::{AdmissionCredential, Clock, Digest, NodeId, SessionStart, SystemClock};
use serde_json::json;

use super::{Gateway, run_answer_cmd};

/// The start of a session at the node behind `gw`, signed by the agent identity's `key` for the
/// node's current window.
pub fn signed_start(gw: &Gateway, key: &SigningKey) -> anyhow::Result<SessionStart> {
    let health = gw.get("/healthz")?;
    let node: NodeId = serde_json::from_value(health.body["node"].clone())
        .context("the node did not report its id")?;
    let window = health.body["window"]
        .as_u64()
        .context("the node did not report the current window")?;
    let nonce: [u8; 32] = rand::random();
    Ok(SessionStart::sign(key, &node, window, Digest(nonce)))
}

/// Refusals of a start that another member may not give: its share of the window's questions
/// makes no session, or every question it has left is in a session now.
const TRY_ANOTHER_MEMBER: [&str; 2] = ["game_not_here", "game_busy"];

/// Plays a session as the agent identity of `key` at the first of `nodes` that starts one
/// (the next is tried when a member's share of the window's questions cannot serve it); prints
/// the outcome as JSON and saves the credential to `out` if given.
pub fn play(
    nodes: &[String],
    answer_cmd: &str,
    key: &SigningKey,
    out: Option<&Path>,
) -> anyhow::Result<bool> {
    let mut refusals = Vec::new();
    let mut started = None;
    for node in nodes {
        let gw = Gateway::client(node);
        let start = gw.post("/v1/agent/sessions", &signed_start(&gw, key)?)?;
        if start.status == 201 {
            started = Some((gw, start.body));
            break;
        }
        let code = start.body["code"].as_str().unwrap_or_default().to_owned();
        refusals.push(format!("{node}: {}", start.body));
        if !TRY_ANOTHER_MEMBER.contains(&code.as_str()) {
            break;
        }
    }
    let Some((gw, first)) = started else {
        bail!(
            "no node started a session: {}",
            if refusals.is_empty() {
                "no --node given".to_owned()
            } else {
                refusals.join("; ")
            }
        );
    };
    let mut round = first;
    let mut shown = SystemClock.now();
    let mut history = Vec::new();
    loop {
        let input = json!({
            "round": round["round"],
            "domain": round["domain"],
            "narrative": round["narrative"],
            "question": round["question"],
            "budget_ms": round["budget_ms"],
            "earlier_rounds": history,
        });
        let answer = run_answer_cmd(answer_cmd, &input)?;
        let endpoint = round["answer_endpoint"]
            .as_str()
            .context("the reply names no answer endpoint")?
            .to_owned();
        // A refused answer is sent again only within the round's budget and the session.
        let round_end = round["budget_ms"]
            .as_u64()
            .map(|budget| shown.saturating_add(budget));
        let deadline = match (round_end, round["session_deadline"].as_u64()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let reply = gw.post_before(&endpoint, &json!({ "answer": answer }), deadline)?;
        if reply.status != 200 {
            println!(
                "{}",
                json!({ "admitted": false, "round": round["round"], "code": reply.body["code"], "message": reply.body["message"] })
            );
            return Ok(false);
        }
        history.push(json!({ "narrative": round["narrative"], "question": round["question"], "answer": answer }));
        if reply.body["admitted"] == true {
            let credential = &reply.body["credential"];
            if let Some(path) = out {
                std::fs::write(path, serde_json::to_vec_pretty(credential)?)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            println!(
                "{}",
                json!({ "admitted": true, "round_ms": credential["admission"]["round_ms"], "credential": credential })
            );
            return Ok(true);
        }
        round = reply.body;
        shown = SystemClock.now();
    }
}

/// Verifies a credential file offline: valid only against the pinned `node_key`. Without one
/// the credential is reported `unpinned` (and not valid), whatever its signature: any key signs
/// a credential that verifies under the key it names. Returns whether it is valid.
pub fn verify(path: &PathBuf, node_key: Option<NodeId>) -> anyhow::Result<bool> {
    let cred: AdmissionCredential = serde_json::from_slice(
        &std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?,
    )
    .with_context(|| format!("{} is not an admission credential", path.display()))?;
    let now = SystemClock.now();
    let checked = match &node_key {
        Some(key) => cred.verify(key, now),
        None => cred.check_self_signed(now),
    };
    let mut out = match (checked, node_key) {
        (Ok(()), Some(_)) => json!({ "valid": true, "status": "valid", "unpinned": false }),
        (Ok(()), None) => json!({
            "valid": false,
            "status": "unpinned",
            "unpinned": true,
            "code": "unpinned",
            "message": "no --node-key: the signature verifies under the key the credential names, \
                        which anyone can make; pin the issuing node's key (--node-key HEX, from \
                        its operator or the committee in GET /v1/params) to verify it",
        }),
        (Err(e), pinned) => json!({
            "valid": false,
            "status": "invalid",
            "unpinned": pinned.is_none(),
            "code": e.code(),
            "message": e.to_string(),
        }),
    };
    // What the credential says, valid or not.
    let a = &cred.admission;
    out["node"] = json!(a.node);
    out["identity"] = json!(a.identity);
    out["round_ms"] = json!(a.round_ms);
    out["expires_at"] = json!(a.expires_at);
    println!("{out}");
    Ok(out["valid"] == true)
}
