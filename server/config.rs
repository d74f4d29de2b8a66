//! Settings: the journal folder and the optional `journal.toml` inside it, resolved once into
//! checked values. Flags win over the environment, which wins over the file, which wins over defaults.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The default address of the local route.
pub const DEFAULT_LOCAL_ADDR: &str = "127.0.0.1:7659";

/// `journal.toml`, as far as this version reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSettings {
    #[serde(default)]
    pub local: LocalSettings,
}

/// `[local]`: the loopback route.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalSettings {
    /// Address to listen on; must be a loopback address.
    pub addr: Option<String>,
}

/// Why settings were refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
}

/// The journal folder: the flag (or JOURNAL_HOME, which clap fills in), else the user's data folder.
pub fn journal_dir(flag: Option<PathBuf>) -> Result<PathBuf, ConfigError> {
    if let Some(dir) = flag {
        return Ok(dir);
    }
    if let Some(data) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(data).join("journal"));
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).ok_or_else(|| {
        ConfigError::Invalid(
            "no journal folder given and HOME is not set: pass --journal DIR or set JOURNAL_HOME".into(),
        )
    })?;
    Ok(PathBuf::from(home).join(".local/share/journal"))
}

/// Reads `journal.toml` from the journal folder; a missing file means defaults.
pub fn read_file(journal: &Path) -> Result<FileSettings, ConfigError> {
    let path = journal.join("journal.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).map_err(|e| ConfigError::File {
            path,
            message: one_line(&e.to_string()),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileSettings::default()),
        Err(e) => Err(ConfigError::File {
            path,
            message: e.to_string(),
        }),
    }
}

/// The local route's address: flag, then file, then the default; it must be loopback.
pub fn local_addr(flag: Option<&str>, file: &FileSettings) -> Result<SocketAddr, ConfigError> {
    let text = flag.or(file.local.addr.as_deref()).unwrap_or(DEFAULT_LOCAL_ADDR);
    let addr: SocketAddr = text.parse().map_err(|_| {
        ConfigError::Invalid(format!(
            "local address \"{text}\" is not IP:PORT, like {DEFAULT_LOCAL_ADDR}"
        ))
    })?;
    if !addr.ip().is_loopback() {
        return Err(ConfigError::Invalid(format!(
            "local address {addr} is not a loopback address: the local route serves this computer only (use 127.0.0.1 or [::1])"
        )));
    }
    Ok(addr)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_addresses() {
        let file = FileSettings::default();
        assert_eq!(local_addr(None, &file).unwrap().to_string(), DEFAULT_LOCAL_ADDR);
        assert_eq!(local_addr(Some("[::1]:8000"), &file).unwrap().port(), 8000);
        assert!(
            local_addr(Some("0.0.0.0:7659"), &file)
                .unwrap_err()
                .to_string()
                .contains("not a loopback")
        );
        assert!(
            local_addr(Some("localhost"), &file)
                .unwrap_err()
                .to_string()
                .contains("IP:PORT")
        );
        let file: FileSettings = toml::from_str("[local]\naddr = \"127.0.0.1:9000\"\n").unwrap();
        assert_eq!(local_addr(None, &file).unwrap().port(), 9000);
        assert!(toml::from_str::<FileSettings>("[local]\nport = 1\n").is_err());
    }

    #[test]
    fn reads_the_file_with_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_file(dir.path()).unwrap().local.addr.is_none());
        std::fs::write(dir.path().join("journal.toml"), "[local\n").unwrap();
        let error = read_file(dir.path()).unwrap_err().to_string();
        assert!(error.contains("journal.toml"), "{error}");
        assert!(!error.contains('\n'));
    }
}
