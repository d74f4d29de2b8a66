//! The journals a relay serves: for each name, the digest of the one-time credential its owner was
//! given (until it is used) and the digest of the public key the journal proved at its first
//! connection (from then on). `journal relay enrol NAME` writes a name; the relay binds the key when
//! the journal first connects with the credential, and the credential is spent. Nothing here is a
//! secret in plaintext: the credential exists only in the answer of `enrol`.
//!
//! The whole state is one small JSON file in the relay's folder, read at each tunnel's start (so a
//! journal enrolled while the relay runs connects without a restart) and replaced atomically.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

use crate::fsio;
use crate::secret;

/// The prefix of an enrolment credential.
pub const CREDENTIAL_PREFIX: &str = "jre_";

/// One enrolled journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Enrolment {
    /// The journal's name: its address is `NAME.<relay host>`.
    pub name: String,
    /// SHA-256 of the credential, hex, until the journal used it.
    pub credential: Option<String>,
    /// SHA-256 of the journal's public key (its SubjectPublicKeyInfo), hex, once bound.
    pub key: Option<String>,
    /// Unix seconds.
    pub enrolled_at: i64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    journals: Vec<Enrolment>,
}

/// What went wrong with the enrolments.
#[derive(Debug, thiserror::Error)]
pub enum EnrolError {
    #[error("journal name \"{0}\" must be 1 to 63 letters, digits and inner hyphens (it becomes NAME.<relay host>)")]
    Name(String),
    #[error(
        "{0} is enrolled already: `journal relay enrol {0} --again` gives a new credential and forgets the key it has"
    )]
    Exists(String),
    #[error("no journal is enrolled as {0}")]
    Unknown(String),
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error(transparent)]
    Random(#[from] secret::NoRandomSource),
}

/// Why a journal's tunnel was refused; each says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("no journal is enrolled as {0} on this relay: ask the relay's owner to run `journal relay enrol {0}`")]
    Unknown(String),
    #[error(
        "{0} is enrolled with another key: the relay's owner can run `journal relay enrol {0} --again` for a new credential"
    )]
    OtherKey(String),
    #[error("{0} has not connected yet and no enrolment credential was given: enable the route with --enrolment")]
    NoCredential(String),
    #[error("the enrolment credential for {0} is wrong or was used already")]
    WrongCredential(String),
}

/// A name as the relay keeps it: a DNS label, lower-cased.
pub fn name_of(text: &str) -> Result<String, EnrolError> {
    let name = text.trim().to_ascii_lowercase();
    let valid = !name.is_empty()
        && name.len() <= 63
        && !name.starts_with('-')
        && !name.ends_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if valid {
        Ok(name)
    } else {
        Err(EnrolError::Name(text.to_string()))
    }
}

fn path(dir: &Path) -> PathBuf {
    dir.join("enrolments.json")
}

/// Bytes as lower-case hex, as the file keeps digests.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every enrolled journal.
pub fn list(dir: &Path) -> Result<Vec<Enrolment>, EnrolError> {
    Ok(read(dir)?.journals)
}

fn read(dir: &Path) -> Result<File, EnrolError> {
    let path = path(dir);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| EnrolError::File {
            path,
            message: format!("not an enrolment file this relay wrote: {e}"),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(File::default()),
        Err(e) => Err(EnrolError::File {
            path,
            message: e.to_string(),
        }),
    }
}

fn write(dir: &Path, file: &File) -> Result<(), EnrolError> {
    let path = path(dir);
    let error = |message: String| EnrolError::File {
        path: path.clone(),
        message,
    };
    let json = serde_json::to_vec_pretty(file).map_err(|e| error(e.to_string()))?;
    fsio::create_dir_all_durable(dir).map_err(|e| error(e.to_string()))?;
    fsio::write_atomic(&path, &json).map_err(|e| error(e.to_string()))?;
    fsio::make_private(&path).map_err(|e| error(e.to_string()))
}

/// Enrols `name` and answers its credential, shown once. `again`: a name enrolled already gets a
/// new credential and loses its key (a journal that lost its key, or a new owner of the name).
pub fn enrol(dir: &Path, name: &str, again: bool, now: i64) -> Result<String, EnrolError> {
    let name = name_of(name)?;
    let mut file = read(dir)?;
    let credential = secret::generate(CREDENTIAL_PREFIX)?;
    let enrolment = Enrolment {
        name: name.clone(),
        credential: Some(hex(&secret::digest(&credential))),
        key: None,
        enrolled_at: now,
    };
    match file.journals.iter_mut().find(|e| e.name == name) {
        Some(_) if !again => return Err(EnrolError::Exists(name)),
        Some(existing) => *existing = enrolment,
        None => file.journals.push(enrolment),
    }
    write(dir, &file)?;
    Ok(credential)
}

/// Forgets `name`: its journal can no longer connect (one connected now is cut by the caller).
pub fn revoke(dir: &Path, name: &str) -> Result<(), EnrolError> {
    let name = name_of(name)?;
    let mut file = read(dir)?;
    let before = file.journals.len();
    file.journals.retain(|e| e.name != name);
    if file.journals.len() == before {
        return Err(EnrolError::Unknown(name));
    }
    write(dir, &file)
}

/// Whether the journal `name` holding the key with digest `key` (SHA-256 of its public key) may
/// connect: its bound key, or an unused credential, which binds the key and is spent.
pub fn admit(dir: &Path, name: &str, key: &[u8], credential: Option<&str>) -> Result<Result<(), Refusal>, EnrolError> {
    let name = name_of(name)?;
    let mut file = read(dir)?;
    let Some(enrolment) = file.journals.iter_mut().find(|e| e.name == name) else {
        return Ok(Err(Refusal::Unknown(name)));
    };
    let key = hex(key);
    if let Some(bound) = &enrolment.key {
        return Ok(if bool::from(bound.as_bytes().ct_eq(key.as_bytes())) {
            Ok(())
        } else {
            Err(Refusal::OtherKey(name))
        });
    }
    let (Some(expected), Some(given)) = (&enrolment.credential, credential) else {
        return Ok(Err(Refusal::NoCredential(name)));
    };
    let given = hex(&secret::digest(given));
    if !bool::from(expected.as_bytes().ct_eq(given.as_bytes())) {
        return Ok(Err(Refusal::WrongCredential(name)));
    }
    enrolment.credential = None;
    enrolment.key = Some(key);
    write(dir, &file)?;
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dns_labels() {
        assert_eq!(name_of("Alice").unwrap(), "alice");
        assert_eq!(name_of("a-1").unwrap(), "a-1");
        for bad in ["", "-a", "a-", "a.b", "a_b", "é", &"a".repeat(64)] {
            assert!(matches!(name_of(bad), Err(EnrolError::Name(_))), "{bad}");
        }
    }

    #[test]
    fn a_credential_binds_the_first_key_once_and_the_key_alone_connects_after() {
        let dir = tempfile::tempdir().unwrap();
        let credential = enrol(dir.path(), "Alice", false, 100).unwrap();
        assert!(credential.starts_with(CREDENTIAL_PREFIX));
        let text = std::fs::read_to_string(dir.path().join("enrolments.json")).unwrap();
        assert!(!text.contains(&credential), "only the digest is written");
        assert!(matches!(
            enrol(dir.path(), "alice", false, 101),
            Err(EnrolError::Exists(_))
        ));

        let (key, other) = ([1u8; 32], [2u8; 32]);
        assert_eq!(
            admit(dir.path(), "alice", &key, None).unwrap(),
            Err(Refusal::NoCredential("alice".into()))
        );
        assert_eq!(
            admit(dir.path(), "alice", &key, Some("jre_wrong")).unwrap(),
            Err(Refusal::WrongCredential("alice".into()))
        );
        assert_eq!(admit(dir.path(), "alice", &key, Some(&credential)).unwrap(), Ok(()));
        // Bound: the key connects without the credential, which is spent for any other key.
        assert_eq!(admit(dir.path(), "alice", &key, None).unwrap(), Ok(()));
        assert_eq!(
            admit(dir.path(), "alice", &other, Some(&credential)).unwrap(),
            Err(Refusal::OtherKey("alice".into()))
        );
        assert_eq!(
            admit(dir.path(), "bob", &key, None).unwrap(),
            Err(Refusal::Unknown("bob".into()))
        );
        // Enrolled again: a new credential, and the old key is forgotten.
        let again = enrol(dir.path(), "alice", true, 200).unwrap();
        assert_ne!(again, credential);
        assert_eq!(
            admit(dir.path(), "alice", &key, None).unwrap(),
            Err(Refusal::NoCredential("alice".into()))
        );
        assert_eq!(admit(dir.path(), "alice", &other, Some(&again)).unwrap(), Ok(()));
        revoke(dir.path(), "alice").unwrap();
        assert!(list(dir.path()).unwrap().is_empty());
        assert!(matches!(revoke(dir.path(), "alice"), Err(EnrolError::Unknown(_))));
    }

    #[test]
    fn a_damaged_file_is_an_error_not_an_empty_relay() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("enrolments.json"), "{").unwrap();
        let error = enrol(dir.path(), "alice", false, 1).unwrap_err().to_string();
        assert!(error.contains("not an enrolment file"), "{error}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("enrolments.json")).unwrap(),
            "{"
        );
    }
}
