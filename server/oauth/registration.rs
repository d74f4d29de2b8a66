//! What a client registration may ask for (RFC 7591 2), as plain checks: public clients, the code
//! flow, allowed callbacks, a name that shows as what it is. Used by `POST /register`, by client ID
//! metadata documents (`client_metadata`) and by `journal mcp oauth register`.

use serde_json::{Value, json};

use super::{OAuthError, redirect};

const MAX_REDIRECT_URIS: usize = 16;
const MAX_URI_BYTES: usize = 2048;
const MAX_NAME_CHARS: usize = 256;

/// What a registration asks for, once checked.
#[derive(Debug, PartialEq, Eq)]
pub struct Registration {
    pub client_name: String,
    pub redirect_uris: Vec<String>,
}

/// A client name as it may be stored and shown: without control characters and without Unicode
/// format characters (general category Cf: bidirectional overrides and isolates, zero-width
/// characters, the byte order mark, tags...), which a client could use to make "Evil\u{202e}elgooG"
/// read as "EvilGoogle" on the consent page or hide characters in it.
pub fn clean_name(name: &str) -> String {
    name.chars().filter(|c| !c.is_control() && !is_format(*c)).collect()
}

/// Whether `c` is in Unicode's general category Cf (format), as of Unicode 16.
fn is_format(c: char) -> bool {
    matches!(c as u32,
        0x00AD
        | 0x0600..=0x0605
        | 0x061C
        | 0x06DD
        | 0x070F
        | 0x0890..=0x0891
        | 0x08E2
        | 0x180E
        | 0x200B..=0x200F
        | 0x202A..=0x202E
        | 0x2060..=0x2064
        | 0x2066..=0x206F
        | 0xFEFF
        | 0xFFF9..=0xFFFB
        | 0x110BD
        | 0x110CD
        | 0x13430..=0x1343F
        | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A
        | 0xE0001
        | 0xE0020..=0xE007F)
}

/// Checks a registration request (RFC 7591 2): public clients, the code flow, allowed callbacks.
/// Callbacks outside the allow list are dropped; none left is an error.
pub fn check(request: &Value) -> Result<Registration, OAuthError> {
    let metadata = |d: &str| OAuthError::new("invalid_client_metadata", d.to_string());
    let object = request
        .as_object()
        .ok_or_else(|| metadata("the body must be a JSON object"))?;
    if let Some(method) = object.get("token_endpoint_auth_method")
        && method != "none"
    {
        return Err(metadata(
            "token_endpoint_auth_method must be \"none\": this server registers public clients only",
        ));
    }
    if let Some(grants) = object.get("grant_types") {
        let grants: Vec<&str> = grants
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let known = grants
            .iter()
            .all(|g| *g == "authorization_code" || *g == "refresh_token");
        if !known || !grants.contains(&"authorization_code") {
            return Err(metadata(
                "grant_types must include \"authorization_code\" and may add only \"refresh_token\"",
            ));
        }
    }
    if let Some(types) = object.get("response_types")
        && types != &json!(["code"])
    {
        return Err(metadata("response_types must be [\"code\"]"));
    }
    let client_name = match object.get("client_name") {
        None | Some(Value::Null) => "An MCP client".to_string(),
        Some(Value::String(name)) if !clean_name(name).trim().is_empty() && name.chars().count() <= MAX_NAME_CHARS => {
            clean_name(name)
        }
        Some(_) => return Err(metadata("client_name must be a string of 1 to 256 characters")),
    };
    let uris = object.get("redirect_uris").and_then(Value::as_array).ok_or_else(|| {
        OAuthError::new(
            "invalid_redirect_uri",
            "redirect_uris is required: a list of callback URLs",
        )
    })?;
    if uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            format!("at most {MAX_REDIRECT_URIS} redirect_uris"),
        ));
    }
    let mut kept = Vec::new();
    for uri in uris.iter().filter_map(Value::as_str) {
        if uri.len() <= MAX_URI_BYTES && redirect::allowed(uri) && !kept.iter().any(|k| k == uri) {
            kept.push(uri.to_string());
        }
    }
    if kept.is_empty() {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            "no redirect URI is allowed: use a loopback callback (http://localhost:PORT/...) or a known hosted agent's callback",
        ));
    }
    Ok(Registration {
        client_name,
        redirect_uris: kept,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_registrations() {
        let ok = check(&json!({"client_name": "Claude Code", "redirect_uris": ["http://localhost/callback", "https://evil.example/cb"]}))
            .unwrap();
        assert_eq!(
            ok.redirect_uris,
            ["http://localhost/callback"],
            "disallowed callbacks are dropped"
        );
        assert_eq!(
            check(&json!({"redirect_uris": ["http://127.0.0.1:1/cb"]}))
                .unwrap()
                .client_name,
            "An MCP client"
        );
        let cases = [
            (json!([]), "invalid_client_metadata"),
            (json!({}), "invalid_redirect_uri"),
            (
                json!({"redirect_uris": ["https://evil.example/cb"]}),
                "invalid_redirect_uri",
            ),
            (json!({"redirect_uris": "http://localhost/cb"}), "invalid_redirect_uri"),
            (
                json!({"redirect_uris": vec!["http://localhost/cb"; 17]}),
                "invalid_redirect_uri",
            ),
            (
                json!({"redirect_uris": ["http://localhost/cb"], "token_endpoint_auth_method": "client_secret_basic"}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["http://localhost/cb"], "grant_types": ["refresh_token"]}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["http://localhost/cb"], "grant_types": ["authorization_code", "implicit"]}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["http://localhost/cb"], "response_types": ["token"]}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["http://localhost/cb"], "client_name": "x".repeat(257)}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["http://localhost/cb"], "client_name": 5}),
                "invalid_client_metadata",
            ),
        ];
        for (request, code) in cases {
            assert_eq!(check(&request).unwrap_err().code, code, "{request}");
        }
        let spoof = check(
            &json!({"client_name": "Evil\u{202e}elgooG\u{200b}\u{2066}", "redirect_uris": ["http://localhost/cb"]}),
        )
        .unwrap();
        assert_eq!(spoof.client_name, "EvilelgooG", "format characters are gone");
        assert!(
            check(&json!({"client_name": "\u{202e}\u{200d}", "redirect_uris": ["http://localhost/cb"]})).is_err(),
            "a name of nothing but format characters is no name"
        );
        assert_eq!(clean_name("Caf\u{e9} \u{1F600}\u{feff}"), "Caf\u{e9} \u{1F600}");
        let long = format!("http://localhost/{}", "a".repeat(2048));
        assert!(check(&json!({"redirect_uris": [long]})).is_err());
    }
}
