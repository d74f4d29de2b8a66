//! Pairing codes: the one-time codes the owner reads off the journal and types into the consent page.
//!
//! A code is 5 random bytes written as 8 characters of Crockford base32. People may type it in any
//! case, with spaces or dashes; the letters I, L, O and U are not in the alphabet and are refused
//! rather than guessed at. Only the SHA-256 digest of a code is stored.

use sha2::{Digest, Sha256};

/// Crockford's base32 alphabet.
pub const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// How long a code stays open, in seconds.
pub const LIFETIME_SECONDS: i64 = 10 * 60;
/// Wrong codes one pending authorization may try before it is abandoned.
pub const TRIES_PER_AUTHORIZATION: i64 = 5;
/// Wrong codes one source address may try before the open code is locked.
pub const TRIES_PER_SOURCE: i64 = 20;

/// Why typed text is not a pairing code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeError {
    #[error("a pairing code has 8 characters")]
    Length,
    #[error("a pairing code has no I, L, O or U: check the code the journal shows")]
    Ambiguous,
    #[error("a pairing code has only letters and digits")]
    Character,
}

/// A new random code (8 characters, no separator).
pub fn generate() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 5];
    getrandom::fill(&mut bytes)?;
    let mut bits: u64 = 0;
    for byte in bytes {
        bits = (bits << 8) | u64::from(byte);
    }
    Ok((0..8)
        .rev()
        .map(|i| ALPHABET[((bits >> (i * 5)) & 31) as usize] as char)
        .collect())
}

/// The code as shown to people: `ABCD-EFGH`.
pub fn display(code: &str) -> String {
    if code.len() == 8 {
        format!("{}-{}", &code[..4], &code[4..])
    } else {
        code.to_string()
    }
}

/// Reads typed text into a code: upper-cased, spaces and dashes dropped.
pub fn normalize(typed: &str) -> Result<String, CodeError> {
    let mut code = String::with_capacity(8);
    for c in typed.chars() {
        match c.to_ascii_uppercase() {
            ' ' | '-' | '\t' => {}
            'I' | 'L' | 'O' | 'U' => return Err(CodeError::Ambiguous),
            c if ALPHABET.contains(&(c as u8)) && c.is_ascii() => code.push(c),
            _ => return Err(CodeError::Character),
        }
        if code.len() > 8 {
            return Err(CodeError::Length);
        }
    }
    if code.len() == 8 {
        Ok(code)
    } else {
        Err(CodeError::Length)
    }
}

/// The digest under which a code is stored.
pub fn digest(code: &str) -> Vec<u8> {
    Sha256::digest(code.as_bytes()).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_eight_alphabet_characters() {
        let a = generate().unwrap();
        let b = generate().unwrap();
        assert_ne!(a, b);
        for code in [a, b] {
            assert_eq!(code.len(), 8);
            assert!(code.bytes().all(|c| ALPHABET.contains(&c)), "{code}");
            assert_eq!(normalize(&display(&code)).unwrap(), code);
        }
    }

    #[test]
    fn normalizes_what_people_type() {
        assert_eq!(normalize("abcd-efgh").unwrap(), "ABCDEFGH");
        assert_eq!(normalize(" 0123 4567 ").unwrap(), "01234567");
        assert_eq!(normalize("ABCD-EFGI"), Err(CodeError::Ambiguous));
        assert_eq!(normalize("abcd-efgl"), Err(CodeError::Ambiguous));
        assert_eq!(normalize("0OOOOOOO"), Err(CodeError::Ambiguous));
        assert_eq!(normalize("ABCDEFG"), Err(CodeError::Length));
        assert_eq!(normalize("ABCDEFGHJ"), Err(CodeError::Length));
        assert_eq!(normalize(""), Err(CodeError::Length));
        assert_eq!(normalize("ABCD_EFG"), Err(CodeError::Character));
        assert_eq!(normalize("ÄBCDEFGH"), Err(CodeError::Character));
        assert_eq!(normalize(&"A".repeat(10_000)), Err(CodeError::Length));
        assert_eq!(digest("ABCDEFGH"), digest(&normalize("abcd efgh").unwrap()));
    }
}
