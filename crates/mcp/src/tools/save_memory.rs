//! `save_memory`: the connection saves a note for itself. Idempotent per `operation_id`; durable
//! on disk before it answers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::clock::unix_now;
use crate::journal::memory::{self, MemoryError, SaveOutcome};

pub const DEF: ToolDef = ToolDef {
    name: "save_memory",
    title: "save a memory",
    description: "Save a note for yourself (only this connection can recall it). Give each new note its own operation_id; \
                  repeating a save with the same operation_id and content is safe and answers \"replayed\".",
    needs: Need::Nothing,
    read_only: false,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Arguments of save_memory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The note, 1 to 32768 bytes of text.
    pub content: String,
    /// A unique id for this save, 1-128 characters of A-Z a-z 0-9 . _ : -; retries reuse it.
    pub operation_id: String,
}

/// What save_memory answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    /// "saved", or "replayed" when this operation_id was saved before.
    pub status: String,
    pub memory: MemoryView,
}

/// One memory as agents see it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MemoryView {
    pub operation_id: String,
    pub saved_at: String,
    pub day: String,
    pub content: String,
}

impl From<memory::Memory> for MemoryView {
    fn from(m: memory::Memory) -> MemoryView {
        MemoryView {
            operation_id: m.operation_id,
            saved_at: m.saved_at,
            day: m.day,
            content: m.content,
        }
    }
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let root = context.journal.root().to_path_buf();
    let connection_id = context.connection.id.clone();
    let saved = tokio::task::spawn_blocking(move || {
        memory::save(&root, &connection_id, &args.operation_id, &args.content, unix_now())
    })
    .await?;
    let (memory, outcome) = saved.map_err(|e| match e {
        MemoryError::Io(_) | MemoryError::Corrupt(_) => ToolError::Failed(e.to_string()),
        other => ToolError::Invalid(other.to_string()),
    })?;
    let status = if outcome == SaveOutcome::Saved {
        "saved"
    } else {
        "replayed"
    };
    let output = Output {
        status: status.into(),
        memory: memory.into(),
    };
    ToolOutput::of(&output, false)
}
