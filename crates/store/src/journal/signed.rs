//! Signed opaque tokens: the references and cursors handed to agents.
//!
//! A token is `base64url(fields joined by newlines) . base64url(HMAC-SHA256 tag, 16 bytes)`, keyed
//! with a secret kept in `journal.db`, so tokens survive restarts but cannot be forged or altered.
//! The first field names the token's purpose, so a cursor can never be passed off as a reference.
//! Binding a token to a connection and grant generation is the caller's choice of fields.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// The longest token accepted from a client, in bytes.
pub const MAX_TOKEN_BYTES: usize = 2048;
const TAG_BYTES: usize = 16;

/// The secret that signs tokens.
#[derive(Clone)]
pub struct SigningKey([u8; 32]);

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey(redacted)")
    }
}

impl SigningKey {
    pub fn from_bytes(bytes: [u8; 32]) -> SigningKey {
        SigningKey(bytes)
    }

    /// Signs `fields` under `purpose`. Fields must not contain newlines (callers pass ids, paths
    /// the journal itself names, and numbers).
    pub fn sign(&self, purpose: &str, fields: &[&str]) -> String {
        let mut payload = String::from(purpose);
        for field in fields {
            payload.push('\n');
            payload.push_str(field);
        }
        let tag = self.tag(payload.as_bytes());
        format!("{}.{}", URL_SAFE_NO_PAD.encode(payload), URL_SAFE_NO_PAD.encode(tag))
    }

    /// Checks a token and returns its fields (without the purpose), or None when it is malformed,
    /// too long, altered, or of another purpose.
    pub fn verify(&self, purpose: &str, token: &str) -> Option<Vec<String>> {
        if token.len() > MAX_TOKEN_BYTES {
            return None;
        }
        let (payload, tag) = token.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        if tag.len() != TAG_BYTES || !bool::from(self.tag(&payload).ct_eq(&tag)) {
            return None;
        }
        let payload = String::from_utf8(payload).ok()?;
        let mut parts = payload.split('\n');
        if parts.next()? != purpose {
            return None;
        }
        Some(parts.map(str::to_string).collect())
    }

    fn tag(&self, payload: &[u8]) -> [u8; TAG_BYTES] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        mac.update(payload);
        let full = mac.finalize().into_bytes();
        let mut tag = [0u8; TAG_BYTES];
        tag.copy_from_slice(&full[..TAG_BYTES]);
        tag
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_tampering() {
        let key = SigningKey::from_bytes([7; 32]);
        let token = key.sign("ref", &["conn", "3", "transcripts/2026-11-20/093000.md"]);
        assert_eq!(
            key.verify("ref", &token).unwrap(),
            ["conn", "3", "transcripts/2026-11-20/093000.md"]
        );
        assert_eq!(key.verify("cursor", &token), None, "another purpose");
        assert_eq!(
            SigningKey::from_bytes([8; 32]).verify("ref", &token),
            None,
            "another key"
        );
        let (payload, tag) = token.split_once('.').unwrap();
        let forged = URL_SAFE_NO_PAD.encode("ref\nconn\n4\ntranscripts/2026-11-20/093000.md");
        assert_eq!(key.verify("ref", &format!("{forged}.{tag}")), None);
        assert_eq!(key.verify("ref", payload), None);
        assert_eq!(key.verify("ref", &format!("{token}x")), None);
        assert_eq!(key.verify("ref", &"a".repeat(3000)), None);
        assert_eq!(key.verify("ref", "é.é"), None);
    }
}
