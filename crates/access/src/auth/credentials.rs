//! Which connection a bearer credential names: the server's cache of verified credentials first
//! (`auth::cache`), then `journal.db`. The MCP transport asks here and gets a resolved `Connection`
//! (or nothing); it never reads keys or tokens itself.
//!
//! Access tokens (`jat_`, handed out by the sign-in) are checked against the route that issued them;
//! anything else is tried as a minted key where the route takes keys. Whatever the database answers
//! is kept under the access epoch read before asking it, so a change committed meanwhile is never
//! cached.

use std::sync::Arc;

use sqlx::Row;
use subtle::ConstantTimeEq;

use super::cache::CredentialCache;
use super::{AuthError, Connection, connections, keys};
use crate::clock::unix_now;
use crate::db::Pool;

/// The prefix of an access token, which the sign-in issues and this module checks.
pub const ACCESS_PREFIX: &str = "jat_";

/// Where a credential is presented: the route's name, and whether minted keys work there.
#[derive(Debug, Clone, Copy)]
pub struct Presented {
    pub route: &'static str,
    pub accepts_keys: bool,
}

/// The connection behind `token` where it was presented, or None when it is not valid there.
pub async fn check(
    cache: &CredentialCache,
    db: &Pool,
    at: Presented,
    token: &str,
) -> Result<Option<Arc<Connection>>, AuthError> {
    let is_access_token = token.starts_with(ACCESS_PREFIX);
    if !is_access_token && !at.accepts_keys {
        return Ok(None);
    }
    let digest = keys::digest(token);
    let now = unix_now();
    let epoch = cache.epoch();
    if let Some(hit) = cache.get(at.route, &digest, epoch, now) {
        if hit.note_use {
            connections::write_last_used(db, &hit.connection.id, now).await?;
        }
        return Ok(Some(hit.connection));
    }
    let verified = if is_access_token {
        access_token(db, token, at.route, now)
            .await?
            .map(|(connection, valid_until)| (connection, Some(valid_until)))
    } else {
        connections::authenticate_key(db, token)
            .await?
            .map(|connection| (connection, None))
    };
    Ok(verified.map(|(connection, valid_until)| {
        let connection = Arc::new(connection);
        cache.put(at.route, &digest, epoch, &connection, valid_until);
        connection
    }))
}

/// The connection behind a live access token issued on `route`, and until when it is valid (the
/// token's hour or the grant's end, whichever comes first).
pub async fn access_token(
    pool: &Pool,
    token: &str,
    route: &str,
    now: i64,
) -> Result<Option<(Connection, i64)>, AuthError> {
    if !token.starts_with(ACCESS_PREFIX) || token.len() > 256 {
        return Ok(None);
    }
    let token_digest = crate::secret::digest(token);
    let row = sqlx::query(
        "SELECT t.digest, t.connection_id, min(t.expires_at, g.expires_at) FROM oauth_tokens t
         JOIN oauth_grants g ON g.connection_id = t.connection_id
         WHERE t.digest = ? AND t.kind = 'access' AND t.expires_at > ?2 AND g.expires_at > ?2 AND g.route = ?3",
    )
    .bind(&token_digest)
    .bind(now)
    .bind(route)
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let stored: Vec<u8> = row.get(0);
    if !bool::from(stored.as_slice().ct_eq(&token_digest)) {
        return Ok(None);
    }
    let valid_until: i64 = row.get(2);
    let connection = connections::touch_and_load(pool, &row.get::<String, _>(1)).await?;
    Ok(connection.map(|connection| (connection, valid_until)))
}
