//! Streamable HTTP for MCP at `/mcp`: turns HTTP requests into JSON-RPC messages and answers with
//! the right status codes and headers.
//!
//! The order of checks is deliberate: credentials first (nothing else is revealed to a stranger),
//! then the content type, the body size and deadline, the JSON, and then the era. A message whose
//! `_meta` or `MCP-Protocol-Version` names 2026-07-28 (or a version this server does not know) is
//! admitted by `stateless::admit` (its `_meta`, the standard headers against the body, the version,
//! the method) and answered without a session; any other message needs the session `initialize`
//! opened. The route layer has already checked Host and Origin. Every reply is JSON but two event
//! streams of live changes: `subscriptions/listen` (2026-07-28) and GET with a 2025 session.

use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::sync::mpsc;

use super::caller::{Caller, SessionView};
use super::changes::Filter;
use super::dispatch;
use super::jsonrpc::{self, Encoded, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, Message, PARSE_ERROR};
use super::listen::{self, Listener};
use super::offer::Outgoing;
use super::protocol::Version;
use super::refusal::{Refusal, json_response, text_response};
use super::session::{Cap, Evicted, SessionError};
use super::state::McpState;
use super::stateless::{self, StandardHeaders};
use crate::auth::{Connection, credentials};
use crate::context::Route;

/// The largest request body, from the reference: 64 KiB.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// How long a client may take to send its body.
pub const BODY_DEADLINE: Duration = Duration::from_secs(5);
/// The most messages in one batch (2025-03-26 sessions only). A batch is answered in one reply held
/// in memory, so without a bound one small body could ask for hundreds of searches at once.
pub const MAX_BATCH_ITEMS: usize = 32;
/// The reply of a batch stops growing past this many bytes: the requests after that point are not
/// run, and each is answered with an error saying to send it again on its own.
pub const MAX_BATCH_REPLY_BYTES: usize = 1024 * 1024;

/// How often a quiet event stream sends a comment line.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";

/// POST /mcp: one message or (in a 2025-03-26 session) a batch.
///
/// Takes the whole request rather than a `HeaderMap` extractor, which would copy every header.
pub async fn post(
    State(state): State<McpState>,
    Extension(route): Extension<Arc<Route>>,
    request: Request,
) -> Result<Response, Refusal> {
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    let connection = authenticate(&state, &route, headers).await?;
    if !is_json(headers) {
        return Err(Refusal::http(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            INVALID_REQUEST,
            "Content-Type must be application/json",
        ));
    }
    let bytes = read_body(headers, body).await?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        Refusal::http(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            format!("the body is not valid JSON: {e}"),
        )
    })?;
    let header_version = headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok());
    let no_params = serde_json::Map::new();
    let single = match value {
        Value::Array(_) if stateless::is_stateless(&no_params, header_version) => {
            return Err(Refusal::http(
                StatusCode::BAD_REQUEST,
                INVALID_REQUEST,
                "JSON-RPC batches are not taken at 2026-07-28; send one message per request",
            ));
        }
        Value::Array(items) => return batch(&state, &resume(&state, headers, connection)?, items).await,
        single => jsonrpc::classify(single),
    };
    let params = match &single {
        Ok(Message::Request { params, .. }) => params,
        _ => &no_params,
    };
    if stateless::is_stateless(params, header_version) {
        return Ok(answer_stateless(&state, headers, connection, single).await);
    }
    if let Ok(Message::Request { id, method, params }) = &single
        && method == "initialize"
    {
        return initialize(&state, &connection, id.clone(), params);
    }
    let caller = resume(&state, headers, connection)?;
    Ok(match single {
        Err((id, why)) => json_response(StatusCode::BAD_REQUEST, jsonrpc::error(id, INVALID_REQUEST, why)),
        Ok(Message::Notification { .. }) => StatusCode::ACCEPTED.into_response(),
        Ok(Message::Response(response)) => {
            // The answer to a request this server sent within the session, or nothing awaited.
            if let Some(session) = &caller.session {
                state.pending.deliver(&session.id, &response);
            }
            StatusCode::ACCEPTED.into_response()
        }
        Ok(Message::Request { id, method, params }) => respond(&state, caller, id, method, params).await,
    })
}

/// Answers one request: as one JSON body, or (when the offer streams it) as an event stream of the
/// messages sent before the answer (progress, log messages, requests to the client) and then the
/// answer, which ends the stream.
async fn respond(
    state: &McpState,
    caller: Caller,
    id: Value,
    method: String,
    params: serde_json::Map<String, Value>,
) -> Response {
    if !state.offer().streams(&method, &params) {
        let reply = dispatch::request(state, &caller, id, &method, params, &Outgoing::none()).await;
        // 2026-07-28 answers a request that needs a capability its client did not declare with 400.
        let status = match reply.error_code() {
            Some(stateless::MISSING_CAPABILITY) if caller.version.is_stateless() => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        };
        return text_response(status, reply.into_string());
    }
    let (events, receiver) = mpsc::channel(16);
    let session = caller
        .session
        .as_ref()
        .map(|session| (state.pending.clone(), session.id.clone()));
    let state = state.clone();
    tokio::spawn(async move {
        let out = Outgoing::stream(events.clone(), session);
        let reply = dispatch::request(&state, &caller, id, &method, params, &out).await;
        let _ = events.send(reply.into_string()).await;
    });
    event_stream(receiver)
}

/// Answers a message of the stateless era: no session is looked up or minted, and an
/// `Mcp-Session-Id` it carries is ignored.
async fn answer_stateless(
    state: &McpState,
    headers: &HeaderMap,
    connection: Arc<Connection>,
    message: Result<Message, (Value, String)>,
) -> Response {
    let (id, method, params) = match message {
        Err((id, why)) => return json_response(StatusCode::BAD_REQUEST, jsonrpc::error(id, INVALID_REQUEST, why)),
        Ok(Message::Notification { .. }) => return StatusCode::ACCEPTED.into_response(),
        Ok(Message::Response(_)) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                jsonrpc::error(
                    Value::Null,
                    INVALID_REQUEST,
                    "a 2026-07-28 client sends requests and notifications only: this server asks nothing to answer",
                ),
            );
        }
        Ok(Message::Request { id, method, params }) => (id, method, params),
    };
    let header = |name: &str| headers.get(name).map(|v| v.to_str().map_err(|_| ()));
    let sent = StandardHeaders {
        version: header(VERSION_HEADER),
        method: header(METHOD_HEADER),
        name: header(NAME_HEADER),
    };
    let (version, capabilities) = match stateless::admit(&method, &params, Some(&sent)) {
        Ok((version, meta)) => (version, meta.capabilities),
        Err(refused) => return json_response(refused.status(), refused.reply(id)),
    };
    if method == "subscriptions/listen" {
        return listen(state, &connection, id, &params).await;
    }
    let caller = Caller {
        connection,
        version,
        capabilities,
        session: None,
    };
    respond(state, caller, id, method, params).await
}

/// `subscriptions/listen`: an event stream that opens with its acknowledgment, carries the
/// notifications its filter asks for (each tagged with the request's id), keeps itself alive with
/// comment lines, and ends with its result when the server ends it.
async fn listen(
    state: &McpState,
    connection: &Connection,
    id: Value,
    params: &serde_json::Map<String, Value>,
) -> Response {
    let filter = match listen::requested(params) {
        Ok(filter) => filter,
        Err(message) => return json_response(StatusCode::BAD_REQUEST, jsonrpc::error(id, INVALID_PARAMS, message)),
    };
    let held = match state.streams.open(&connection.id) {
        Ok(held) => held,
        Err(why) => return json_response(StatusCode::SERVICE_UNAVAILABLE, jsonrpc::error(id, INTERNAL_ERROR, why)),
    };
    let Ok(listener) = Listener::start(state.clone(), connection.id.clone(), filter, Some(id.clone())).await else {
        let why = "the connection could not be read; try again";
        return json_response(StatusCode::SERVICE_UNAVAILABLE, jsonrpc::error(id, INTERNAL_ERROR, why));
    };
    let (out, events) = mpsc::channel(16);
    listener.spawn(held, out);
    event_stream(events)
}

/// GET /mcp: a 2025 session's stream of list changes (tools, prompts, resources), for as long as
/// the client reads it and the session's connection lasts.
pub async fn get(
    State(state): State<McpState>,
    Extension(route): Extension<Arc<Route>>,
    headers: HeaderMap,
) -> Result<Response, Refusal> {
    let connection = authenticate(&state, &route, &headers).await?;
    let accepts_events = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(',').any(|media| media.trim().starts_with("text/event-stream")));
    if !accepts_events {
        return Err(Refusal::http(
            StatusCode::NOT_ACCEPTABLE,
            INVALID_REQUEST,
            "GET opens an event stream: send Accept: text/event-stream",
        ));
    }
    let caller = resume(&state, &headers, connection)?;
    let unavailable = |why| Refusal::http(StatusCode::SERVICE_UNAVAILABLE, INTERNAL_ERROR, why);
    let held = state.streams.open(&caller.connection.id).map_err(unavailable)?;
    let listener = Listener::start(state.clone(), caller.connection.id.clone(), Filter::lists(), None)
        .await
        .map_err(|_| unavailable("the connection could not be read; try again"))?;
    let (out, events) = mpsc::channel(16);
    listener.spawn(held, out);
    Ok(event_stream(events))
}

/// An event stream of the JSON messages `events` yields, one event each, with a comment line every
/// 15 seconds so that neither end nor a proxy takes the quiet for a dead connection.
fn event_stream(events: mpsc::Receiver<String>) -> Response {
    let stream = futures_util::stream::unfold(events, |mut events| async move {
        let text = events.recv().await?;
        Some((Ok::<_, std::convert::Infallible>(Event::default().data(text)), events))
    });
    let mut response = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// DELETE /mcp: ends the caller's session.
pub async fn delete(
    State(state): State<McpState>,
    Extension(route): Extension<Arc<Route>>,
    headers: HeaderMap,
) -> Result<StatusCode, Refusal> {
    let connection = authenticate(&state, &route, &headers).await?;
    let Some(id) = session_header(&headers) else {
        return Err(Refusal::http(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "DELETE needs the Mcp-Session-Id header of the session to end",
        ));
    };
    state
        .sessions
        .end(&id, &connection.id)
        .map(|()| StatusCode::NO_CONTENT)
        .map_err(|e| Refusal::http(StatusCode::NOT_FOUND, INVALID_REQUEST, e.to_string()))
}

/// Any other method on /mcp.
pub async fn method_not_allowed() -> Response {
    let mut response = Refusal::http(
        StatusCode::METHOD_NOT_ALLOWED,
        INVALID_REQUEST,
        "use POST for messages, GET for a session's event stream and DELETE to end a session",
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    response
}

fn initialize(
    state: &McpState,
    connection: &Connection,
    id: Value,
    params: &serde_json::Map<String, Value>,
) -> Result<Response, Refusal> {
    let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
        return Ok(json_response(
            StatusCode::OK,
            jsonrpc::error(id, INVALID_PARAMS, "initialize needs params.protocolVersion"),
        ));
    };
    let version = Version::negotiate(requested);
    let session = match state
        .sessions
        .create(&connection.id, &connection.label, version, connection.grant.generation)
    {
        Ok(opened) => {
            if let Some(evicted) = &opened.evicted {
                log_eviction(evicted, connection);
            }
            opened.id
        }
        Err(e) => {
            return Err(Refusal::http(
                StatusCode::SERVICE_UNAVAILABLE,
                INVALID_REQUEST,
                e.to_string(),
            ));
        }
    };
    let mut response = json_response(
        StatusCode::OK,
        jsonrpc::result(id, dispatch::initialized(state.offer(), version)),
    );
    if let Ok(value) = HeaderValue::from_str(&session) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    Ok(response)
}

/// Says in the server's log which session made room for a new one: a client whose session ended
/// this way sees a 404 and starts over, and the owner can tell why from the log.
fn log_eviction(evicted: &Evicted, opener: &Connection) {
    match evicted.cap {
        Cap::Credential => tracing::info!(
            connection = %evicted.label,
            "a new session ended this connection's least recently used one: it was at its limit of open sessions (clients that never end their sessions reach it)"
        ),
        Cap::Server => tracing::info!(
            connection = %evicted.label,
            opened_by = %opener.label,
            "the server's sessions are full: a new session ended the least recently used one of the connection holding the most"
        ),
    }
}

/// Finds the caller's session and checks the protocol version header against it.
fn resume(state: &McpState, headers: &HeaderMap, connection: Arc<Connection>) -> Result<Caller, Refusal> {
    let Some(id) = session_header(headers) else {
        return Err(Refusal::http(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "missing Mcp-Session-Id header: call initialize first and send the id it returns",
        ));
    };
    let session = state
        .sessions
        .touch(&id, &connection.id)
        .map_err(|e: SessionError| Refusal::http(StatusCode::NOT_FOUND, INVALID_REQUEST, e.to_string()))?;
    // Only an unsupported version is refused. A session version other than the negotiated one is
    // not an error (the specification refuses only invalid or unsupported versions, and the
    // conformance suite sends 2025-03-26 in any session); the session keeps answering in its
    // negotiated version. (A version that is not a session version made the message stateless.)
    if let Some(sent) = headers.get(VERSION_HEADER) {
        let sent = sent.to_str().unwrap_or("");
        if Version::session(sent).is_none() {
            return Err(Refusal::http(
                StatusCode::BAD_REQUEST,
                INVALID_REQUEST,
                format!(
                    "unsupported MCP-Protocol-Version \"{sent}\" in a session; sessions speak 2025-03-26, 2025-06-18 and 2025-11-25"
                ),
            ));
        }
    }
    Ok(Caller {
        connection,
        version: session.version,
        capabilities: serde_json::Map::new(),
        session: Some(SessionView {
            id,
            listed_generation: session.listed_generation,
        }),
    })
}

async fn batch(state: &McpState, caller: &Caller, items: Vec<Value>) -> Result<Response, Refusal> {
    if !caller.version.allows_batches() {
        return Err(Refusal::http(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            format!(
                "JSON-RPC batches are not allowed in protocol version {}; send one message per request",
                caller.version.as_str()
            ),
        ));
    }
    if items.is_empty() {
        return Err(Refusal::http(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "an empty batch is not a request",
        ));
    }
    if items.len() > MAX_BATCH_ITEMS {
        return Err(Refusal::http(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            format!(
                "a batch holds at most {MAX_BATCH_ITEMS} messages; this one has {}: send it in parts",
                items.len()
            ),
        ));
    }
    let mut replies = Vec::new();
    let mut reply_bytes = 0;
    for item in items {
        match jsonrpc::classify(item) {
            Err((id, why)) => replies.push(Encoded::value(&jsonrpc::error(id, INVALID_REQUEST, why))),
            Ok(Message::Notification { .. } | Message::Response(_)) => {}
            Ok(Message::Request { id, .. }) if reply_bytes >= MAX_BATCH_REPLY_BYTES => {
                replies.push(Encoded::value(&jsonrpc::error(
                    id,
                    jsonrpc::INTERNAL_ERROR,
                    format!(
                        "not run: this batch's reply reached {MAX_BATCH_REPLY_BYTES} bytes before this request; send it again on its own"
                    ),
                )));
            }
            Ok(Message::Request { id, method, params }) => {
                let reply = dispatch::request(state, caller, id, &method, params, &Outgoing::none()).await;
                reply_bytes += reply.len();
                replies.push(reply);
            }
        }
    }
    Ok(if replies.is_empty() {
        StatusCode::ACCEPTED.into_response()
    } else {
        text_response(StatusCode::OK, Encoded::batch(&replies))
    })
}

/// The connection behind the bearer credential, or a 401 that tells the client where to sign in.
async fn authenticate(state: &McpState, route: &Route, headers: &HeaderMap) -> Result<Arc<Connection>, Refusal> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    let failed = |error: String| {
        tracing::error!(%error, "the credential check failed");
        Refusal::http(
            StatusCode::SERVICE_UNAVAILABLE,
            jsonrpc::INTERNAL_ERROR,
            "the journal could not check credentials; try again",
        )
    };
    let connection = match bearer {
        Some(token) => {
            let at = credentials::Presented {
                route: route.name,
                accepts_keys: route.accepts_keys(),
            };
            credentials::check(&state.credentials, &state.journal.db, at, token)
                .await
                .map_err(|e| failed(e.to_string()))?
        }
        None => None,
    };
    connection.ok_or_else(|| Refusal::Unauthorized {
        origin: route.origin(headers),
        presented: bearer.is_some(),
    })
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

async fn read_body(headers: &HeaderMap, body: Body) -> Result<Bytes, Refusal> {
    let too_large = || {
        Refusal::http(
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            format!("the body is larger than {MAX_BODY_BYTES} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(too_large());
    }
    let collect = axum::body::to_bytes(body, MAX_BODY_BYTES);
    let mut collect = std::pin::pin!(collect);
    // A small request's body usually arrives with its head: then no timer is armed for it (arming
    // and clearing one was a hundredth of a `ping`).
    let first = std::future::poll_fn(|cx| Poll::Ready(collect.as_mut().poll(cx))).await;
    let collected = match first {
        Poll::Ready(collected) => Ok(collected),
        Poll::Pending => tokio::time::timeout(BODY_DEADLINE, collect).await,
    };
    match collected {
        Err(_) => Err(Refusal::http(
            StatusCode::REQUEST_TIMEOUT,
            INVALID_REQUEST,
            "the body did not arrive in time",
        )),
        Ok(Err(_)) => Err(too_large()),
        Ok(Ok(bytes)) => Ok(bytes),
    }
}

fn session_header(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}
