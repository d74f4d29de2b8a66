//! Settings: the journal folder and the optional `journal.toml` inside it, resolved once into
//! checked values. Flags win over the environment, which wins over the file, which wins over defaults.
//!
//! `journal route enable|disable` change the file through `edit`, which keeps the owner's comments
//! and layout (toml_edit) and writes nothing that would not be read back.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::journal::fsio;
use crate::tls::private_range;

/// The default address of the local route.
pub const DEFAULT_LOCAL_ADDR: &str = "127.0.0.1:7659";
/// The LAN route's port unless the owner names another.
pub const DEFAULT_LAN_PORT: u16 = 7660;

/// `journal.toml`, as far as this version reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSettings {
    #[serde(default)]
    pub local: LocalSettings,
    #[serde(default)]
    pub lan: LanSettings,
}

/// `[lan]`: the route over the owner's private network or VPN; off unless enabled.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanSettings {
    #[serde(default)]
    pub enabled: bool,
    /// One private address and port to serve; without it, every private address of this computer
    /// on port 7660.
    pub addr: Option<String>,
}

/// Where the LAN route listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LanPlan {
    /// Every private address of this computer, on this port, following them as they change.
    Every { port: u16 },
    /// Exactly this address.
    One(SocketAddr),
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

/// The LAN route's plan when it is enabled, checked.
pub fn lan_plan(file: &FileSettings) -> Result<Option<LanPlan>, ConfigError> {
    if !file.lan.enabled {
        return Ok(None);
    }
    Ok(Some(match file.lan.addr.as_deref() {
        Some(text) => LanPlan::One(lan_addr(text)?),
        None => LanPlan::Every { port: DEFAULT_LAN_PORT },
    }))
}

/// A LAN address: IP:PORT, a private IP, a port other than 0.
pub fn lan_addr(text: &str) -> Result<SocketAddr, ConfigError> {
    let addr: SocketAddr = text.trim().parse().map_err(|_| {
        ConfigError::Invalid(format!(
            "LAN address \"{text}\" is not IP:PORT, like 192.168.1.20:{DEFAULT_LAN_PORT}"
        ))
    })?;
    if let Some(reason) = private_range::refusal(addr.ip()) {
        return Err(ConfigError::Invalid(format!("LAN address {addr}: {reason}")));
    }
    if addr.port() == 0 {
        return Err(ConfigError::Invalid(format!(
            "LAN address {addr} has port 0: devices need a fixed port to reach (the usual one is {DEFAULT_LAN_PORT})"
        )));
    }
    Ok(addr)
}

/// Changes `journal.toml` with `change`, keeping everything else in it as it was, and writes it only
/// if the result is still settings this version reads (so a bad edit changes nothing).
pub fn edit(journal: &Path, change: impl FnOnce(&mut toml_edit::DocumentMut)) -> Result<(), ConfigError> {
    let path = journal.join("journal.toml");
    let file_error = |message: String| ConfigError::File {
        path: path.clone(),
        message,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(file_error(e.to_string())),
    };
    // The file as it is must be valid first: an edit must not paper over (or trip on) a mistake.
    read_file(journal)?;
    let mut document: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| file_error(one_line(&e.to_string())))?;
    change(&mut document);
    let edited = document.to_string();
    let settings: FileSettings = toml::from_str(&edited).map_err(|e| file_error(one_line(&e.to_string())))?;
    lan_plan(&settings)?;
    fsio::write_atomic(&path, edited.as_bytes()).map_err(|e| file_error(e.to_string()))
}

/// A `[name]` section of the document to edit, made as a standard table (not an inline one) when
/// the file has none yet.
pub fn section<'a>(doc: &'a mut toml_edit::DocumentMut, name: &str) -> &'a mut dyn toml_edit::TableLike {
    if doc.get(name).and_then(toml_edit::Item::as_table_like).is_none() {
        doc.insert(name, toml_edit::table());
    }
    doc[name].as_table_like_mut().expect("made a table just above")
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
    fn lan_plans() {
        let plan = |text: &str| lan_plan(&toml::from_str::<FileSettings>(text).unwrap());
        assert_eq!(plan("").unwrap(), None);
        assert_eq!(
            plan("[lan]\naddr = \"10.0.0.2:7000\"\n").unwrap(),
            None,
            "off unless enabled"
        );
        assert_eq!(
            plan("[lan]\nenabled = true\n").unwrap(),
            Some(LanPlan::Every { port: 7660 })
        );
        assert_eq!(
            plan("[lan]\nenabled = true\naddr = \"[fd00::5]:7000\"\n").unwrap(),
            Some(LanPlan::One("[fd00::5]:7000".parse().unwrap()))
        );
        for (addr, says) in [
            ("127.0.0.1:7660", "loopback"),
            ("0.0.0.0:7660", "unspecified"),
            ("8.8.8.8:7660", "not a private address"),
            ("169.254.1.1:7660", "link-local"),
            ("192.168.1.2", "IP:PORT"),
            ("192.168.1.2:0", "port 0"),
        ] {
            let error = plan(&format!("[lan]\nenabled = true\naddr = \"{addr}\"\n"))
                .unwrap_err()
                .to_string();
            assert!(error.contains(says), "{addr}: {error}");
        }
        assert!(toml::from_str::<FileSettings>("[lan]\nenabled = \"yes\"\n").is_err());
        assert!(toml::from_str::<FileSettings>("[lan]\nport = 1\n").is_err());
    }

    #[test]
    fn edits_keep_the_rest_of_the_file_and_refuse_what_would_not_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.toml");
        edit(dir.path(), |doc| {
            section(doc, "lan").insert("enabled", toml_edit::value(true));
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[lan]\nenabled = true\n");
        let original =
            "# my settings\n[local]\naddr = \"127.0.0.1:9000\" # a port of my own\n\n[lan]\nenabled = true\n";
        std::fs::write(&path, original).unwrap();
        edit(dir.path(), |doc| {
            section(doc, "lan").insert("addr", toml_edit::value("10.1.2.3:7660"));
        })
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# my settings\n[local]\naddr = \"127.0.0.1:9000\" # a port of my own\n"),
            "{text}"
        );
        assert_eq!(
            read_file(dir.path()).unwrap().lan.addr.as_deref(),
            Some("10.1.2.3:7660")
        );
        // An edit that would leave settings that don't read back changes nothing.
        let error = edit(dir.path(), |doc| {
            section(doc, "lan").insert("addr", toml_edit::value("8.8.8.8:7660"));
        })
        .unwrap_err();
        assert!(error.to_string().contains("not a private address"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        // A file that is already wrong is not edited.
        std::fs::write(&path, "[lan\n").unwrap();
        assert!(
            edit(dir.path(), |doc| {
                section(doc, "lan").insert("enabled", toml_edit::value(false));
            })
            .is_err()
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[lan\n");
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
