//! The OpenAPI 3.1 document of the gateway, served at `/openapi.json`.

use axum::Json;
use serde_json::{Value, json};

fn error_response(description: &str) -> Value {
    json!({ "description": description, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } })
}

fn ok(description: &str, schema: &str) -> Value {
    json!({ "description": description, "content": { "application/json": { "schema": { "$ref": format!("#/components/schemas/{schema}") } } } })
}

fn hex(len: usize) -> Value {
    json!({ "type": "string", "pattern": format!("^[0-9a-f]{{{}}}$", 2 * len) })
}

fn path_param(name: &str, schema: Value) -> Value {
    json!({ "name": name, "in": "path", "required": true, "schema": schema })
}

/// Codes only the gateway produces.
pub const GATEWAY_CODES: &[&str] = &[
    "bad_request",
    "not_found",
    "no_certificate",
    "not_active",
    "not_linked",
    "issuer_unreachable",
    "overloaded",
    "internal",
    "verdict_withheld",
];

/// The document.
pub fn spec() -> Value {
    let t = path_param("t", json!({ "type": "integer", "minimum": 0 }));
    let t_links = t.clone();
    // Every code a client can see: the core's table, the agent game's and the gateway's own.
    let mut codes: Vec<&str> = hco_oracle::Reason::all_codes()
        .chain(hco_oracle::admission_game::GameError::CODES.iter().copied())
        .chain(GATEWAY_CODES.iter().copied())
        .chain(super::stream::CODES.iter().copied())
        .collect();
    codes.sort_unstable();
    codes.dedup();
    let id = path_param("id", hex(32));
    let errors = |extra: &[(&str, &str)]| {
        let mut m = serde_json::Map::new();
        m.insert(
            "400".into(),
            error_response("malformed request (code: malformed, bad_identity_signature, …)"),
        );
        for (status, what) in extra {
            m.insert((*status).into(), error_response(what));
        }
        m.insert("500".into(), error_response("internal failure"));
        m
    };
    let mut register = errors(&[
        ("409", "class_conflict"),
        (
            "422",
            "registration_from_future, registration_proof_missing, registration_proof_insufficient, registration_proof_stale",
        ),
    ]);
    register.insert("201".into(), ok("registered (idempotent)", "Registered"));
    let mut challenge = errors(&[
        ("404", "unknown_identity"),
        (
            "409",
            "out_of_sequence, previous_step_unanswered, steps_complete, no_tries_left, not_assigned_issuer",
        ),
        (
            "422",
            "wrong_window, outside_slot, before_genesis, no_family_for_class",
        ),
        (
            "425",
            "step_not_open (the message and `opens_at` say when to ask again)",
        ),
        ("503", "issuer_unreachable"),
    ]);
    challenge.insert(
        "200".into(),
        ok(
            "the challenge (the same on a repeated request)",
            "Challenge",
        ),
    );
    let mut respond = errors(&[
        ("404", "unknown_identity, unknown_challenge"),
        (
            "409",
            "already_answered (the first answer to a challenge, right or wrong, is final)",
        ),
        (
            "422",
            "challenge_expired, wrong_window, outside_slot, wrong_class, too_fast, answer_mismatch, … (too_fast and the family's codes are final answers)",
        ),
        ("503", "issuer_unreachable, overloaded"),
    ]);
    respond.insert(
        "200".into(),
        ok("accepted and durable at the issuer", "Verdict"),
    );
    respond.insert(
        "202".into(),
        error_response(
            "verdict_withheld: an answer to a per-window narrative_chain challenge on a node that withholds its verdicts ([agent] withhold_verdicts): recorded, right or wrong alike; `opens_at` is the window's close, after which the certificate and the membership proof tell",
        ),
    );
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Human Challenge Oracle node",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Identity registration, per-window challenges and responses, window certificates and membership proofs. Every error is {code, message} with a stable code. Byte strings are lower-case hex. Signed bytes are documented in the oracle crate (module sign)."
        },
        "paths": {
            "/v1/identities": { "post": { "summary": "Register an identity (self-signed)", "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/SignedRegister" } } } }, "responses": register } },
            "/v1/identities/{id}": { "get": { "summary": "Lifecycle status of an identity", "parameters": [id.clone()], "responses": { "200": ok("status", "IdentityStatus"), "404": error_response("unknown_identity") } } },
            "/v1/identities/{id}/passkeys": {
                "get": { "summary": "Passkeys the identity enrolled for the presence family, with the relying-party id and user-verification policy", "parameters": [id.clone()], "responses": { "200": { "description": "passkeys" } } },
                "post": { "summary": "Enrol a passkey (WebAuthn registration signed by the identity)", "parameters": [id.clone()], "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/SignedEnrolment" } } } }, "responses": { "201": { "description": "the enrolled passkey: credential_id, counter" }, "404": error_response("unknown_identity"), "422": error_response("invalid_enrolment, wrong_origin, attestation_untrusted, aaguid_not_allowed, aaguid_not_attested, enrolment_stale, too_many_passkeys, wrong_class, bad_identity_signature") } }
            },
            "/v1/identities/{id}/passkeys/options": { "get": { "summary": "navigator.credentials.create() options; the WebAuthn challenge is derived from (id, created_at), so the node keeps no state", "parameters": [id.clone(), { "name": "created_at", "in": "query", "required": true, "schema": { "type": "integer" } }], "responses": { "200": { "description": "CreationChallengeResponse ({publicKey})" } } } },
            "/v1/challenges": { "post": { "summary": "Request challenge (id, t, j); forwarded to the assigned issuer", "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/SignedRequest" } } } }, "responses": challenge } },
            "/v1/challenges/stage": { "post": { "summary": "Answer the first stages of a multi-stage challenge (answer bytes `stage {k}:{partial answer}`, identity-signed) at its issuer; the next stage's prompt. A wrong partial answer is final", "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Response" } } } }, "responses": { "200": ok("the next stage", "Stage"), "400": error_response("malformed, no_such_stage, bad_identity_signature, answer_too_large"), "409": error_response("already_answered, not_assigned_issuer"), "422": error_response("answer_mismatch, invalid_answer_format, challenge_expired") } } },
            "/v1/responses": { "post": { "summary": "Answer a challenge; forwarded to its issuer", "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Response" } } } }, "responses": respond } },
            "/v1/params": { "get": { "summary": "Network parameters and their digest", "responses": { "200": ok("parameters", "Params") } } },
            "/v1/windows/current": { "get": { "summary": "The current window and the caller's slot", "parameters": [{ "name": "id", "in": "query", "required": false, "schema": hex(32) }], "responses": { "200": ok("the window, the slot and, with `id`, the identity's progress", "CurrentWindow") } } },
            "/v1/windows/{t}": { "get": { "summary": "A window: times, summaries, certificate state", "parameters": [t.clone()], "responses": { "200": ok("the window as this member saw it close", "Window") } } },
            "/v1/windows/{t}/certificate": { "get": { "summary": "The quorum certificate of a window", "parameters": [t.clone()], "responses": { "200": ok("certificate", "WindowCertificate"), "404": error_response("no_certificate") } } },
            "/v1/windows/{t}/proofs/{id}": { "get": { "summary": "Certificate and membership proof of an identity", "parameters": [t.clone(), id], "responses": { "200": ok("proof", "Proof"), "404": error_response("not_active") } } },
            "/v1/windows/{t}/reveals": { "get": { "summary": "Window secrets revealed by issuers", "parameters": [t], "responses": { "200": { "description": "signed reveals", "content": { "application/json": { "schema": { "type": "array", "items": { "$ref": "#/components/schemas/SignedReveal" } } } } } } } },
            "/v1/evidence": { "get": { "summary": "Evidence this node holds against committee members (failed audits, broken commitments, double reveals or summaries): the accused member's own signed messages", "responses": { "200": ok("evidence by window, with the accused member and kind", "EvidenceList") } } },
            "/": { "get": { "summary": "The page a person uses each window (HTML)", "responses": { "200": { "description": "page", "content": { "text/html": {} } } } } },
            "/static/{file}": { "get": { "summary": "The page's scripts and styles", "parameters": [path_param("file", json!({ "type": "string" }))], "responses": { "200": { "description": "asset" }, "404": error_response("not_found") } } },
            "/v1/agent/sessions": { "post": { "summary": "Start an agent-admission session (round 1) as a registered agent identity, signed by it", "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/SessionStart" } } } }, "responses": { "201": { "description": "round 1 with its answer endpoint" }, "400": error_response("malformed"), "404": error_response("unknown_identity"), "422": error_response("wrong_class, class_conflict, wrong_window, bad_identity_signature"), "429": error_response("too_many_sessions, identity_session_limit"), "503": error_response("overloaded, game_busy, game_sets_spent, game_not_here, corpus_exhausted") } } },
            "/v1/agent/sessions/{session}/rounds/{token}": { "post": { "summary": "Answer the current round at the endpoint the previous reply named", "parameters": [path_param("session", hex(32)), path_param("token", hex(32))], "responses": { "200": { "description": "the next round, or the admission credential" }, "404": error_response("unknown_session, wrong_endpoint"), "409": error_response("session_closed"), "422": error_response("round_expired, session_expired, answer_mismatch, invalid_answer_format") } } },
            "/v1/attention/streams": { "post": { "summary": "Open the live stream of an attention challenge (once per challenge); the identity signs BLAKE3-derive(\"hco live stream v1\", len ‖ challenge id)", "requestBody": { "required": true, "content": { "application/json": { "schema": { "type": "object", "required": ["challenge", "sig"], "properties": { "challenge": { "$ref": "#/components/schemas/SignedChallenge" }, "sig": hex(64) } } } } }, "responses": { "201": { "description": "{stream, events, clicks}: the paths to read and to click" }, "400": error_response("malformed, bad_identity_signature"), "404": error_response("unknown_challenge, unknown_identity"), "409": error_response("stream_already_opened, already_answered"), "413": error_response("message_too_large"), "422": error_response("challenge_expired, stream_too_late, unknown_family"), "503": error_response("too_many_streams") } } },
            "/v1/attention/streams/{token}/events": { "get": { "summary": "Play the stream as server-sent events: `frame` {i, png (base64)} at the node's times, then `log` {answer}: the sealed log to sign as the answer", "parameters": [path_param("token", hex(16))], "responses": { "200": { "description": "event stream", "content": { "text/event-stream": {} } }, "404": error_response("unknown_stream"), "409": error_response("stream_already_opened") } } },
            "/v1/attention/streams/{token}/clicks": { "post": { "summary": "A click {x, y} in frame pixels, timed by the node on receipt (one per flash)", "parameters": [path_param("token", hex(16))], "requestBody": { "required": true, "content": { "application/json": { "schema": { "type": "object", "required": ["x", "y"], "properties": { "x": { "type": "integer" }, "y": { "type": "integer" } } } } } }, "responses": { "200": { "description": "{at, rtt}: the receipt time (ms after the stream started) and the RTT recorded" }, "400": error_response("malformed"), "404": error_response("unknown_stream"), "409": error_response("nothing_released, already_clicked, stream_closed"), "413": error_response("message_too_large"), "429": error_response("too_many_clicks") } } },
            "/healthz": { "get": { "summary": "Liveness", "responses": { "200": { "description": "ok" } } } },
            "/openapi.json": { "get": { "summary": "This document", "responses": { "200": { "description": "OpenAPI" } } } }
        },
        "components": { "schemas": {
        } }
    });
    // Account links, added apart (one literal of the whole document passes `json!`'s
    // recursion limit).
    let links = json!({
        "paths": {
            "/v1/links": { "post": { "summary": "Link an EVM account to an identity from a window on (this one until one relay round after it closes, or one of the next 4): the statement's text signed by the identity (ed25519) and by the account (EIP-191 personal_sign); relayed to the committee with this member's receipt", "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/SignedLink" } } } }, "responses": { "201": { "description": "recorded: {new, account, id, from_window}" }, "200": { "description": "already held" }, "404": error_response("unknown_identity"), "409": error_response("too_many_links, link_outranked"), "422": error_response("bad_link, wrong_window") } } },
            "/v1/windows/{t}/links/{account}": { "get": { "summary": "The certificate of a window, an account's link in it and the membership proof of the identity it is linked to", "parameters": [t_links, path_param("account", json!({ "type": "string", "description": "CAIP-10, e.g. eip155:1:0x…" }))], "responses": { "200": ok("linked proof", "LinkedProof"), "400": error_response("malformed"), "404": error_response("not_linked") } } },
        },
    });
    for (section, into) in [("paths", "/paths")] {
        if let (Some(add), Some(Value::Object(map))) =
            (links[section].as_object(), doc.pointer_mut(into))
        {
            map.extend(add.clone());
        }
    }
    if let Some(Value::Object(map)) = doc.pointer_mut("/components/schemas") {
        map.extend(generated_schemas());
    }
    // The type says a string; the document lists every code a client can see.
    if let Some(code) = doc.pointer_mut("/components/schemas/Error/properties/code") {
        code["enum"] = json!(codes);
    }
    doc
}

/// The schemas of what the node serves and takes that the types define themselves (JSON Schema
/// 2020-12, which OpenAPI 3.1 uses), generated from those types: the parameters, the
/// certificate, the proof, the link statement and the linked proof; the registration, the
/// passkey enrolment, the challenge request, the challenge, a stage, the response and the
/// verdict; the current window, a closed window, its reveals and the evidence; what a
/// registration returns and an identity's status; an
/// agent session's start;
/// the error body; with every type they use.
pub fn generated_schemas() -> serde_json::Map<String, Value> {
    use hco_oracle::link::{LinkProof, SignedLink};
    use schemars::generate::SchemaSettings;

    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "#/components/schemas/".into();
    let mut generator = settings.into_generator();
    generator.subschema_for::<crate::api::ProofView>();
    generator.subschema_for::<crate::api::ParamsView>();
    generator.subschema_for::<hco_oracle::WindowCertificate>();
    generator.subschema_for::<SignedLink>();
    generator.subschema_for::<LinkProof>();
    generator.subschema_for::<hco_oracle::LinkedProof>();
    generator.subschema_for::<hco_oracle::SignedRegister>();
    generator.subschema_for::<hco_oracle::SignedEnrolment>();
    generator.subschema_for::<hco_oracle::SignedRequest>();
    generator.subschema_for::<crate::api::ChallengeView>();
    generator.subschema_for::<crate::api::StageView>();
    generator.subschema_for::<hco_oracle::Response>();
    generator.subschema_for::<crate::api::VerdictView>();
    generator.subschema_for::<crate::api::CurrentWindowView>();
    generator.subschema_for::<crate::api::WindowView>();
    generator.subschema_for::<crate::api::EvidenceListView>();
    generator.subschema_for::<hco_oracle::SignedReveal>();
    generator.subschema_for::<crate::api::RegisteredView>();
    generator.subschema_for::<crate::api::IdentityStatusView>();
    generator.subschema_for::<hco_oracle::SessionStart>();
    generator.subschema_for::<super::ApiError>();
    generator.take_definitions(true)
}

/// `GET /openapi.json`
pub async fn document() -> Json<Value> {
    Json(spec())
}
