//! `skill_read`: one skill's instructions in full.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, check_len};
use crate::auth::Category;
use crate::journal::notes::ops::{self, Target};

pub const DEF: ToolDef = ToolDef {
    name: "skill_read",
    title: "read a skill",
    description: "Read one skill the owner wrote for agents, by the id from skills_list: its name, description and \
                  instructions.",
    needs: Need::Category(Category::Notes),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Arguments of skill_read.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The skill's id from skills_list (its folder's name).
    pub id: String,
}

/// What skill_read answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub id: String,
    pub name: String,
    pub description: String,
    pub path: String,
    pub body: String,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    check_len("id", &args.id, 256)?;
    let id = args.id.trim().to_string();
    if id.is_empty() || id.contains('/') || id.starts_with('.') {
        return Err(ToolError::Invalid("id: give a skill's id from skills_list".into()));
    }
    let read = context.read_note(Target::Skill(id)).await?;
    let skill = ops::skill_of(&read.note).ok_or_else(|| ToolError::Failed("a skill without its folder".into()))?;
    let (body, _) = super::fetch::cut(read.body, super::note_read::MAX_BODY_BYTES);
    ToolOutput::of(
        &Output {
            id: skill.id,
            name: skill.name,
            description: skill.description,
            path: skill.path,
            body,
        },
        false,
    )
}
