//! MCP over standard input and output, for an agent on the same computer (`journal mcp stdio
//! --agent LABEL`): one JSON-RPC message a line in, one answer a line out, as the connection the
//! label names. Its grant, write mode, identity and audit trail are the connection's, read again
//! for every request exactly as HTTP reads a credential's, so the owner's changes (a narrower grant,
//! a revoked connection) take effect at the next call. The same dispatch answers as over HTTP; only
//! the framing differs. A line whose `_meta` names 2026-07-28 is answered on its own (that era has
//! no handshake; `server/discover` is how a client that speaks both finds out); `initialize` opens
//! the process's 2025 session. Nothing but answers is written to standard output: logs go to
//! standard error.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use serde_json::Value;

use super::caller::{Caller, SessionView};
use super::changes::Filter;
use super::dispatch;
use super::jsonrpc::{self, Encoded, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, Message, PARSE_ERROR};
use super::listen::{self, Listener};
use super::offer::Outgoing;
use super::protocol::Version;
use super::state::McpState;
use super::stateless;
use crate::auth::{Connection, connections};

/// The longest message line, as the longest HTTP body.
pub const MAX_LINE_BYTES: usize = super::transport::MAX_BODY_BYTES;

/// Why serving over stdio stopped early.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    #[error("the connection \"{0}\" was removed; the owner can make a new one with `journal mcp token create`")]
    Removed(String),
    #[error("standard input or output failed: {0}")]
    Io(#[from] std::io::Error),
}

/// One line read from the input.
enum Line {
    /// A whole line (without its newline).
    Whole,
    /// A line longer than `MAX_LINE_BYTES`, read to its end and dropped.
    TooLong,
    End,
}

/// Serves the connection `connection` (as loaded when the process started) until the input ends.
/// Answers go out in the order their lines came in; notifications of live changes go out between
/// them as they happen.
pub async fn serve<R, W>(state: &McpState, connection: &Connection, input: R, mut output: W) -> Result<(), StdioError>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (notes, mut notifications) = mpsc::channel(64);
    let mut server = Server {
        state,
        connection_id: connection.id.clone(),
        label: connection.label.clone(),
        session: None,
        notes,
        listeners: HashMap::new(),
        session_listener: None,
    };
    // The read is a future kept across turns of the loop (a notification may come while a line is
    // half read), which owns the input and hands it back with the line.
    let mut reading = Box::pin(next_line(input));
    let result = loop {
        let reply = tokio::select! {
            (input, read, line) = &mut reading => {
                let reply = match read {
                    Err(error) => break Err(StdioError::Io(error)),
                    Ok(Line::End) => break Ok(()),
                    Ok(Line::TooLong) => Some(Reply::go_on(jsonrpc::error(
                        Value::Null,
                        INVALID_REQUEST,
                        format!("a message may be at most {MAX_LINE_BYTES} bytes on one line"),
                    ))),
                    Ok(Line::Whole) => server.answer(&line).await,
                };
                reading = Box::pin(next_line(input));
                reply
            }
            Some(note) = notifications.recv() => Some(Reply { text: note, stop: false }),
        };
        let Some(reply) = reply else { continue };
        output.write_all(reply.text.as_bytes()).await?;
        output.write_all(b"\n").await?;
        output.flush().await?;
        if reply.stop {
            break Err(StdioError::Removed(server.label.clone()));
        }
    };
    server.stop_listening();
    if let Some((id, _)) = &server.session {
        let _ = state.sessions.end(id, &server.connection_id);
    }
    result
}

/// Reads the next line of `input`, and hands `input` back with it.
async fn next_line<R: AsyncBufRead + Unpin>(mut input: R) -> (R, std::io::Result<Line>, Vec<u8>) {
    let mut line = Vec::new();
    let read = read_line(&mut input, &mut line).await;
    (input, read, line)
}

/// An answer, and whether serving stops after it.
struct Reply {
    text: String,
    stop: bool,
}

impl Reply {
    fn go_on(value: Value) -> Reply {
        Reply {
            text: value.to_string(),
            stop: false,
        }
    }
}

struct Server<'a> {
    state: &'a McpState,
    connection_id: String,
    label: String,
    /// The session `initialize` opened, and its negotiated version.
    session: Option<(String, Version)>,
    /// Where listeners send their notifications, to go out between answers.
    notes: mpsc::Sender<String>,
    /// The `subscriptions/listen` requests open now, by their id (as JSON text).
    listeners: HashMap<String, JoinHandle<()>>,
    /// The list changes of the session `initialize` opened.
    session_listener: Option<JoinHandle<()>>,
}

impl Server<'_> {
    /// Starts a listener for `filter` (its first view taken before this returns, so that no change
    /// after the answer is missed); the subscription's messages go out tagged with its id.
    async fn listen(&self, filter: Filter, subscription: Option<Value>) -> Result<JoinHandle<()>, &'static str> {
        let held = self.state.streams.open(&self.connection_id)?;
        let listener = Listener::start(self.state.clone(), self.connection_id.clone(), filter, subscription)
            .await
            .map_err(|_| "the connection could not be read; try again")?;
        Ok(listener.spawn(held, self.notes.clone()))
    }

    /// Ends every listener (the input ended).
    fn stop_listening(&mut self) {
        for (_, listener) in self.listeners.drain() {
            listener.abort();
        }
        if let Some(listener) = self.session_listener.take() {
            listener.abort();
        }
    }

    /// `subscriptions/listen` over stdio: the acknowledgment and the notifications come from the
    /// listener; nothing is answered now.
    async fn subscribe(&mut self, id: Value, params: &serde_json::Map<String, Value>) -> Option<Reply> {
        let filter = match listen::requested(params) {
            Ok(filter) => filter,
            Err(message) => return Some(Reply::go_on(jsonrpc::error(id, INVALID_PARAMS, message))),
        };
        let key = id.to_string();
        if self.listeners.get(&key).is_some_and(|l| !l.is_finished()) {
            return Some(Reply::go_on(jsonrpc::error(
                id,
                INVALID_REQUEST,
                "a subscription with this id is open; use a new id",
            )));
        }
        match self.listen(filter, Some(id.clone())).await {
            Ok(listener) => {
                self.listeners.retain(|_, l| !l.is_finished());
                self.listeners.insert(key, listener);
                None
            }
            Err(why) => Some(Reply::go_on(jsonrpc::error(id, INTERNAL_ERROR, why))),
        }
    }

    /// The answer to one line: None for a notification, a response or an empty line.
    async fn answer(&mut self, line: &[u8]) -> Option<Reply> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(e) => {
                return Some(Reply::go_on(jsonrpc::error(
                    Value::Null,
                    PARSE_ERROR,
                    format!("the line is not valid JSON: {e}"),
                )));
            }
        };
        if value.is_array() {
            return Some(Reply::go_on(jsonrpc::error(
                Value::Null,
                INVALID_REQUEST,
                "send one message a line: batches are not taken over stdio",
            )));
        }
        let (id, method, params) = match jsonrpc::classify(value) {
            Err((id, why)) => return Some(Reply::go_on(jsonrpc::error(id, INVALID_REQUEST, why))),
            Ok(Message::Notification { method, params }) => {
                // The client ends a subscription by cancelling its listen request.
                if method == "notifications/cancelled"
                    && let Some(request) = params.get("requestId")
                    && let Some(listener) = self.listeners.remove(&request.to_string())
                {
                    listener.abort();
                }
                return None;
            }
            Ok(Message::Response(_)) => return None,
            Ok(Message::Request { id, method, params }) => (id, method, params),
        };
        // The connection as it is now: a grant narrowed or a connection removed since the last
        // line applies to this one.
        let connection = match connections::touch_and_load(&self.state.journal.db, &self.connection_id).await {
            Ok(Some(connection)) => connection,
            Ok(None) => {
                let message = StdioError::Removed(self.label.clone()).to_string();
                return Some(Reply {
                    text: jsonrpc::error(id, INVALID_REQUEST, message).to_string(),
                    stop: true,
                });
            }
            Err(error) => {
                tracing::error!(%error, "the connection could not be read");
                return Some(Reply::go_on(jsonrpc::error(
                    id,
                    INTERNAL_ERROR,
                    "the journal could not check this connection; try again",
                )));
            }
        };
        // 2026-07-28: the request names its version in `_meta` and is served on its own, beside
        // any session an `initialize` opened in this process.
        if stateless::is_stateless(&params, None) {
            let reply = match stateless::admit(&method, &params, None) {
                Err(refused) => Encoded::value(&refused.reply(id)),
                Ok(_) if method == "subscriptions/listen" => return self.subscribe(id, &params).await,
                Ok((version, meta)) => {
                    let capabilities = meta.capabilities;
                    let caller = Caller {
                        connection: Arc::new(connection),
                        version,
                        capabilities,
                        session: None,
                    };
                    dispatch::request(self.state, &caller, id, &method, params, &Outgoing::none()).await
                }
            };
            return Some(Reply {
                text: reply.into_string(),
                stop: false,
            });
        }
        if method == "initialize" {
            return Some(Reply::go_on(self.initialize(&connection, id, &params).await));
        }
        let Some((session_id, version)) = self.session.clone() else {
            return Some(Reply::go_on(jsonrpc::error(
                id,
                INVALID_REQUEST,
                "send initialize first: this server answers requests once a session is initialized",
            )));
        };
        // A session idle past its time is opened again: over stdio the process is the session.
        let session = match self.state.sessions.touch(&session_id, &connection.id) {
            Ok(session) => Ok(session),
            Err(_) => self.open(&connection, version).and_then(|reopened| {
                self.state
                    .sessions
                    .touch(&reopened, &connection.id)
                    .map_err(|e| e.to_string())
            }),
        };
        let session = match session {
            Ok(session) => session,
            Err(message) => return Some(Reply::go_on(jsonrpc::error(id, INTERNAL_ERROR, message))),
        };
        let caller = Caller {
            connection: Arc::new(connection),
            version: session.version,
            capabilities: serde_json::Map::new(),
            session: Some(SessionView {
                id: self.session.as_ref().map(|(id, _)| id.clone()).unwrap_or_default(),
                listed_generation: session.listed_generation,
            }),
        };
        let reply = dispatch::request(self.state, &caller, id, &method, params, &Outgoing::none()).await;
        Some(Reply {
            text: reply.into_string(),
            stop: false,
        })
    }

    async fn initialize(
        &mut self,
        connection: &Connection,
        id: Value,
        params: &serde_json::Map<String, Value>,
    ) -> Value {
        let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
            return jsonrpc::error(id, INVALID_PARAMS, "initialize needs params.protocolVersion");
        };
        let version = Version::negotiate(requested);
        match self.open(connection, version) {
            Ok(_) => {
                // The session hears of its lists' changes for as long as it lasts.
                if let Some(old) = self.session_listener.take() {
                    old.abort();
                }
                match self.listen(Filter::lists(), None).await {
                    Ok(listener) => self.session_listener = Some(listener),
                    Err(why) => tracing::warn!(why, "the session's list changes will not be announced"),
                }
                jsonrpc::result(id, dispatch::initialized(self.state.offer(), version))
            }
            Err(message) => jsonrpc::error(id, INTERNAL_ERROR, message),
        }
    }

    /// Opens this process's session (ending the one before, if any).
    fn open(&mut self, connection: &Connection, version: Version) -> Result<String, String> {
        if let Some((old, _)) = self.session.take() {
            let _ = self.state.sessions.end(&old, &connection.id);
        }
        let opened = self
            .state
            .sessions
            .create(&connection.id, &connection.label, version, connection.grant.generation)
            .map_err(|e| e.to_string())?;
        self.session = Some((opened.id.clone(), version));
        Ok(opened.id)
    }
}

/// Reads one line into `line`, at most `MAX_LINE_BYTES` of it.
async fn read_line<R: AsyncBufRead + Unpin>(input: &mut R, line: &mut Vec<u8>) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let buffer = input.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Whole,
            });
        }
        let (take, done) = match buffer.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        if !too_long {
            let piece = if done { &buffer[..take - 1] } else { &buffer[..take] };
            if line.len() + piece.len() > MAX_LINE_BYTES {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(piece);
            }
        }
        input.consume(take);
        if done {
            return Ok(if too_long { Line::TooLong } else { Line::Whole });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8]) -> Vec<Result<String, &'static str>> {
        let mut reader = tokio::io::BufReader::with_capacity(16, input);
        let mut out = Vec::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            match read_line(&mut reader, &mut line).await.unwrap() {
                Line::End => return out,
                Line::TooLong => out.push(Err("too long")),
                Line::Whole => out.push(Ok(String::from_utf8(line.clone()).unwrap())),
            }
        }
    }

    #[tokio::test]
    async fn lines_are_read_whole_and_a_long_one_is_dropped_to_its_end() {
        let long = "x".repeat(MAX_LINE_BYTES + 1);
        let exact = "y".repeat(MAX_LINE_BYTES);
        let input = format!("{{\"a\":1}}\n\n{long}\nafter\n{exact}\nlast without newline");
        assert_eq!(
            lines(input.as_bytes()).await,
            [
                Ok("{\"a\":1}".to_string()),
                Ok(String::new()),
                Err("too long"),
                Ok("after".to_string()),
                Ok(exact),
                Ok("last without newline".to_string()),
            ]
        );
        assert!(lines(b"").await.is_empty());
        assert_eq!(lines(long.as_bytes()).await, [Err("too long")]);
    }
}
