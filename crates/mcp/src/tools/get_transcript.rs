//! `get_transcript`: one segment's lines, paged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::Cursor;
use super::fetch::reachable_item;
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::content;

pub const DEF: ToolDef = ToolDef {
    name: "get_transcript",
    title: "read a transcript",
    description: "Read a transcript segment's lines (time, speaker, text) by its reference; pass next_cursor to read on.",
    needs: Need::Category(Category::Transcripts),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

const PAGE_LINES: usize = 200;
const PAGE_BYTES: usize = 64 * 1024;

/// Arguments of get_transcript.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A transcript reference from search or list_transcripts.
    pub reference: String,
    /// The next_cursor of the previous page.
    pub cursor: Option<Cursor>,
}

/// What get_transcript answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub title: String,
    pub date: String,
    /// One line per utterance: "HH:MM:SS Speaker: text".
    pub entries: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let (_, path) = context.open_reference(&args.reference, &["transcript"])?;
    reachable_item(context, Category::Transcripts, "transcript", &path).await?;
    let offset = context.offset("transcript", &path, args.cursor.as_ref())?;
    let segment = content::read_segment(context.journal, &path)?;
    let mut entries = Vec::new();
    let mut bytes = 0;
    for line in segment.lines.iter().skip(offset).take(PAGE_LINES) {
        let text = line.display();
        if !entries.is_empty() && bytes + text.len() > PAGE_BYTES {
            break;
        }
        bytes += text.len();
        entries.push(text);
    }
    let next = offset + entries.len();
    let next_cursor = (next < segment.lines.len()).then(|| context.cursor("transcript", &path, next));
    let empty = entries.is_empty();
    ToolOutput::of(
        &Output {
            title: segment.title(),
            date: segment.day.to_string(),
            entries,
            next_cursor,
        },
        empty,
    )
}
