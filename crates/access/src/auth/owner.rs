//! The owner's sign-in to the owner app: one-time sign-in links and browser sessions.
//!
//! `journal app` (a process of its own, beside the server) makes a link whose token works once and
//! for a few minutes; the app trades it for a session whose secret lives only in an HttpOnly cookie.
//! Both are stored as SHA-256 digests, so `journal.db` holds nothing a thief could sign in with.
//! The forms of a session carry a token derived from the session's secret (HMAC), so nothing more
//! is stored for them and a page of another site, which cannot read the cookie, cannot forge one.
//!
//! This module knows nothing of HTTP: cookies and redirects are `web`'s business.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use super::AuthError;
use crate::db::Pool;

/// Wrong passphrases one sign-in link survives; the last one voids the link (`passphrase`).
pub const TRIES_PER_LINK: i64 = 5;

/// How long a sign-in link works: long enough to switch from the terminal to the browser.
pub const LINK_LIFETIME_SECONDS: i64 = 5 * 60;
/// How long a session lasts after signing in, however busy.
pub const SESSION_LIFETIME_SECONDS: i64 = 12 * 60 * 60;

/// Why a sign-in link was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkRefusal {
    /// Never made, or already used (a link works once).
    Unknown,
    /// Made, but its minutes have run out.
    Expired,
    /// Its passphrase tries are used up (the last one is checking, or failed).
    TriesUsed,
}

/// Makes a sign-in link's token; only its digest is stored.
pub async fn create_link(pool: &Pool, now: i64) -> Result<String, AuthError> {
    let token = random_secret()?;
    let mut tx = crate::db::begin_write(pool).await?;
    // Links that ran out are of no use to anyone: they go when a new one is made.
    sqlx::query("DELETE FROM owner_links WHERE expires_at <= ?")
        .bind(now)
        .execute(&mut *tx)
        .await?;
    sqlx::query("INSERT INTO owner_links (digest, created_at, expires_at) VALUES (?, ?, ?)")
        .bind(digest(&token))
        .bind(now)
        .bind(now + LINK_LIFETIME_SECONDS)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(token)
}

/// Whether a link would be accepted now, without using it (the page that asks to confirm).
pub async fn check_link(pool: &Pool, token: &str, now: i64) -> Result<Result<(), LinkRefusal>, AuthError> {
    let expires: Option<i64> = sqlx::query_scalar("SELECT expires_at FROM owner_links WHERE digest = ?")
        .bind(digest(token))
        .fetch_optional(pool)
        .await?;
    Ok(link_state(expires, now))
}

/// Uses a link: it is deleted whatever the outcome, and a session starts when it was still good.
/// Returns the session's secret, for the cookie.
pub async fn redeem_link(pool: &Pool, token: &str, now: i64) -> Result<Result<String, LinkRefusal>, AuthError> {
    let mut tx = crate::db::begin_write(pool).await?;
    let expires: Option<i64> = sqlx::query_scalar("DELETE FROM owner_links WHERE digest = ? RETURNING expires_at")
        .bind(digest(token))
        .fetch_optional(&mut *tx)
        .await?;
    if let Err(refusal) = link_state(expires, now) {
        tx.commit().await?;
        return Ok(Err(refusal));
    }
    let secret = random_secret()?;
    sqlx::query("DELETE FROM owner_sessions WHERE expires_at <= ?")
        .bind(now)
        .execute(&mut *tx)
        .await?;
    sqlx::query("INSERT INTO owner_sessions (digest, created_at, expires_at) VALUES (?, ?, ?)")
        .bind(digest(&secret))
        .bind(now)
        .bind(now + SESSION_LIFETIME_SECONDS)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Ok(secret))
}

/// Takes one passphrase try from a link, before the passphrase is checked: requests sent together
/// then cannot check more passphrases than a link has tries, however many arrive at once. Answers
/// the tries left after this one, or why the link cannot be tried.
pub async fn take_try(pool: &Pool, token: &str, now: i64) -> Result<Result<i64, LinkRefusal>, AuthError> {
    let tries: Option<i64> = sqlx::query_scalar(
        "UPDATE owner_links SET tries = tries + 1 WHERE digest = ? AND tries < ? AND expires_at > ? RETURNING tries",
    )
    .bind(digest(token))
    .bind(TRIES_PER_LINK)
    .bind(now)
    .fetch_optional(pool)
    .await?;
    if let Some(tries) = tries {
        return Ok(Ok(TRIES_PER_LINK - tries));
    }
    // No try left to take: say why. A link still there has used up its tries.
    Ok(Err(match check_link(pool, token, now).await? {
        Ok(()) => LinkRefusal::TriesUsed,
        Err(refusal) => refusal,
    }))
}

/// Voids a link (its last passphrase try failed).
pub async fn void_link(pool: &Pool, token: &str) -> Result<(), AuthError> {
    sqlx::query("DELETE FROM owner_links WHERE digest = ?")
        .bind(digest(token))
        .execute(pool)
        .await?;
    Ok(())
}

/// Whether a cookie's secret names a live session.
pub async fn session_valid(pool: &Pool, secret: &str, now: i64) -> Result<bool, AuthError> {
    if secret.is_empty() || secret.len() > 128 {
        return Ok(false);
    }
    let expires: Option<i64> = sqlx::query_scalar("SELECT expires_at FROM owner_sessions WHERE digest = ?")
        .bind(digest(secret))
        .fetch_optional(pool)
        .await?;
    Ok(expires.is_some_and(|expires| expires > now))
}

/// Ends one session (signing out in the browser).
pub async fn end_session(pool: &Pool, secret: &str) -> Result<(), AuthError> {
    sqlx::query("DELETE FROM owner_sessions WHERE digest = ?")
        .bind(digest(secret))
        .execute(pool)
        .await?;
    Ok(())
}

/// Ends every session and every unused link (`journal app signout`). Returns the sessions ended.
pub async fn end_all(pool: &Pool) -> Result<u64, AuthError> {
    let mut tx = crate::db::begin_write(pool).await?;
    let ended = end_all_in(&mut tx).await?;
    tx.commit().await?;
    Ok(ended)
}

/// Ends every session and unused link inside a caller's transaction (setting a passphrase does it in
/// the same commit). Returns the sessions ended.
pub(super) async fn end_all_in(tx: &mut sqlx::SqliteConnection) -> Result<u64, sqlx::Error> {
    let ended = sqlx::query("DELETE FROM owner_sessions")
        .execute(&mut *tx)
        .await?
        .rows_affected();
    sqlx::query("DELETE FROM owner_links").execute(&mut *tx).await?;
    Ok(ended)
}

/// Where a session's pages live: `/app/<place>`, 22 base64url characters derived from the session
/// secret. The session cookie is sent only under that path, and browsers ignore ports for cookies:
/// scoped to `/app` alone, the cookie would go to any other server on this computer that the
/// owner's browser visits (`127.0.0.1:8000/app/...`), which could then use it here. No other server
/// learns the place (pages are served with `Referrer-Policy: same-origin`), so the cookie never
/// leaves for one.
pub fn place(session_secret: &str) -> String {
    use base64::Engine;
    let mut mac = Hmac::<Sha256>::new_from_slice(session_secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(b"journal owner app place");
    let mut place = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    place.truncate(22);
    place
}

/// Whether `sent` is the place of the session `session_secret`, compared in constant time.
pub fn place_matches(session_secret: &str, sent: &str) -> bool {
    let expected = place(session_secret);
    expected.len() == sent.len() && bool::from(expected.as_bytes().ct_eq(sent.as_bytes()))
}

/// The anti-forgery token of a session's forms.
pub fn form_token(session_secret: &str) -> String {
    use base64::Engine;
    let mut mac = Hmac::<Sha256>::new_from_slice(session_secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(b"journal owner app form");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

/// Whether a form's token is the session's, compared in constant time.
pub fn form_token_matches(session_secret: &str, sent: &str) -> bool {
    let expected = form_token(session_secret);
    expected.len() == sent.len() && bool::from(expected.as_bytes().ct_eq(sent.as_bytes()))
}

fn link_state(expires: Option<i64>, now: i64) -> Result<(), LinkRefusal> {
    match expires {
        None => Err(LinkRefusal::Unknown),
        Some(expires) if expires <= now => Err(LinkRefusal::Expired),
        Some(_) => Ok(()),
    }
}

fn random_secret() -> Result<String, AuthError> {
    crate::secret::generate("").map_err(|e| AuthError::Invalid(e.to_string()))
}

fn digest(secret: &str) -> Vec<u8> {
    crate::secret::digest(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn pool() -> (tempfile::TempDir, Pool) {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("journal.db")).await.unwrap();
        (dir, pool)
    }

    #[tokio::test]
    async fn a_link_works_once_and_only_in_time() {
        let (_dir, pool) = pool().await;
        let token = create_link(&pool, 1_000).await.unwrap();
        assert_eq!(check_link(&pool, &token, 1_000).await.unwrap(), Ok(()));
        assert_eq!(
            check_link(&pool, "made-up", 1_000).await.unwrap(),
            Err(LinkRefusal::Unknown)
        );
        let secret = redeem_link(&pool, &token, 1_010).await.unwrap().unwrap();
        assert!(session_valid(&pool, &secret, 1_010).await.unwrap());
        assert_eq!(
            redeem_link(&pool, &token, 1_011).await.unwrap(),
            Err(LinkRefusal::Unknown)
        );

        let late = create_link(&pool, 2_000).await.unwrap();
        let at = 2_000 + LINK_LIFETIME_SECONDS;
        assert_eq!(check_link(&pool, &late, at).await.unwrap(), Err(LinkRefusal::Expired));
        assert_eq!(redeem_link(&pool, &late, at).await.unwrap(), Err(LinkRefusal::Expired));
        // A refused link is gone too: it cannot be tried again.
        assert_eq!(
            redeem_link(&pool, &late, 2_001).await.unwrap(),
            Err(LinkRefusal::Unknown)
        );
    }

    #[tokio::test]
    async fn a_link_has_a_fixed_number_of_passphrase_tries() {
        let (_dir, pool) = pool().await;
        let token = create_link(&pool, 0).await.unwrap();
        let tries = super::TRIES_PER_LINK;
        for left in (0..tries).rev() {
            assert_eq!(take_try(&pool, &token, 1).await.unwrap(), Ok(left));
        }
        assert_eq!(take_try(&pool, &token, 1).await.unwrap(), Err(LinkRefusal::TriesUsed));
        void_link(&pool, &token).await.unwrap();
        assert_eq!(take_try(&pool, &token, 1).await.unwrap(), Err(LinkRefusal::Unknown));
        let late = create_link(&pool, 0).await.unwrap();
        assert_eq!(
            take_try(&pool, &late, LINK_LIFETIME_SECONDS).await.unwrap(),
            Err(LinkRefusal::Expired)
        );
    }

    #[tokio::test]
    async fn sessions_end_in_time_on_sign_out_and_everywhere() {
        let (_dir, pool) = pool().await;
        let one = redeem_link(&pool, &create_link(&pool, 0).await.unwrap(), 0)
            .await
            .unwrap()
            .unwrap();
        let two = redeem_link(&pool, &create_link(&pool, 0).await.unwrap(), 0)
            .await
            .unwrap()
            .unwrap();
        assert!(!session_valid(&pool, &one, SESSION_LIFETIME_SECONDS).await.unwrap());
        assert!(session_valid(&pool, &one, SESSION_LIFETIME_SECONDS - 1).await.unwrap());
        end_session(&pool, &one).await.unwrap();
        assert!(!session_valid(&pool, &one, 1).await.unwrap());
        assert!(session_valid(&pool, &two, 1).await.unwrap());
        let unused = create_link(&pool, 0).await.unwrap();
        assert_eq!(end_all(&pool).await.unwrap(), 1);
        assert!(!session_valid(&pool, &two, 1).await.unwrap());
        assert_eq!(check_link(&pool, &unused, 1).await.unwrap(), Err(LinkRefusal::Unknown));
        assert!(!session_valid(&pool, "", 1).await.unwrap());
    }

    #[test]
    fn form_tokens_belong_to_their_session() {
        let token = form_token("session one");
        assert!(form_token_matches("session one", &token));
        assert!(!form_token_matches("session two", &token));
        assert!(!form_token_matches("session one", ""));
        assert!(!form_token_matches("session one", &token[1..]));
    }
}
