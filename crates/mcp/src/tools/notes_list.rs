//! `notes_list`: the owner's notes the connection may see, newest first, by folder, tag and time.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{Cursor, FolderPath, Limit};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, check_len, nothing_matched};
use crate::auth::Category;
use crate::journal::notes::ops;

pub const DEF: ToolDef = ToolDef {
    name: "notes_list",
    title: "list notes",
    description: "List the owner's notes, newest first, optionally in one folder (and below), with one tag, or modified \
                  since a day. Each note has an id and a path for note_read.",
    needs: Need::Category(Category::Notes),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Arguments of notes_list.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Only notes in this folder or below it, e.g. "Projects".
    pub folder: Option<FolderPath>,
    /// Only notes with this tag (without or with its #); a tag also matches the tags nested under it.
    pub tag: Option<String>,
    /// Only notes modified at or after this day (YYYY-MM-DD) or time (RFC 3339, e.g. 2026-11-30T14:00:00Z).
    pub since: Option<String>,
    /// How many notes, 1-1000 (default 200).
    #[serde(default)]
    pub limit: Limit<200, 1000>,
    /// The next_cursor of the previous page.
    pub cursor: Option<Cursor>,
}

/// What notes_list answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub notes: Vec<NoteEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One note in a listing.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NoteEntry {
    /// The frontmatter id, or path:<path> when the note has none.
    pub id: String,
    /// The path from the top of the notes folder.
    pub path: String,
    pub title: String,
    pub tags: Vec<String>,
    /// When the file was last changed (RFC 3339, UTC).
    pub modified: String,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let limit = args.limit.get();
    let folder = args.folder.map(FolderPath::into_string).unwrap_or_default();
    if let Some(tag) = &args.tag {
        check_len("tag", tag, 256)?;
    }
    let since_ms = args.since.as_deref().map(super::since_ms).transpose()?;
    let request = format!("{folder}\n{:?}\n{:?}\n{limit}", args.tag, args.since);
    let offset = context.offset("notes_list", &request, args.cursor.as_ref())?;
    let filter = ops::ListFilter {
        folder,
        tag: args.tag.clone(),
        since_ms,
    };
    let reader = context.reader();
    let set = context.journal.notes.set();
    let (page, more) = ops::list(&set, &reader, &filter, offset, limit);
    let notes: Vec<NoteEntry> = page
        .iter()
        .map(|note| NoteEntry {
            id: note.public_id(),
            path: note.path.clone(),
            title: note.title.clone(),
            tags: note.tags.clone(),
            modified: super::format_ms(note.modified_ms),
        })
        .collect();
    let next_cursor = more.then(|| context.cursor("notes_list", &request, offset + limit));
    let empty = notes.is_empty();
    let note = empty.then(|| nothing_matched("notes"));
    ToolOutput::of(
        &Output {
            notes,
            next_cursor,
            note,
        },
        empty,
    )
}
