//! `list_transcripts`: transcript segments, newest first, by day and facet.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{DayArg, FacetId, Limit};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, nothing_matched};
use crate::auth::Category;
use crate::journal::content;
use crate::journal::day::format_time;

pub const DEF: ToolDef = ToolDef {
    name: "list_transcripts",
    title: "list transcripts",
    description: "List transcript segments, newest first, optionally on one day and in one facet. Each has a reference for get_transcript or fetch.",
    needs: Need::Category(Category::Transcripts),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Arguments of list_transcripts.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// How many segments, 1-100 (default 10).
    #[serde(default)]
    pub limit: Limit<10, 100>,
    /// Only this day (YYYY-MM-DD or YYYYMMDD).
    pub day: Option<DayArg>,
    /// Only this facet (an id from list_facets).
    pub facet: Option<FacetId>,
}

/// What list_transcripts answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub segments: Vec<SegmentView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One segment in a listing.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SegmentView {
    pub title: String,
    pub date: String,
    /// Time of day it starts, HH:MM:SS.
    pub start: String,
    pub reference: String,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let limit = args.limit.get();
    let day = args.day.map(|d| d.0);
    let scope = context.scope(args.facet.as_ref())?;
    let rows = content::list_transcripts(context.journal, day, &scope, limit).await?;
    let segments: Vec<SegmentView> = rows
        .into_iter()
        .map(|row| SegmentView {
            reference: context.reference("transcript", &row.path),
            title: row.title,
            date: row.day.map(|d| d.to_string()).unwrap_or_default(),
            start: format_time(row.start.unwrap_or(0)),
        })
        .collect();
    let empty = segments.is_empty();
    let note = empty.then(|| nothing_matched("transcripts"));
    ToolOutput::of(&Output { segments, note }, empty)
}
