//! `note_edit_section`: one part of a note's body changed, found by a unique anchor or a heading.

use schemars::JsonSchema;
use serde::Deserialize;

use super::args::{ExpectedHash, NotePath};
use super::note_change::{self, Output};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, check_len};
use crate::auth::Category;
use crate::journal::notes::edit::{Place, SectionOp};
use crate::journal::notes::write::NoteChange;

pub const DEF: ToolDef = ToolDef {
    name: "note_edit_section",
    title: "edit part of a note",
    description: "NoteChange one part of a note's body. Find it by anchor (a piece of text that occurs exactly once) or by \
                  heading (\"## Plans\", or a path \"# Project > ## Plans\"; the section runs to the next heading of \
                  the same or a higher level). op: replace, insert_before, insert_after, or append_within (headings \
                  only). replace with empty content deletes. Anything ambiguous fails and changes nothing.",
    needs: Need::Write(Category::Notes),
    read_only: false,
    destructive: true,
    idempotent: false,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(write),
    asks: None,
};

/// What the edit does.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Replace,
    InsertBefore,
    InsertAfter,
    AppendWithin,
}

/// Arguments of note_edit_section: an anchor or a heading, one of them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The note's path from the top of the notes folder.
    pub path: NotePath,
    /// Text that occurs exactly once in the body.
    pub anchor: Option<String>,
    /// A heading such as "## Plans", or a path of headings "# Project > ## Plans".
    pub heading: Option<String>,
    pub op: Op,
    /// The new text (for replace, empty deletes).
    pub content: String,
    /// The note's hash as note_read or the last write answered it; a different current hash is a conflict.
    pub expected_hash: Option<ExpectedHash>,
}

impl super::Touches for Args {
    fn touched(&self) -> String {
        self.path.to_string()
    }
}

pub async fn run(context: &ToolContext<'_>, args: Args, raw: serde_json::Value) -> Result<ToolOutput, ToolError> {
    let place = match (args.anchor, args.heading) {
        (Some(anchor), None) => {
            check_len("anchor", &anchor, 64 * 1024)?;
            Place::Anchor(anchor)
        }
        (None, Some(heading)) => {
            check_len("heading", &heading, 1024)?;
            Place::Heading(heading)
        }
        _ => return Err(ToolError::Invalid("give either anchor or heading, one of them".into())),
    };
    let op = match args.op {
        Op::Replace => SectionOp::Replace,
        Op::InsertBefore => SectionOp::InsertBefore,
        Op::InsertAfter => SectionOp::InsertAfter,
        Op::AppendWithin => SectionOp::AppendWithin,
    };
    let change = NoteChange::EditSection {
        place,
        op,
        content: args.content,
    };
    note_change::apply(
        context,
        DEF.name,
        raw,
        args.path.into_string(),
        change,
        args.expected_hash,
    )
    .await
}
