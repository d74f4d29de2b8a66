//! MCP protocol versions: which ones this server speaks and how one is chosen.

/// Versions this server speaks, oldest first.
pub const SUPPORTED: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];
/// The newest supported version, answered when a client asks for one this server does not know.
pub const LATEST: &str = "2025-11-25";
/// What a request without `MCP-Protocol-Version` is taken to be, per the specification.
pub const DEFAULT_WITHOUT_HEADER: &str = "2025-03-26";

/// A negotiated version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(&'static str);

impl Version {
    /// Echoes the requested version when supported, otherwise offers the latest.
    pub fn negotiate(requested: &str) -> Version {
        Version::parse(requested).unwrap_or(Version(LATEST))
    }

    pub fn parse(text: &str) -> Option<Version> {
        SUPPORTED.iter().find(|v| **v == text).map(|v| Version(v))
    }

    pub fn as_str(self) -> &'static str {
        self.0
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
    fn negotiates() {
        assert_eq!(Version::negotiate("2025-06-18").as_str(), "2025-06-18");
        assert_eq!(Version::negotiate("2024-11-05").as_str(), LATEST);
        assert_eq!(Version::negotiate("2026-07-28").as_str(), LATEST);
        assert!(Version::negotiate("2025-03-26").allows_batches());
        assert!(!Version::negotiate("2025-06-18").allows_batches());
        assert!(!Version::negotiate("2025-03-26").has_structured_tools());
        assert!(Version::negotiate("2025-11-25").has_structured_tools());
        assert_eq!(Version::parse("2025-11-26"), None);
    }
}
