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
    /// Whether a signed-in app's sign-in got a token or still may (always true for a key).
    pub finished: bool,
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

    /// Why this connection can never answer again, if so: the rows the owner may clear in one click.
    pub fn stale(&self, now: i64) -> Option<&'static str> {
        stale(self.ends_at, self.finished, now)
    }

    /// The row a table of connections shows.
    pub fn row(&self, facets: &[Facet], now: i64) -> ConnectionRow {
        let connection = &self.connection;
        ConnectionRow {
            id: connection.id.clone(),
            label: connection.label.clone(),
            kind: if self.is_key() { "key" } else { "signed-in app" },
            client: self.client_id.as_deref().map(client_origin).unwrap_or_default(),
            stale: self.stale(now),
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
    /// Where a signed-in app's identity comes from: the host of its metadata document
    /// (`claude.ai`), or "registered here"; empty for a key.
    pub client: String,
    /// Why the row can never answer again (see [`stale`]); such rows offer a Remove button.
    pub stale: Option<&'static str>,
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
            finished: true,
        });
    }
    for entry in store::list_grants(db, crate::clock::unix_now())
        .await
        .map_err(oauth_failure)?
    {
        out.push(Summary {
            calls: 0,
            connection: entry.connection,
            client_id: Some(entry.client_id),
            route: entry.route,
            ends_at: Some(entry.expires_at),
            finished: entry.finished,
        });
    }
    Ok(out)
}

/// Why a connection can never answer again: a sign-in past its 30 days, or one the owner approved
/// whose app never came back for its token (the code expired unused). Keys never go stale by
/// themselves: whether a script still needs one only its owner knows.
pub fn stale(ends_at: Option<i64>, finished: bool, now: i64) -> Option<&'static str> {
    if ends_at.is_some_and(|ends| ends <= now) {
        Some("ended")
    } else if !finished {
        Some("never finished")
    } else {
        None
    }
}

/// How a table names where a signed-in app's identity comes from: the host of its metadata
/// document (`claude.ai`), or "registered here" for an app that registered and named itself.
pub fn client_origin(client_id: &str) -> String {
    crate::oauth::client_metadata::document_host(client_id).unwrap_or_else(|| "registered here".into())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_stale_when_its_sign_in_ended_or_never_finished() {
        assert_eq!(stale(None, true, 100), None, "a key");
        assert_eq!(stale(Some(200), true, 100), None, "a live sign-in");
        assert_eq!(stale(Some(100), true, 100), Some("ended"));
        assert_eq!(stale(Some(200), false, 100), Some("never finished"));
        assert_eq!(stale(Some(50), false, 100), Some("ended"));
    }

    #[test]
    fn a_metadata_document_names_its_host_and_anything_else_was_registered_here() {
        assert_eq!(
            client_origin("https://claude.ai/oauth/claude-code-client-metadata"),
            "claude.ai"
        );
        assert_eq!(
            client_origin("https://chatgpt.com/oauth/codex/client.json"),
            "chatgpt.com"
        );
        assert_eq!(client_origin("3f9c0d2e-5c1a-4b7e-9a53-0c1d2e3f4a5b"), "registered here");
        assert_eq!(client_origin("http://example.com/client.json"), "registered here");
    }
}
