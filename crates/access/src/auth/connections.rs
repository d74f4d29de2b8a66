//! Connections in journal.db: minting and revoking keys, editing grants, and the per-request
//! credential check.

use std::collections::BTreeSet;

use sqlx::Row;
use subtle::ConstantTimeEq;

use super::grant::{Category, Grant, WriteMode};
use super::{AuthError, cache, epoch, keys};
use crate::clock::unix_now;
use crate::db::{self, Pool};

/// One connection and its grant.
#[derive(Debug, Clone)]
pub struct Connection {
    pub id: String,
    pub kind: String,
    pub label: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub grant: Grant,
}

/// Mints a key under a new label. Returns the connection and the key, which is never stored.
pub async fn create_key(pool: &Pool, label: &str) -> Result<(Connection, String), AuthError> {
    keys::validate_label(label).map_err(AuthError::Invalid)?;
    let (key, digest) = keys::mint().map_err(|e| AuthError::Invalid(format!("no secure random source: {e}")))?;
    let mut tx = crate::db::begin_write(pool).await?;
    let connection = insert_connection(&mut tx, "key", label, Some(&keys::label_key(label))).await.map_err(|e| {
        if db::is_unique_violation(&e) {
            AuthError::Invalid(format!(
                "a key labelled \"{label}\" already exists (labels ignore case): pick another label, or revoke that key first"
            ))
        } else {
            e.into()
        }
    })?;
    sqlx::query("INSERT INTO keys (connection_id, digest) VALUES (?, ?)")
        .bind(&connection.id)
        .bind(digest.to_vec())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok((connection, key))
}

/// Inserts a connection with an empty grant. `label_key` keeps key labels unique ignoring case;
/// without one (OAuth sign-ins, whose names may repeat) the id stands in.
async fn insert_connection(
    tx: &mut sqlx::SqliteConnection,
    kind: &str,
    label: &str,
    label_key: Option<&str>,
) -> Result<Connection, sqlx::Error> {
    let id = uuid::Uuid::new_v4().to_string();
    let now = unix_now();
    sqlx::query("INSERT INTO connections (id, kind, label, label_key, created_at) VALUES (?, ?, ?, ?, ?)")
        .bind(&id)
        .bind(kind)
        .bind(label)
        .bind(label_key.unwrap_or(&id))
        .bind(now)
        .execute(&mut *tx)
        .await?;
    sqlx::query("INSERT INTO grants (connection_id) VALUES (?)")
        .bind(&id)
        .execute(&mut *tx)
        .await?;
    Ok(Connection {
        id,
        kind: kind.into(),
        label: label.into(),
        created_at: now,
        last_used_at: None,
        grant: Grant::empty(),
    })
}

/// Every key, oldest first.
pub async fn list_keys(pool: &Pool) -> Result<Vec<Connection>, AuthError> {
    let ids: Vec<String> =
        sqlx::query_scalar("SELECT id FROM connections WHERE kind = 'key' ORDER BY created_at, label_key")
            .fetch_all(pool)
            .await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(connection) = load(pool, &id).await? {
            out.push(connection);
        }
    }
    Ok(out)
}

/// Finds a key's connection by label (ignoring case).
pub async fn find_key(pool: &Pool, label: &str) -> Result<Connection, AuthError> {
    let id: Option<String> = sqlx::query_scalar("SELECT id FROM connections WHERE kind = 'key' AND label_key = ?")
        .bind(keys::label_key(label))
        .fetch_optional(pool)
        .await?;
    let not_found = || AuthError::NotFound(format!("no key is labelled \"{label}\": see `journal mcp token list`"));
    let id = id.ok_or_else(not_found)?;
    load(pool, &id).await?.ok_or_else(not_found)
}

/// Finds any connection by its label (ignoring case): a key's, or else a signed-in app's when
/// exactly one app has it. For `journal mcp stdio --agent LABEL`.
pub async fn find_by_label(pool: &Pool, label: &str) -> Result<Connection, AuthError> {
    match find_key(pool, label).await {
        Err(AuthError::NotFound(_)) => {}
        found => return found,
    }
    let ids: Vec<String> = sqlx::query_scalar("SELECT id FROM connections WHERE kind = 'oauth' AND lower(label) = ?")
        .bind(label.to_lowercase())
        .fetch_all(pool)
        .await?;
    match ids.as_slice() {
        [id] => load(pool, id).await?.ok_or_else(|| not_named(label)),
        [] => Err(not_named(label)),
        _ => Err(AuthError::Invalid(format!(
            "{} signed-in apps are named \"{label}\"; give the stdio agent a key of its own: `journal mcp token create \
             --label NAME`",
            ids.len()
        ))),
    }
}

fn not_named(label: &str) -> AuthError {
    AuthError::NotFound(format!(
        "no connection is named \"{label}\"; create one with `journal mcp token create --label {label}` and grant it \
         with `journal mcp permission set --token {label} ...`"
    ))
}

/// Revokes a key: the key and its grant are deleted; its next request gets 401.
pub async fn revoke_key(pool: &Pool, label: &str) -> Result<Connection, AuthError> {
    let connection = find_key(pool, label).await?;
    revoke(pool, &connection.id).await
}

/// Revokes any connection, a key or a signed-in app: it and its grant (and an app's tokens) are
/// deleted, so its next request gets 401. Its calls stay in the audit log.
pub async fn revoke(pool: &Pool, id: &str) -> Result<Connection, AuthError> {
    let gone = || AuthError::NotFound("this connection no longer exists: it was revoked already".into());
    let connection = load(pool, id).await?.ok_or_else(gone)?;
    let deleted = sqlx::query("DELETE FROM connections WHERE id = ?")
        .bind(id)
        .execute(pool)
        .await?
        .rows_affected();
    epoch::announce(pool);
    if deleted == 0 {
        return Err(gone());
    }
    Ok(connection)
}

/// Replaces a connection's grant (categories, reach and write mode), bumping its generation.
pub async fn set_grant(
    pool: &Pool,
    connection_id: &str,
    categories: &BTreeSet<Category>,
    facet_ids: Option<&[String]>,
    write_mode: WriteMode,
) -> Result<Grant, AuthError> {
    let names: Vec<&str> = categories.iter().map(|c| c.as_str()).collect();
    let gone = || AuthError::NotFound("the connection was revoked meanwhile".into());
    let mut tx = crate::db::begin_write(pool).await?;
    let updated = sqlx::query(
        "UPDATE grants SET categories = ?, whole_journal = ?, write_mode = ?, generation = generation + 1
         WHERE connection_id = ?",
    )
    .bind(names.join(" "))
    .bind(facet_ids.is_none())
    .bind(write_mode.as_str())
    .bind(connection_id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    // Revoked since the caller found it: nothing to change (the facet rows would fail their key).
    if updated == 0 {
        return Err(gone());
    }
    sqlx::query("DELETE FROM grant_facets WHERE connection_id = ?")
        .bind(connection_id)
        .execute(&mut *tx)
        .await?;
    for id in facet_ids.unwrap_or_default() {
        sqlx::query("INSERT OR IGNORE INTO grant_facets (connection_id, facet_id) VALUES (?, ?)")
            .bind(connection_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    epoch::announce(pool);
    load(pool, connection_id).await?.map(|c| c.grant).ok_or_else(gone)
}

/// Checks a bearer key: the connection it belongs to, or None. Keys are looked up by digest and the
/// digest compared again in constant time.
pub async fn authenticate_key(pool: &Pool, key: &str) -> Result<Option<Connection>, AuthError> {
    if !key.starts_with(keys::KEY_PREFIX) || key.len() > 256 {
        return Ok(None);
    }
    let digest = keys::digest(key);
    // One query finds the key, its connection and its grant.
    let sql = format!(
        "{CONNECTION_COLUMNS}, k.digest FROM keys k JOIN connections c ON c.id = k.connection_id
         JOIN grants g ON g.connection_id = c.id WHERE k.digest = ?"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(digest.to_vec())
        .fetch_optional(pool)
        .await?;
    let Some(row) = row else { return Ok(None) };
    let stored: Vec<u8> = row.get(10);
    if !bool::from(stored.as_slice().ct_eq(&digest)) {
        return Ok(None);
    }
    let mut connection = connection_from(&row);
    note_use(pool, &mut connection).await?;
    Ok(Some(connection))
}

/// Loads a connection for a request, noting when it was last used (at most once a minute).
pub async fn touch_and_load(pool: &Pool, id: &str) -> Result<Option<Connection>, AuthError> {
    let Some(mut connection) = load(pool, id).await? else {
        return Ok(None);
    };
    note_use(pool, &mut connection).await?;
    Ok(Some(connection))
}

/// Records that a connection was used, at most once a minute: a write per request would serialise
/// every call behind SQLite's one writer. The connection is updated to match.
async fn note_use(pool: &Pool, connection: &mut Connection) -> Result<(), AuthError> {
    let now = unix_now();
    if cache::is_use_due(connection.last_used_at, now) {
        write_last_used(pool, &connection.id, now).await?;
        connection.last_used_at = Some(now);
    }
    Ok(())
}

/// Writes when a connection was last used (for a credential the server's cache verified).
pub async fn write_last_used(pool: &Pool, id: &str, now: i64) -> Result<(), AuthError> {
    sqlx::query("UPDATE connections SET last_used_at = ? WHERE id = ?")
        .bind(now)
        .bind(id)
        .execute(pool)
        .await?;
    Ok(())
}

/// Creates the connection of an OAuth sign-in, named after its client. Its grant starts empty; the
/// caller sets what the owner approved.
pub async fn create_oauth(pool: &Pool, client_name: &str) -> Result<Connection, AuthError> {
    let mut tx = crate::db::begin_write(pool).await?;
    let connection = insert_connection(&mut tx, "oauth", client_name, None).await?;
    tx.commit().await?;
    Ok(connection)
}

/// Loads a connection and its grant.
pub async fn load(pool: &Pool, id: &str) -> Result<Option<Connection>, AuthError> {
    let sql = format!("{CONNECTION_COLUMNS} FROM connections c JOIN grants g ON g.connection_id = c.id WHERE c.id = ?");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|row| connection_from(&row)))
}

/// A connection as a reader of notes today (its grant's reach and its label), for the owner's
/// review of what it proposed; None when the connection was removed.
pub async fn reader(
    pool: &Pool,
    id: &str,
    facets: &[crate::journal::facet::Facet],
) -> Result<Option<crate::journal::notes::Reader>, AuthError> {
    Ok(load(pool, id).await?.map(|c| c.reader(facets)))
}

/// The connection `id` as the graph sees it (its grant's reach today), or None when it is gone.
pub async fn viewer(
    pool: &Pool,
    id: &str,
    facets: &[crate::journal::facet::Facet],
) -> Result<Option<crate::journal::graph::items::Viewer>, AuthError> {
    Ok(load(pool, id).await?.map(|c| c.viewer(facets)))
}

impl Connection {
    /// The connection as a reader of notes: its grant's reach and the label notes' overrides name.
    pub fn reader(&self, facets: &[crate::journal::facet::Facet]) -> crate::journal::notes::Reader {
        crate::journal::notes::Reader {
            scope: self.grant.scope(facets),
            label: self.label.clone(),
        }
    }

    /// The connection as the graph sees it: which kinds of item and which facets its grant reaches.
    pub fn viewer(&self, facets: &[crate::journal::facet::Facet]) -> crate::journal::graph::items::Viewer {
        use crate::auth::Category;
        crate::journal::graph::items::Viewer::Agent(crate::journal::graph::items::AgentSight {
            notes: self.grant.has(Category::Notes),
            entities: self.grant.has(Category::Entities),
            transcripts: self.grant.has(Category::Transcripts),
            scope: self.grant.scope(facets),
            reader: self.reader(facets),
            author: crate::journal::graph::Author::connection(&self.label, self.kind == "key", &self.id),
        })
    }
}

/// The columns `connection_from` reads, for a query that joins `connections c` and `grants g`. The
/// grant's facets come along as one space-separated column, so a connection costs one query.
const CONNECTION_COLUMNS: &str = "SELECT c.id, c.kind, c.label, c.created_at, c.last_used_at, g.categories, g.whole_journal,
    g.write_mode, g.generation,
    (SELECT group_concat(facet_id, ' ') FROM (SELECT facet_id FROM grant_facets WHERE connection_id = c.id ORDER BY facet_id))";

fn connection_from(row: &sqlx::sqlite::SqliteRow) -> Connection {
    let categories = row
        .get::<String, _>(5)
        .split_whitespace()
        .filter_map(Category::parse)
        .collect();
    let facet_ids = (!row.get::<bool, _>(6)).then(|| {
        row.get::<Option<String>, _>(9)
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect()
    });
    Connection {
        id: row.get(0),
        kind: row.get(1),
        label: row.get(2),
        created_at: row.get(3),
        last_used_at: row.get(4),
        grant: Grant {
            categories,
            facet_ids,
            write_mode: WriteMode::parse_stored(&row.get::<String, _>(7)),
            generation: row.get(8),
        },
    }
}
