//! The owner's optional passphrase for the owner app: asked for in addition to the one-time link
//! when set (`journal app passphrase set`), so that a link read over the owner's shoulder, or from
//! a terminal's scrollback, is not enough to sign in.
//!
//! Only an argon2id hash is stored (a PHC string with its own salt and costs), in journal.db. The
//! rules on what makes an acceptable passphrase are plain functions; hashing and checking are
//! CPU-heavy on purpose, so callers on the server run them off the async workers.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

use super::AuthError;
use crate::db::Pool;

/// The shortest passphrase accepted, in characters.
pub const MIN_CHARS: usize = 8;
/// The longest, in bytes: argon2 would take more, but nobody types more.
pub const MAX_BYTES: usize = 1024;
pub use super::owner::TRIES_PER_LINK;

/// Whether a passphrase may be set; the reason when not, in words for the owner.
pub fn check_rules(passphrase: &str) -> Result<(), String> {
    let chars = passphrase.chars().count();
    if chars < MIN_CHARS {
        return Err(format!(
            "the passphrase is too short: use at least {MIN_CHARS} characters"
        ));
    }
    if passphrase.len() > MAX_BYTES {
        return Err(format!("the passphrase is too long: use at most {MAX_BYTES} bytes"));
    }
    if passphrase.trim() != passphrase {
        return Err("the passphrase starts or ends with a space, which is easy to mistype: remove it".into());
    }
    if passphrase.chars().any(char::is_control) {
        return Err("the passphrase holds a control character: use letters, digits, spaces and punctuation".into());
    }
    Ok(())
}

/// Hashes a passphrase with argon2id and a fresh random salt (PHC string form).
pub fn hash(passphrase: &str) -> Result<String, AuthError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| AuthError::Invalid(format!("no secure random source: {e}")))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| AuthError::Invalid(format!("the salt: {e}")))?;
    Argon2::default()
        .hash_password(passphrase.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| AuthError::Invalid(format!("the passphrase could not be hashed: {e}")))
}

/// Whether `passphrase` matches a stored hash (argon2's comparison is constant-time). A stored
/// value that is not a PHC string matches nothing.
pub fn matches(stored: &str, passphrase: &str) -> bool {
    if passphrase.len() > MAX_BYTES {
        return false;
    }
    PasswordHash::new(stored).is_ok_and(|hash| Argon2::default().verify_password(passphrase.as_bytes(), &hash).is_ok())
}

/// The stored hash, when a passphrase is set.
pub async fn stored(pool: &Pool) -> Result<Option<String>, AuthError> {
    Ok(sqlx::query_scalar("SELECT phc FROM owner_passphrase WHERE id = 1")
        .fetch_optional(pool)
        .await?)
}

/// Sets (or replaces) the passphrase and signs every browser out, so that no session made
/// without it outlives the change. Answers the sessions ended.
pub async fn set(pool: &Pool, phc: &str, now: i64) -> Result<u64, AuthError> {
    let mut tx = crate::db::begin_write(pool).await?;
    sqlx::query(
        "INSERT INTO owner_passphrase (id, phc, set_at) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET phc = excluded.phc, set_at = excluded.set_at",
    )
    .bind(phc)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    let ended = super::owner::end_all_in(&mut tx).await?;
    tx.commit().await?;
    Ok(ended)
}

/// Removes the passphrase: a link alone signs in again. Answers whether one was set.
pub async fn clear(pool: &Pool) -> Result<bool, AuthError> {
    let done = sqlx::query("DELETE FROM owner_passphrase").execute(pool).await?;
    Ok(done.rows_affected() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_refuse_short_padded_and_control_characters() {
        assert!(check_rules("correct horse").is_ok());
        assert!(check_rules("ünïcødé!").is_ok(), "eight characters, more bytes");
        assert!(check_rules("seven77").unwrap_err().contains("at least 8"));
        assert!(check_rules(" leading space").unwrap_err().contains("space"));
        assert!(check_rules("trailing space ").unwrap_err().contains("space"));
        assert!(check_rules("tab\tinside it").unwrap_err().contains("control"));
        assert!(
            check_rules(&"x".repeat(MAX_BYTES + 1))
                .unwrap_err()
                .contains("too long")
        );
    }

    #[test]
    fn a_hash_matches_only_its_passphrase() {
        let stored = hash("correct horse").unwrap();
        assert!(stored.starts_with("$argon2id$"), "{stored}");
        assert!(!stored.contains("correct horse"));
        assert!(matches(&stored, "correct horse"));
        assert!(!matches(&stored, "correct horsE"));
        assert!(!matches(&stored, ""));
        assert!(!matches("not a hash", "correct horse"));
        assert_ne!(hash("correct horse").unwrap(), stored, "every hash has its own salt");
    }

    #[tokio::test]
    async fn setting_signs_everyone_out_and_clearing_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("journal.db")).await.unwrap();
        assert_eq!(stored(&pool).await.unwrap(), None);
        let link = super::super::owner::create_link(&pool, 0).await.unwrap();
        let secret = super::super::owner::redeem_link(&pool, &link, 0)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(set(&pool, "$argon2id$first", 1).await.unwrap(), 1);
        assert!(!super::super::owner::session_valid(&pool, &secret, 2).await.unwrap());
        set(&pool, "$argon2id$second", 2).await.unwrap();
        assert_eq!(stored(&pool).await.unwrap().as_deref(), Some("$argon2id$second"));
        assert!(clear(&pool).await.unwrap());
        assert!(!clear(&pool).await.unwrap());
        assert_eq!(stored(&pool).await.unwrap(), None);
    }
}
