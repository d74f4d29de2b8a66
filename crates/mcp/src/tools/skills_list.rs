//! `skills_list`: the owner's instructions for agents, `Skills/<name>/SKILL.md` in the notes folder.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, nothing_matched};
use crate::auth::Category;
use crate::journal::notes::ops;

pub const DEF: ToolDef = ToolDef {
    name: "skills_list",
    title: "list skills",
    description: "List the skills the owner wrote for agents (Skills/<name>/SKILL.md): how the owner wants certain work \
                  done. Read one with skill_read before doing that work.",
    needs: Need::Category(Category::Notes),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// skills_list takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

/// What skills_list answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub skills: Vec<SkillEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One skill.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SkillEntry {
    /// What skill_read takes.
    pub id: String,
    pub name: String,
    pub description: String,
    pub path: String,
}

pub async fn run(context: &ToolContext<'_>, _args: Args) -> Result<ToolOutput, ToolError> {
    let reader = context.reader();
    let set = context.journal.notes.set();
    let skills: Vec<SkillEntry> = ops::skills(&set, &reader)
        .into_iter()
        .map(|s| SkillEntry {
            id: s.id,
            name: s.name,
            description: s.description,
            path: s.path,
        })
        .collect();
    let empty = skills.is_empty();
    let note = empty.then(|| nothing_matched("skills"));
    ToolOutput::of(&Output { skills, note }, empty)
}
