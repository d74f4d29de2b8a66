//! The activity page: the audit log, filtered by connection, tool, outcome and day, a page at a
//! time, with charts of calls per day by connection and by outcome over the two weeks up to the
//! chosen day. Filters are a plain GET form, so a filtered view is a link the owner can keep.

use askama::Template;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::chart::{self, Chart};
use super::form::malformed;
use super::refusals::unavailable;
use super::session::Owner;
use super::summary;
use crate::app::AppState;
use crate::auth::AuthError;
use crate::auth::activity::{self, Filter, Kind};
use crate::auth::audit::Outcome;
use crate::journal::day::{Day, format_timestamp};
use crate::mcp::tools;
use crate::page;
use crate::page::form::Params;

/// Entries a page shows.
const PAGE_SIZE: i64 = 50;
/// Days the charts cover, ending on the chosen day (or today).
const CHART_DAYS: i64 = 14;

/// One option of a filter's list.
pub struct Choice {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

/// One call in the table.
pub struct CallRow {
    pub at: String,
    pub connection_id: String,
    pub connection: String,
    pub tool: String,
    pub outcome: String,
    pub detail: String,
    /// For a change: the note and the write mode.
    pub change: Option<(String, String)>,
}

#[derive(Template)]
#[template(path = "app/activity.html")]
struct ActivityPage {
    nonce: String,
    csrf: String,
    /// Where this session's pages are (`/app/<place>`), for every link and form.
    base: String,
    section: &'static str,
    connections: Vec<Choice>,
    tools: Vec<Choice>,
    outcomes: Vec<Choice>,
    kinds: Vec<Choice>,
    day: String,
    filtered: bool,
    rows: Vec<CallRow>,
    /// The link to the next, older page, when there is one.
    older: Option<String>,
    charts: Vec<Chart>,
}

/// The query's filters, read strictly: a value no form of the page sends is refused, not ignored,
/// so the owner never looks at an unfiltered log believing it filtered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    pub filter: Filter,
    pub before: Option<i64>,
}

/// Reads `connection`, `tool`, `outcome`, `kind`, `day` and `before`; empty fields are no filter.
pub fn read_query(params: &Params) -> Result<Query, String> {
    let field = |name: &str| -> Result<Option<String>, String> {
        let value = params.one(name).map_err(|e| e.description)?;
        Ok(value.map(str::trim).filter(|v| !v.is_empty()).map(str::to_string))
    };
    let connection_id = field("connection")?;
    if connection_id.as_ref().is_some_and(|id| id.len() > 64) {
        return Err("that connection id is too long".into());
    }
    let tool = field("tool")?;
    if tool.as_ref().is_some_and(|tool| tool.len() > 128) {
        return Err("that tool name is too long".into());
    }
    let outcome = match field("outcome")? {
        None => None,
        Some(text) => Some(Outcome::parse(&text).ok_or_else(|| format!("\"{text}\" is not an outcome"))?),
    };
    let kind = match field("kind")? {
        None => None,
        Some(text) => Some(Kind::parse(&text).ok_or_else(|| format!("\"{text}\" is not a kind of call"))?),
    };
    let day = match field("day")? {
        None => None,
        Some(text) => Some(Day::parse(&text).map_err(|e| e.to_string())?),
    };
    let before = match field("before")? {
        None => None,
        Some(text) => Some(
            text.parse::<i64>()
                .map_err(|_| format!("\"{text}\" is not a place in the log"))?,
        ),
    };
    Ok(Query {
        filter: Filter {
            connection_id,
            tool,
            outcome,
            day,
            kind,
        },
        before,
    })
}

/// `GET /app/activity`.
pub async fn show(State(state): State<AppState>, owner: Owner, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let query = match read_query(&params) {
        Ok(query) => query,
        Err(reason) => {
            tracing::debug!(%reason, "an activity filter was refused");
            return malformed();
        }
    };
    match gather(&state, &owner, &query).await {
        Ok(page) => crate::page::html(StatusCode::OK, &page, &page.nonce.clone(), None),
        Err(error) => unavailable(error),
    }
}

async fn gather(state: &AppState, owner: &Owner, query: &Query) -> Result<ActivityPage, AuthError> {
    let db = &state.journal.db;
    let filter = &query.filter;
    let page = activity::page(db, filter, query.before, PAGE_SIZE).await?;
    let last = filter.day.unwrap_or_else(Day::today);
    let days: Vec<Day> = (0..CHART_DAYS).rev().map(|n| last.minus_days(n)).collect();
    let counts = activity::per_day(db, filter, days[0], last).await?;

    // Current connections first (by their current names), then any others the log remembers.
    let current = summary::without_calls(db).await?;
    let mut known: Vec<(String, String)> = current
        .iter()
        .map(|s| (s.connection.id.clone(), s.connection.label.clone()))
        .collect();
    for (id, label) in activity::connections_seen(db).await? {
        if !known.iter().any(|(known_id, _)| *known_id == id) {
            known.push((id, format!("{label} (revoked)")));
        }
    }
    let connections = known
        .into_iter()
        .map(|(id, label)| Choice {
            selected: filter.connection_id.as_deref() == Some(id.as_str()),
            value: id,
            label,
        })
        .collect();
    let tools = tools::ALL
        .iter()
        .map(|tool| Choice {
            value: tool.name.to_string(),
            label: tool.name.to_string(),
            selected: filter.tool.as_deref() == Some(tool.name),
        })
        .collect();
    let outcomes = Outcome::ALL
        .iter()
        .map(|outcome| Choice {
            value: outcome.as_str().to_string(),
            label: outcome.as_str().to_string(),
            selected: filter.outcome == Some(*outcome),
        })
        .collect();
    let kinds = Kind::ALL
        .iter()
        .map(|kind| Choice {
            value: kind.as_str().to_string(),
            label: match kind {
                Kind::Changes => "changes to notes".to_string(),
                Kind::Reads => "reads".to_string(),
            },
            selected: filter.kind == Some(*kind),
        })
        .collect();
    let older = page.older.map(|before| link(filter, before));
    Ok(ActivityPage {
        nonce: page::nonce(),
        csrf: owner.csrf.clone(),
        base: owner.base.clone(),
        section: "activity",
        connections,
        tools,
        outcomes,
        kinds,
        day: filter.day.map(|d| d.to_string()).unwrap_or_default(),
        filtered: *filter != Filter::default(),
        rows: page
            .entries
            .into_iter()
            .map(|entry| CallRow {
                at: format_timestamp(entry.at),
                connection_id: entry.connection_id,
                connection: entry.connection_label,
                tool: entry.tool,
                outcome: entry.outcome,
                detail: entry.detail,
                change: entry.change.map(|c| (c.path, c.write_mode)),
            })
            .collect(),
        older,
        charts: vec![chart::by_connection(&days, &counts), chart::by_outcome(&days, &counts)],
    })
}

/// The query of the page of older entries under the same filters (after the page's own path).
fn link(filter: &Filter, before: i64) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    if let Some(id) = &filter.connection_id {
        query.append_pair("connection", id);
    }
    if let Some(tool) = &filter.tool {
        query.append_pair("tool", tool);
    }
    if let Some(outcome) = filter.outcome {
        query.append_pair("outcome", outcome.as_str());
    }
    if let Some(kind) = filter.kind {
        query.append_pair("kind", kind.as_str());
    }
    if let Some(day) = filter.day {
        query.append_pair("day", &day.to_string());
    }
    query.append_pair("before", &before.to_string());
    format!("?{}", query.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(query: &str) -> Result<Query, String> {
        read_query(&Params::parse(query.as_bytes()))
    }

    #[test]
    fn filters_are_read_strictly() {
        assert_eq!(read("").unwrap(), Query::default());
        assert_eq!(read("connection=&tool=&outcome=&day=").unwrap(), Query::default());
        let query = read("connection=abc&tool=search&outcome=refused&day=2026-12-01&before=42").unwrap();
        assert_eq!(query.filter.connection_id.as_deref(), Some("abc"));
        assert_eq!(query.filter.tool.as_deref(), Some("search"));
        assert_eq!(query.filter.outcome, Some(Outcome::Refused));
        assert_eq!(query.filter.day, Some(Day::parse("2026-12-01").unwrap()));
        assert_eq!(query.before, Some(42));
        assert!(read("outcome=maybe").unwrap_err().contains("not an outcome"));
        assert!(read("day=2026-02-30").is_err());
        assert!(read("before=soon").is_err());
        assert!(read("tool=a&tool=b").is_err());
        assert!(read(&format!("connection={}", "x".repeat(65))).is_err());
        assert_eq!(read("kind=changes").unwrap().filter.kind, Some(Kind::Changes));
        assert_eq!(read("kind=reads").unwrap().filter.kind, Some(Kind::Reads));
        assert!(read("kind=writes").unwrap_err().contains("not a kind of call"));
        let link = link(&read("kind=changes").unwrap().filter, 7);
        assert!(link.contains("kind=changes") && link.contains("before=7"), "{link}");
    }

    #[test]
    fn the_older_link_keeps_the_filters() {
        let query = read("tool=search&outcome=served&day=20261201").unwrap();
        let older = link(&query.filter, 7);
        assert_eq!(older, "?tool=search&outcome=served&day=2026-12-01&before=7");
        let again = read(older.split_once('?').unwrap().1).unwrap();
        assert_eq!(again.filter, query.filter);
        assert_eq!(again.before, Some(7));
    }
}
