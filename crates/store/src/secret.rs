//! The secrets the journal hands out (tokens, codes, links, session ids, page nonces): 32 bytes from
//! the operating system's secure random source, in base64url behind a prefix that says what they are,
//! and the SHA-256 digest under which one is stored. The plaintext exists only in the answer that
//! hands it out; only the digest is ever written down.
//!
//! Every feature that makes secrets (`oauth`, `auth::owner`, the pages) takes them from here, so none
//! has to import another for it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// The operating system gave no random bytes: nothing can be handed out safely.
#[derive(Debug, Clone, thiserror::Error)]
#[error("no secure random source: {0}")]
pub struct NoRandomSource(String);

/// A new secret: `prefix` and 32 random bytes in base64url (43 characters).
pub fn generate(prefix: &str) -> Result<String, NoRandomSource> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| NoRandomSource(e.to_string()))?;
    Ok(format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes)))
}

/// The SHA-256 digest under which a secret is stored.
pub fn digest(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_fresh_prefixed_and_stored_as_digests() {
        let one = generate("jat_").unwrap();
        assert!(one.starts_with("jat_") && one.len() == 4 + 43, "{one}");
        assert_ne!(one, generate("jat_").unwrap());
        assert_eq!(digest(&one).len(), 32);
        assert_eq!(digest(&one), digest(&one.clone()));
        assert_ne!(digest(&one), digest("jat_"));
    }
}
