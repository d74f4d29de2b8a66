//! Which connection a bearer credential names: the server's cache of verified credentials first
//! (`auth::cache`), then `journal.db`.
//!
//! Access tokens (`jat_`) are checked by `oauth::store` against the route that issued them; anything
//! else is tried as a minted key where the route takes keys. Whatever the database answers is kept
//! under the access epoch read before asking it, so a change committed meanwhile is never cached.

use crate::app::AppState;
use crate::auth::{AuthError, Connection, connections, keys};
use crate::journal::day::unix_now;
use crate::oauth;
use crate::routes::Route;

/// The connection behind `token` on `route`, or None when the credential is not valid there.
pub async fn check(state: &AppState, route: &Route, token: &str) -> Result<Option<Connection>, String> {
    let is_access_token = token.starts_with(oauth::ACCESS_PREFIX);
    if !is_access_token && !route.accepts_keys() {
        return Ok(None);
    }
    let db = &state.journal.db;
    let digest = keys::digest(token);
    let now = unix_now();
    let epoch = state.credentials.epoch();
    if let Some(hit) = state.credentials.get(route.name, &digest, epoch, now) {
        if hit.note_use {
            connections::write_last_used(db, &hit.connection.id, now)
                .await
                .map_err(|e: AuthError| e.to_string())?;
        }
        return Ok(Some(hit.connection));
    }
    let verified = if is_access_token {
        oauth::store::authenticate_access(db, token, route.name, now)
            .await
            .map_err(|e| e.to_string())?
            .map(|(connection, valid_until)| (connection, Some(valid_until)))
    } else {
        connections::authenticate_key(db, token)
            .await
            .map_err(|e| e.to_string())?
            .map(|connection| (connection, None))
    };
    Ok(verified.map(|(connection, valid_until)| {
        state
            .credentials
            .put(route.name, &digest, epoch, &connection, valid_until);
        connection
    }))
}
