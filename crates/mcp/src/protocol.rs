//! MCP protocol versions: which ones this server speaks, in which era, and how one is chosen.
//!
//! Two eras share one endpoint. The 2025 versions open a session with `initialize` and keep its
//! version for the session's life. 2026-07-28 has no handshake: every request names its version in
//! `_meta` and is served on its own (see `stateless`).

/// Versions served in sessions (`initialize` opens one), oldest first.
pub const SESSION_VERSIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];
/// The newest session version, answered when `initialize` asks for one this server does not know
/// (2026-07-28 included: `initialize` selects the 2025 semantics).
pub const LATEST_SESSION: &str = "2025-11-25";
/// The version served statelessly.
pub const STATELESS: &str = "2026-07-28";
/// Every version this server speaks, newest first, as `server/discover` and the unsupported-version
/// error list them.
pub const ALL: [&str; 4] = [STATELESS, "2025-11-25", "2025-06-18", "2025-03-26"];
/// What a request without `MCP-Protocol-Version` is taken to be, per the specification.
pub const DEFAULT_WITHOUT_HEADER: &str = "2025-03-26";

/// A version this server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(&'static str);

impl Version {
    /// The version `initialize` settles on: the requested one when it is a session version,
    /// otherwise the latest session version.
    pub fn negotiate(requested: &str) -> Version {
        Version::session(requested).unwrap_or(Version(LATEST_SESSION))
    }

    /// Any version this server speaks.
    pub fn parse(text: &str) -> Option<Version> {
        ALL.iter().find(|v| **v == text).map(|v| Version(v))
    }

    /// A version served in sessions.
    pub fn session(text: &str) -> Option<Version> {
        SESSION_VERSIONS.iter().find(|v| **v == text).map(|v| Version(v))
    }

    /// The stateless version, 2026-07-28.
    pub fn stateless() -> Version {
        Version(STATELESS)
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// Served without a session: each request carries its version, capabilities and client in `_meta`.
    pub fn is_stateless(self) -> bool {
        self.0 >= STATELESS
    }

    /// 2025-03-26 is the only version that allows JSON-RPC batches.
    pub fn allows_batches(self) -> bool {
        self.0 == "2025-03-26"
    }

    /// Tool `title`, `outputSchema` and `structuredContent` arrived in 2025-06-18.
    pub fn has_structured_tools(self) -> bool {
        self.0 >= "2025-06-18"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiates_a_session_version_and_knows_each_ones_era() {
        assert_eq!(Version::negotiate("2025-06-18").as_str(), "2025-06-18");
        assert_eq!(Version::negotiate("2024-11-05").as_str(), LATEST_SESSION);
        assert_eq!(
            Version::negotiate("2026-07-28").as_str(),
            LATEST_SESSION,
            "initialize selects the 2025 semantics"
        );
        assert!(Version::negotiate("2025-03-26").allows_batches());
        assert!(!Version::negotiate("2025-06-18").allows_batches());
        assert!(!Version::negotiate("2025-03-26").has_structured_tools());
        assert!(Version::negotiate("2025-11-25").has_structured_tools());
        assert_eq!(Version::parse("2025-11-26"), None);
        assert_eq!(Version::session("2026-07-28"), None);
        let stateless = Version::parse("2026-07-28").unwrap();
        assert!(stateless.is_stateless() && stateless.has_structured_tools() && !stateless.allows_batches());
        assert!(
            SESSION_VERSIONS
                .iter()
                .all(|v| !Version::parse(v).unwrap().is_stateless())
        );
        assert_eq!(ALL.len(), SESSION_VERSIONS.len() + 1);
    }
}
