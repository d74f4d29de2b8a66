//! The tools: one file each, plus the shared rules for arguments, references and results.
//!
//! A tool is a `ToolDef` (name, descriptions, what it needs from a grant, its schemas) and a `run`
//! function that takes typed, checked arguments and calls one `journal` operation. Which tools a
//! connection sees, and the enums in their schemas, follow from its grant here; `dispatch` checks the
//! grant again on every call, so a narrowed grant refuses at once.

/// A tool's `Handler`, made from the `run` function (and, for a write tool, the `Args` type) of the
/// file it is written in: `handler!(read)` for a tool that takes its typed arguments,
/// `handler!(write)` for one that also keeps the arguments as sent (with a proposal) and names what
/// it touches for the audit (`Args: Touches`).
macro_rules! handler {
    (read) => {
        $crate::tools::Handler {
            call: |context, arguments| {
                $crate::tools::boxed(async move { run(context, $crate::tools::parse(&arguments)?).await })
            },
            touched: |_| None,
        }
    };
    (write) => {
        $crate::tools::Handler {
            call: |context, arguments| {
                $crate::tools::boxed(async move { run(context, $crate::tools::parse(&arguments)?, arguments).await })
            },
            touched: |arguments| {
                $crate::tools::parse::<Args>(arguments)
                    .ok()
                    .map(|args| $crate::tools::Touches::touched(&args))
            },
        }
    };
}

pub mod args;
pub mod base_query;
pub mod connect;
pub mod describe_item;
pub mod disconnect;
pub mod fetch;
pub mod find_connections;
pub mod get_entity;
pub mod get_transcript;
pub mod graph;
pub mod list_entities;
pub mod list_facets;
pub mod list_transcripts;
pub mod list_types;
pub mod my_proposals;
pub mod note_append;
pub mod note_change;
pub mod note_create;
pub mod note_delete;
pub mod note_edit_section;
pub mod note_move;
pub mod note_read;
pub mod note_set_properties;
pub mod note_write;
pub mod notes_list;
pub mod recall_memory;
pub mod recent_activity;
pub mod save_memory;
pub mod search;
pub mod set_connection_type;
pub mod skill_read;
pub mod skills_list;
pub mod write_connection_note;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::asking::Question;
use super::protocol::Version;
use super::schema;
use crate::auth::{Category, Connection, WriteMode};
use crate::journal::content::Scope;
use crate::journal::day::Day;
use crate::journal::facet::Facet;
use crate::journal::notes::ops::{self, NoteText, Target};
use crate::journal::signed::MAX_TOKEN_BYTES;
use crate::journal::{Journal, JournalError};

/// What a tool needs from the grant before it is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Nothing,
    /// Any of the readable categories.
    AnyRead,
    Category(Category),
    /// The category and a write mode (`propose` stages changes for the owner, `force` makes them).
    Write(Category),
    /// A write mode and a category that can be written (notes or the graph): what proposals need.
    AnyWrite,
}

/// A tool's static description.
pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub needs: Need,
    pub read_only: bool,
    /// May remove or overwrite what is there (MCP's `destructiveHint`).
    pub destructive: bool,
    pub idempotent: bool,
    pub input: fn() -> Value,
    pub output: fn() -> Value,
    /// How it runs (`handler!` in the tool's file).
    pub handler: Handler,
    /// What it asks the person before it runs with these arguments, when the client can ask
    /// (2026-07-28, elicitation declared); None for a tool that never asks.
    pub asks: Option<fn(&Value) -> Option<Question>>,
}

/// A tool call in flight.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// How a tool runs, beside its description, so that the list of tools is the one list `ALL`.
#[derive(Clone, Copy)]
pub struct Handler {
    /// Checks the arguments into the tool's typed `Args` and runs it.
    pub call: for<'a, 'b> fn(&'a ToolContext<'b>, Value) -> ToolFuture<'a>,
    /// What a write tool's call names (a note's path, `from → to`, a connection's id), read from its
    /// typed arguments; None for a read tool, or arguments that do not check.
    pub touched: fn(&Value) -> Option<String>,
}

/// What a write tool's call names, for its audit record.
pub trait Touches {
    fn touched(&self) -> String;
}

/// A tool's future, boxed (for `handler!`).
pub fn boxed<'a>(future: impl Future<Output = Result<ToolOutput, ToolError>> + Send + 'a) -> ToolFuture<'a> {
    Box::pin(future)
}

/// Every tool, in the order `tools/list` shows them.
pub const ALL: [&ToolDef; 30] = [
    &save_memory::DEF,
    &recall_memory::DEF,
    &list_facets::DEF,
    &search::DEF,
    &fetch::DEF,
    &list_transcripts::DEF,
    &get_transcript::DEF,
    &list_entities::DEF,
    &get_entity::DEF,
    &notes_list::DEF,
    &note_read::DEF,
    &base_query::DEF,
    &note_create::DEF,
    &note_write::DEF,
    &note_append::DEF,
    &note_edit_section::DEF,
    &note_set_properties::DEF,
    &note_delete::DEF,
    &note_move::DEF,
    &my_proposals::DEF,
    &skills_list::DEF,
    &skill_read::DEF,
    &find_connections::DEF,
    &describe_item::DEF,
    &list_types::DEF,
    &recent_activity::DEF,
    &connect::DEF,
    &set_connection_type::DEF,
    &write_connection_note::DEF,
    &disconnect::DEF,
];

/// Everything a tool may use for one call.
pub struct ToolContext<'a> {
    pub journal: &'a Arc<Journal>,
    pub connection: &'a Connection,
    pub facets: Arc<Vec<Facet>>,
}

/// A tool's successful answer: the structured result, serialized once (it is sent twice, as the
/// structured content and as the text block that repeats it), and whether it found nothing.
pub struct ToolOutput {
    /// The result object as JSON text.
    pub json: String,
    pub empty: bool,
}

impl ToolOutput {
    /// Serializes a tool's result. Results are plain structs of strings and numbers; should one ever
    /// fail to serialize, the call fails rather than answering with something else.
    pub fn of<T: serde::Serialize>(output: &T, empty: bool) -> Result<ToolOutput, ToolError> {
        let json = serde_json::to_string(output).map_err(|e| ToolError::Failed(format!("the result: {e}")))?;
        Ok(ToolOutput { json, empty })
    }
}

/// Why a tool call did not succeed. Every variant becomes an `isError` result, never a protocol error.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments were wrong; the text says how.
    #[error("{0}")]
    Invalid(String),
    /// The grant does not allow it, or the item is out of reach.
    #[error("{0}")]
    Refused(String),
    /// The journal failed; details are logged, not shown.
    #[error("the journal could not answer this call; the owner can find details in the server log")]
    Failed(String),
}

impl From<JournalError> for ToolError {
    fn from(error: JournalError) -> ToolError {
        match error {
            JournalError::Invalid(message) => ToolError::Invalid(message),
            JournalError::NotFound(message) => ToolError::Refused(message),
            other => ToolError::Failed(other.to_string()),
        }
    }
}

/// A blocking task that did not finish (it panicked, or the runtime is shutting down).
impl From<tokio::task::JoinError> for ToolError {
    fn from(error: tokio::task::JoinError) -> ToolError {
        ToolError::Failed(error.to_string())
    }
}

/// The review's listing could not read the journal (it refuses nothing an agent asks of it).
impl From<crate::review::ReviewError> for ToolError {
    fn from(error: crate::review::ReviewError) -> ToolError {
        ToolError::Failed(error.to_string())
    }
}

impl ToolDef {
    /// The tool's input and output schemas, generated once per process: generating them is far
    /// costlier than copying them, and `tools/list` is called often.
    pub fn schemas(&self) -> &'static (Value, Value) {
        static CACHE: std::sync::OnceLock<std::collections::HashMap<&'static str, (Value, Value)>> =
            std::sync::OnceLock::new();
        let cache = CACHE.get_or_init(|| {
            ALL.iter()
                .map(|tool| (tool.name, ((tool.input)(), (tool.output)())))
                .collect()
        });
        &cache[self.name]
    }

    /// Whether this tool changes the owner's content (its calls are audited as changes).
    pub fn writes(&self) -> bool {
        matches!(self.needs, Need::Write(_)) && !self.read_only
    }

    /// Whether a grant offers this tool.
    pub fn offered(&self, connection: &Connection) -> bool {
        match self.needs {
            Need::Nothing => true,
            Need::AnyRead => !searchable(connection).is_empty(),
            Need::Category(category) => connection.grant.has(category),
            Need::Write(category) => connection.grant.has(category) && connection.grant.write_mode != WriteMode::None,
            Need::AnyWrite => {
                (connection.grant.has(Category::Notes) || connection.grant.has(Category::Graph))
                    && connection.grant.write_mode != WriteMode::None
            }
        }
    }

    /// The `tools/list` entry for this connection and protocol version.
    pub fn listing(&self, context: &ToolContext<'_>, version: Version) -> Value {
        let (input, output) = self.schemas();
        let mut input = input.clone();
        schema::set_enum(&mut input, "facet", &context.reachable_facet_ids());
        let categories: Vec<String> = searchable(context.connection)
            .iter()
            .map(|c| c.as_str().to_string())
            .collect();
        schema::set_enum(&mut input, "category", &categories);
        let mut annotations = json!({
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": false,
        });
        let mut entry = json!({ "name": self.name, "description": self.description, "inputSchema": input });
        if version.has_structured_tools() {
            entry["title"] = json!(self.title);
            annotations["title"] = json!(self.title);
            entry["outputSchema"] = output.clone();
        }
        entry["annotations"] = annotations;
        entry
    }
}

/// The searchable categories a connection holds.
pub fn searchable(connection: &Connection) -> Vec<Category> {
    Category::SEARCHABLE
        .into_iter()
        .filter(|c| connection.grant.has(*c))
        .collect()
}

/// What a write tool's call names, for its audit record: what its typed arguments name, or, for
/// arguments that do not check (the call is refused, but audited all the same), the text as sent
/// without control characters; empty when there is none.
pub fn touched(tool: &ToolDef, arguments: &Value) -> String {
    if let Some(named) = (tool.handler.touched)(arguments) {
        return named;
    }
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    if let (Some(from), Some(to)) = (text("from"), text("to")) {
        return format!("{} → {}", clean(from), clean(to));
    }
    text("path").or_else(|| text("id")).map(clean).unwrap_or_default()
}

/// Text an agent sent, as the audit keeps it: no control characters, at most 256 of them.
fn clean(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(256).collect()
}

/// A path a note tool names that may be a note or a folder: the normalized note path when it is
/// one, else the folder as typed.
pub fn named_path(text: &str) -> String {
    if text.trim_end().ends_with('/') {
        return clean(text.trim());
    }
    match args::NotePath::parse(text) {
        Ok(path) => path.into_string(),
        Err(_) => clean(text),
    }
}

/// Finds a tool by name.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    ALL.iter().copied().find(|t| t.name == name)
}

/// Runs a tool that the caller has already checked is offered.
pub async fn call(tool: &ToolDef, arguments: Value, context: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
    (tool.handler.call)(context, arguments).await
}

/// A call's arguments as the tool's typed `Args` (for `handler!`), read in place: a write tool's
/// arguments are read twice (what it touches, for the audit before it runs; then to run it), and
/// neither copies them.
pub fn parse<T: DeserializeOwned>(arguments: &Value) -> Result<T, ToolError> {
    <T as serde::Deserialize>::deserialize(arguments).map_err(|e| ToolError::Invalid(format!("invalid arguments: {e}")))
}

impl ToolContext<'_> {
    /// The connection as a reader of notes: its grant's reach and the label notes' overrides name.
    pub fn reader(&self) -> crate::journal::notes::Reader {
        self.connection.reader(&self.facets)
    }

    /// Facet ids the grant reaches, for the `facet` enum.
    pub fn reachable_facet_ids(&self) -> Vec<String> {
        self.connection
            .grant
            .reachable(&self.facets)
            .into_iter()
            .map(|f| f.id.clone())
            .collect()
    }

    /// The grant's reach, narrowed to one facet id when the call names one.
    pub fn scope(&self, facet: Option<&args::FacetId>) -> Result<Scope, ToolError> {
        let Some(id) = facet.map(args::FacetId::as_str) else {
            return Ok(self.connection.grant.scope(&self.facets));
        };
        self.reachable_scope(|f| f.id == id, &format!("facet \"{id}\""))
    }

    /// A facet named in a query (`facet:work`), by name or id, among those the grant reaches; one
    /// outside the grant is unknown, like in `scope`.
    pub fn facet_by_name(&self, name: &str) -> Result<Scope, ToolError> {
        check_len("facet", name, 256)?;
        self.reachable_scope(|f| f.name == name || f.id == name, &format!("facet:{name}"))
    }

    /// The scope of the one reachable facet `wanted` picks. An unknown facet and one outside the
    /// grant answer alike: the agent learns nothing either way.
    fn reachable_scope(&self, wanted: impl Fn(&Facet) -> bool, named: &str) -> Result<Scope, ToolError> {
        let reachable = self.connection.grant.reachable(&self.facets);
        let facet = reachable.into_iter().find(|f| wanted(f)).ok_or_else(|| {
            ToolError::Invalid(format!(
                "{named} is not one of the facets this connection can read; see list_facets"
            ))
        })?;
        Ok(Scope::Facets(vec![facet.name.clone()]))
    }

    /// Reads a note for this connection, off the async workers. A missing, hidden or quarantined
    /// note is `NoteError::Missing`, with the one text for all three.
    pub async fn read_note(&self, target: Target) -> Result<NoteText, ToolError> {
        let reader = self.reader();
        let journal = self.journal.clone();
        tokio::task::spawn_blocking(move || ops::read(&journal.notes, &reader, &target))
            .await?
            .map_err(|e| ToolError::Refused(e.to_string()))
    }

    /// A reference to an item, bound to this connection, its grant generation and the item's kind.
    pub fn reference(&self, kind: &str, path: &str) -> String {
        let generation = self.connection.grant.generation.to_string();
        self.journal
            .signing_key()
            .sign("ref", &[kind, &self.connection.id, &generation, path])
    }

    /// Opens a reference of one of `kinds`; answers (kind, path).
    pub fn open_reference(&self, token: &str, kinds: &[&str]) -> Result<(String, String), ToolError> {
        check_len("reference", token, MAX_TOKEN_BYTES)?;
        let invalid = || {
            ToolError::Invalid(
                "that reference is not valid here: use a reference from a search or listing made with this connection"
                    .into(),
            )
        };
        let fields = self.journal.signing_key().verify("ref", token).ok_or_else(invalid)?;
        let [kind, connection, generation, path] = fields.as_slice() else {
            return Err(invalid());
        };
        if connection != &self.connection.id || !kinds.contains(&kind.as_str()) {
            return Err(invalid());
        }
        if generation != &self.connection.grant.generation.to_string() {
            return Err(ToolError::Refused(
                "that reference was issued before this connection's access changed; search or list again for a fresh one".into(),
            ));
        }
        Ok((kind.clone(), path.clone()))
    }

    /// A cursor that continues a listing: bound to the connection, generation and the request.
    pub fn cursor(&self, purpose: &str, request: &str, offset: usize) -> String {
        let generation = self.connection.grant.generation.to_string();
        self.journal.signing_key().sign(
            purpose,
            &[&self.connection.id, &generation, &digest(request), &offset.to_string()],
        )
    }

    /// Where a page starts: 0 without a cursor, else the offset the cursor carries.
    pub fn offset(&self, purpose: &str, request: &str, cursor: Option<&args::Cursor>) -> Result<usize, ToolError> {
        cursor.map_or(Ok(0), |cursor| self.open_cursor(purpose, request, cursor.as_str()))
    }

    /// Reads a cursor back into its offset, refusing one made for another request.
    fn open_cursor(&self, purpose: &str, request: &str, token: &str) -> Result<usize, ToolError> {
        check_len("cursor", token, MAX_TOKEN_BYTES)?;
        let invalid = || {
            ToolError::Invalid("that cursor is not valid for this request: repeat the request without a cursor".into())
        };
        let fields = self.journal.signing_key().verify(purpose, token).ok_or_else(invalid)?;
        let [connection, generation, request_digest, offset] = fields.as_slice() else {
            return Err(invalid());
        };
        if connection != &self.connection.id
            || generation != &self.connection.grant.generation.to_string()
            || request_digest != &digest(request)
        {
            return Err(invalid());
        }
        offset.parse().map_err(|_| invalid())
    }
}

fn digest(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Checks a string argument's length in bytes.
pub fn check_len(field: &str, value: &str, max: usize) -> Result<(), ToolError> {
    if value.len() > max {
        return Err(ToolError::Invalid(format!("{field} is too long: at most {max} bytes")));
    }
    Ok(())
}

/// Combines `day`, `day_from` and `day_to` into an inclusive range.
pub fn day_range(
    day: Option<args::DayArg>,
    from: Option<args::DayArg>,
    to: Option<args::DayArg>,
) -> Result<(Option<Day>, Option<Day>), ToolError> {
    let (day, from, to) = (day.map(|d| d.0), from.map(|d| d.0), to.map(|d| d.0));
    if day.is_some() && (from.is_some() || to.is_some()) {
        return Err(ToolError::Invalid(
            "give either day, or day_from and day_to, not both".into(),
        ));
    }
    if let (Some(from), Some(to)) = (from, to)
        && from > to
    {
        return Err(ToolError::Invalid(format!("day_from ({from}) is after day_to ({to})")));
    }
    Ok(if day.is_some() { (day, day) } else { (from, to) })
}

/// Reads a `since` argument: a day (from its midnight, UTC) or an RFC 3339 time, as Unix milliseconds.
pub fn since_ms(text: &str) -> Result<i64, ToolError> {
    check_len("since", text, 64)?;
    let text = text.trim();
    if let Ok(day) = Day::parse(text) {
        return Ok(day.epoch_days() * 86_400_000);
    }
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
        .map_err(|_| {
            ToolError::Invalid(format!(
                "since: \"{text}\" is neither a day (YYYY-MM-DD) nor a time (RFC 3339, e.g. 2026-11-30T14:00:00Z)"
            ))
        })
}

/// Unix milliseconds as an RFC 3339 UTC time, to the second.
pub fn format_ms(ms: i64) -> String {
    crate::journal::day::format_timestamp(ms.div_euclid(1000))
}

/// The sentence an empty answer carries: small models otherwise keep calling.
pub fn nothing_matched(what: &str) -> String {
    format!("No {what} matched. This answer is complete: there is nothing more to fetch for this request.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_audited_with_what_its_typed_arguments_name() {
        let named = |tool: &ToolDef, arguments: Value| touched(tool, &arguments);
        assert_eq!(
            named(&note_append::DEF, json!({"path": "Projects/alpha", "text": "x"})),
            "Projects/alpha.md"
        );
        assert_eq!(
            named(&note_delete::DEF, json!({"path": "Old/ ", "confirm": true})),
            "Old/"
        );
        assert_eq!(
            named(&note_move::DEF, json!({"from": "a", "to": "B/\u{7}"})),
            "a.md → B/"
        );
        assert_eq!(
            named(&connect::DEF, json!({"from": "Inbox.md", "to": "entity:ada-okafor"})),
            "Inbox.md → entity:ada-okafor"
        );
        assert_eq!(named(&disconnect::DEF, json!({"id": "c-aaaaaaaaaa"})), "c-aaaaaaaaaa");
        // Arguments that do not check are audited as sent, without control characters.
        assert_eq!(
            named(&note_append::DEF, json!({"path": "../x\u{1b}", "text": "x"})),
            "../x"
        );
        assert_eq!(named(&note_append::DEF, json!({"text": "x"})), "");
        assert_eq!(
            named(&search::DEF, json!({"query": "x"})),
            "",
            "a read tool names nothing"
        );
    }

    #[test]
    fn every_tool_file_is_in_the_one_list() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools");
        let mut files: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|entry| {
                entry
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .filter(|name| !["mod", "args", "graph", "note_change"].contains(&name.as_str()))
            .collect();
        files.sort();
        let mut listed: Vec<String> = ALL.iter().map(|tool| tool.name.to_string()).collect();
        listed.sort();
        assert_eq!(files, listed);
    }

    #[test]
    fn the_docs_table_of_grants_is_the_one_list() {
        let docs = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mcp.md"))
            .unwrap();
        let table = docs
            .split("| tool | offered when the grant has |\n|---|---|\n")
            .nth(1)
            .expect("docs/mcp.md has the table of grants");
        let mut documented = std::collections::BTreeMap::new();
        for row in table.lines().take_while(|line| line.starts_with('|')) {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
            let when = cells[1];
            let category = |name: &str| Category::parse(name).unwrap();
            let needs = if when.starts_with("always") {
                Need::Nothing
            } else if when == "at least one category" {
                Need::AnyRead
            } else if when == "`notes` or `graph`, and the write mode `propose` or `force`" {
                Need::AnyWrite
            } else if let Some(name) = when.strip_suffix(" and the write mode `propose` or `force`") {
                Need::Write(category(name.trim_matches('`')))
            } else {
                Need::Category(category(when.trim_matches('`')))
            };
            for name in cells[0].split(", ") {
                assert!(
                    documented.insert(name.trim_matches('`').to_string(), needs).is_none(),
                    "{name} twice"
                );
            }
        }
        let registry: std::collections::BTreeMap<String, Need> =
            ALL.iter().map(|tool| (tool.name.to_string(), tool.needs)).collect();
        assert_eq!(documented, registry);
    }

    #[test]
    fn argument_rules() {
        assert!(check_len("query", &"x".repeat(4097), 4096).is_err());
        let day = |text: &str| Some(args::DayArg(Day::parse(text).unwrap()));
        let (from, to) = day_range(day("20261120"), None, None).unwrap();
        assert_eq!(
            (from.unwrap().to_string(), to.unwrap().to_string()),
            ("2026-11-20".into(), "2026-11-20".into())
        );
        let (from, to) = day_range(None, day("2026-11-01"), None).unwrap();
        assert_eq!((from.unwrap().to_string(), to), ("2026-11-01".into(), None));
        let both = day_range(day("2026-11-20"), day("2026-11-01"), None).unwrap_err();
        assert!(both.to_string().contains("not both"), "{both}");
        let reversed = day_range(None, day("2026-11-20"), day("2026-11-01")).unwrap_err();
        assert!(reversed.to_string().contains("is after"), "{reversed}");
    }

    #[test]
    fn tool_names_follow_the_specification() {
        for tool in ALL {
            assert!((1..=128).contains(&tool.name.len()));
            assert!(
                tool.name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
            );
            let input = (tool.input)();
            assert_eq!(input["type"], "object", "{}", tool.name);
            assert_eq!(input["additionalProperties"], false, "{}", tool.name);
            assert_eq!((tool.output)()["type"], "object", "{}", tool.name);
            if let Some(limit) = input["properties"].get("limit") {
                assert_eq!(limit["minimum"], 1, "{}", tool.name);
                assert!(
                    [20, 100, 1000].contains(&limit["maximum"].as_u64().unwrap()),
                    "{}",
                    tool.name
                );
            }
        }
    }
}
