//! `recall_memory`: the connection reads back what it saved, newest first, optionally filtered by
//! words and days; at most 20 notes and 64 KiB of content a page.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{Cursor, DayArg, Limit};
use super::save_memory::MemoryView;
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, check_len, day_range, nothing_matched};
use crate::journal::day::Day;
use crate::journal::memory;

pub const DEF: ToolDef = ToolDef {
    name: "recall_memory",
    title: "recall your memories",
    description: "Read back notes you saved with save_memory, newest first. Optionally filter by words (all must appear) \
                  and by day; pass continuation to read the next page.",
    needs: Need::Nothing,
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

const MAX_PAGE_BYTES: usize = 64 * 1024;

/// Arguments of recall_memory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Words that must all appear in a note (case-insensitive).
    pub query: Option<String>,
    /// How many notes, 1-20 (default 5).
    #[serde(default)]
    pub limit: Limit<5, 20>,
    /// Only notes saved on this day (YYYY-MM-DD or YYYYMMDD).
    pub day: Option<DayArg>,
    /// Only notes saved on or after this day.
    pub day_from: Option<DayArg>,
    /// Only notes saved on or before this day.
    pub day_to: Option<DayArg>,
    /// The continuation from the previous page.
    pub continuation: Option<Cursor>,
}

/// What recall_memory answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub memories: Vec<MemoryView>,
    /// Present when more notes follow; pass it back to read them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let query = args.query.unwrap_or_default();
    check_len("query", &query, 4096)?;
    let limit = args.limit.get();
    let (from, to) = day_range(args.day, args.day_from, args.day_to)?;
    let request = format!("{query}\n{from:?}\n{to:?}");
    let offset = context.offset("recall", &request, args.continuation.as_ref())?;
    let root = context.journal.root().to_path_buf();
    let connection_id = context.connection.id.clone();
    let all = tokio::task::spawn_blocking(move || memory::all(&root, &connection_id))
        .await?
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let matching: Vec<memory::Memory> = all
        .into_iter()
        .filter(|m| {
            let day = Day::parse(&m.day).ok();
            let in_range =
                from.is_none_or(|f| day.is_some_and(|d| d >= f)) && to.is_none_or(|t| day.is_some_and(|d| d <= t));
            let content = m.content.to_lowercase();
            in_range && words.iter().all(|w| content.contains(w))
        })
        .collect();
    let mut page = Vec::new();
    let mut bytes = 0;
    for memory in matching.iter().skip(offset).take(limit) {
        if !page.is_empty() && bytes + memory.content.len() > MAX_PAGE_BYTES {
            break;
        }
        bytes += memory.content.len();
        page.push(MemoryView::from(memory.clone()));
    }
    let next = offset + page.len();
    let continuation = (next < matching.len()).then(|| context.cursor("recall", &request, next));
    let empty = page.is_empty();
    let note = empty.then(|| nothing_matched("memories"));
    ToolOutput::of(
        &Output {
            memories: page,
            continuation,
            note,
        },
        empty,
    )
}
