//! MCP 2026-07-28: a request that names its version, the client's capabilities and (optionally) the
//! client in its own `_meta` is served on its own, with no session minted or needed.
//!
//! This module holds that era's rules and nothing of a transport: which era a message belongs to,
//! the `_meta` a request must carry, the standard headers checked against the body (HTTP hands them
//! in; stdio has none), the methods the era knows, and the fields every result carries (`resultType`,
//! the server's name in `_meta`, caching hints). Each refusal is a `StatelessError` with the
//! specification's code and HTTP status.

use axum::http::StatusCode;
use base64::Engine;
use serde_json::{Map, Value, json};

use super::jsonrpc::{INVALID_PARAMS, METHOD_NOT_FOUND};
use super::protocol::{self, Version};

pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_SERVER: &str = "io.modelcontextprotocol/serverInfo";

/// A standard header that is missing or disagrees with the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a capability the client did not declare in it.
pub const MISSING_CAPABILITY: i64 = -32021;
/// The request names a version this server does not speak.
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// The methods this era answers. Everything else (among them `initialize`, `ping` and
/// `logging/setLevel`, which 2026-07-28 removed) is an unknown method.
pub const METHODS: [&str; 10] = [
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "subscriptions/listen",
    "completion/complete",
];

/// The `_meta` of a result: who answered, as the specification asks of every result.
pub const SERVER_META: &str = concat!(
    r#"{"io.modelcontextprotocol/serverInfo":{"name":"journal","version":""#,
    env!("CARGO_PKG_VERSION"),
    r#""}}"#
);

/// `SERVER_META` as a value, for a result built as one.
pub fn server_meta() -> Value {
    json!({ "io.modelcontextprotocol/serverInfo": { "name": "journal", "version": env!("CARGO_PKG_VERSION") } })
}

/// How long `server/discover`'s answer stays fresh: it changes only with the binary.
pub const DISCOVER_TTL_MS: u64 = 60 * 60 * 1000;
/// How long a list (tools, prompts, resources) stays fresh. Each follows the credential's grant,
/// which the owner may narrow at any moment: a short time, so that a client which never listens for
/// changes still sees one within a minute (every call and read is checked against the grant as it is
/// now in any case).
pub const LIST_TTL_MS: u64 = 60 * 1000;

/// Whether a message is served statelessly: its `_meta`, or else its `MCP-Protocol-Version` header,
/// names a version that is not a session version. A 2025 session's messages name none in `_meta`
/// and at most their own version in the header; an `Mcp-Session-Id` does not matter, since this era
/// ignores it. A version this server does not know counts as stateless, so that its refusal lists
/// the versions it speaks.
pub fn is_stateless(params: &Map<String, Value>, header_version: Option<&str>) -> bool {
    let named = params
        .get("_meta")
        .and_then(|meta| meta.get(META_VERSION))
        .and_then(Value::as_str)
        .or(header_version.map(str::trim));
    named.is_some_and(|version| Version::session(version).is_none())
}

/// What a stateless request says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    /// The version as sent (checked against the header before it is checked against the list).
    pub requested: String,
    /// The client's capabilities for this request alone: nothing is inferred from earlier ones.
    pub capabilities: Map<String, Value>,
}

impl RequestMeta {
    /// Reads the required fields of `params._meta`.
    pub fn read(params: &Map<String, Value>) -> Result<RequestMeta, StatelessError> {
        let Some(meta) = params.get("_meta") else {
            return Err(StatelessError::MissingMeta("params._meta"));
        };
        let Some(meta) = meta.as_object() else {
            return Err(StatelessError::MissingMeta("params._meta (an object)"));
        };
        let Some(requested) = meta.get(META_VERSION).and_then(Value::as_str) else {
            return Err(StatelessError::MissingMeta(
                "params._meta[\"io.modelcontextprotocol/protocolVersion\"] (a string)",
            ));
        };
        let Some(capabilities) = meta.get(META_CAPABILITIES).and_then(Value::as_object) else {
            return Err(StatelessError::MissingMeta(
                "params._meta[\"io.modelcontextprotocol/clientCapabilities\"] (an object; {} declares none)",
            ));
        };
        Ok(RequestMeta {
            requested: requested.to_string(),
            capabilities: capabilities.clone(),
        })
    }

    /// The version, when it is the one this server serves statelessly.
    pub fn version(&self) -> Result<Version, StatelessError> {
        Version::parse(&self.requested)
            .filter(|v| v.is_stateless())
            .ok_or_else(|| StatelessError::UnsupportedVersion(self.requested.clone()))
    }
}

/// The standard headers of an HTTP request, as sent (names are matched without regard to case by
/// the transport; values are compared exactly, after surrounding spaces and tabs are dropped).
#[derive(Debug, Default, Clone, Copy)]
pub struct StandardHeaders<'a> {
    /// `MCP-Protocol-Version`; `Err(())` when the value is not visible ASCII.
    pub version: Option<Result<&'a str, ()>>,
    /// `Mcp-Method`.
    pub method: Option<Result<&'a str, ()>>,
    /// `Mcp-Name`, plain or in the `=?base64?...?=` form.
    pub name: Option<Result<&'a str, ()>>,
}

impl StandardHeaders<'_> {
    /// Checks each header against the body: the version against `_meta`'s, the method against the
    /// method, and, for the three methods that name something, the name against `params.name` or
    /// `params.uri`. A request whose body lacks the name is left to its method to refuse.
    pub fn check(&self, meta: &RequestMeta, method: &str, params: &Map<String, Value>) -> Result<(), StatelessError> {
        let version = required(self.version, "MCP-Protocol-Version")?;
        if version != meta.requested {
            return Err(StatelessError::HeaderMismatch(format!(
                "the MCP-Protocol-Version header \"{version}\" does not match params._meta's \"{}\"",
                meta.requested
            )));
        }
        let sent = required(self.method, "Mcp-Method")?;
        if sent != method {
            return Err(StatelessError::HeaderMismatch(format!(
                "the Mcp-Method header \"{sent}\" does not match the body's method \"{method}\""
            )));
        }
        let field = match method {
            "tools/call" | "prompts/get" => "name",
            "resources/read" => "uri",
            _ => return Ok(()),
        };
        let Some(expected) = params.get(field).and_then(Value::as_str) else {
            return Ok(());
        };
        let sent = decode(required(self.name, "Mcp-Name")?)?;
        if sent != expected {
            return Err(StatelessError::HeaderMismatch(format!(
                "the Mcp-Name header does not match params.{field}; send the {field} itself, or =?base64?...?= of it when it is not plain visible ASCII"
            )));
        }
        Ok(())
    }
}

fn required<'a>(header: Option<Result<&'a str, ()>>, name: &str) -> Result<&'a str, StatelessError> {
    match header {
        None => Err(StatelessError::HeaderMismatch(format!(
            "the {name} header is missing; 2026-07-28 requests carry it"
        ))),
        Some(Err(())) => Err(StatelessError::HeaderMismatch(format!(
            "the {name} header holds characters a header may not; send =?base64?...?= of the value"
        ))),
        Some(Ok(value)) => Ok(value.trim_matches([' ', '\t'])),
    }
}

/// A header value as the body would hold it: the `=?base64?...?=` form (standard alphabet, UTF-8)
/// decoded, any other value as it is.
fn decode(value: &str) -> Result<String, StatelessError> {
    let Some(encoded) = value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) else {
        return Ok(value.to_string());
    };
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| {
            StatelessError::HeaderMismatch(
                "the Mcp-Name header's =?base64?...?= value is not base64 of UTF-8 text".into(),
            )
        })
}

/// Whether this era answers `method`.
pub fn knows(method: &str) -> bool {
    METHODS.contains(&method)
}

/// Why a stateless request was refused before its method ran.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatelessError {
    #[error("the request lacks {0}: 2026-07-28 requests name their version and capabilities in _meta")]
    MissingMeta(&'static str),
    #[error("{0}")]
    HeaderMismatch(String),
    #[error(
        "unsupported protocol version \"{0}\"; this server speaks 2026-07-28 without a session, and 2025-11-25, 2025-06-18 and 2025-03-26 in a session that initialize opens"
    )]
    UnsupportedVersion(String),
    #[error("method not found: {0}")]
    UnknownMethod(String),
}

impl StatelessError {
    pub fn code(&self) -> i64 {
        match self {
            StatelessError::MissingMeta(_) => INVALID_PARAMS,
            StatelessError::HeaderMismatch(_) => HEADER_MISMATCH,
            StatelessError::UnsupportedVersion(_) => UNSUPPORTED_VERSION,
            StatelessError::UnknownMethod(_) => METHOD_NOT_FOUND,
        }
    }

    /// The HTTP status the specification pairs with the error.
    pub fn status(&self) -> StatusCode {
        match self {
            StatelessError::UnknownMethod(_) => StatusCode::NOT_FOUND,
            _ => StatusCode::BAD_REQUEST,
        }
    }

    /// The JSON-RPC error reply, with the request's id and the data the specification asks for.
    pub fn reply(&self, id: Value) -> Value {
        let mut error = json!({ "code": self.code(), "message": self.to_string() });
        if let StatelessError::UnsupportedVersion(requested) = self {
            error["data"] = json!({ "supported": protocol::ALL, "requested": requested });
        }
        json!({ "jsonrpc": "2.0", "id": id, "error": error })
    }
}

/// Checks a stateless request before its method runs: its `_meta`, then (over HTTP) its headers,
/// then its version, then its method. The order follows the specification's examples: a header
/// that disagrees with `_meta` is a mismatch even when neither version is supported.
pub fn admit(
    method: &str,
    params: &Map<String, Value>,
    headers: Option<&StandardHeaders<'_>>,
) -> Result<(Version, RequestMeta), StatelessError> {
    let meta = RequestMeta::read(params)?;
    if let Some(headers) = headers {
        headers.check(&meta, method, params)?;
    }
    let version = meta.version()?;
    if !knows(method) {
        return Err(StatelessError::UnknownMethod(method.to_string()));
    }
    Ok((version, meta))
}

/// Caching hints for a result that may be kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cache {
    pub ttl_ms: u64,
    /// Whether the answer depends on the credential (`private`) or is the same for anyone (`public`).
    pub private: bool,
}

/// A complete result's JSON text with this era's fields added: `resultType`, the caching hints when
/// given, and the server in `_meta`. `result` is one JSON object without those keys of its own.
pub fn complete(result: &str, cache: Option<Cache>) -> String {
    let rest = result.trim_start().strip_prefix('{').unwrap_or("}");
    let mut out = String::with_capacity(result.len() + SERVER_META.len() + 80);
    out.push_str(r#"{"resultType":"complete","#);
    if let Some(cache) = cache {
        let scope = if cache.private { "private" } else { "public" };
        out.push_str(&format!(r#""ttlMs":{},"cacheScope":"{scope}","#, cache.ttl_ms));
    }
    out.push_str(r#""_meta":"#);
    out.push_str(SERVER_META);
    if !rest.trim_start().starts_with('}') {
        out.push(',');
    }
    out.push_str(rest);
    out
}

/// The `server/discover` result (without this era's fields, which `complete` adds).
pub fn discover(capabilities: &Value, instructions: &str) -> Value {
    json!({
        "supportedVersions": protocol::ALL,
        "capabilities": capabilities,
        "instructions": instructions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(version: &str) -> Map<String, Value> {
        json!({"_meta": {META_VERSION: version, META_CAPABILITIES: {}}, "name": "search"})
            .as_object()
            .unwrap()
            .clone()
    }

    fn headers<'a>(version: &'a str, method: &'a str, name: Option<&'a str>) -> StandardHeaders<'a> {
        StandardHeaders {
            version: Some(Ok(version)),
            method: Some(Ok(method)),
            name: name.map(Ok),
        }
    }

    #[test]
    fn a_message_is_stateless_when_its_meta_or_header_names_a_version_without_sessions() {
        let none = Map::new();
        assert!(!is_stateless(&none, None), "a 2025 message names no version in _meta");
        assert!(!is_stateless(&none, Some("2025-06-18")));
        assert!(is_stateless(&none, Some("2026-07-28")), "the header alone says so");
        assert!(
            is_stateless(&none, Some(" v999.0.0 ")),
            "an unknown version is refused as this era refuses"
        );
        assert!(
            is_stateless(&meta("2026-07-28"), Some("2025-11-25")),
            "_meta decides first"
        );
        assert!(!is_stateless(&meta("2025-11-25"), None));
    }

    #[test]
    fn meta_must_name_a_version_and_capabilities() {
        let refused = |params: Value| RequestMeta::read(params.as_object().unwrap()).unwrap_err();
        for params in [
            json!({}),
            json!({"_meta": 1}),
            json!({"_meta": {META_CAPABILITIES: {}}}),
            json!({"_meta": {META_VERSION: 2026, META_CAPABILITIES: {}}}),
            json!({"_meta": {META_VERSION: "2026-07-28"}}),
            json!({"_meta": {META_VERSION: "2026-07-28", META_CAPABILITIES: []}}),
        ] {
            let error = refused(params.clone());
            assert_eq!(
                (error.code(), error.status()),
                (-32602, StatusCode::BAD_REQUEST),
                "{params}"
            );
        }
        let read = RequestMeta::read(&meta("2026-07-28")).unwrap();
        assert_eq!(read.version().unwrap().as_str(), "2026-07-28");
        for unsupported in ["v999.0.0", "2025-11-25"] {
            let error = RequestMeta::read(&meta(unsupported)).unwrap().version().unwrap_err();
            assert_eq!(error.code(), UNSUPPORTED_VERSION);
            let reply = error.reply(json!(301));
            assert_eq!(reply["id"], 301);
            assert_eq!(reply["error"]["data"]["requested"], unsupported);
            assert_eq!(reply["error"]["data"]["supported"], json!(protocol::ALL));
        }
    }

    #[test]
    fn headers_must_be_there_and_agree_with_the_body() {
        let params = meta("2026-07-28");
        let read = RequestMeta::read(&params).unwrap();
        let check = |h: StandardHeaders<'_>, method: &str| h.check(&read, method, &params);
        assert_eq!(
            check(headers("2026-07-28", "tools/call", Some("search")), "tools/call"),
            Ok(())
        );
        assert_eq!(
            check(headers(" 2026-07-28\t", "tools/list", None), "tools/list"),
            Ok(())
        );
        assert_eq!(
            check(headers("2026-07-28", "tools/call", Some("  search  ")), "tools/call"),
            Ok(()),
            "spaces around a value are not part of it"
        );
        assert_eq!(
            check(
                headers("2026-07-28", "tools/call", Some("=?base64?c2VhcmNo?=")),
                "tools/call"
            ),
            Ok(())
        );
        let refusals = [
            (
                headers("2026-07-28", "tools/call", None),
                "tools/call",
                "Mcp-Name header is missing",
            ),
            (
                headers("2026-07-28", "tools/call", Some("fetch")),
                "tools/call",
                "does not match params.name",
            ),
            (
                headers("2026-07-28", "TOOLS/LIST", None),
                "tools/list",
                "does not match the body's method",
            ),
            (
                headers("2025-11-25", "tools/list", None),
                "tools/list",
                "does not match params._meta",
            ),
            (
                headers("2026-07-28", "tools/call", Some("=?base64?not base64?=")),
                "tools/call",
                "not base64",
            ),
            (
                headers("2026-07-28", "tools/call", Some("=?BASE64?c2VhcmNo?=")),
                "tools/call",
                "does not match",
            ),
            (
                StandardHeaders {
                    version: Some(Ok("2026-07-28")),
                    ..Default::default()
                },
                "tools/list",
                "Mcp-Method header is missing",
            ),
            (
                StandardHeaders::default(),
                "tools/list",
                "MCP-Protocol-Version header is missing",
            ),
            (
                StandardHeaders {
                    version: Some(Err(())),
                    ..Default::default()
                },
                "tools/list",
                "characters a header may not",
            ),
        ];
        for (sent, method, why) in refusals {
            let error = check(sent, method).unwrap_err();
            assert_eq!(
                (error.code(), error.status()),
                (HEADER_MISMATCH, StatusCode::BAD_REQUEST)
            );
            assert!(error.to_string().contains(why), "{error} / {why}");
        }
        // The encoded form of a name with characters a header cannot hold.
        let mut unicode = params.clone();
        unicode.insert("name".into(), json!("Hello, 世界"));
        assert_eq!(
            headers("2026-07-28", "tools/call", Some("=?base64?SGVsbG8sIOS4lueVjA==?=")).check(
                &read,
                "tools/call",
                &unicode
            ),
            Ok(())
        );
    }

    #[test]
    fn admission_checks_meta_then_headers_then_version_then_method() {
        let h = headers("v999.0.0", "server/discover", None);
        let error = admit("server/discover", &meta("v999.0.0"), Some(&h)).unwrap_err();
        assert_eq!(
            error.code(),
            UNSUPPORTED_VERSION,
            "header and _meta agree on an unknown version"
        );
        let h = headers("2026-07-28", "server/discover", None);
        let error = admit("server/discover", &meta("v999.0.0"), Some(&h)).unwrap_err();
        assert_eq!(error.code(), HEADER_MISMATCH, "they disagree");
        for removed in [
            "initialize",
            "ping",
            "logging/setLevel",
            "resources/subscribe",
            "unknown/method",
        ] {
            let h = headers("2026-07-28", removed, None);
            let error = admit(removed, &meta("2026-07-28"), Some(&h)).unwrap_err();
            assert_eq!(
                (error.code(), error.status()),
                (METHOD_NOT_FOUND, StatusCode::NOT_FOUND),
                "{removed}"
            );
        }
        let (version, _) = admit("tools/list", &meta("2026-07-28"), None).unwrap();
        assert!(version.is_stateless(), "stdio has no headers to check");
    }

    #[test]
    fn complete_results_carry_the_eras_fields_once() {
        let parsed = |text: String| serde_json::from_str::<Value>(&text).unwrap();
        let listed = parsed(complete(
            r#"{"tools":[]}"#,
            Some(Cache {
                ttl_ms: 5,
                private: true,
            }),
        ));
        assert_eq!(listed["resultType"], "complete");
        assert_eq!(
            (listed["ttlMs"].as_u64(), listed["cacheScope"].as_str()),
            (Some(5), Some("private"))
        );
        assert_eq!(listed["_meta"][META_SERVER]["name"], "journal");
        assert_eq!(listed["tools"], json!([]));
        let empty = parsed(complete("{}", None));
        assert_eq!(empty.as_object().unwrap().len(), 2, "{empty}");
        assert!(empty.get("ttlMs").is_none());
    }
}
