//! What a server built on this crate offers its clients beyond the protocol's own methods: tools,
//! prompts, resources, completions. The transports, sessions, credentials and `dispatch` are the
//! same for every offer; the journal's is `catalog` (its tools, the owner's skills as prompts, notes
//! as resources), and the conformance suite's fixture server (`examples/fixture.rs`) offers the
//! suite's test tools, prompts and resources through the very same code, so that every scenario of
//! the suite runs against this crate's transport.
//!
//! An offer answers one request at a time. What it may send before its answer (progress, log
//! messages, and in a 2025 session a request to the client, such as a sampling request) goes through
//! `Outgoing`; an offer that does so says it `streams` the request, and the transport then answers
//! with an event stream instead of one JSON body.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

use super::caller::Caller;
use super::jsonrpc::{Encoded, INTERNAL_ERROR, RpcError};

/// An answer on its way.
pub type Answering<'a> = Pin<Box<dyn Future<Output = Encoded> + Send + 'a>>;

/// One request for an offer to answer: never one of the protocol's own methods (`ping`,
/// `initialize`, `server/discover`), which `dispatch` answers the same for every offer.
pub struct Request<'a> {
    pub caller: &'a Caller,
    pub id: Value,
    pub method: &'a str,
    pub params: Map<String, Value>,
    /// What the offer may send before its answer.
    pub out: &'a Outgoing,
}

/// A server's catalogue, answering with what the server holds (`S`, the journal's `McpState`).
pub trait Offer<S>: Send + Sync + 'static {
    /// The capabilities declared by `initialize` (a 2025 session) or `server/discover` (stateless).
    fn capabilities(&self, stateless: bool) -> Value;

    /// What `initialize` and `server/discover` tell the client about using this server.
    fn instructions(&self) -> &str;

    /// Whether the answer to this request may come after messages of its own (progress, log
    /// messages, requests to the client): the transport then answers with an event stream.
    fn streams(&self, _method: &str, _params: &Map<String, Value>) -> bool {
        false
    }

    /// Answers `request`, or says its method is not found.
    fn answer<'a>(&'a self, state: &'a S, request: Request<'a>) -> Answering<'a>;
}

/// How long a request to the client (a sampling or elicitation request in a 2025 session) waits for
/// its answer before the call goes on without one.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the messages sent before an answer go: the event stream of the request's response, when
/// the transport opened one.
#[derive(Default)]
pub struct Outgoing {
    events: Option<mpsc::Sender<String>>,
    /// Where the client's answers to this server's requests arrive (a 2025 session over HTTP).
    asks: Option<Asks>,
}

/// A session's requests to its client that await an answer.
struct Asks {
    pending: std::sync::Arc<Pending>,
    session: String,
}

impl Outgoing {
    /// Nothing can be sent before the answer (a plain JSON reply, or stdio).
    pub fn none() -> Outgoing {
        Outgoing::default()
    }

    /// Messages go to `events`, and (given a session) requests to the client may be answered
    /// through `pending`.
    pub fn stream(events: mpsc::Sender<String>, session: Option<(std::sync::Arc<Pending>, String)>) -> Outgoing {
        Outgoing {
            events: Some(events),
            asks: session.map(|(pending, session)| Asks { pending, session }),
        }
    }

    /// Sends a notification before the answer; false when nothing can be sent now.
    pub async fn notify(&self, method: &str, params: Value) -> bool {
        let Some(events) = &self.events else { return false };
        let message = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        events.send(message.to_string()).await.is_ok()
    }

    /// Asks the client (a 2025 session only: 2026-07-28 asks with an `input_required` result
    /// instead) and waits for its answer: the response's `result`, or its error.
    pub async fn ask(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let (Some(events), Some(asks)) = (&self.events, &self.asks) else {
            return Err(RpcError::new(
                INTERNAL_ERROR,
                "this request cannot ask the client anything: it has no session stream",
            ));
        };
        let Some((id, answered)) = asks.pending.open(&asks.session) else {
            return Err(RpcError::new(
                INTERNAL_ERROR,
                format!("the server awaits {MAX_PENDING} answers from clients already; try again"),
            ));
        };
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        if events.send(message.to_string()).await.is_err() {
            asks.pending.forget(&asks.session, &id);
            return Err(RpcError::new(INTERNAL_ERROR, "the client stopped reading"));
        }
        let outcome = tokio::time::timeout(ASK_TIMEOUT, answered).await;
        asks.pending.forget(&asks.session, &id);
        match outcome {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(RpcError::new(INTERNAL_ERROR, "the request to the client was dropped")),
            Err(_) => Err(RpcError::new(
                INTERNAL_ERROR,
                format!("the client did not answer within {} seconds", ASK_TIMEOUT.as_secs()),
            )),
        }
    }
}

/// The answer a client sent to one of this server's requests.
type Answered = Result<Value, RpcError>;

/// This server's requests to its clients that await an answer, by session and request id. A
/// response is delivered only within the session its request went to, so one client cannot answer
/// for another.
#[derive(Default)]
pub struct Pending {
    next: AtomicU64,
    waiting: std::sync::Mutex<std::collections::HashMap<(String, String), oneshot::Sender<Answered>>>,
}

/// The most requests a server keeps waiting for answers at once: past it, asking fails at once.
pub const MAX_PENDING: usize = 1024;

impl Pending {
    /// A new request id in `session` and where its answer will arrive; None when too many wait.
    fn open(&self, session: &str) -> Option<(String, oneshot::Receiver<Answered>)> {
        let id = format!("server-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let (sender, receiver) = oneshot::channel();
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        if waiting.len() >= MAX_PENDING {
            return None;
        }
        waiting.insert((session.to_string(), id.clone()), sender);
        Some((id, receiver))
    }

    fn forget(&self, session: &str, id: &str) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        waiting.remove(&(session.to_string(), id.to_string()));
    }

    /// Delivers a client's response in `session`; false when nothing there awaits it.
    pub fn deliver(&self, session: &str, response: &Map<String, Value>) -> bool {
        let Some(id) = response.get("id").and_then(Value::as_str) else {
            return false;
        };
        let sender = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
            waiting.remove(&(session.to_string(), id.to_string()))
        };
        let Some(sender) = sender else { return false };
        let answer = match (response.get("result"), response.get("error")) {
            (Some(result), _) => Ok(result.clone()),
            (None, Some(error)) => Err(RpcError {
                code: error.get("code").and_then(Value::as_i64).unwrap_or(INTERNAL_ERROR),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the client refused")
                    .to_string(),
                data: error.get("data").cloned(),
            }),
            (None, None) => return false,
        };
        sender.send(answer).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_to_the_client_is_answered_only_within_its_session() {
        let pending = std::sync::Arc::new(Pending::default());
        let (events, mut sent) = mpsc::channel(4);
        let out = Outgoing::stream(events, Some((pending.clone(), "s1".into())));
        let asking = tokio::spawn(async move { out.ask("sampling/createMessage", json!({})).await });
        let request: Value = serde_json::from_str(&sent.recv().await.unwrap()).unwrap();
        assert_eq!(request["method"], "sampling/createMessage");
        let id = request["id"].clone();
        let response = |result: Value| {
            json!({"jsonrpc": "2.0", "id": id, "result": result})
                .as_object()
                .unwrap()
                .clone()
        };
        assert!(
            !pending.deliver("s2", &response(json!({"x": 1}))),
            "another session cannot answer"
        );
        assert!(pending.deliver("s1", &response(json!({"x": 2}))));
        assert_eq!(asking.await.unwrap().unwrap(), json!({"x": 2}));
        assert!(
            !pending.deliver("s1", &response(json!({"x": 3}))),
            "an answer is taken once"
        );
    }

    #[test]
    fn requests_to_clients_are_bounded() {
        let pending = Pending::default();
        let held: Vec<_> = (0..MAX_PENDING).map(|_| pending.open("s").unwrap()).collect();
        assert!(pending.open("s").is_none(), "one past the bound is refused at once");
        pending.forget("s", &held[0].0);
        assert!(
            pending.open("s").is_some(),
            "room again once one is answered or given up"
        );
    }

    #[tokio::test]
    async fn without_a_stream_nothing_is_sent_or_asked() {
        let out = Outgoing::none();
        assert!(!out.notify("notifications/progress", json!({})).await);
        assert!(out.ask("roots/list", json!({})).await.is_err());
    }
}
