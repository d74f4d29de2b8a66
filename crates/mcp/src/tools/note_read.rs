//! `note_read`: one note by path or id, with its frontmatter, body, hash and governing AGENTS.md.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::args::NotePath;
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, check_len};
use crate::auth::Category;
use crate::journal::notes::ops::Target;
use crate::journal::notes::rules;

pub const DEF: ToolDef = ToolDef {
    name: "note_read",
    title: "read a note",
    description: "Read one of the owner's notes by path (e.g. Projects/alpha.md) or id: its frontmatter, markdown body, \
                  the SHA-256 hash of the file, and the AGENTS.md that governs its folder, whose instructions apply to \
                  work on the note.",
    needs: Need::Category(Category::Notes),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// The most body text one read returns; the hash is still of the whole file.
pub const MAX_BODY_BYTES: usize = 512 * 1024;

/// Arguments of note_read: a path or an id, one of them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The note's path from the top of the notes folder; .md may be left out.
    pub path: Option<NotePath>,
    /// The note's id from notes_list, search or base_query.
    pub id: Option<String>,
}

/// What note_read answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub id: String,
    pub path: String,
    pub title: String,
    pub frontmatter: Map<String, Value>,
    pub body: String,
    /// SHA-256 of the file's bytes (hex): what write tools take as expected_hash.
    pub hash: String,
    /// When the file was last changed (RFC 3339, UTC).
    pub modified: String,
    /// True when agents may read this note but never change it.
    pub read_only: bool,
    /// True when the body was cut at 512 KiB.
    pub truncated: bool,
    /// The nearest AGENTS.md (or AGENT.md) in the note's folder or above it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents_md: Option<AgentsMd>,
}

/// The instructions that govern a note.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AgentsMd {
    pub path: String,
    pub body: String,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let target = match (args.path, &args.id) {
        (Some(path), None) => Target::Path(path.into_string()),
        (None, Some(id)) => {
            check_len("id", id, rules::MAX_PATH_BYTES + 5)?;
            Target::Id(id.trim().to_string())
        }
        _ => return Err(ToolError::Invalid("give either path or id, one of them".into())),
    };
    let read = context.read_note(target).await?;
    let (body, truncated) = super::fetch::cut(read.body, MAX_BODY_BYTES);
    let note = read.note;
    ToolOutput::of(
        &Output {
            id: note.public_id(),
            title: note.title.clone(),
            modified: super::format_ms(note.modified_ms),
            hash: note.hash.clone(),
            read_only: read.sight == crate::journal::notes::Sight::ReadOnly,
            path: note.path,
            frontmatter: note.frontmatter,
            body,
            truncated,
            agents_md: read.agents_md.map(|(path, body)| AgentsMd { path, body }),
        },
        false,
    )
}
