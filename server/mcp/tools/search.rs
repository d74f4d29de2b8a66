//! `search`: ranked hits across the categories the grant holds, within its facets.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Need, ToolContext, ToolDef, ToolError, ToolOutput, check_len, check_limit, day_range, nothing_matched, searchable,
};
use crate::auth::Category;
use crate::journal::day::Day;
use crate::journal::index::SearchQuery;

pub const DEF: ToolDef = ToolDef {
    name: "search",
    title: "search the journal",
    description: "Search the journal's text (transcripts, entities, facets, as granted). All words must match; use \"quotes\" \
                  for a phrase and -word to exclude. Returns ranked hits with a snippet and a reference for fetch.",
    needs: Need::AnyRead,
    read_only: true,
    idempotent: true,
    input: crate::mcp::schema::of::<Args>,
    output: crate::mcp::schema::of::<Output>,
};

/// Arguments of search.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What to look for, up to 4096 bytes.
    pub query: String,
    /// How many hits, 1-100 (default 10).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    pub cursor: Option<String>,
    /// Only this day (YYYY-MM-DD or YYYYMMDD).
    pub day: Option<String>,
    /// Only on or after this day.
    pub day_from: Option<String>,
    /// Only on or before this day.
    pub day_to: Option<String>,
    /// Only this category.
    pub category: Option<String>,
    /// Only this facet (an id from list_facets).
    pub facet: Option<String>,
}

/// What search answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub results: Vec<Hit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One hit.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Hit {
    pub title: String,
    /// The day of the item (YYYY-MM-DD), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    pub category: String,
    pub snippet: String,
    /// Pass to fetch for the whole item.
    pub reference: String,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    check_len("query", &args.query, 4096)?;
    if args.query.trim().is_empty() {
        return Err(ToolError::Invalid("query must not be empty".into()));
    }
    let limit = check_limit(args.limit, 10, 100)?;
    let (from, to) = day_range(args.day.as_deref(), args.day_from.as_deref(), args.day_to.as_deref())?;
    let granted = searchable(context.connection);
    let categories: Vec<Category> = match &args.category {
        None => granted,
        Some(name) => {
            check_len("category", name, 64)?;
            let category = Category::parse(name).filter(|c| granted.contains(c)).ok_or_else(|| {
                ToolError::Invalid(format!("category \"{name}\" is not one this connection can search"))
            })?;
            vec![category]
        }
    };
    let scope = context.scope(args.facet.as_deref())?;
    let request = format!(
        "{}\n{:?}\n{:?}\n{:?}\n{:?}\n{limit}",
        args.query, from, to, args.category, args.facet
    );
    let offset = match &args.cursor {
        Some(token) => context.open_cursor("search", &request, token)?,
        None => 0,
    };
    let query = SearchQuery {
        text: args.query.clone(),
        categories: categories.iter().map(|c| c.as_str().to_string()).collect(),
        facets: scope.names(),
        day_from: from.map(Day::as_number),
        day_to: to.map(Day::as_number),
        offset,
        limit,
    };
    let journal = context.journal.clone();
    let (hits, more) = tokio::task::spawn_blocking(move || journal.index.search(&query))
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let mut seen = std::collections::HashSet::new();
    let results: Vec<Hit> = hits
        .into_iter()
        // An entity can match through several of its documents; show it once a page.
        .filter(|hit| seen.insert(hit.path.clone()))
        .map(|hit| {
            let kind = kind_of(&hit.category);
            Hit {
                reference: context.reference(kind, &hit.path),
                date: hit.day.and_then(format_day),
                title: hit.title,
                category: hit.category,
                snippet: hit.snippet,
            }
        })
        .collect();
    let next_cursor = more.then(|| context.cursor("search", &request, offset + limit));
    let empty = results.is_empty();
    let note = empty.then(|| nothing_matched("items"));
    ToolOutput::of(
        &Output {
            results,
            next_cursor,
            note,
        },
        empty,
    )
}

/// The reference kind of an index category.
pub fn kind_of(category: &str) -> &'static str {
    match category {
        "transcripts" => "transcript",
        "entities" => "entity",
        _ => "facet",
    }
}

/// `YYYYMMDD` as `YYYY-MM-DD`.
pub fn format_day(number: u64) -> Option<String> {
    Day::parse(&number.to_string()).ok().map(|d| d.to_string())
}
