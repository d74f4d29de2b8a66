//! `my_proposals`: the calling connection's own proposals and what the owner decided, so that an
//! agent in propose mode learns what was accepted (and why something was rejected).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{Cursor, Limit};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, format_ms, nothing_matched};
use crate::journal::proposals::{Filter, Status};
use crate::review;

pub const DEF: ToolDef = ToolDef {
    name: "my_proposals",
    title: "my proposed changes",
    description: "List the changes you proposed (to notes and to the graph) and the owner's decision on each (pending, \
                  accepted or rejected, with the owner's reason), newest first.",
    needs: Need::AnyWrite,
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Arguments of my_proposals.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Only proposals in this state.
    pub status: Option<StatusArg>,
    /// How many proposals, 1-100 (default 20).
    #[serde(default)]
    pub limit: Limit<20, 100>,
    /// next_cursor of the previous page.
    pub cursor: Option<Cursor>,
}

/// A proposal's state.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusArg {
    Pending,
    Accepted,
    Rejected,
}

impl StatusArg {
    fn status(self) -> Status {
        match self {
            StatusArg::Pending => Status::Pending,
            StatusArg::Accepted => Status::Accepted,
            StatusArg::Rejected => Status::Rejected,
        }
    }
}

/// What my_proposals answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub proposals: Vec<ProposalView>,
    /// Pass as cursor for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One proposal.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ProposalView {
    pub proposal_id: i64,
    /// The write tool that proposed it.
    pub tool: String,
    pub path: String,
    /// pending, accepted or rejected.
    pub status: String,
    pub proposed_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<String>,
    /// The owner's words on a rejection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The note's hash after an accepted proposal: the expected_hash of a next change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let status = args.status.map(StatusArg::status);
    let request = status.map_or("any", Status::as_str);
    let before_id = context.offset("my_proposals", request, args.cursor.as_ref())?;
    let limit = args.limit.get();
    let mut found = review::list(
        context.journal,
        &Filter {
            connection_id: Some(context.connection.id.clone()),
            status,
            before_id: (before_id > 0).then_some(before_id as i64),
            limit: limit as i64 + 1,
        },
    )
    .await?;
    let more = found.len() > limit;
    found.truncate(limit);
    let next_cursor = match (more, found.last()) {
        (true, Some(last)) => Some(context.cursor("my_proposals", request, last.id as usize)),
        _ => None,
    };
    let proposals: Vec<ProposalView> = found
        .into_iter()
        .map(|p| ProposalView {
            proposal_id: p.id,
            tool: p.tool,
            path: p.path,
            status: p.status.as_str().into(),
            proposed_at: format_ms(p.at * 1000),
            decided_at: p.decided_at.map(|at| format_ms(at * 1000)),
            reason: (!p.reason.is_empty()).then_some(p.reason),
            hash: p.result_hash,
        })
        .collect();
    let empty = proposals.is_empty();
    let note = empty.then(|| nothing_matched("proposals"));
    ToolOutput::of(
        &Output {
            proposals,
            next_cursor,
            note,
        },
        empty,
    )
}
