//! `fetch`: one item by the reference a search or listing gave, up to 64 KiB of text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::{content, notes};

pub const DEF: ToolDef = ToolDef {
    name: "fetch",
    title: "fetch an item",
    description: "Fetch one whole item (a transcript segment, an entity, a facet or a note) by the reference from search or a listing.",
    needs: Need::AnyRead,
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// The most text one fetch returns.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// The kinds of item a reference names that fetch (and search's `like`) take.
pub const KINDS: [&str; 4] = ["transcript", "entity", "facet", "note"];

/// The category an item of a reference's kind belongs to.
pub fn category_of(kind: &str) -> Category {
    match kind {
        "transcript" => Category::Transcripts,
        "entity" => Category::Entities,
        "note" => Category::Notes,
        _ => Category::Facets,
    }
}

/// Arguments of fetch.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A reference from search, list_transcripts or list_entities.
    pub reference: String,
}

/// What fetch answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    pub text: String,
    /// True when the text was cut at 64 KiB (use get_transcript to page through a long transcript).
    pub truncated: bool,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let (kind, path) = context.open_reference(&args.reference, &KINDS)?;
    let category = category_of(&kind);
    if category == Category::Notes {
        return fetch_note(context, path).await;
    }
    let item_facets = reachable_item(context, category, &kind, &path).await?;
    let (title, date, text) = match category {
        Category::Transcripts => {
            let segment = content::read_segment(context.journal, &path)?;
            let lines: Vec<String> = segment.lines.iter().map(|l| l.display()).collect();
            (segment.title(), Some(segment.day.to_string()), lines.join("\n"))
        }
        Category::Entities => {
            let entity = content::read_entity(context.journal, &path)?;
            let scope = context.connection.grant.scope(&context.facets);
            let mut text = format!("{} ({})", entity.name, entity.kind.as_str());
            if !entity.aka.is_empty() {
                text.push_str(&format!("\nAlso known as: {}", entity.aka.join(", ")));
            }
            for (facet, description) in entity.facets.iter().filter(|(f, _)| scope.allows_facet(f)) {
                text.push_str(&format!("\n{facet}: {description}"));
            }
            (entity.name, entity.last_seen, text)
        }
        Category::Notes | Category::Graph => return Err(gone()),
        Category::Facets => {
            let name = item_facets.first().cloned().unwrap_or_default();
            let facet = context.facets.iter().find(|f| f.name == name).ok_or_else(gone)?;
            (
                facet.display_title().to_string(),
                None,
                format!("{}\n{}", facet.display_title(), facet.description),
            )
        }
    };
    let (text, truncated) = cut(text, MAX_TEXT_BYTES);
    ToolOutput::of(
        &Output {
            title,
            date,
            text,
            truncated,
        },
        false,
    )
}

/// A note by the path its reference holds, through the same read (and the same missing answer) as
/// note_read.
async fn fetch_note(context: &ToolContext<'_>, path: String) -> Result<ToolOutput, ToolError> {
    if !context.connection.grant.has(Category::Notes) {
        return Err(ToolError::Refused(
            "this connection's access no longer includes notes".into(),
        ));
    }
    // Missing or hidden answers as any item that is gone; a failure stays a failure.
    let read = match context.read_note(notes::ops::Target::Path(path)).await {
        Ok(read) => read,
        Err(ToolError::Refused(_)) => return Err(gone()),
        Err(other) => return Err(other),
    };
    let date = super::format_ms(read.note.modified_ms).get(..10).map(str::to_string);
    let (text, truncated) = cut(read.body, MAX_TEXT_BYTES);
    ToolOutput::of(
        &Output {
            title: read.note.title,
            date,
            text,
            truncated,
        },
        false,
    )
}

/// Checks that a referenced item still exists, that its category is granted and that it lies within
/// the grant's facets; answers its facet names.
pub async fn reachable_item(
    context: &ToolContext<'_>,
    category: Category,
    kind: &str,
    path: &str,
) -> Result<Vec<String>, ToolError> {
    if !context.connection.grant.has(category) {
        return Err(ToolError::Refused(format!(
            "this connection's access no longer includes {}",
            category.as_str()
        )));
    }
    let facets = content::item_facets(context.journal, path, kind)
        .await?
        .ok_or_else(gone)?;
    if !context.connection.grant.scope(&context.facets).allows(&facets) {
        // Out of reach answers like a missing item.
        return Err(gone());
    }
    Ok(facets)
}

pub fn gone() -> ToolError {
    ToolError::Refused("that item no longer exists".into())
}

/// Cuts text to at most `max` bytes at a character boundary.
pub fn cut(mut text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    (text, true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cuts_at_character_boundaries() {
        assert_eq!(super::cut("héllo".into(), 2), ("h".into(), true));
        assert_eq!(super::cut("hello".into(), 5), ("hello".into(), false));
    }
}
