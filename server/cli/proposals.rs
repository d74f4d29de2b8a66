//! `journal proposals ...`: the owner's review, in the terminal, of the changes agents in propose
//! mode asked for: list them, show one's diff, accept or reject it.

use super::shown;
use std::sync::Arc;

use anyhow::bail;
use clap::Subcommand;

use crate::journal::Journal;
use crate::journal::day::format_timestamp;
use crate::journal::proposals::{Filter, Kind, Proposal, Status};
use crate::review::{self, Onto, ReviewError};

#[derive(Debug, Subcommand)]
pub enum ProposalsCommand {
    /// The proposals that wait for your review (with --status, those in another state), newest first.
    List {
        /// pending (the default), accepted, rejected or all.
        #[arg(long, default_value = "pending")]
        status: String,
        /// Only the proposals of the connection with this label.
        #[arg(long, value_name = "LABEL")]
        connection: Option<String>,
    },
    /// One proposal: who asked, the tool and its arguments, and the change as a unified diff.
    Show { id: i64 },
    /// Make the proposed change. Refused when the note changed since it was proposed, unless
    /// --onto-current: then the change is made to the note as it is now (see `show` for that diff).
    Accept {
        id: i64,
        #[arg(long)]
        onto_current: bool,
    },
    /// Turn the proposal down; the agent sees the outcome and the reason with my_proposals.
    Reject {
        id: i64,
        /// A word for the agent on why.
        #[arg(long, default_value = "")]
        reason: String,
    },
}

pub async fn run(journal: &Arc<Journal>, command: ProposalsCommand) -> anyhow::Result<()> {
    match command {
        ProposalsCommand::List { status, connection } => list(journal, &status, connection.as_deref()).await,
        ProposalsCommand::Show { id } => show(journal, id).await,
        ProposalsCommand::Accept { id, onto_current } => accept(journal, id, onto_current).await,
        ProposalsCommand::Reject { id, reason } => {
            review::reject(journal, id, &reason).await.map_err(review_error)?;
            say!("rejected proposal {id}");
            Ok(())
        }
    }
}

async fn list(journal: &Arc<Journal>, status: &str, label: Option<&str>) -> anyhow::Result<()> {
    let status = match status {
        "all" => None,
        other => Some(Status::parse(other).ok_or_else(|| {
            anyhow::anyhow!("--status {other} is not a state; use pending, accepted, rejected or all")
        })?),
    };
    let listed = review::list(
        journal,
        &Filter {
            status,
            limit: 1000,
            ..Filter::default()
        },
    )
    .await?;
    let listed: Vec<&Proposal> = listed
        .iter()
        .filter(|p| label.is_none_or(|l| p.label.eq_ignore_ascii_case(l)))
        .collect();
    if listed.is_empty() {
        say!(
            "no proposals{}",
            status.map_or(String::new(), |s| format!(" are {}", s.as_str()))
        );
        return Ok(());
    }
    for p in listed {
        say!(
            "{:>5}  {:<8}  {}  {}  {}  {}{}",
            p.id,
            p.status.as_str(),
            format_timestamp(p.at),
            shown::line(&p.label),
            shown::line(&p.tool),
            shown::line(&p.path),
            if p.instructs() {
                "  [instructions for agents]"
            } else {
                ""
            }
        );
    }
    Ok(())
}

async fn show(journal: &Arc<Journal>, id: i64) -> anyhow::Result<()> {
    let p = match review::get(journal, id).await {
        Err(ReviewError::NotFound(_)) => {
            bail!("there is no proposal {id}; `journal proposals list --status all` lists them")
        }
        other => other.map_err(review_error)?,
    };
    say!(
        "proposal {}: {} by {} at {}",
        p.id,
        p.status.as_str(),
        shown::line(&p.label),
        format_timestamp(p.at)
    );
    say!("{} {}", shown::line(&p.tool), shown::line(&p.arguments));
    if p.instructs() {
        say!("this changes instructions other agents follow (an AGENTS.md or a skill): read it as you would a prompt");
    }
    if !p.reason.is_empty() {
        say!("reason: {}", shown::line(&p.reason));
    }
    say_raw!("{}", shown::text(&p.diff));
    if p.status != Status::Pending {
        return Ok(());
    }
    let preview = match review::preview(journal, &p).await {
        Err(ReviewError::Removed { .. }) => {
            say!("the connection that proposed this was removed: the proposal can only be rejected");
            return Ok(());
        }
        other => other.map_err(review_error)?,
    };
    if preview.stale {
        say!("the note changed since this was proposed; made to the note as it is now, the change is:");
        match preview.diff_now {
            Ok(diff) => say_raw!("{}", shown::text(&diff)),
            Err(why) => say!("(it cannot be made now: {})", shown::line(&why)),
        }
        say!("accept it with --onto-current, or reject it");
    }
    Ok(())
}

async fn accept(journal: &Arc<Journal>, id: i64, onto_current: bool) -> anyhow::Result<()> {
    let onto = if onto_current { Onto::Current } else { Onto::Proposed };
    let accepted = review::accept(journal, id, onto).await.map_err(review_error)?;
    match accepted.kind {
        Kind::Note => say!("accepted proposal {id}: {} changed", accepted.path),
        Kind::Graph => say!("accepted proposal {id}: {}", shown::line(&accepted.path)),
    }
    Ok(())
}

/// A review refusal as one line that says what to do.
fn review_error(error: ReviewError) -> anyhow::Error {
    match error {
        ReviewError::NotFound(id) => {
            anyhow::anyhow!("there is no proposal {id}; `journal proposals list` lists those waiting")
        }
        ReviewError::Stale { path, .. } => anyhow::anyhow!(
            "the note {path} changed since this was proposed; see the change against it now with `journal proposals \
             show`, then accept with --onto-current or reject"
        ),
        other => anyhow::anyhow!("{other}"),
    }
}
