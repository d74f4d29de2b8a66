//! What the graph tools share: the caller as a viewer (its grant's reach) and as an author (its
//! identity, `agent:<slug of its label>`, from its credential and never from an argument); the item
//! an argument names; the one shape of an item and of a connection in every result, given only for
//! connections whose both ends the caller reaches; and a change made now (force) or staged (propose)
//! through the graph's gate.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::args::ItemArg;
use super::{ToolContext, ToolError, ToolOutput};
use crate::auth::WriteMode;
use crate::journal::graph::gate::{self, GateError, GraphChange};
use crate::journal::graph::history::{HistoryError, Origin};
use crate::journal::graph::items::{Item, Items, Viewer};
use crate::journal::graph::rules::RuleError;
use crate::journal::graph::store::Graph;
use crate::journal::graph::{Author, Edge};
use crate::journal::notes::history::RecordError;
use crate::journal::proposals::ProposalError;

/// An item in a result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ItemOut {
    /// The item's key (`note:<path>`, `entity:<name>`, `facet:<name>`, `segment:<day>/<time>`):
    /// what the other graph tools take.
    pub item: String,
    /// note, entity, facet or segment.
    pub kind: String,
    pub title: String,
    /// A reference for fetch (and, for a note, note_read takes the path in the key).
    pub reference: String,
}

/// One author's note on a connection.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct NoteOut {
    /// owner, or agent:<name>.
    pub author: String,
    pub text: String,
    /// When it was written (RFC 3339, UTC).
    pub at: String,
}

/// A connection in a result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ConnectionOut {
    pub id: String,
    pub from: ItemOut,
    pub to: ItemOut,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Who made it (owner, or agent:<name>).
    pub created_by: String,
    pub created_at: String,
    /// Who set its type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_by: Option<String>,
    /// At most one per author.
    pub notes: Vec<NoteOut>,
}

impl ToolContext<'_> {
    /// The caller as the graph sees it: what its grant reaches.
    pub fn viewer(&self) -> Viewer {
        self.connection.viewer(&self.facets)
    }

    /// The caller's identity in the graph.
    pub fn author(&self) -> Author {
        self.viewer().author()
    }

    /// The item an argument names: a reference from search, or what `Items::resolve` reads.
    pub async fn item(&self, items: &mut Items<'_>, typed: &ItemArg) -> Result<Item, ToolError> {
        let typed = typed.as_str();
        match self.open_reference(typed, &["transcript", "entity", "facet", "note"]) {
            Ok((kind, path)) => {
                let key = crate::journal::graph::items::Kind::of_reference(&kind)
                    .and_then(|kind| crate::journal::graph::items::key_of_path(kind, &path));
                let found = match key {
                    Some(key) => items.get(&key).await?,
                    None => None,
                };
                found.ok_or_else(|| ToolError::Refused("that item no longer exists".into()))
            }
            // A reference made before the grant changed says so; anything else is read as a name.
            Err(refused @ ToolError::Refused(_)) => Err(refused),
            Err(_) => items.resolve(typed).await?.map_err(ToolError::Refused),
        }
    }

    /// An item as results show it.
    pub fn item_out(&self, item: &Item) -> ItemOut {
        ItemOut {
            item: item.key.clone(),
            kind: item.kind.as_str().into(),
            title: item.title.clone(),
            reference: self.reference(item.kind.reference_kind(), &item.path),
        }
    }

    /// A connection as results show it, or None when the caller does not reach both of its ends.
    pub async fn connection_out(
        &self,
        items: &mut Items<'_>,
        connection: &Edge,
    ) -> Result<Option<ConnectionOut>, ToolError> {
        let (Some(from), Some(to)) = (items.get(&connection.from).await?, items.get(&connection.to).await?) else {
            return Ok(None);
        };
        Ok(Some(ConnectionOut {
            id: connection.id.clone(),
            from: self.item_out(&from),
            to: self.item_out(&to),
            kind: connection.kind.clone(),
            created_by: connection.creator().to_string(),
            created_at: connection.created_at.clone(),
            type_by: connection.type_by.as_ref().map(Author::to_string),
            notes: connection
                .notes
                .iter()
                .map(|n| NoteOut {
                    author: n.author.to_string(),
                    text: n.text.clone(),
                    at: n.at.clone(),
                })
                .collect(),
        }))
    }
}

/// The graph as it is now.
pub async fn load(context: &ToolContext<'_>) -> Result<Graph, ToolError> {
    gate::load(context.journal).await.map_err(refusal)
}

/// What a graph write answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WriteOutput {
    /// "connected", "typed", "noted", "disconnected", or "proposed": nothing changed yet; the owner
    /// reviews the change (my_proposals tells the outcome).
    pub status: String,
    /// The connection as it is now (for disconnected: as it was). Absent for a proposed new connection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<ConnectionOut>,
    /// The proposal's id, when proposed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<i64>,
}

/// Asks for a graph change as the calling connection, by its write mode. `arguments` are the
/// call's arguments as sent, kept with a proposal.
pub async fn write(context: &ToolContext<'_>, arguments: Value, change: GraphChange) -> Result<ToolOutput, ToolError> {
    let viewer = context.viewer();
    let output = match context.connection.grant.write_mode {
        WriteMode::Force => {
            let made = gate::make(
                context.journal,
                &Origin::agent(&context.connection.id, &context.connection.label),
                &viewer,
                &change,
            )
            .await
            .map_err(refusal)?;
            let mut items = Items::new(context.journal, &viewer);
            let status = match change {
                GraphChange::Connect { .. } => "connected",
                GraphChange::SetType { .. } => "typed",
                GraphChange::Disconnect { .. } => "disconnected",
                GraphChange::Note { .. } => "noted",
            };
            WriteOutput {
                status: status.into(),
                connection: context.connection_out(&mut items, &made.connection).await?,
                proposal_id: None,
            }
        }
        WriteMode::Propose => {
            let id = gate::propose(
                context.journal,
                &context.connection.id,
                &context.connection.label,
                &viewer,
                &arguments,
                &change,
            )
            .await
            .map_err(refusal)?;
            let connection = match &change {
                GraphChange::Connect { .. } => None,
                GraphChange::SetType { id, .. } | GraphChange::Disconnect { id } | GraphChange::Note { id, .. } => {
                    let graph = load(context).await?;
                    let mut items = Items::new(context.journal, &viewer);
                    match graph.get(id) {
                        Some(c) => context.connection_out(&mut items, c).await?,
                        None => None,
                    }
                }
            };
            WriteOutput {
                status: "proposed".into(),
                connection,
                proposal_id: Some(id),
            }
        }
        // Not offered; checked again here so that no path can write without a mode.
        WriteMode::None => {
            return Err(ToolError::Refused(
                "this connection may not change the graph; the owner can change that".into(),
            ));
        }
    };
    ToolOutput::of(&output, false)
}

/// A gate's refusal as the agent reads it.
pub fn refusal(error: GateError) -> ToolError {
    match error {
        GateError::Rule(RuleError::Invalid(message)) => ToolError::Invalid(message),
        GateError::Rule(missing @ RuleError::NotFound(_)) => {
            ToolError::Refused(format!("{missing}; find_connections lists an item's connections"))
        }
        GateError::Rule(other) => ToolError::Refused(other.to_string()),
        GateError::Missing(message) => ToolError::Refused(message),
        GateError::Proposal(error @ (ProposalError::TooMany | ProposalError::TooLarge)) => {
            ToolError::Refused(error.to_string())
        }
        GateError::Store(error @ crate::journal::graph::store::GraphFileError::Busy) => {
            ToolError::Refused(error.to_string())
        }
        GateError::History(error @ (HistoryError::Record(RecordError::Full { .. }) | HistoryError::Decided(_))) => {
            ToolError::Refused(error.to_string())
        }
        other => ToolError::Failed(other.to_string()),
    }
}
