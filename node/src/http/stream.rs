//! The live stream of an `attention` challenge, played by the node in real time.
//!
//! - `POST /v1/attention/streams` `{"challenge": <signed envelope>, "sig": <identity signature
//!   over stream_digest(challenge id)>}` checks the challenge as an answer would be checked
//!   (`Oracle::live_key`) and opens the stream once per challenge: `201 {"stream", "events",
//!   "clicks"}`; a second open is `stream_already_opened`.
//! - `GET …/{stream}/events` plays it as server-sent events: `frame` events `{"i", "png"}`
//!   (base64 PNG) at the plan's times, then one `log` event `{"answer": "<sealed log>"}`, the
//!   answer to sign. The node stamps each release as it sends it. Only one reader.
//! - `POST …/{stream}/clicks` `{"x", "y"}` (frame pixels) is stamped on receipt with the
//!   connection's RTT: `{"at": ms}`. Refused, with nothing recorded: before the first release
//!   (`nothing_released`), a second click in one event (`already_clicked`), after the end
//!   (`stream_closed`), past [`MAX_CLICKS`] (`too_many_clicks`).
//!
//! The table is in memory, bounded ([`MAX_STREAMS`], `too_many_streams`), and forgets a stream
//! a minute after its challenge's deadline.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{Extension, Path, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use base64::Engine as _;
use hco_challenges::attention::{Click, Live, Log, MAX_CLICKS, NAME};
use hco_oracle::{Digest, Sig, SignedChallenge};
use serde::Deserialize;
use serde_json::{Value, json};

use super::rtt::{ConnInfo, rtt_ms};
use super::{ApiError, AppState};

/// The codes only the stream endpoints produce.
pub const CODES: &[&str] = &[
    "unknown_stream",
    "stream_already_opened",
    "stream_too_late",
    "too_many_streams",
    "nothing_released",
    "already_clicked",
    "stream_closed",
    "too_many_clicks",
];

/// Most streams held at once.
pub const MAX_STREAMS: usize = 2048;
/// Largest body of an open request (an envelope and a signature).
const MAX_OPEN_BODY: usize = 8 * 1024;
/// Largest body of a click.
const MAX_CLICK_BODY: usize = 128;
/// How long a stream is remembered after its challenge's deadline.
const LINGER: Duration = Duration::from_secs(60);
/// The stream must be opened at least this long before the deadline beyond its own length.
const MARGIN_MS: u64 = 1500;

/// The streams of this node.
#[derive(Default)]
pub struct Streams {
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    by_token: HashMap<String, Arc<Entry>>,
    /// Challenges whose stream was opened, until they expire.
    opened: HashMap<Digest, Instant>,
}

struct Entry {
    live: Live,
    expires: Instant,
    play: Mutex<Play>,
}

#[derive(Default)]
struct Play {
    started: Option<Instant>,
    releases: Vec<u32>,
    clicks: Vec<Click>,
    /// The event of the last recorded click.
    clicked: Option<usize>,
    closed: bool,
}

fn error(code: &str, status: StatusCode, message: impl Into<String>) -> ApiError {
    let mut e = ApiError::new(code, message);
    e.set_status(status);
    e
}

fn unknown() -> ApiError {
    error(
        "unknown_stream",
        StatusCode::NOT_FOUND,
        "no such stream (it may have expired)",
    )
}

impl Streams {
    fn get(&self, token: &str) -> Result<Arc<Entry>, ApiError> {
        let table = self.table.lock().map_err(ApiError::internal)?;
        table
            .by_token
            .get(token)
            .filter(|e| e.expires > Instant::now())
            .cloned()
            .ok_or_else(unknown)
    }

    fn insert(&self, id: Digest, entry: Entry) -> Result<String, ApiError> {
        let mut table = self.table.lock().map_err(ApiError::internal)?;
        let now = Instant::now();
        table.by_token.retain(|_, e| e.expires > now);
        table.opened.retain(|_, expires| *expires > now);
        if table.opened.contains_key(&id) {
            return Err(error(
                "stream_already_opened",
                StatusCode::CONFLICT,
                "this challenge's stream was already opened; it plays once",
            ));
        }
        if table.by_token.len() >= MAX_STREAMS {
            return Err(error(
                "too_many_streams",
                StatusCode::SERVICE_UNAVAILABLE,
                "the node is playing too many streams; try again shortly",
            ));
        }
        let token = hex::encode(rand::random::<[u8; 16]>());
        table.opened.insert(id, entry.expires);
        table.by_token.insert(token.clone(), Arc::new(entry));
        Ok(token)
    }
}

/// Body of `POST /v1/attention/streams`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenBody {
    challenge: SignedChallenge,
    sig: Sig,
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8], max: usize) -> Result<T, ApiError> {
    if body.len() > max {
        return Err(error(
            "message_too_large",
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is limited to {max} bytes"),
        ));
    }
    serde_json::from_slice(body).map_err(|e| ApiError::new("malformed", e.to_string()))
}

pub async fn open(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let body: OpenBody = parse(&body, MAX_OPEN_BODY)?;
    let now = state.node.now();
    let oracle = state.node.oracle.clone();
    let (signed, sig) = (body.challenge, body.sig);
    let key = tokio::task::spawn_blocking(move || {
        oracle
            .live_key(&signed, &sig, NAME, now)
            .map(|r| r.map(|k| (k, signed)))
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(ApiError::internal)?;
    let (key, signed) = key?;
    let live = Live::from_key(&key).ok_or_else(|| ApiError::internal("not an attention key"))?;
    let left_ms = signed.challenge.deadline.saturating_sub(now);
    if left_ms < u64::from(live.plan.end_ms) + MARGIN_MS {
        return Err(error(
            "stream_too_late",
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "{left_ms} ms are left before the deadline, the stream lasts {} ms",
                live.plan.end_ms
            ),
        ));
    }
    let entry = Entry {
        live,
        expires: Instant::now() + Duration::from_millis(left_ms) + LINGER,
        play: Mutex::default(),
    };
    let token = state
        .streams
        .insert(signed.challenge.challenge_id(), entry)?;
    let base = format!("{}/{token}", hco_challenges::attention::STREAM_PATH);
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "stream": token,
            "events": format!("{base}/events"),
            "clicks": format!("{base}/clicks"),
        })),
    ))
}

fn sse(event: &str, data: &Value) -> Bytes {
    Bytes::from(format!("event: {event}\ndata: {data}\n\n"))
}

pub async fn events(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Result<Response, ApiError> {
    let entry = state.streams.get(&token)?;
    let start = {
        let mut play = entry.play.lock().map_err(ApiError::internal)?;
        if play.started.is_some() {
            return Err(error(
                "stream_already_opened",
                StatusCode::CONFLICT,
                "this stream is already being played",
            ));
        }
        let start = Instant::now();
        play.started = Some(start);
        start
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    tokio::spawn(play(entry, start, tx));
    let body = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, std::convert::Infallible>(b), rx))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-store")
        .body(Body::from_stream(body))
        .map_err(ApiError::internal)
}

/// Sends the frames at their times, stamping releases, then the sealed log.
async fn play(entry: Arc<Entry>, start: Instant, tx: tokio::sync::mpsc::Sender<Bytes>) {
    let b64 = base64::engine::general_purpose::STANDARD;
    for (i, slot) in entry.live.frames().into_iter().enumerate() {
        let e = entry.clone();
        let png = tokio::task::spawn_blocking(move || e.live.render(i))
            .await
            .unwrap_or_default();
        tokio::time::sleep_until((start + Duration::from_millis(slot.at_ms.into())).into()).await;
        let at = start.elapsed().as_millis() as u32;
        if slot.event.is_some()
            && let Ok(mut play) = entry.play.lock()
        {
            play.releases.push(at);
        }
        // A reader that went away loses the log; the stream still plays out (it is final).
        let _ = tx
            .send(sse("frame", &json!({ "i": i, "png": b64.encode(&png) })))
            .await;
    }
    let end = start + Duration::from_millis(entry.live.plan.end_ms.into());
    tokio::time::sleep_until(end.into()).await;
    let log = {
        let Ok(mut play) = entry.play.lock() else {
            return;
        };
        play.closed = true;
        Log {
            releases: play.releases.clone(),
            clicks: play.clicks.clone(),
            end: start.elapsed().as_millis() as u32,
            mac: String::new(),
        }
    };
    let answer = String::from_utf8(log.seal(&entry.live.mac_key).to_answer()).unwrap_or_default();
    let _ = tx.send(sse("log", &json!({ "answer": answer }))).await;
}

/// Body of a click.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClickBody {
    x: u32,
    y: u32,
}

pub async fn click(
    State(state): State<AppState>,
    conn: Option<Extension<ConnectInfo<ConnInfo>>>,
    Path(token): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let received = Instant::now();
    let body: ClickBody = parse(&body, MAX_CLICK_BODY)?;
    let frame = hco_challenges::attention::FRAME;
    if body.x >= frame || body.y >= frame {
        return Err(ApiError::new("malformed", "the click is outside the frame"));
    }
    let entry = state.streams.get(&token)?;
    let rtt = conn
        .map(|Extension(ConnectInfo(c))| rtt_ms(c.fd))
        .unwrap_or(0);
    let mut play = entry.play.lock().map_err(ApiError::internal)?;
    let conflict = |code: &str, message: &str| error(code, StatusCode::CONFLICT, message);
    let Some(start) = play.started else {
        return Err(conflict(
            "nothing_released",
            "the stream has not started: nothing to click yet",
        ));
    };
    if play.closed {
        return Err(conflict("stream_closed", "the stream is over"));
    }
    let event = play
        .releases
        .len()
        .checked_sub(1)
        .ok_or_else(|| conflict("nothing_released", "no letters have been shown yet"))?;
    if play.clicked == Some(event) {
        return Err(conflict(
            "already_clicked",
            "these letters were already clicked once",
        ));
    }
    if play.clicks.len() >= MAX_CLICKS {
        return Err(error(
            "too_many_clicks",
            StatusCode::TOO_MANY_REQUESTS,
            format!("the stream records at most {MAX_CLICKS} clicks"),
        ));
    }
    let at = received.saturating_duration_since(start).as_millis() as u32;
    play.clicks.push(Click {
        at,
        rtt: rtt.min(u64::from(u32::MAX)) as u32,
        x: body.x,
        y: body.y,
    });
    play.clicked = Some(event);
    Ok(Json(json!({ "at": at, "rtt": rtt })))
}
