//! Minted keys: their text form, their digest and the rules for their labels.
//!
//! A key is `jk_` followed by 32 random bytes in base64url; the prefix lets people and secret
//! scanners recognise one. Only the SHA-256 digest is stored.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

pub const KEY_PREFIX: &str = "jk_";

/// A new random key and its digest.
pub fn mint() -> Result<(String, [u8; 32]), getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    let key = format!("{KEY_PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes));
    let digest = digest(&key);
    Ok((key, digest))
}

/// The SHA-256 digest under which a secret is stored.
pub fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// Labels: 1-64 bytes of letters, digits, space, `.`, `_`, `-`, starting and ending alphanumeric.
pub fn validate_label(label: &str) -> Result<(), String> {
    let bytes = label.as_bytes();
    let ok = (1..=64).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b' ' | b'.' | b'_' | b'-'))
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "label \"{label}\" is not allowed: use 1-64 letters, digits, spaces, '.', '_' or '-', starting and ending with a letter or digit"
        ))
    }
}

/// The form labels are compared in: unique ignoring case.
pub fn label_key(label: &str) -> String {
    label.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_prefixed_random_and_digested() {
        let (a, digest_a) = mint().unwrap();
        let (b, _) = mint().unwrap();
        assert!(a.starts_with(KEY_PREFIX));
        assert_eq!(a.len(), KEY_PREFIX.len() + 43);
        assert_ne!(a, b);
        assert_eq!(digest(&a), digest_a);
    }

    #[test]
    fn labels() {
        for good in ["my-script", "a", "Build bot 2", "x.y_z"] {
            assert!(validate_label(good).is_ok(), "{good}");
        }
        for bad in ["", "-a", "a-", " a", "a/b", "é", &"a".repeat(65)] {
            assert!(validate_label(bad).is_err(), "{bad:?}");
        }
        assert_eq!(label_key("My-Script"), "my-script");
    }
}
