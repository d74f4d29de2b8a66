//! `recent_activity`: who connected what and who wrote which notes, newest first.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::Limit;
use super::graph::load;
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, format_ms, nothing_matched, since_ms};
use crate::auth::Category;
use crate::journal::graph::items::Items;

pub const DEF: ToolDef = ToolDef {
    name: "recent_activity",
    title: "recent graph activity",
    description: "What happened in the graph lately, newest first: connections made and notes written, by whom, on \
                  connections you can see. It reflects the graph as it is now: a removed connection or a replaced note \
                  no longer shows.",
    needs: Need::Category(Category::Graph),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Arguments of recent_activity.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Only what happened at or after this day (YYYY-MM-DD) or time (RFC 3339, e.g. 2026-11-30T14:00:00Z).
    pub since: Option<String>,
    /// How many events, 1-100 (default 20).
    #[serde(default)]
    pub limit: Limit<20, 100>,
}

/// What recent_activity answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub events: Vec<Event>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One thing that happened.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Event {
    /// RFC 3339, UTC.
    pub at: String,
    /// owner, or agent:<name>.
    pub author: String,
    /// "connected" or "wrote a note".
    pub action: String,
    pub connection_id: String,
    /// The items' keys.
    pub from: String,
    pub to: String,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The note, for "wrote a note".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let since = args.since.as_deref().map(since_ms).transpose()?.map(format_ms);
    let limit = args.limit.get();
    let graph = load(context).await?;
    let mut events: Vec<Event> = Vec::new();
    for connection in graph.connections() {
        let event = |at: &str, author: String, action: &str, text: Option<String>| Event {
            at: at.to_string(),
            author,
            action: action.into(),
            connection_id: connection.id.clone(),
            from: connection.from.clone(),
            to: connection.to.clone(),
            kind: connection.kind.clone(),
            text,
        };
        events.push(event(
            &connection.created_at,
            connection.creator().to_string(),
            "connected",
            None,
        ));
        for note in &connection.notes {
            events.push(event(
                &note.at,
                note.author.to_string(),
                "wrote a note",
                Some(note.text.clone()),
            ));
        }
    }
    if let Some(since) = &since {
        events.retain(|e| e.at >= *since);
    }
    events.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| a.connection_id.cmp(&b.connection_id)));
    let viewer = context.viewer();
    let mut items = Items::new(context.journal, &viewer);
    let mut shown = Vec::new();
    for event in events {
        if shown.len() == limit {
            break;
        }
        if items.reaches_both(&event.from, &event.to).await? {
            shown.push(event);
        }
    }
    let empty = shown.is_empty();
    ToolOutput::of(
        &Output {
            events: shown,
            note: empty.then(|| nothing_matched("graph activity")),
        },
        empty,
    )
}
