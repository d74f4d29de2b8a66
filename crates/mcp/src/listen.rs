//! Live changes: a listener follows one connection and sends the notifications its filter asks for,
//! on every transport (a 2026-07-28 `subscriptions/listen` stream, a 2025 session's GET stream,
//! stdio).
//!
//! A listener looks four times a second at two cheap signals: the access epoch (`auth::epoch`, which
//! every grant change announces, from this process or the CLI) and the notes' current set (a new one
//! is published by every sync and write). When either moved, it reads its connection again and
//! compares what the connection sees (`changes::View`) with what it saw; it also reads the connection
//! every few seconds in any case, for an announcement that was lost. A removed connection ends the
//! listener, as does the server closing its streams or the other end going away.
//!
//! A listener takes its first view before its stream is answered (`Listener::start`), so that a
//! change made once the client has its answer is never missed. Streams are bounded
//! (`streams::Streams`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};

use super::changes::{Filter, View, diff};
use super::state::McpState;
use super::streams::Held;
use super::tools::ToolContext;
use crate::auth::{Connection, connections};
use crate::journal::facet::Facet;
use crate::journal::notes::NoteSet;

/// How often a listener looks for a change.
pub const TICK: Duration = Duration::from_millis(250);
/// How often it reads its connection even when no change was announced.
pub const RELOAD_EVERY: Duration = Duration::from_secs(5);
/// The most notes one `subscriptions/listen` may follow.
pub const MAX_SUBSCRIPTIONS: usize = 100;

/// Why a listener stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The other end stopped reading.
    Gone,
    /// The connection was removed (a revoked key, a signed-out app).
    Removed,
    /// The server is stopping.
    Closing,
}

/// What `subscriptions/listen`'s `params.notifications` asks for, or why it cannot be followed.
pub fn requested(params: &serde_json::Map<String, Value>) -> Result<Filter, String> {
    match params.get("notifications").and_then(Filter::read) {
        Some(filter) if filter.subscriptions.len() <= MAX_SUBSCRIPTIONS => Ok(filter),
        Some(_) => Err(format!("a stream follows at most {MAX_SUBSCRIPTIONS} notes")),
        None => Err(
            "subscriptions/listen needs params.notifications, an object such as {\"toolsListChanged\": true}".into(),
        ),
    }
}

/// The first message of a `subscriptions/listen` stream: what the server will send on it.
pub fn acknowledgment(subscription: &Value, filter: &Filter) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": { "io.modelcontextprotocol/subscriptionId": subscription },
            "notifications": filter.to_json(),
        },
    })
}

/// The last message of a `subscriptions/listen` stream the server ends: its (empty) result.
pub fn ended(subscription: &Value) -> Value {
    let mut meta = super::stateless::server_meta();
    meta["io.modelcontextprotocol/subscriptionId"] = subscription.clone();
    json!({ "jsonrpc": "2.0", "id": subscription, "result": { "resultType": "complete", "_meta": meta } })
}

/// A listener that has taken its first view.
pub struct Listener {
    state: McpState,
    connection_id: String,
    connection: Connection,
    filter: Filter,
    subscription: Option<Value>,
    epoch: u64,
    set: Arc<NoteSet>,
    facets: Arc<Vec<Facet>>,
    view: View,
}

impl Listener {
    /// Reads the connection and takes the first view; `Removed` when the connection is gone (or
    /// cannot be read: the client may open the stream again).
    pub async fn start(
        state: McpState,
        connection_id: String,
        filter: Filter,
        subscription: Option<Value>,
    ) -> Result<Listener, End> {
        let connection = match connections::load(&state.journal.db, &connection_id).await {
            Ok(Some(connection)) => connection,
            Ok(None) => return Err(End::Removed),
            Err(error) => {
                tracing::warn!(%error, "a listener could not read its connection");
                return Err(End::Removed);
            }
        };
        let epoch = state.credentials.epoch();
        let set = state.journal.notes.set();
        let facets = state.journal.facets();
        let view = view_of(&state, &connection, &set, &facets, &filter);
        Ok(Listener {
            state,
            connection_id,
            connection,
            filter,
            subscription,
            epoch,
            set,
            facets,
            view,
        })
    }

    /// Runs on a task of its own while it holds its stream's room (`held`): a subscription's
    /// acknowledgment first, then the notifications, then (when the server ends it) the
    /// subscription's result. Every transport's stream is this task and a way to carry `out`.
    pub fn spawn(self, held: Held, out: mpsc::Sender<String>) -> JoinHandle<()> {
        tokio::spawn(async move {
            let _held = held;
            let subscription = self.subscription.clone();
            if let Some(id) = &subscription
                && out.send(acknowledgment(id, &self.filter).to_string()).await.is_err()
            {
                return;
            }
            let end = self.run(out.clone()).await;
            if let Some(id) = subscription
                && end != End::Gone
            {
                let _ = out.send(ended(&id).to_string()).await;
            }
        })
    }

    /// Sends each notification its filter asks for on `out` (as JSON text), tagged with its
    /// subscription when it has one, until the end says why.
    async fn run(mut self, out: mpsc::Sender<String>) -> End {
        let mut closing = self.state.closing();
        let mut reloaded = Instant::now();
        let mut ticks = tokio::time::interval(TICK);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                _ = closing.wait_for(|closing| *closing) => return End::Closing,
                _ = out.closed() => return End::Gone,
            }
            let epoch = self.state.credentials.epoch();
            let set = self.state.journal.notes.set();
            let facets = self.state.journal.facets();
            let reload = epoch != self.epoch || reloaded.elapsed() >= RELOAD_EVERY;
            let mut moved = !Arc::ptr_eq(&set, &self.set) || !Arc::ptr_eq(&facets, &self.facets);
            if reload {
                match connections::load(&self.state.journal.db, &self.connection_id).await {
                    Ok(Some(now)) => {
                        moved |= now.grant != self.connection.grant || now.label != self.connection.label;
                        self.connection = now;
                    }
                    Ok(None) => return End::Removed,
                    Err(error) => tracing::warn!(%error, "a listener could not read its connection"),
                }
                self.epoch = epoch;
                reloaded = Instant::now();
            }
            if !moved {
                continue;
            }
            self.set = set;
            self.facets = facets;
            let next = view_of(&self.state, &self.connection, &self.set, &self.facets, &self.filter);
            for change in diff(&self.view, &next, &self.filter) {
                let text = change.notification(self.subscription.as_ref()).to_string();
                if out.send(text).await.is_err() {
                    return End::Gone;
                }
            }
            self.view = next;
        }
    }
}

fn view_of(
    state: &McpState,
    connection: &Connection,
    set: &NoteSet,
    facets: &Arc<Vec<Facet>>,
    filter: &Filter,
) -> View {
    let context = ToolContext {
        journal: &state.journal,
        connection,
        facets: Arc::clone(facets),
    };
    View::of(&context, set, filter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listen_stream_opens_with_its_filter_and_ends_with_its_result() {
        let filter = Filter::read(&json!({"toolsListChanged": true})).unwrap();
        let ack = acknowledgment(&json!("s-1"), &filter);
        assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "s-1");
        assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}));
        let end = ended(&json!(4));
        assert_eq!(end["id"], 4);
        assert_eq!(end["result"]["resultType"], "complete");
        assert_eq!(end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 4);
        assert_eq!(
            end["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "journal"
        );
    }
}
