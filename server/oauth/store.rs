//! The authorization server's state in journal.db: pairing codes, clients, pending authorizations,
//! grants, codes and tokens. Every rule about lifetimes, quotas, single use and rotation lives here,
//! in functions the handlers and the CLI call and the tests exercise directly.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use sqlx::Row;
use subtle::ConstantTimeEq;

use super::{OAuthError, pairing, pkce, secret};
use crate::auth::{Category, Connection, WriteMode, connections, epoch};
use crate::db::Pool;
use crate::secret::digest;

/// A registered client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub created_at: i64,
}

// ---- pairing codes -------------------------------------------------------------------------------

/// Opens a new pairing code for `route`, replacing any open one. Answers the code, shown once.
pub async fn open_code(pool: &Pool, route: &str, now: i64) -> Result<String, OAuthError> {
    let code = pairing::generate().map_err(|e| OAuthError::server(format!("no secure random source: {e}")))?;
    let mut tx = crate::db::begin_write(pool).await?;
    sqlx::query("DELETE FROM pairing_failures WHERE route = ?")
        .bind(route)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO pairing_codes (route, digest, created_at, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (route) DO UPDATE SET digest = excluded.digest, created_at = excluded.created_at, expires_at = excluded.expires_at",
    )
    .bind(route)
    .bind(pairing::digest(&code))
    .bind(now)
    .bind(now + pairing::LIFETIME_SECONDS)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(code)
}

/// Closes the open code of `route` (or of every route). Answers how many were open.
pub async fn revoke_codes(pool: &Pool, route: Option<&str>) -> Result<u64, OAuthError> {
    let done = sqlx::query("DELETE FROM pairing_codes WHERE ?1 IS NULL OR route = ?1")
        .bind(route)
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}

/// Whether `route` has an open, unexpired code: until it does, sign-in is closed.
pub async fn code_open(pool: &Pool, route: &str, now: i64) -> Result<bool, OAuthError> {
    Ok(code_expiry(pool, route, now).await?.is_some())
}

/// When the open code of `route` stops working, if one is open.
pub async fn code_expiry(pool: &Pool, route: &str, now: i64) -> Result<Option<i64>, OAuthError> {
    Ok(
        sqlx::query_scalar("SELECT expires_at FROM pairing_codes WHERE route = ? AND expires_at > ?")
            .bind(route)
            .bind(now)
            .fetch_optional(pool)
            .await?,
    )
}

/// Why a typed pairing code was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeRefusal {
    /// Not the code; this many tries remain for this authorization.
    Wrong { tries_left: i64 },
    /// Not a code at all (wrong length or characters); not counted as a try.
    Malformed(String),
    /// No code is open any more (used, expired or revoked).
    Closed,
    /// This authorization used up its tries.
    Exhausted,
    /// The source address used up its tries on this code; other sources may still pair with it.
    SourceLocked,
}

/// Checks a typed code for a pending authorization. A match uses the code up (one use). Every try
/// counts against the authorization (5) and the source address (20): the try is taken, in one
/// transaction, before the code is compared, so that parallel guesses get no more tries than
/// sequential ones. A source that used its 20 is refused without a comparison, but the code stays
/// open for everyone else: a stranger guessing must not lock the owner out. A new code clears the
/// counts.
pub async fn try_code(pool: &Pool, pending: &Pending, typed: &str, now: i64) -> Result<(), CodeRefusal> {
    let fail = |e: sqlx::Error| {
        tracing::error!(error = %e, "the pairing check failed");
        CodeRefusal::Closed
    };
    let code = pairing::normalize(typed).map_err(|e| CodeRefusal::Malformed(e.to_string()))?;
    let taken = take_try(pool, pending, now).await.map_err(fail)?;
    let (stored, tries) = match taken {
        Try::Taken { stored, tries } => (stored, tries),
        Try::NoCode => return Err(CodeRefusal::Closed),
        Try::SourceLocked => return Err(CodeRefusal::SourceLocked),
        Try::Exhausted => {
            let _ = drop_pending(pool, &pending.id).await;
            return Err(CodeRefusal::Exhausted);
        }
    };
    if bool::from(stored.as_slice().ct_eq(&pairing::digest(&code))) {
        let mut tx = crate::db::begin_write(pool).await.map_err(fail)?;
        let used = sqlx::query("DELETE FROM pairing_codes WHERE route = ? AND digest = ?")
            .bind(&pending.route)
            .bind(&stored)
            .execute(&mut *tx)
            .await
            .map_err(fail)?;
        sqlx::query("DELETE FROM pairing_failures WHERE route = ?")
            .bind(&pending.route)
            .execute(&mut *tx)
            .await
            .map_err(fail)?;
        tx.commit().await.map_err(fail)?;
        // Two right answers racing: the code is one use, the second finds it gone.
        return if used.rows_affected() == 1 {
            Ok(())
        } else {
            Err(CodeRefusal::Closed)
        };
    }
    if tries.by_source >= pairing::TRIES_PER_SOURCE {
        tracing::warn!(route = %pending.route, source = %pending.source,
            "a source used up its pairing tries; the code stays open for others");
    }
    if tries.by_authorization >= pairing::TRIES_PER_AUTHORIZATION {
        let _ = drop_pending(pool, &pending.id).await;
        return Err(CodeRefusal::Exhausted);
    }
    Err(CodeRefusal::Wrong {
        tries_left: pairing::TRIES_PER_AUTHORIZATION - tries.by_authorization,
    })
}

/// Tries counted so far, this one included.
struct Tries {
    by_authorization: i64,
    by_source: i64,
}

enum Try {
    Taken { stored: Vec<u8>, tries: Tries },
    NoCode,
    Exhausted,
    SourceLocked,
}

/// Takes one try from the authorization and from its source, unless either has none left, and
/// reads the open code, all in one write transaction.
async fn take_try(pool: &Pool, pending: &Pending, now: i64) -> Result<Try, sqlx::Error> {
    let mut tx = crate::db::begin_write(pool).await?;
    let stored: Option<Vec<u8>> =
        sqlx::query_scalar("SELECT digest FROM pairing_codes WHERE route = ? AND expires_at > ?")
            .bind(&pending.route)
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?;
    let Some(stored) = stored else {
        return Ok(Try::NoCode);
    };
    let by_source: Option<i64> = sqlx::query_scalar(
        "INSERT INTO pairing_failures (route, source, failures) VALUES (?, ?, 1)
         ON CONFLICT (route, source) DO UPDATE SET failures = failures + 1 WHERE failures < ?
         RETURNING failures",
    )
    .bind(&pending.route)
    .bind(&pending.source)
    .bind(pairing::TRIES_PER_SOURCE)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(by_source) = by_source else {
        return Ok(Try::SourceLocked);
    };
    let by_authorization: Option<i64> = sqlx::query_scalar(
        "UPDATE oauth_pending SET failures = failures + 1 WHERE id = ? AND failures < ? RETURNING failures",
    )
    .bind(&pending.id)
    .bind(pairing::TRIES_PER_AUTHORIZATION)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(by_authorization) = by_authorization else {
        // Dropping the transaction rolls back the source's count: no comparison was made.
        return Ok(Try::Exhausted);
    };
    tx.commit().await?;
    Ok(Try::Taken {
        stored,
        tries: Tries {
            by_authorization,
            by_source,
        },
    })
}

// ---- clients -------------------------------------------------------------------------------------

/// The source of the clients the owner registers with `journal mcp oauth register`: they are kept
/// without a grant (an app may be set up days before it signs in).
pub const OWNER_SOURCE: &str = "owner";

/// Registers a client, or answers the identical one registered before from the same address
/// (`false`: nothing new was stored). Quotas answer `None`.
pub async fn register_client(
    pool: &Pool,
    client_name: &str,
    redirect_uris: &[String],
    source: &str,
    now: i64,
) -> Result<Option<(Client, bool)>, OAuthError> {
    let uris = serde_json::to_string(redirect_uris).map_err(|e| OAuthError::server(e.to_string()))?;
    prune_clients(pool, now).await?;
    let existing: Option<String> = sqlx::query_scalar(
        "SELECT client_id FROM oauth_clients WHERE client_name = ? AND redirect_uris = ? AND source = ? ORDER BY created_at LIMIT 1",
    )
    .bind(client_name)
    .bind(&uris)
    .bind(source)
    .fetch_optional(pool)
    .await?;
    if let Some(id) = existing
        && let Some(client) = client(pool, &id).await?
    {
        return Ok(Some((client, false)));
    }
    let mut tx = crate::db::begin_write(pool).await?;
    if !make_room(&mut tx, source).await? {
        return Ok(None);
    }
    let client_id = secret(super::CLIENT_PREFIX)?;
    sqlx::query(
        "INSERT INTO oauth_clients (client_id, client_name, redirect_uris, source, created_at) VALUES (?, ?, ?, ?, ?)",
    )
    .bind(&client_id)
    .bind(client_name)
    .bind(&uris)
    .bind(source)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    let client = Client {
        client_id,
        client_name: client_name.to_string(),
        redirect_uris: redirect_uris.to_vec(),
        created_at: now,
    };
    Ok(Some((client, true)))
}

/// Forgets clients without a grant a day after they were made, unless a sign-in of theirs is
/// waiting or the owner registered them. Using a client (a `GET /authorize`) does not keep it: otherwise one request a day would
/// keep a stranger's clients in the table for ever, until it was full for everyone. A client that
/// lost its grant registers again (a token request with a forgotten client answers
/// `invalid_client`, which makes clients do so).
async fn prune_clients(pool: &Pool, now: i64) -> Result<(), OAuthError> {
    sqlx::query(
        "DELETE FROM oauth_clients WHERE created_at < ? AND source != 'owner'
           AND client_id NOT IN (SELECT client_id FROM oauth_grants)
           AND client_id NOT IN (SELECT client_id FROM oauth_pending WHERE expires_at > ?)",
    )
    .bind(now - super::UNUSED_CLIENT_SECONDS)
    .bind(now)
    .execute(pool)
    .await?;
    Ok(())
}

/// A metadata-document client from the cache, while its document is fresh.
pub async fn cached_metadata_client(pool: &Pool, client_id: &str, now: i64) -> Result<Option<Client>, OAuthError> {
    let fresh: Option<i64> = sqlx::query_scalar(
        "SELECT 1 FROM oauth_clients WHERE client_id = ? AND kind = 'metadata' AND refresh_after > ?",
    )
    .bind(client_id)
    .bind(now)
    .fetch_optional(pool)
    .await?;
    if fresh.is_none() {
        return Ok(None);
    }
    client(pool, client_id).await
}

/// Caches a metadata document's client until `refresh_after`. A client new to the table is made
/// room for as a registration is (`make_room`), counted against `source`; `None` when there is none.
pub async fn save_metadata_client(
    pool: &Pool,
    client_id: &str,
    client_name: &str,
    redirect_uris: &[String],
    source: &str,
    now: i64,
    refresh_after: i64,
) -> Result<Option<Client>, OAuthError> {
    let uris = serde_json::to_string(redirect_uris).map_err(|e| OAuthError::server(e.to_string()))?;
    prune_clients(pool, now).await?;
    let mut tx = crate::db::begin_write(pool).await?;
    let updated = sqlx::query(
        "UPDATE oauth_clients SET client_name = ?, redirect_uris = ?, refresh_after = ? WHERE client_id = ?",
    )
    .bind(client_name)
    .bind(&uris)
    .bind(refresh_after)
    .bind(client_id)
    .execute(&mut *tx)
    .await?;
    if updated.rows_affected() == 0 {
        if !make_room(&mut tx, source).await? {
            return Ok(None);
        }
        sqlx::query(
            "INSERT INTO oauth_clients (client_id, client_name, redirect_uris, source, created_at, kind, refresh_after)
             VALUES (?, ?, ?, ?, ?, 'metadata', ?)",
        )
        .bind(client_id)
        .bind(client_name)
        .bind(&uris)
        .bind(source)
        .bind(now)
        .bind(refresh_after)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    client(pool, client_id).await
}

/// Makes room for one more client from `source`, inside the caller's write transaction: when the
/// source holds its quota, its oldest client without a grant makes way (on loopback every client
/// shares one address, so a full quota would otherwise lock the owner out until the day-old ones
/// are pruned); clients with a grant are never displaced. False when there is still no room.
async fn make_room(tx: &mut sqlx::SqliteConnection, source: &str) -> Result<bool, OAuthError> {
    let count_mine = "SELECT count(*) FROM oauth_clients WHERE source = ?";
    let mine: i64 = sqlx::query_scalar(count_mine).bind(source).fetch_one(&mut *tx).await?;
    if mine >= super::MAX_CLIENTS_PER_SOURCE {
        sqlx::query(
            "DELETE FROM oauth_clients WHERE client_id = (SELECT client_id FROM oauth_clients
               WHERE source = ? AND client_id NOT IN (SELECT client_id FROM oauth_grants)
               ORDER BY created_at, rowid LIMIT 1)",
        )
        .bind(source)
        .execute(&mut *tx)
        .await?;
    }
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_clients")
        .fetch_one(&mut *tx)
        .await?;
    let mine: i64 = sqlx::query_scalar(count_mine).bind(source).fetch_one(&mut *tx).await?;
    Ok(total < super::MAX_CLIENTS && mine < super::MAX_CLIENTS_PER_SOURCE)
}

/// A registered client by id.
pub async fn client(pool: &Pool, client_id: &str) -> Result<Option<Client>, OAuthError> {
    if client_id.len() > 2048 {
        return Ok(None);
    }
    let row =
        sqlx::query("SELECT client_id, client_name, redirect_uris, created_at FROM oauth_clients WHERE client_id = ?")
            .bind(client_id)
            .fetch_optional(pool)
            .await?;
    Ok(row.map(|row| Client {
        client_id: row.get(0),
        client_name: row.get(1),
        redirect_uris: serde_json::from_str(&row.get::<String, _>(2)).unwrap_or_default(),
        created_at: row.get(3),
    }))
}

// ---- pending authorizations ----------------------------------------------------------------------

/// An authorization request waiting for the owner.
#[derive(Debug, Clone)]
pub struct Pending {
    pub id: String,
    pub client_id: String,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub code_challenge: String,
    pub resource: String,
    pub route: String,
    pub issuer: String,
    pub source: String,
    pub paired: bool,
    pub categories: BTreeSet<Category>,
    /// `None` or `Propose`: what stage one chose, for stage two.
    pub write_mode: WriteMode,
}

/// What a new pending authorization holds.
pub struct NewPending<'a> {
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub state: Option<&'a str>,
    pub code_challenge: &'a str,
    pub resource: &'a str,
    pub route: &'a str,
    pub issuer: &'a str,
    pub source: &'a str,
}

/// Stores a pending authorization; answers its id and the consent form's anti-forgery token, or
/// None when the quotas are full.
pub async fn create_pending(
    pool: &Pool,
    new: NewPending<'_>,
    now: i64,
) -> Result<Option<(String, String)>, OAuthError> {
    sqlx::query("DELETE FROM oauth_pending WHERE expires_at <= ?")
        .bind(now)
        .execute(pool)
        .await?;
    // A source's oldest waiting authorization makes way for its newest (the owner reloading the
    // consent page must not lock themselves out for ten minutes); the total stays bounded.
    sqlx::query(
        "DELETE FROM oauth_pending WHERE id IN (SELECT id FROM oauth_pending WHERE source = ?1
           ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?2)",
    )
    .bind(new.source)
    .bind(super::MAX_PENDING_PER_SOURCE - 1)
    .execute(pool)
    .await?;
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_pending")
        .fetch_one(pool)
        .await?;
    if total >= super::MAX_PENDING {
        return Ok(None);
    }
    let id = secret("")?;
    let csrf = secret("")?;
    sqlx::query(
        "INSERT INTO oauth_pending (id, csrf_digest, client_id, redirect_uri, state, code_challenge, resource, route, issuer, source, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&id)
    .bind(digest(&csrf))
    .bind(new.client_id)
    .bind(new.redirect_uri)
    .bind(new.state)
    .bind(new.code_challenge)
    .bind(new.resource)
    .bind(new.route)
    .bind(new.issuer)
    .bind(new.source)
    .bind(now)
    .bind(now + super::PENDING_SECONDS)
    .execute(pool)
    .await?;
    sqlx::query("UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?")
        .bind(now)
        .bind(new.client_id)
        .execute(pool)
        .await?;
    Ok(Some((id, csrf)))
}

/// A live pending authorization whose anti-forgery token matches; None otherwise.
pub async fn pending(pool: &Pool, id: &str, csrf: &str, now: i64) -> Result<Option<Pending>, OAuthError> {
    if id.len() > 64 || csrf.len() > 64 {
        return Ok(None);
    }
    let row = sqlx::query(
        "SELECT id, csrf_digest, client_id, redirect_uri, state, code_challenge, resource, route, issuer, source, paired, categories, write_mode
         FROM oauth_pending WHERE id = ? AND expires_at > ?",
    )
    .bind(id)
    .bind(now)
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let stored: Vec<u8> = row.get(1);
    if !bool::from(stored.as_slice().ct_eq(&digest(csrf))) {
        return Ok(None);
    }
    Ok(Some(Pending {
        id: row.get(0),
        client_id: row.get(2),
        redirect_uri: row.get(3),
        state: row.get(4),
        code_challenge: row.get(5),
        resource: row.get(6),
        route: row.get(7),
        issuer: row.get(8),
        source: row.get(9),
        paired: row.get::<i64, _>(10) != 0,
        categories: row
            .get::<String, _>(11)
            .split_whitespace()
            .filter_map(Category::parse)
            .collect(),
        // Only the consent page writes this column, and it never offers force: read strictly.
        write_mode: match WriteMode::parse(&row.get::<String, _>(12)) {
            Some(WriteMode::Propose) => WriteMode::Propose,
            _ => WriteMode::None,
        },
    }))
}

/// Records that the code matched and which categories and write mode were chosen; facets come at
/// stage two.
pub async fn mark_paired(
    pool: &Pool,
    id: &str,
    categories: &BTreeSet<Category>,
    write_mode: WriteMode,
) -> Result<(), OAuthError> {
    let names: Vec<&str> = categories.iter().map(|c| c.as_str()).collect();
    sqlx::query("UPDATE oauth_pending SET paired = 1, categories = ?, write_mode = ? WHERE id = ?")
        .bind(names.join(" "))
        .bind(write_mode.as_str())
        .bind(id)
        .execute(pool)
        .await?;
    Ok(())
}

/// Forgets a pending authorization (denied, approved or abandoned).
pub async fn drop_pending(pool: &Pool, id: &str) -> Result<(), OAuthError> {
    sqlx::query("DELETE FROM oauth_pending WHERE id = ?")
        .bind(id)
        .execute(pool)
        .await?;
    Ok(())
}

// ---- grants, codes and tokens --------------------------------------------------------------------

/// Creates the connection and grant the owner approved, and answers a single-use authorization code.
pub async fn approve(
    pool: &Pool,
    pending: &Pending,
    client_name: &str,
    categories: &BTreeSet<Category>,
    facet_ids: Option<&[String]>,
    write_mode: WriteMode,
    now: i64,
) -> Result<String, OAuthError> {
    let grants: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_grants WHERE expires_at > ?")
        .bind(now)
        .fetch_one(pool)
        .await?;
    if grants >= super::MAX_GRANTS {
        return Err(OAuthError::new(
            "temporarily_unavailable",
            "the journal holds as many sign-ins as it allows; revoke some first",
        ));
    }
    let connection = connections::create_oauth(pool, client_name)
        .await
        .map_err(|e| OAuthError::server(e.to_string()))?;
    connections::set_grant(pool, &connection.id, categories, facet_ids, write_mode)
        .await
        .map_err(|e| OAuthError::server(e.to_string()))?;
    let code = secret(super::CODE_PREFIX)?;
    let mut tx = crate::db::begin_write(pool).await?;
    sqlx::query("INSERT INTO oauth_grants (connection_id, client_id, route, resource, paired_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(&connection.id)
        .bind(&pending.client_id)
        .bind(&pending.route)
        .bind(&pending.resource)
        .bind(now)
        .bind(now + super::GRANT_SECONDS)
        .execute(&mut *tx)
        .await?;
    sqlx::query("INSERT INTO oauth_codes (digest, connection_id, client_id, redirect_uri, code_challenge, expires_at) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(digest(&code))
        .bind(&connection.id)
        .bind(&pending.client_id)
        .bind(&pending.redirect_uri)
        .bind(&pending.code_challenge)
        .bind(now + super::CODE_SECONDS)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM oauth_pending WHERE id = ?")
        .bind(&pending.id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(code)
}

/// An access and refresh token pair, as the token endpoint returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenPair {
    pub access_token: String,
    pub refresh_token: String,
    pub expires_in: i64,
}

/// The route a grant belongs to.
async fn grant_route(pool: &Pool, connection_id: &str) -> Result<Option<String>, OAuthError> {
    Ok(
        sqlx::query_scalar("SELECT route FROM oauth_grants WHERE connection_id = ?")
            .bind(connection_id)
            .fetch_optional(pool)
            .await?,
    )
}

/// Exchanges an authorization code. A code presented twice revokes everything it issued.
pub async fn exchange_code(
    pool: &Pool,
    route: &str,
    code: &str,
    client_id: &str,
    redirect_uri: &str,
    verifier: &str,
    now: i64,
) -> Result<TokenPair, OAuthError> {
    let row = sqlx::query(
        "SELECT connection_id, client_id, redirect_uri, code_challenge, expires_at FROM oauth_codes WHERE digest = ?",
    )
    .bind(digest(code))
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else {
        return Err(OAuthError::invalid_grant("the authorization code is not valid"));
    };
    let connection_id: String = row.get(0);
    // A code is redeemed on the route that issued it, and nowhere else (nothing is spent here).
    if grant_route(pool, &connection_id).await?.as_deref() != Some(route) {
        return Err(OAuthError::invalid_grant(
            "the authorization code was issued on another route",
        ));
    }
    // Spend the code in one statement, so that of two exchanges racing with it exactly one claims
    // it and the other is seen as the reuse it is (a read, then a write, let both through).
    let claimed =
        sqlx::query("UPDATE oauth_codes SET used_at = ? WHERE digest = ? AND used_at IS NULL RETURNING digest")
            .bind(now)
            .bind(digest(code))
            .fetch_optional(pool)
            .await?;
    if claimed.is_none() {
        // RFC 6749 4.1.2: a reused code means it leaked; revoke what it granted.
        sqlx::query("DELETE FROM connections WHERE id = ?")
            .bind(&connection_id)
            .execute(pool)
            .await?;
        epoch::announce(pool);
        tracing::warn!(client = %client_id, "an authorization code was used twice; its grant is revoked");
        return Err(OAuthError::invalid_grant(
            "the authorization code was already used; the grant it issued is revoked",
        ));
    }
    let refused = if row.get::<i64, _>(4) <= now {
        Some("the authorization code expired; sign in again")
    } else if row.get::<String, _>(1) != client_id {
        Some("the authorization code was issued to another client")
    } else if row.get::<String, _>(2) != redirect_uri {
        // RFC 6749 4.1.3: identical to the authorization request's, port and all.
        Some("redirect_uri differs from the one in the authorization request")
    } else if !pkce::verify(verifier, &row.get::<String, _>(3)) {
        Some("code_verifier does not match the code_challenge")
    } else {
        None
    };
    if let Some(why) = refused {
        // The code is spent and was the connection's only way to a token: the connection the
        // owner approved could never be used, so it goes rather than stay listed as connected.
        sqlx::query(
            "DELETE FROM connections WHERE id = ? AND NOT EXISTS (SELECT 1 FROM oauth_tokens WHERE connection_id = ?)",
        )
        .bind(&connection_id)
        .bind(&connection_id)
        .execute(pool)
        .await?;
        epoch::announce(pool);
        return Err(OAuthError::invalid_grant(why));
    }
    let mut tx = crate::db::begin_write(pool).await?;
    let pair = issue_pair(&mut tx, &connection_id, now).await?;
    // The same app signed in again on the same route: this sign-in replaces the earlier ones, so
    // that the owner's list holds one row per app and place, not one per sign-in (the consent page
    // says so). Only once the new one holds a token: a sign-in that fails leaves the old one.
    let replaced = sqlx::query(
        "DELETE FROM connections WHERE id IN (SELECT g.connection_id FROM oauth_grants g
           WHERE g.client_id = ? AND g.route = (SELECT route FROM oauth_grants WHERE connection_id = ?)
             AND g.connection_id != ?)",
    )
    .bind(client_id)
    .bind(&connection_id)
    .bind(&connection_id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    tx.commit().await?;
    if replaced > 0 {
        epoch::announce(pool);
    }
    touch_client(pool, client_id, now).await?;
    Ok(pair)
}

async fn issue_pair(tx: &mut sqlx::SqliteConnection, connection_id: &str, now: i64) -> Result<TokenPair, OAuthError> {
    let grant_ends: i64 = sqlx::query_scalar("SELECT expires_at FROM oauth_grants WHERE connection_id = ?")
        .bind(connection_id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| OAuthError::invalid_grant("the grant was revoked"))?;
    let access = secret(super::ACCESS_PREFIX)?;
    let refresh = secret(super::REFRESH_PREFIX)?;
    let access_ends = (now + super::ACCESS_SECONDS).min(grant_ends);
    for (token, kind, ends) in [(&access, "access", access_ends), (&refresh, "refresh", grant_ends)] {
        sqlx::query(
            "INSERT INTO oauth_tokens (digest, connection_id, kind, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(digest(token))
        .bind(connection_id)
        .bind(kind)
        .bind(now)
        .bind(ends)
        .execute(&mut *tx)
        .await?;
    }
    // Expired access tokens are of no use to anyone; drop them as new ones are made.
    sqlx::query("DELETE FROM oauth_tokens WHERE connection_id = ? AND kind = 'access' AND expires_at <= ?")
        .bind(connection_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    Ok(TokenPair {
        access_token: access,
        refresh_token: refresh,
        expires_in: access_ends - now,
    })
}

async fn touch_client(pool: &Pool, client_id: &str, now: i64) -> Result<(), OAuthError> {
    sqlx::query("UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?")
        .bind(now)
        .bind(client_id)
        .execute(pool)
        .await?;
    Ok(())
}

/// Pairs recently issued by rotation, by the digest of the refresh token they replaced, so that a
/// client whose response was lost can retry once within 30 s. Held in memory only: the new tokens'
/// plaintext must never be stored, so after a restart a retry is a reuse like any other. Times are
/// the Unix seconds the caller passes, as for every other lifetime in the store.
#[derive(Default)]
pub struct RetryCache {
    entries: Mutex<HashMap<Vec<u8>, (String, TokenPair, i64)>>,
}

impl RetryCache {
    fn get(&self, old: &[u8], now: i64) -> Option<(String, TokenPair)> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(old)
            .filter(|(_, _, at)| within_retry(*at, now))
            .map(|(connection, pair, _)| (connection.clone(), pair.clone()))
    }

    fn put(&self, old: &[u8], connection_id: &str, pair: &TokenPair, now: i64) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        // Only the latest rotation of a grant may be retried; old entries expire.
        entries.retain(|_, (connection, _, at)| connection != connection_id && within_retry(*at, now));
        entries.insert(old.to_vec(), (connection_id.to_string(), pair.clone(), now));
    }

    fn remove(&self, old: &[u8]) {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).remove(old);
    }
}

/// Whether a rotation at `at` may still be retried at `now`.
fn within_retry(at: i64, now: i64) -> bool {
    (0..super::REFRESH_RETRY_SECONDS as i64).contains(&(now - at))
}

/// Rotates a refresh token. Presenting a rotated-out one revokes the grant, except the immediately
/// previous one within 30 s, which answers the same pair again.
pub async fn refresh(
    pool: &Pool,
    cache: &RetryCache,
    route: &str,
    token: &str,
    client_id: &str,
    now: i64,
) -> Result<TokenPair, OAuthError> {
    let token_digest = digest(token);
    let row = sqlx::query(
        "SELECT t.connection_id, t.expires_at, t.rotated_at, g.client_id, g.expires_at FROM oauth_tokens t
         JOIN oauth_grants g ON g.connection_id = t.connection_id WHERE t.digest = ? AND t.kind = 'refresh'",
    )
    .bind(&token_digest)
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else {
        return Err(OAuthError::invalid_grant(
            "the refresh token is not valid; sign in again",
        ));
    };
    let connection_id: String = row.get(0);
    if row.get::<String, _>(3) != client_id {
        return Err(OAuthError::invalid_grant(
            "the refresh token was issued to another client",
        ));
    }
    if grant_route(pool, &connection_id).await?.as_deref() != Some(route) {
        return Err(OAuthError::invalid_grant(
            "the refresh token was issued on another route",
        ));
    }
    if row.get::<Option<i64>, _>(2).is_some() {
        if let Some((cached_connection, pair)) = cache.get(&token_digest, now)
            && cached_connection == connection_id
        {
            return Ok(pair);
        }
        sqlx::query("DELETE FROM connections WHERE id = ?")
            .bind(&connection_id)
            .execute(pool)
            .await?;
        epoch::announce(pool);
        tracing::warn!(client = %client_id, "a rotated-out refresh token was presented again; the grant is revoked");
        return Err(OAuthError::invalid_grant(
            "the refresh token was already used; the grant is revoked, sign in again",
        ));
    }
    if row.get::<i64, _>(1) <= now || row.get::<i64, _>(4) <= now {
        return Err(OAuthError::invalid_grant(
            "the grant ended (30 days after pairing); pair again",
        ));
    }
    let mut tx = crate::db::begin_write(pool).await?;
    let rotated = sqlx::query("UPDATE oauth_tokens SET rotated_at = ? WHERE digest = ? AND rotated_at IS NULL")
        .bind(now)
        .bind(&token_digest)
        .execute(&mut *tx)
        .await?;
    if rotated.rows_affected() != 1 {
        // A concurrent refresh with the same token won the race; treat this one as a retry.
        drop(tx);
        return cache
            .get(&token_digest, now)
            .map(|(_, pair)| pair)
            .ok_or_else(|| OAuthError::invalid_grant("the refresh token was already used"));
    }
    let pair = issue_pair(&mut tx, &connection_id, now).await?;
    // Keep the last few rotated-out tokens to recognise their reuse; forget older ones. Seconds tie
    // when a client rotates quickly, so the order of insertion (rowid) decides among equal times:
    // otherwise the token rotated out just now could be the one forgotten.
    sqlx::query(
        "DELETE FROM oauth_tokens WHERE connection_id = ?1 AND kind = 'refresh' AND rotated_at IS NOT NULL AND digest NOT IN
           (SELECT digest FROM oauth_tokens WHERE connection_id = ?1 AND kind = 'refresh' AND rotated_at IS NOT NULL
            ORDER BY rotated_at DESC, rowid DESC LIMIT ?2)",
    )
    .bind(&connection_id)
    .bind(super::ROTATED_KEPT)
    .execute(&mut *tx)
    .await?;
    // The retry is remembered before the commit: a concurrent refresh with the same token that
    // finds the rotation committed must find its pair too, or it would be taken for a reuse and
    // revoke the grant. A commit that fails takes it back.
    cache.put(&token_digest, &connection_id, &pair, now);
    if let Err(error) = tx.commit().await {
        cache.remove(&token_digest);
        return Err(error.into());
    }
    touch_client(pool, client_id, now).await?;
    Ok(pair)
}

/// Revokes a token (RFC 7009): a refresh token ends its whole grant, an access token only itself.
/// Unknown tokens are not an error.
pub async fn revoke_token(pool: &Pool, token: &str, client_id: Option<&str>) -> Result<(), OAuthError> {
    let row = sqlx::query(
        "SELECT t.kind, t.connection_id, g.client_id FROM oauth_tokens t JOIN oauth_grants g ON g.connection_id = t.connection_id WHERE t.digest = ?",
    )
    .bind(digest(token))
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else { return Ok(()) };
    if client_id.is_some_and(|id| id != row.get::<String, _>(2)) {
        return Ok(());
    }
    if row.get::<String, _>(0) == "refresh" {
        sqlx::query("DELETE FROM connections WHERE id = ?")
            .bind(row.get::<String, _>(1))
            .execute(pool)
            .await?;
    } else {
        sqlx::query("DELETE FROM oauth_tokens WHERE digest = ?")
            .bind(digest(token))
            .execute(pool)
            .await?;
    }
    epoch::announce(pool);
    Ok(())
}

/// One signed-in client as the owner sees it.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub connection: Connection,
    pub client_id: String,
    pub route: String,
    pub paired_at: i64,
    pub expires_at: i64,
    /// Whether the sign-in got as far as a token, or may still (its code is waiting to be
    /// exchanged). One that did neither was approved and then abandoned: it can never answer.
    pub finished: bool,
}

/// Every OAuth grant, newest first, with whether each sign-in finished (as of `now`).
pub async fn list_grants(pool: &Pool, now: i64) -> Result<Vec<SignedIn>, OAuthError> {
    let rows = sqlx::query(
        "SELECT g.connection_id, g.client_id, g.route, g.paired_at, g.expires_at,
                EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.connection_id = g.connection_id)
             OR EXISTS (SELECT 1 FROM oauth_codes c WHERE c.connection_id = g.connection_id
                          AND c.used_at IS NULL AND c.expires_at > ?)
           FROM oauth_grants g ORDER BY g.paired_at DESC",
    )
    .bind(now)
    .fetch_all(pool)
    .await?;
    let mut out = Vec::new();
    for row in rows {
        let id: String = row.get(0);
        if let Some(connection) = connections::load(pool, &id)
            .await
            .map_err(|e| OAuthError::server(e.to_string()))?
        {
            out.push(SignedIn {
                connection,
                client_id: row.get(1),
                route: row.get(2),
                paired_at: row.get(3),
                expires_at: row.get(4),
                finished: row.get(5),
            });
        }
    }
    Ok(out)
}

/// Revokes every grant of a client and forgets the client. Answers how many grants ended.
pub async fn revoke_client(pool: &Pool, client_id: &str) -> Result<u64, OAuthError> {
    let mut tx = crate::db::begin_write(pool).await?;
    let ended =
        sqlx::query("DELETE FROM connections WHERE id IN (SELECT connection_id FROM oauth_grants WHERE client_id = ?)")
            .bind(client_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    let clients = sqlx::query("DELETE FROM oauth_clients WHERE client_id = ?")
        .bind(client_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    tx.commit().await?;
    epoch::announce(pool);
    if ended == 0 && clients == 0 {
        return Err(OAuthError::invalid_request(format!(
            "no client has the id {client_id}: see `journal mcp oauth list`"
        )));
    }
    Ok(ended)
}

/// The client id behind an OAuth connection, when the connection is one.
pub async fn connection_for_client(pool: &Pool, client_id: &str) -> Result<Vec<String>, OAuthError> {
    Ok(
        sqlx::query_scalar("SELECT connection_id FROM oauth_grants WHERE client_id = ? ORDER BY paired_at DESC")
            .bind(client_id)
            .fetch_all(pool)
            .await?,
    )
}
