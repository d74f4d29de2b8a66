//! Every connection as the owner's pages show it: minted keys and signed-in apps side by side,
//! with their grant in words, route, dates and number of calls. The overview, the connections page
//! and one connection's page all read through here, so they never disagree.

use crate::auth::{AuthError, Connection, audit, connections};
use crate::journal::day::format_timestamp;
use crate::journal::facet::Facet;
use crate::oauth::store;

/// One connection with what the pages say about it.
pub struct Summary {
    pub connection: Connection,
    /// The app's OAuth client id; None for a key.
    pub client_id: Option<String>,
    /// The route its credential works on.
    pub route: String,
    /// When a signed-in app's grant ends (30 days after pairing); None for a key (keys never expire).
    pub ends_at: Option<i64>,
    pub calls: i64,
}

impl Summary {
    pub fn is_key(&self) -> bool {
        self.client_id.is_none()
    }

    /// Whether a signed-in app's grant has run out (it answers nothing until paired again).
    pub fn ended(&self, now: i64) -> bool {
        self.ends_at.is_some_and(|ends| ends <= now)
    }

    /// The row a table of connections shows.
    pub fn row(&self, facets: &[Facet], now: i64) -> ConnectionRow {
        let connection = &self.connection;
        ConnectionRow {
            id: connection.id.clone(),
            label: connection.label.clone(),
            kind: if self.is_key() { "key" } else { "signed-in app" },
            grant: if self.ended(now) {
                "nothing: the sign-in ended (30 days after pairing)".into()
            } else if connection.grant.write_mode == crate::auth::WriteMode::None {
                connection.grant.in_words(facets)
            } else {
                // Whoever may change notes says so in every table of connections.
                format!(
                    "{}; {}",
                    connection.grant.in_words(facets),
                    connection.grant.write_mode.in_words()
                )
            },
            route: self.route.clone(),
            created: format_timestamp(connection.created_at),
            last_used: connection
                .last_used_at
                .map_or_else(|| "never".to_string(), format_timestamp),
            calls: self.calls,
            ended: self.ended(now),
        }
    }
}

/// One connection in a table.
pub struct ConnectionRow {
    pub id: String,
    pub label: String,
    pub kind: &'static str,
    pub grant: String,
    pub route: String,
    pub created: String,
    pub last_used: String,
    pub calls: i64,
    pub ended: bool,
}

/// Every connection: keys oldest first, then signed-in apps newest first, with their calls.
pub async fn all(db: &crate::db::Pool) -> Result<Vec<Summary>, AuthError> {
    let counts = audit::counts_by_connection(db).await?;
    let mut out = without_calls(db).await?;
    for summary in &mut out {
        summary.calls = counts.get(&summary.connection.id).copied().unwrap_or(0);
    }
    Ok(out)
}

/// Every connection, in the same order, without counting its calls (which reads the whole audit
/// index): for pages that only name connections.
pub async fn without_calls(db: &crate::db::Pool) -> Result<Vec<Summary>, AuthError> {
    let mut out = Vec::new();
    for key in connections::list_keys(db).await? {
        out.push(Summary {
            calls: 0,
            connection: key,
            client_id: None,
            route: "local".into(),
            ends_at: None,
        });
    }
    for entry in store::list_grants(db).await.map_err(oauth_failure)? {
        out.push(Summary {
            calls: 0,
            connection: entry.connection,
            client_id: Some(entry.client_id),
            route: entry.route,
            ends_at: Some(entry.expires_at),
        });
    }
    Ok(out)
}

/// One connection by id, or None when there is no such connection (revoked, or never made).
pub async fn one(db: &crate::db::Pool, id: &str) -> Result<Option<Summary>, AuthError> {
    Ok(all(db).await?.into_iter().find(|summary| summary.connection.id == id))
}

/// The authorization server's store reports its own error type; the pages treat a failure to read
/// it like any other failure to read the journal.
pub fn oauth_failure(error: crate::oauth::OAuthError) -> AuthError {
    AuthError::Invalid(error.description)
}
