//! The OAuth authorization server end to end over HTTP: discovery, registration, the consent page
//! gated on a pairing code, codes with PKCE, tokens, rotation and revocation, and the refusals of
//! RFC 9700 (PKCE downgrade, code reuse, redirect mismatch, open redirects, refresh reuse, wrong
//! resource, revoked tokens, pairing-code guessing, forged consent forms).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hyper::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::harness::{Client, Reply, TestServer, eventually};
use journal::clock::unix_now;
use journal::oauth::store;

pub(crate) const CALLBACK: &str = "http://127.0.0.1:9/callback";

fn at(server: &TestServer, path: &str) -> Client {
    Client::new(&format!("http://{}{path}", server.addr), None)
}

pub(crate) async fn open_sign_in(server: &TestServer) -> String {
    store::open_code(&server.journal.db, "local", unix_now()).await.unwrap()
}

async fn register(server: &TestServer, body: Value) -> Reply {
    at(server, "/register")
        .raw(Method::POST, &[("content-type", "application/json")], body.to_string())
        .await
}

pub(crate) async fn register_client(server: &TestServer) -> String {
    let reply = register(
        server,
        json!({"client_name": "Test Agent", "redirect_uris": ["http://127.0.0.1/callback"]}),
    )
    .await;
    // 201 for a new client; 200 when this address registered the same one before.
    assert!(
        reply.status == StatusCode::CREATED || reply.status == StatusCode::OK,
        "{:?}",
        reply.body
    );
    reply.json()["client_id"].as_str().unwrap().to_string()
}

pub(crate) fn pkce() -> (String, String) {
    let verifier = format!("v{}", "0123456789abcdefghijklmnopqrstuvwxyz-._~ABCDEFG");
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

pub(crate) fn query(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

async fn authorize(server: &TestServer, pairs: &[(&str, &str)]) -> Reply {
    at(server, &format!("/authorize?{}", query(pairs)))
        .raw(Method::GET, &[], "")
        .await
}

fn authorize_params<'a>(client_id: &'a str, challenge: &'a str, resource: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("state", "st-123"),
        ("resource", resource),
        ("scope", "openid profile"),
    ]
}

/// Sends the same urlencoded `body` to `path` `times` times at once; answers every reply.
pub(crate) async fn at_once(server: &TestServer, path: &str, body: &str, times: usize) -> Vec<Reply> {
    let mut racing = tokio::task::JoinSet::new();
    for _ in 0..times {
        let (client, body) = (at(server, path), body.to_string());
        racing.spawn(async move {
            client
                .raw(
                    Method::POST,
                    &[("content-type", "application/x-www-form-urlencoded")],
                    body,
                )
                .await
        });
    }
    racing.join_all().await
}

/// The value of a hidden form field on a page.
fn field(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .unwrap_or_else(|| panic!("no field {name} in {html}"))
        + marker.len();
    html[start..].split('"').next().unwrap().to_string()
}

async fn consent(server: &TestServer, fields: &[(&str, &str)]) -> Reply {
    at(server, "/authorize")
        .raw(
            Method::POST,
            &[("content-type", "application/x-www-form-urlencoded")],
            query(fields),
        )
        .await
}

/// Opens the consent page for a client; answers its hidden fields (pending, csrf).
async fn consent_form(server: &TestServer, client_id: &str, challenge: &str) -> (String, String) {
    let resource = format!("http://{}/mcp", server.addr);
    let page = authorize(server, &authorize_params(client_id, challenge, &resource)).await;
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    (field(&html, "pending"), field(&html, "csrf"))
}

/// The owner approves a whole-journal grant with `categories`: answers the authorization code.
pub(crate) async fn approved_code(
    server: &TestServer,
    client_id: &str,
    challenge: &str,
    pairing: &str,
    categories: &[&str],
) -> String {
    let (pending, csrf) = consent_form(server, client_id, challenge).await;
    let mut fields = vec![
        ("pending", pending.as_str()),
        ("csrf", csrf.as_str()),
        ("pairing_code", pairing),
        ("scope", "journal"),
        ("decision", "approve"),
    ];
    fields.extend(categories.iter().map(|c| ("category", *c)));
    location(&consent(server, &fields).await).1["code"].clone()
}

/// The query parameters of a redirect's Location.
fn location(reply: &Reply) -> (String, std::collections::HashMap<String, String>) {
    assert_eq!(
        reply.status,
        StatusCode::SEE_OTHER,
        "{:?}",
        String::from_utf8_lossy(&reply.body)
    );
    let location = reply.header("location").unwrap();
    let url = url::Url::parse(&location).unwrap();
    let base = url[..url::Position::AfterPath].to_string();
    (
        base,
        url.query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect(),
    )
}

/// Exchanges an authorization code sent to `CALLBACK`, as the client that asked for it does.
async fn exchange(server: &TestServer, code: &str, client_id: &str, verifier: &str) -> Reply {
    token(
        server,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("client_id", client_id),
            ("redirect_uri", CALLBACK),
            ("code_verifier", verifier),
        ],
    )
    .await
}

async fn token(server: &TestServer, pairs: &[(&str, &str)]) -> Reply {
    at(server, "/token")
        .raw(
            Method::POST,
            &[("content-type", "application/x-www-form-urlencoded")],
            query(pairs),
        )
        .await
}

/// A whole sign-in: register, authorize, consent with the code, exchange. Answers (client id, tokens).
pub(crate) async fn sign_in(server: &TestServer, categories: &[&str], facets: Option<&[&str]>) -> (String, Value) {
    sign_in_with(server, categories, facets, &[]).await
}

/// `sign_in` with more fields on the consent page's first stage (such as `write`).
pub(crate) async fn sign_in_with(
    server: &TestServer,
    categories: &[&str],
    facets: Option<&[&str]>,
    extra: &[(&str, &str)],
) -> (String, Value) {
    let code = open_sign_in(server).await;
    let client_id = register_client(server).await;
    let (verifier, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    let page = authorize(server, &authorize_params(&client_id, &challenge, &resource)).await;
    assert_eq!(page.status, StatusCode::OK);
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    let (pending, csrf) = (field(&html, "pending"), field(&html, "csrf"));
    let scope = if facets.is_some() { "facets" } else { "journal" };
    let mut fields = vec![
        ("pending", pending.as_str()),
        ("csrf", csrf.as_str()),
        ("pairing_code", code.as_str()),
        ("scope", scope),
        ("decision", "approve"),
    ];
    fields.extend(categories.iter().map(|c| ("category", *c)));
    fields.extend_from_slice(extra);
    let mut reply = consent(server, &fields).await;
    if let Some(facets) = facets {
        assert_eq!(reply.status, StatusCode::OK, "stage two");
        let ids: Vec<String> = facets.iter().map(|n| server.facet_id(n)).collect();
        let mut fields = vec![
            ("pending", pending.as_str()),
            ("csrf", csrf.as_str()),
            ("decision", "approve"),
        ];
        fields.extend(ids.iter().map(|id| ("facet", id.as_str())));
        reply = consent(server, &fields).await;
    }
    let (base, params) = location(&reply);
    assert_eq!(base, CALLBACK);
    assert_eq!(params["state"], "st-123");
    assert_eq!(params["iss"], format!("http://{}", server.addr));
    let reply = token(
        server,
        &[
            ("grant_type", "authorization_code"),
            ("code", &params["code"]),
            ("redirect_uri", CALLBACK),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
            ("resource", &resource),
        ],
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
    assert_eq!(reply.header("cache-control").as_deref(), Some("no-store"));
    (client_id, reply.json())
}

#[tokio::test]
async fn discovery_documents_name_the_route_the_client_used() {
    let server = TestServer::start().await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let reply = at(&server, path).raw(Method::GET, &[], "").await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(reply.header("access-control-allow-origin").as_deref(), Some("*"));
        let document = reply.json();
        assert_eq!(document["resource"], format!("http://{}/mcp", server.addr));
        assert_eq!(
            document["authorization_servers"],
            json!([format!("http://{}", server.addr)])
        );
    }
    let localhost = format!("localhost:{}", server.addr.port());
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let document = at(&server, path)
            .raw(Method::GET, &[("host", &localhost)], "")
            .await
            .json();
        let origin = format!("http://localhost:{}", server.addr.port());
        assert_eq!(document["issuer"], origin.as_str());
        assert_eq!(document["token_endpoint"], format!("{origin}/token"));
        assert_eq!(document["registration_endpoint"], format!("{origin}/register"));
        assert_eq!(document["revocation_endpoint"], format!("{origin}/revoke"));
        assert_eq!(document["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(document["token_endpoint_auth_methods_supported"], json!(["none"]));
        assert_eq!(document["authorization_response_iss_parameter_supported"], true);
        assert_eq!(
            document["grant_types_supported"],
            json!(["authorization_code", "refresh_token"])
        );
    }
    let reply = at(&server, "/.well-known/oauth-authorization-server")
        .raw(Method::POST, &[], "")
        .await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(reply.header("allow").unwrap().contains("GET"));
    let reply = at(&server, "/token")
        .raw(
            Method::OPTIONS,
            &[
                ("origin", "http://localhost:6274"),
                ("access-control-request-method", "POST"),
            ],
            "",
        )
        .await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT);
    assert!(reply.header("access-control-allow-methods").unwrap().contains("POST"));
    let reply = at(&server, "/token").raw(Method::GET, &[], "").await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(reply.header("allow").as_deref(), Some("POST,OPTIONS"));
}

#[tokio::test]
async fn sign_in_is_closed_until_a_pairing_code_is_open() {
    let server = TestServer::start().await;
    let reply = register(&server, json!({"redirect_uris": [CALLBACK]})).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert_eq!(
        reply.json(),
        json!({"error": "access_denied", "error_description":
            "sign-in is closed: run journal mcp pairing generate on the journal's computer, then try again"}),
        "a program gets one line it can print"
    );
    let reply = at(&server, "/register")
        .raw(
            Method::POST,
            &[("content-type", "application/json"), ("accept", "text/html,*/*;q=0.8")],
            "{}",
        )
        .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    let page = String::from_utf8(reply.body.to_vec()).unwrap();
    assert!(
        page.contains("Nothing is waiting to connect"),
        "a browser gets the page: {page}"
    );
    for secret in ["Work", "Family", "side-project", "facet", "transcript", "Okafor"] {
        assert!(!page.contains(secret), "the closed page reveals nothing: {secret}");
    }
    let reply = at(&server, "/register")
        .raw(Method::POST, &[("content-type", "text/plain")], "garbage")
        .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "refused before anything is parsed");
    let reply = authorize(&server, &[("client_id", "x")]).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);

    open_sign_in(&server).await;
    register_client(&server).await;
    store::revoke_codes(&server.journal.db, None).await.unwrap();
    assert_eq!(
        register(&server, json!({"redirect_uris": [CALLBACK]})).await.status,
        StatusCode::FORBIDDEN
    );
    sqlx::query("UPDATE pairing_codes SET expires_at = 0")
        .execute(&server.journal.db)
        .await
        .unwrap();
    open_sign_in(&server).await;
    sqlx::query("UPDATE pairing_codes SET expires_at = 0")
        .execute(&server.journal.db)
        .await
        .unwrap();
    assert_eq!(
        register(&server, json!({"redirect_uris": [CALLBACK]})).await.status,
        StatusCode::FORBIDDEN,
        "an expired code closes sign-in"
    );
}

#[tokio::test]
async fn registration_rules_and_quotas() {
    let server = TestServer::start().await;
    open_sign_in(&server).await;
    let body = json!({"client_name": "Claude Code", "redirect_uris": ["http://localhost/callback", "http://127.0.0.1/callback", "https://evil.example/cb"]});
    let first = register(&server, body.clone()).await;
    assert_eq!(first.status, StatusCode::CREATED);
    let record = first.json();
    assert!(record["client_id"].as_str().unwrap().starts_with("jc_"));
    assert_eq!(
        record["redirect_uris"],
        json!(["http://localhost/callback", "http://127.0.0.1/callback"])
    );
    assert_eq!(record["token_endpoint_auth_method"], "none");
    let again = register(&server, body).await;
    assert_eq!(again.status, StatusCode::OK, "the same client again");
    assert_eq!(again.json()["client_id"], record["client_id"]);

    let reply = register(&server, json!({"redirect_uris": ["https://evil.example/cb"]})).await;
    assert_eq!(
        (reply.status, reply.json()["error"].clone()),
        (StatusCode::BAD_REQUEST, json!("invalid_redirect_uri"))
    );
    let reply = register(
        &server,
        json!({"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "client_secret_post"}),
    )
    .await;
    assert_eq!(reply.json()["error"], "invalid_client_metadata");
    let reply = at(&server, "/register")
        .raw(Method::POST, &[("content-type", "application/json")], "{broken")
        .await;
    assert_eq!(reply.json()["error"], "invalid_client_metadata");
    let reply = at(&server, "/register")
        .raw(
            Method::POST,
            &[("content-type", "application/json")],
            "x".repeat(17_000),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);

    for i in 1..16 {
        let reply = register(
            &server,
            json!({"client_name": format!("c{i}"), "redirect_uris": [CALLBACK]}),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{i}");
    }
    // The address's quota is full: its oldest client that never signed in makes way.
    let first_id = record["client_id"].as_str().unwrap().to_string();
    let reply = register(
        &server,
        json!({"client_name": "seventeenth", "redirect_uris": [CALLBACK]}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_clients")
        .fetch_one(&server.journal.db)
        .await
        .unwrap();
    assert_eq!(count, 16, "still sixteen from this address");
    assert!(
        store::client(&server.journal.db, &first_id).await.unwrap().is_none(),
        "the oldest unused one went"
    );

    // Clients with a grant are never displaced; when every slot holds one, registration is refused.
    sqlx::query("INSERT INTO connections (id, kind, label, label_key, created_at) SELECT client_id, 'oauth', 'x', client_id, 0 FROM oauth_clients")
        .execute(&server.journal.db)
        .await
        .unwrap();
    sqlx::query("INSERT INTO oauth_grants (connection_id, client_id, route, resource, paired_at, expires_at) SELECT client_id, client_id, 'local', '', 0, 9999999999 FROM oauth_clients")
        .execute(&server.journal.db)
        .await
        .unwrap();
    let reply = register(&server, json!({"client_name": "no room", "redirect_uris": [CALLBACK]})).await;
    assert_eq!(reply.status, StatusCode::TOO_MANY_REQUESTS);
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_clients")
        .fetch_one(&server.journal.db)
        .await
        .unwrap();
    assert_eq!(count, 16, "the refused registration stored nothing");
}

#[tokio::test]
async fn a_reloaded_consent_page_never_locks_the_owner_out() {
    let server = TestServer::start().await;
    open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (_, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    let mut forms = Vec::new();
    for _ in 0..12 {
        let page = authorize(&server, &authorize_params(&client_id, &challenge, &resource)).await;
        assert_eq!(page.status, StatusCode::OK);
        let html = String::from_utf8(page.body.to_vec()).unwrap();
        forms.push((field(&html, "pending"), field(&html, "csrf")));
    }
    let waiting: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_pending")
        .fetch_one(&server.journal.db)
        .await
        .unwrap();
    assert_eq!(waiting, 8, "at most eight per address");
    let (old_pending, old_csrf) = &forms[0];
    let reply = consent(
        &server,
        &[("pending", old_pending), ("csrf", old_csrf), ("decision", "deny")],
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "the oldest made way");
    let (pending, csrf) = forms.last().unwrap();
    let reply = consent(&server, &[("pending", pending), ("csrf", csrf), ("decision", "deny")]).await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER, "the newest is answered");
}

#[tokio::test]
async fn the_whole_flow_gives_a_token_with_the_chosen_grant() {
    let server = TestServer::start().await;
    let (client_id, tokens) = sign_in(&server, &["transcripts", "entities"], None).await;
    let access = tokens["access_token"].as_str().unwrap();
    assert!(access.starts_with("jat_") && tokens["refresh_token"].as_str().unwrap().starts_with("jrt_"));
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    let client = Client::connected(&server.url(), access).await;
    let names = client.tool_names().await;
    assert_eq!(names.len(), 9, "{names:?}");
    let hits = client.ok("search", json!({"query": "lease"})).await;
    assert!(!hits["results"].as_array().unwrap().is_empty());
    let entries = journal::auth::audit::recent(&server.journal.db, 1, Some("Test Agent"))
        .await
        .unwrap();
    assert_eq!(entries[0].tool, "search", "audited under the app's name");
    let listed = store::list_grants(&server.journal.db, journal::clock::unix_now())
        .await
        .unwrap();
    assert_eq!(listed[0].client_id, client_id);
    assert_eq!(listed[0].expires_at - listed[0].paired_at, 30 * 24 * 3600);

    store::revoke_client(&server.journal.db, &client_id).await.unwrap();
    let reply = client.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "signed out: refused at once");
}

/// The same app signing in again on the same route replaces its earlier sign-in: one row per app
/// and place in the owner's list, the old tokens refused; the consent page says so beforehand.
#[tokio::test]
async fn a_second_sign_in_of_one_app_replaces_the_first() {
    let server = TestServer::start().await;
    let (first_id, first) = sign_in(&server, &["transcripts"], None).await;
    let old = Client::connected(&server.url(), first["access_token"].as_str().unwrap()).await;
    let (second_id, second) = sign_in(&server, &["entities"], None).await;
    assert_eq!(first_id, second_id, "the same registration, so the same app");
    let listed = store::list_grants(&server.journal.db, journal::clock::unix_now())
        .await
        .unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let reply = old.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await;
    assert_eq!(
        reply.status,
        StatusCode::UNAUTHORIZED,
        "the replaced sign-in is refused at once"
    );
    let new = Client::connected(&server.url(), second["access_token"].as_str().unwrap()).await;
    assert!(new.tool_names().await.contains(&"list_entities".to_string()));
    // Said on the consent page, before the owner approves.
    open_sign_in(&server).await;
    let (_, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    let page = authorize(&server, &authorize_params(&second_id, &challenge, &resource)).await;
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    assert!(html.contains("this sign-in replaces"), "{html}");
}

#[tokio::test]
async fn the_consent_page_shows_facet_names_only_after_the_code() {
    let server = TestServer::start().await;
    let code = open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (_, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    let page = authorize(&server, &authorize_params(&client_id, &challenge, &resource)).await;
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("form-action 'self' http://127.0.0.1:9"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(page.header("x-frame-options").as_deref(), Some("DENY"));
    assert_eq!(page.header("cache-control").as_deref(), Some("no-store"));
    assert_eq!(page.header("referrer-policy").as_deref(), Some("same-origin"));
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    assert!(html.contains("Test Agent wants to connect") && html.contains("127.0.0.1"));
    for field in [
        "name=\"pairing_code\"",
        "name=\"scope\" value=\"journal\"",
        "name=\"scope\" value=\"facets\"",
        "name=\"category\" value=\"transcripts\"",
        "name=\"category\" value=\"notes\"",
        "name=\"decision\" value=\"approve\"",
        "name=\"decision\" value=\"deny\"",
    ] {
        assert!(html.contains(field), "{field}");
    }
    assert!(
        !html.contains("Side project") && !html.contains(&server.facet_id("work")),
        "no facet before the code"
    );

    let (pending, csrf) = (field(&html, "pending"), field(&html, "csrf"));
    let reply = consent(
        &server,
        &[
            ("pending", &pending),
            ("csrf", &csrf),
            ("pairing_code", &code),
            ("scope", "facets"),
            ("category", "transcripts"),
            ("decision", "approve"),
        ],
    )
    .await;
    let html = String::from_utf8(reply.body.to_vec()).unwrap();
    assert!(
        html.contains("Side project") && html.contains(&server.facet_id("work")),
        "stage two lists the facets"
    );
    let reply = consent(
        &server,
        &[("pending", &pending), ("csrf", &csrf), ("decision", "approve")],
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(String::from_utf8_lossy(&reply.body).contains("Choose at least one facet"));
}

#[tokio::test]
async fn a_facet_grant_narrows_the_tools() {
    let server = TestServer::start().await;
    let (_, tokens) = sign_in(&server, &["transcripts"], Some(&["work"])).await;
    let client = Client::connected(&server.url(), tokens["access_token"].as_str().unwrap()).await;
    let search = client.tool("search").await;
    assert_eq!(
        search["inputSchema"]["properties"]["facet"]["enum"],
        json!([server.facet_id("work")])
    );
    assert_eq!(client.tool_names().await.len(), 7);
}

/// The write mode of a client's latest sign-in (registrations with the same metadata are one client).
async fn write_mode_of(server: &TestServer, client_id: &str) -> String {
    sqlx::query_scalar(
        "SELECT g.write_mode FROM grants g JOIN oauth_grants o ON o.connection_id = g.connection_id
         WHERE o.client_id = ? ORDER BY o.rowid DESC LIMIT 1",
    )
    .bind(client_id)
    .fetch_one(&server.journal.db)
    .await
    .unwrap()
}

#[tokio::test]
async fn the_consent_page_offers_suggestions_but_never_force() {
    let server = TestServer::start().await;
    let code = open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (_, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    let page = authorize(&server, &authorize_params(&client_id, &challenge, &resource)).await;
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    assert!(
        html.contains("name=\"write\" value=\"none\" checked"),
        "can't change anything is the default"
    );
    assert!(html.contains("name=\"write\" value=\"propose\"") && html.contains("suggest changes for me to review"));
    assert!(!html.contains("value=\"force\""), "force is never offered here");

    let (pending, csrf) = (field(&html, "pending"), field(&html, "csrf"));
    for asked in ["force", "FORCE", "everything"] {
        let forged = consent(
            &server,
            &[
                ("pending", &pending),
                ("csrf", &csrf),
                ("pairing_code", &code),
                ("scope", "journal"),
                ("category", "notes"),
                ("write", asked),
                ("decision", "approve"),
            ],
        )
        .await;
        assert_eq!(forged.status, StatusCode::BAD_REQUEST, "{asked}");
        assert!(
            String::from_utf8_lossy(&forged.body).contains("does not offer"),
            "{asked}"
        );
    }
    assert!(
        store::code_open(&server.journal.db, "local", unix_now()).await.unwrap(),
        "a refused form does not spend the code"
    );

    // Propose survives the second stage (facets), and a plain sign-in writes nothing.
    let (proposer, _) = sign_in_with(&server, &["notes"], Some(&["work"]), &[("write", "propose")]).await;
    assert_eq!(write_mode_of(&server, &proposer).await, "propose");
    let (whole, _) = sign_in_with(&server, &["notes"], None, &[("write", "propose")]).await;
    assert_eq!(write_mode_of(&server, &whole).await, "propose");
    let (reader, _) = sign_in(&server, &["notes"], None).await;
    assert_eq!(write_mode_of(&server, &reader).await, "none");
}

#[tokio::test]
async fn deny_and_forged_forms() {
    let server = TestServer::start().await;
    let code = open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (_, challenge) = pkce();
    let (pending, csrf) = consent_form(&server, &client_id, &challenge).await;
    let forged = consent(
        &server,
        &[
            ("pending", &pending),
            ("csrf", "forged"),
            ("pairing_code", &code),
            ("scope", "journal"),
            ("decision", "approve"),
        ],
    )
    .await;
    assert_eq!(forged.status, StatusCode::BAD_REQUEST, "a wrong anti-forgery token");
    assert!(String::from_utf8_lossy(&forged.body).contains("no longer waiting"));
    let reply = consent(&server, &[("pending", &pending), ("csrf", &csrf), ("decision", "deny")]).await;
    let (base, params) = location(&reply);
    assert_eq!(base, CALLBACK);
    assert_eq!(params["error"], "access_denied");
    assert_eq!(params["state"], "st-123");
    assert!(params.contains_key("iss"));
    let replay = consent(
        &server,
        &[
            ("pending", &pending),
            ("csrf", &csrf),
            ("pairing_code", &code),
            ("decision", "approve"),
        ],
    )
    .await;
    assert_eq!(
        replay.status,
        StatusCode::BAD_REQUEST,
        "a decided request cannot be approved later"
    );
    assert!(
        store::code_open(&server.journal.db, "local", unix_now()).await.unwrap(),
        "denying does not use up the code"
    );
}

#[tokio::test]
async fn wrong_pairing_codes_are_limited() {
    let server = TestServer::start().await;
    let code = open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (_, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    let start = || async {
        let html = String::from_utf8(
            authorize(&server, &authorize_params(&client_id, &challenge, &resource))
                .await
                .body
                .to_vec(),
        )
        .unwrap();
        (field(&html, "pending"), field(&html, "csrf"))
    };
    let wrong = if code == "00000000" { "11111111" } else { "00000000" };
    let (pending, csrf) = start().await;
    for left in (1..5).rev() {
        let reply = consent(
            &server,
            &[
                ("pending", &pending),
                ("csrf", &csrf),
                ("pairing_code", wrong),
                ("scope", "journal"),
                ("decision", "approve"),
            ],
        )
        .await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST);
        let text = String::from_utf8_lossy(&reply.body).to_string();
        assert!(text.contains(&format!("{left} tr")), "{left}: {text}");
    }
    let reply = consent(
        &server,
        &[
            ("pending", &pending),
            ("csrf", &csrf),
            ("pairing_code", wrong),
            ("decision", "approve"),
        ],
    )
    .await;
    assert!(String::from_utf8_lossy(&reply.body).contains("Too many wrong codes"));
    let reply = consent(
        &server,
        &[
            ("pending", &pending),
            ("csrf", &csrf),
            ("pairing_code", &code),
            ("decision", "approve"),
        ],
    )
    .await;
    assert_eq!(
        reply.status,
        StatusCode::BAD_REQUEST,
        "that authorization is over, even with the right code"
    );
    let reply = consent(
        &server,
        &[
            ("pending", "x"),
            ("csrf", "y"),
            ("pairing_code", "ILOU-ILOU"),
            ("decision", "approve"),
        ],
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);

    // Every try counts against the address, and each reply says what is left: 5 so far, 15 more
    // make 20, and then this address may not try again; the code stays open for everyone else.
    for _ in 0..3 {
        let (pending, csrf) = start().await;
        for attempt in 1..=5 {
            let reply = consent(
                &server,
                &[
                    ("pending", &pending),
                    ("csrf", &csrf),
                    ("pairing_code", wrong),
                    ("decision", "approve"),
                ],
            )
            .await;
            let text = String::from_utf8_lossy(&reply.body).to_string();
            if attempt < 5 {
                assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{text}");
                assert!(text.contains(&format!("{} tr", 5 - attempt)), "{attempt}: {text}");
            } else {
                assert_eq!(reply.status, StatusCode::FORBIDDEN, "{text}");
                assert!(text.contains("after five wrong pairing codes"), "{text}");
            }
        }
    }
    let (pending, csrf) = start().await;
    let reply = consent(
        &server,
        &[
            ("pending", &pending),
            ("csrf", &csrf),
            ("pairing_code", &code),
            ("decision", "approve"),
        ],
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert!(
        String::from_utf8_lossy(&reply.body).contains("Too many wrong codes from this address"),
        "the 21st try from this address is refused, even with the right code"
    );
    assert!(
        store::code_open(&server.journal.db, "local", unix_now()).await.unwrap(),
        "a stranger's guesses do not lock the owner's code"
    );
    // Another address (still this machine: all of 127/8 is loopback) pairs with the same code.
    let elsewhere: std::net::IpAddr = "127.0.0.2".parse().unwrap();
    let page = at(
        &server,
        &format!(
            "/authorize?{}",
            query(&authorize_params(&client_id, &challenge, &resource))
        ),
    )
    .bound_to(elsewhere)
    .raw(Method::GET, &[], "")
    .await;
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    let reply = at(&server, "/authorize")
        .bound_to(elsewhere)
        .raw(
            Method::POST,
            &[("content-type", "application/x-www-form-urlencoded")],
            query(&[
                ("pending", &field(&html, "pending")),
                ("csrf", &field(&html, "csrf")),
                ("pairing_code", &code),
                ("scope", "journal"),
                ("decision", "approve"),
            ]),
        )
        .await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER, "{:?}", reply.body);
    assert!(
        !store::code_open(&server.journal.db, "local", unix_now()).await.unwrap(),
        "used once"
    );
}

/// Parallel wrong codes get no more tries than sequential ones: each try is taken before the code
/// is compared.
#[tokio::test]
async fn parallel_wrong_pairing_codes_are_counted_before_they_are_compared() {
    let server = TestServer::start().await;
    let code = open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (_, challenge) = pkce();
    let wrong = if code == "00000000" { "11111111" } else { "00000000" };
    let (pending, csrf) = consent_form(&server, &client_id, &challenge).await;
    let body = query(&[
        ("pending", &pending),
        ("csrf", &csrf),
        ("pairing_code", wrong),
        ("decision", "approve"),
    ]);
    let replies = at_once(&server, "/authorize", &body, 12).await;
    let texts: Vec<String> = replies
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).to_string())
        .collect();
    let compared = texts.iter().filter(|t| t.contains("That code is not right")).count();
    let stopped = texts
        .iter()
        .filter(|t| t.contains("after five wrong pairing codes"))
        .count();
    assert_eq!(
        compared, 4,
        "exactly four tries were compared and found wrong: {texts:?}"
    );
    assert!(stopped >= 1, "the fifth ends the authorization: {texts:?}");
    for (reply, text) in replies.iter().zip(&texts) {
        let gone = reply.status == StatusCode::BAD_REQUEST && text.contains("no longer waiting");
        assert!(
            text.contains("That code is not right") || text.contains("after five wrong pairing codes") || gone,
            "every other try finds the authorization over: {text}"
        );
    }
}

#[tokio::test]
async fn bad_authorization_requests() {
    let server = TestServer::start().await;
    open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (_, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    let base = authorize_params(&client_id, &challenge, &resource);
    let with = |key: &str, value: Option<&'static str>| -> Vec<(String, String)> {
        let mut pairs: Vec<(String, String)> = base
            .iter()
            .filter(|(k, _)| *k != key)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        if let Some(value) = value {
            pairs.push((key.to_string(), value.to_string()));
        }
        pairs
    };
    let send = |pairs: Vec<(String, String)>| {
        let server = &server;
        async move {
            let refs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            authorize(server, &refs).await
        }
    };
    // Never redirected: unknown client, unregistered callback (open redirect attempts).
    for pairs in [
        with("client_id", Some("jc_unknown")),
        with("client_id", None),
        with("redirect_uri", Some("https://evil.example/cb")),
        with("redirect_uri", Some("http://127.0.0.1:9/other")),
    ] {
        let reply = send(pairs).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST);
        assert!(reply.header("location").is_none());
        assert!(String::from_utf8_lossy(&reply.body).contains("not valid"));
    }
    // Redirected back with an error, the state and the issuer.
    for (pairs, error) in [
        (with("response_type", Some("token")), "unsupported_response_type"),
        (with("code_challenge", None), "invalid_request"),
        (with("code_challenge_method", Some("plain")), "invalid_request"),
        (with("code_challenge_method", None), "invalid_request"),
        (with("code_challenge", Some("too-short")), "invalid_request"),
        (with("resource", Some("https://evil.example/mcp")), "invalid_target"),
        (with("resource", Some("http://127.0.0.1:1/mcp")), "invalid_target"),
    ] {
        let (_, params) = location(&send(pairs).await);
        assert_eq!(params["error"], error);
        assert_eq!(params["state"], "st-123");
        assert_eq!(params["iss"], format!("http://{}", server.addr));
    }
    let mut twice = with("state", Some("a"));
    twice.push(("state".into(), "b".into()));
    assert_eq!(
        location(&send(twice).await).1["error"],
        "invalid_request",
        "a repeated parameter"
    );
    let reply = send(with("resource", None)).await;
    assert_eq!(reply.status, StatusCode::OK, "no resource: this route's endpoint");
}

#[tokio::test]
async fn code_exchange_refusals() {
    let server = TestServer::start().await;
    let code = open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (verifier, challenge) = pkce();
    let auth_code = approved_code(&server, &client_id, &challenge, &code, &["transcripts"]).await;
    let exchange = |code: &str, client: &str, redirect: &str, verifier: &str| {
        let pairs: [(String, String); 5] = [
            ("grant_type".to_string(), "authorization_code".to_string()),
            ("code".into(), code.into()),
            ("client_id".into(), client.into()),
            ("redirect_uri".into(), redirect.into()),
            ("code_verifier".into(), verifier.into()),
        ];
        let server = &server;
        async move {
            let refs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            token(server, &refs).await
        }
    };
    let reply = exchange(&auth_code, "jc_nobody", CALLBACK, &verifier).await;
    assert_eq!(
        (reply.status, reply.json()["error"].clone()),
        (StatusCode::UNAUTHORIZED, json!("invalid_client"))
    );
    let reply = token(&server, &[("grant_type", "password"), ("client_id", &client_id)]).await;
    assert_eq!(reply.json()["error"], "unsupported_grant_type");
    let reply = token(
        &server,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", &client_id),
            ("code", &auth_code),
            ("redirect_uri", CALLBACK),
            ("code_verifier", &verifier),
            ("resource", "https://evil.example/mcp"),
        ],
    )
    .await;
    assert_eq!(reply.json()["error"], "invalid_target");
    let reply = at(&server, "/token")
        .raw(Method::POST, &[("content-type", "application/json")], "{}")
        .await;
    assert_eq!(reply.json()["error"], "invalid_request");
    assert_eq!(reply.header("pragma").as_deref(), Some("no-cache"));

    // A wrong verifier spends the code (it is single use whatever happens).
    let wrong = format!("{}x", &verifier[..verifier.len() - 1]);
    let reply = exchange(&auth_code, &client_id, CALLBACK, &wrong).await;
    assert_eq!(reply.json()["error"], "invalid_grant");
    let reply = exchange(&auth_code, &client_id, CALLBACK, &verifier).await;
    assert_eq!(reply.json()["error"], "invalid_grant", "a code is good once");
    let grants: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_grants")
        .fetch_one(&server.journal.db)
        .await
        .unwrap();
    assert_eq!(grants, 0, "a reused code revokes what it issued");
}

/// A code lives five minutes and a consent page ten: each is refused the second it ends, not before.
#[tokio::test]
async fn codes_and_consent_pages_expire() {
    let server = TestServer::start().await;
    let db = &server.journal.db;
    let pairing = open_sign_in(&server).await;
    let client_id = register_client(&server).await;

    // A code issued now ends CODE_SECONDS later.
    let (verifier, challenge) = pkce();
    let before = journal::clock::unix_now();
    let code = approved_code(&server, &client_id, &challenge, &pairing, &["transcripts"]).await;
    let ends: i64 = sqlx::query_scalar("SELECT expires_at FROM oauth_codes")
        .fetch_one(db)
        .await
        .unwrap();
    assert!(
        (before + journal::oauth::CODE_SECONDS..=journal::clock::unix_now() + journal::oauth::CODE_SECONDS)
            .contains(&ends),
        "{ends}"
    );
    // Its last second has passed: refused, and no grant is made.
    sqlx::query("UPDATE oauth_codes SET expires_at = ?")
        .bind(journal::clock::unix_now())
        .execute(db)
        .await
        .unwrap();
    let reply = exchange(&server, &code, &client_id, &verifier).await;
    assert_eq!(reply.json()["error"], "invalid_grant");
    let grants: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_grants")
        .fetch_one(db)
        .await
        .unwrap();
    assert_eq!(
        grants, 0,
        "the connection its code was for could never be used, and is gone"
    );

    // A consent page answered after its ten minutes: the owner is told to start again, no code.
    let pairing = open_sign_in(&server).await;
    let (_, challenge) = pkce();
    let (pending, csrf) = consent_form(&server, &client_id, &challenge).await;
    let ends: i64 = sqlx::query_scalar("SELECT expires_at - created_at FROM oauth_pending")
        .fetch_one(db)
        .await
        .unwrap();
    assert_eq!(ends, journal::oauth::PENDING_SECONDS);
    sqlx::query("UPDATE oauth_pending SET expires_at = ?")
        .bind(journal::clock::unix_now())
        .execute(db)
        .await
        .unwrap();
    let fields = [
        ("pending", pending.as_str()),
        ("csrf", csrf.as_str()),
        ("pairing_code", pairing.as_str()),
        ("scope", "journal"),
        ("decision", "approve"),
        ("category", "transcripts"),
    ];
    let reply = consent(&server, &fields).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    let page = String::from_utf8(reply.body.to_vec()).unwrap();
    assert!(page.contains("This sign-in is no longer waiting"), "{page}");
    // The first code went with its unusable connection; the expired page made neither.
    for count in ["SELECT count(*) FROM oauth_codes", "SELECT count(*) FROM oauth_grants"] {
        let found: i64 = sqlx::query_scalar(count).fetch_one(db).await.unwrap();
        assert_eq!(found, 0, "{count}");
    }
}

#[tokio::test]
async fn a_reused_code_revokes_the_tokens_it_issued() {
    let server = TestServer::start().await;
    let code = open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (verifier, challenge) = pkce();
    let auth_code = approved_code(&server, &client_id, &challenge, &code, &[]).await;
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", auth_code.as_str()),
        ("client_id", client_id.as_str()),
        ("redirect_uri", "http://127.0.0.1:4444/callback"),
        ("code_verifier", verifier.as_str()),
    ];
    let reply = token(&server, &pairs).await;
    assert_eq!(
        reply.json()["error"],
        "invalid_grant",
        "the redirect URI must be identical to the authorization request's"
    );
    let _ = reply;
    // Start over: a fresh code, exchanged, then presented again.
    let code = open_sign_in(&server).await;
    let auth_code = approved_code(&server, &client_id, &challenge, &code, &[]).await;
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", auth_code.as_str()),
        ("client_id", client_id.as_str()),
        ("redirect_uri", CALLBACK),
        ("code_verifier", verifier.as_str()),
    ];
    let tokens = token(&server, &pairs).await.json();
    let access = tokens["access_token"].as_str().unwrap();
    let client = Client::connected(&server.url(), access).await;
    assert_eq!(token(&server, &pairs).await.json()["error"], "invalid_grant");
    assert_eq!(
        client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
}

/// Two exchanges of one code at the same moment: never two sets of tokens, never a 500, and the
/// reuse is caught (the grant is revoked, so a token the first one got is refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_exchanges_of_one_code_are_a_reuse() {
    let server = TestServer::start().await;
    open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (verifier, challenge) = pkce();
    for trial in 0..6 {
        let code = open_sign_in(&server).await;
        let auth_code = approved_code(&server, &client_id, &challenge, &code, &[]).await;
        let body = query(&[
            ("grant_type", "authorization_code"),
            ("code", &auth_code),
            ("client_id", &client_id),
            ("redirect_uri", CALLBACK),
            ("code_verifier", &verifier),
        ]);
        let replies = at_once(&server, "/token", &body, 2).await;
        let statuses: Vec<StatusCode> = replies.iter().map(|r| r.status).collect();
        assert!(
            statuses
                .iter()
                .all(|s| *s == StatusCode::OK || *s == StatusCode::BAD_REQUEST),
            "trial {trial}: {statuses:?} {:?}",
            replies
                .iter()
                .map(|r| String::from_utf8_lossy(&r.body).to_string())
                .collect::<Vec<_>>()
        );
        assert!(
            statuses.iter().filter(|s| **s == StatusCode::OK).count() <= 1,
            "trial {trial}: one code, at most one set of tokens"
        );
        let refused: Vec<Value> = replies
            .iter()
            .filter(|r| r.status == StatusCode::BAD_REQUEST)
            .map(|r| r.json())
            .collect();
        assert!(!refused.is_empty(), "trial {trial}");
        assert!(refused.iter().all(|r| r["error"] == "invalid_grant"), "{refused:?}");
        for winner in replies.iter().filter(|r| r.status == StatusCode::OK) {
            let access = winner.json()["access_token"].as_str().unwrap().to_string();
            let reply = Client::new(&server.url(), Some(&access))
                .post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}))
                .await;
            assert_eq!(
                reply.status,
                StatusCode::UNAUTHORIZED,
                "trial {trial}: the reuse revoked the grant"
            );
        }
    }
}

#[tokio::test]
async fn refresh_tokens_rotate_and_their_reuse_revokes_the_grant() {
    let server = TestServer::start().await;
    let (client_id, first) = sign_in(&server, &["transcripts"], None).await;
    let refresh = |token: String| {
        let server = &server;
        let client_id = client_id.clone();
        async move {
            self::token(
                server,
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &token),
                    ("client_id", &client_id),
                ],
            )
            .await
        }
    };
    let r0 = first["refresh_token"].as_str().unwrap().to_string();
    let second = refresh(r0.clone()).await;
    assert_eq!(second.status, StatusCode::OK);
    let second = second.json();
    assert_ne!(second["refresh_token"], first["refresh_token"]);
    assert_ne!(second["access_token"], first["access_token"]);
    let retry = refresh(r0.clone()).await.json();
    assert_eq!(retry, second, "the previous token within 30 s answers the same pair");
    let r1 = second["refresh_token"].as_str().unwrap().to_string();
    let third = refresh(r1).await.json();
    assert!(third["access_token"].as_str().unwrap().starts_with("jat_"));
    let client = Client::connected(&server.url(), third["access_token"].as_str().unwrap()).await;

    let reply = refresh(r0).await;
    assert_eq!(reply.json()["error"], "invalid_grant", "an older rotated-out token");
    assert_eq!(
        client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status,
        StatusCode::UNAUTHORIZED,
        "the grant is revoked"
    );
    let reply = refresh(third["refresh_token"].as_str().unwrap().to_string()).await;
    assert_eq!(reply.json()["error"], "invalid_grant");
}

/// The retry of a lost refresh answer: the same pair for 30 s, a reuse (revoking the grant) after.
#[tokio::test]
async fn a_refresh_retry_is_answered_for_thirty_seconds_only() {
    let server = TestServer::start().await;
    let (client_id, first) = sign_in(&server, &["transcripts"], None).await;
    let db = &server.journal.db;
    let cache = store::RetryCache::default();
    let now = unix_now();
    let r0 = first["refresh_token"].as_str().unwrap();
    let second = store::refresh(db, &cache, "local", r0, &client_id, now).await.unwrap();
    let retried = store::refresh(db, &cache, "local", r0, &client_id, now + 29)
        .await
        .unwrap();
    assert_eq!(retried, second, "within 30 s: the same pair");
    let late = store::refresh(db, &cache, "local", r0, &client_id, now + 30)
        .await
        .unwrap_err();
    assert_eq!(late.code, "invalid_grant");
    assert!(late.description.contains("already used"), "{}", late.description);
    let after = store::refresh(db, &cache, "local", &second.refresh_token, &client_id, now + 31).await;
    assert_eq!(
        after.unwrap_err().code,
        "invalid_grant",
        "the late retry revoked the grant"
    );
}

/// The retry cache lives in memory: after a restart, presenting the previous refresh token again is
/// a reuse like any other (the new pair's plaintext was never stored, so it cannot be answered).
#[tokio::test]
async fn after_a_restart_a_refresh_retry_is_a_reuse() {
    let server = TestServer::start().await;
    let (client_id, first) = sign_in(&server, &["transcripts"], None).await;
    let refresh = |server: &TestServer, token: String| {
        let client_id = client_id.clone();
        let client = at(server, "/token");
        async move {
            client
                .raw(
                    Method::POST,
                    &[("content-type", "application/x-www-form-urlencoded")],
                    query(&[
                        ("grant_type", "refresh_token"),
                        ("refresh_token", &token),
                        ("client_id", &client_id),
                    ]),
                )
                .await
        }
    };
    let r0 = first["refresh_token"].as_str().unwrap().to_string();
    let second = refresh(&server, r0.clone()).await;
    assert_eq!(second.status, StatusCode::OK);
    let second = second.json();
    let server = server.restart().await;
    let retry = refresh(&server, r0).await;
    assert_eq!(retry.json()["error"], "invalid_grant");
    let access = second["access_token"].as_str().unwrap();
    let reply = Client::new(&server.url(), Some(access))
        .post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}))
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "the reuse revoked the grant");
}

/// Sixteen rotated-out refresh tokens are remembered to catch their reuse; older ones are forgotten,
/// so presenting one is merely invalid and revokes nothing.
#[tokio::test]
async fn rotated_refresh_tokens_are_remembered_sixteen_deep() {
    let server = TestServer::start().await;
    let (client_id, first) = sign_in(&server, &["transcripts"], None).await;
    let db = &server.journal.db;
    let cache = store::RetryCache::default();
    let now = unix_now();
    let mut tokens = vec![first["refresh_token"].as_str().unwrap().to_string()];
    // All within one second, as a client that rotates quickly does: the order of rotation, not the
    // clock, decides which are remembered (the kill test found the latest one forgotten).
    for _ in 0..18 {
        let pair = store::refresh(db, &cache, "local", tokens.last().unwrap(), &client_id, now)
            .await
            .unwrap();
        tokens.push(pair.refresh_token);
    }
    let later = now + 60;
    for (n, token) in tokens.iter().enumerate().take(18) {
        let kept: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_tokens WHERE digest = ?")
            .bind(journal::secret::digest(token))
            .fetch_one(db)
            .await
            .unwrap();
        assert_eq!(
            kept,
            i64::from(n >= 2),
            "rotated-out token {n}: only the last 16 are remembered"
        );
    }
    let forgotten = store::refresh(db, &cache, "local", &tokens[1], &client_id, later)
        .await
        .unwrap_err();
    assert!(forgotten.description.contains("not valid"), "{}", forgotten.description);
    let latest = store::refresh(db, &cache, "local", tokens.last().unwrap(), &client_id, later)
        .await
        .expect("an old token beyond the memory revokes nothing");
    tokens.push(latest.refresh_token);
    let remembered = store::refresh(db, &cache, "local", &tokens[5], &client_id, later + 60)
        .await
        .unwrap_err();
    assert!(
        remembered.description.contains("already used"),
        "{}",
        remembered.description
    );
    let after = store::refresh(db, &cache, "local", tokens.last().unwrap(), &client_id, later + 61).await;
    assert_eq!(
        after.unwrap_err().code,
        "invalid_grant",
        "a remembered one revoked the grant"
    );
}

/// Two refreshes with one token at the same moment (a client retrying at once): both get the same
/// pair, and the grant lives on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_refreshes_with_one_token_are_a_retry_not_a_reuse() {
    let server = TestServer::start().await;
    let (client_id, first) = sign_in(&server, &["transcripts"], None).await;
    let mut token = first["refresh_token"].as_str().unwrap().to_string();
    for round in 0..8 {
        let body = query(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &token),
            ("client_id", &client_id),
        ]);
        let replies = at_once(&server, "/token", &body, 2).await;
        for reply in &replies {
            assert_eq!(
                reply.status,
                StatusCode::OK,
                "round {round}: {:?}",
                String::from_utf8_lossy(&reply.body)
            );
        }
        assert_eq!(replies[0].json(), replies[1].json(), "round {round}: the same pair");
        token = replies[0].json()["refresh_token"].as_str().unwrap().to_string();
    }
}

#[tokio::test]
async fn grants_end_thirty_days_after_pairing_and_access_tokens_after_an_hour() {
    let server = TestServer::start().await;
    let (client_id, tokens) = sign_in(&server, &["transcripts"], None).await;
    let access = tokens["access_token"].as_str().unwrap();
    let client = Client::connected(&server.url(), access).await;
    // The token's end is moved in journal.db behind the server's back, so only the durable access
    // epoch tells the server's credential cache (within seconds; a real expiry is checked on every hit).
    sqlx::query("UPDATE oauth_tokens SET expires_at = 0 WHERE kind = 'access'")
        .execute(&server.journal.db)
        .await
        .unwrap();
    let refused = eventually(60, || async {
        client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status
            == StatusCode::UNAUTHORIZED
    })
    .await;
    assert!(refused, "an expired access token");
    let reply = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", &client_id),
        ],
    )
    .await;
    let renewed = reply.json();
    assert!(renewed["access_token"].is_string(), "{renewed}");
    sqlx::query("UPDATE oauth_grants SET expires_at = 1")
        .execute(&server.journal.db)
        .await
        .unwrap();
    let reply = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", renewed["refresh_token"].as_str().unwrap()),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_eq!(reply.json()["error"], "invalid_grant");
    assert!(
        reply.json()["error_description"]
            .as_str()
            .unwrap()
            .contains("pair again")
    );
    let client = Client::new(&server.url(), Some(renewed["access_token"].as_str().unwrap()));
    let reply = client
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}))
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "an ended grant's access token");
}

#[tokio::test]
async fn revocation_endpoint() {
    let server = TestServer::start().await;
    let (client_id, tokens) = sign_in(&server, &["transcripts"], None).await;
    let revoke = |token: &str| {
        let body = query(&[("token", token), ("client_id", &client_id)]);
        let client = at(&server, "/revoke");
        async move {
            client
                .raw(
                    Method::POST,
                    &[("content-type", "application/x-www-form-urlencoded")],
                    body,
                )
                .await
        }
    };
    assert_eq!(
        revoke("jat_unknown").await.status,
        StatusCode::OK,
        "unknown tokens are not an error"
    );
    let access = tokens["access_token"].as_str().unwrap();
    let client = Client::connected(&server.url(), access).await;
    assert_eq!(revoke(access).await.status, StatusCode::OK);
    assert_eq!(
        client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    let reply = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", &client_id),
        ],
    )
    .await;
    let renewed = reply.json();
    assert!(
        renewed["access_token"].is_string(),
        "revoking an access token leaves the grant"
    );
    assert_eq!(
        revoke(renewed["refresh_token"].as_str().unwrap()).await.status,
        StatusCode::OK
    );
    let grants: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_grants")
        .fetch_one(&server.journal.db)
        .await
        .unwrap();
    assert_eq!(grants, 0, "revoking a refresh token ends the grant");
    let reply = at(&server, "/revoke")
        .raw(
            Method::POST,
            &[("content-type", "application/x-www-form-urlencoded")],
            "",
        )
        .await;
    assert_eq!(reply.json()["error"], "invalid_request");
}

#[tokio::test]
async fn the_cli_lists_narrows_and_signs_out_apps() {
    let server = TestServer::start().await;
    let (client_id, tokens) = sign_in(&server, &["transcripts", "entities"], None).await;
    let client = Client::connected(&server.url(), tokens["access_token"].as_str().unwrap()).await;
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_journal"))
            .arg("--journal")
            .arg(server.root())
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (status, listed, _) = run(&["mcp", "oauth", "list"]);
    assert_eq!(status, Some(0));
    assert!(
        listed.contains(&client_id) && listed.contains("Test Agent") && listed.contains("transcripts, entities"),
        "{listed}"
    );
    let (status, out, _) = run(&[
        "mcp",
        "permission",
        "set",
        "--client",
        &client_id,
        "--category",
        "entities",
    ]);
    assert_eq!(status, Some(0), "{out}");
    assert_eq!(client.tool_names().await.len(), 7, "narrowed at once");
    let (status, _, error) = run(&["mcp", "permission", "show", "--client", "jc_nobody"]);
    assert_eq!(status, Some(1));
    assert!(error.contains("no signed-in app"), "{error}");
    let (status, out, _) = run(&["mcp", "oauth", "revoke", "--client-id", &client_id]);
    assert_eq!(status, Some(0), "{out}");
    assert_eq!(
        client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    let (status, _, error) = run(&["mcp", "oauth", "revoke", "--client-id", &client_id]);
    assert_eq!(status, Some(1));
    assert!(
        error.contains("no client") && !error.contains("invalid_request"),
        "{error}"
    );
    let (status, out, _) = run(&["mcp", "pairing", "generate"]);
    assert_eq!(status, Some(0));
    let code = out.lines().last().unwrap();
    assert!(code.len() == 9 && code.as_bytes()[4] == b'-', "{code}");
    let (_, out, _) = run(&["mcp", "pairing", "revoke"]);
    assert!(out.contains("closed"), "{out}");
}

/// A stand-in for the web: serves fixed metadata documents and counts the fetches. The guard in front
/// of it (`client_metadata::check_url`) is the real one.
struct Documents {
    served: std::collections::HashMap<String, String>,
    fetches: std::sync::atomic::AtomicUsize,
}

impl journal::oauth::client_metadata::Fetcher for Documents {
    fn fetch<'a>(
        &'a self,
        url: &'a url::Url,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<journal::oauth::client_metadata::Fetched, String>> + Send + 'a>,
    > {
        self.fetches.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let found = self.served.get(url.as_str()).cloned();
        Box::pin(async move {
            let body = found.ok_or_else(|| "it answered 404 Not Found".to_string())?;
            Ok(journal::oauth::client_metadata::Fetched {
                body: body.into_bytes(),
                max_age: Some(600),
            })
        })
    }
}

#[tokio::test]
async fn clients_identified_by_a_metadata_document() {
    let hosted = "https://agent.example/oauth/client.json";
    let liar = "https://liar.example/client.json";
    let mut served = std::collections::HashMap::new();
    served.insert(
        hosted.to_string(),
        json!({"client_id": hosted, "client_name": "Hosted Agent", "redirect_uris": [CALLBACK]}).to_string(),
    );
    served.insert(
        liar.to_string(),
        json!({"client_id": "https://someone-else.example/c", "redirect_uris": [CALLBACK]}).to_string(),
    );
    let documents = std::sync::Arc::new(Documents {
        served,
        fetches: Default::default(),
    });
    let server = TestServer::start_with(journal::server::Options {
        fetcher: documents.clone(),
        ..Default::default()
    })
    .await;
    let metadata = at(&server, "/.well-known/oauth-authorization-server")
        .raw(Method::GET, &[], "")
        .await
        .json();
    assert_eq!(metadata["client_id_metadata_document_supported"], true);

    let code = open_sign_in(&server).await;
    let (verifier, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    let page = authorize(&server, &authorize_params(hosted, &challenge, &resource)).await;
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    assert!(html.contains("Hosted Agent wants to connect"), "{html}");
    assert!(
        html.contains("Identified by <strong class=\"host\">agent.example</strong>"),
        "the document's host beside its name: {html}"
    );
    authorize(&server, &authorize_params(hosted, &challenge, &resource)).await;
    assert_eq!(
        documents.fetches.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "cached for its lifetime"
    );
    let auth_code = approved_code(&server, hosted, &challenge, &code, &["entities"]).await;
    let tokens = exchange(&server, &auth_code, hosted, &verifier).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);

    open_sign_in(&server).await;
    // A document that cannot be fetched: what failed, and how to sign in without it.
    for (client_id, instead) in [
        ("https://missing.example/client.json", "journal mcp oauth register"),
        (
            "https://chatgpt.com/oauth/codex/not.an.id/client.json",
            "--oauth-client-registration dcr",
        ),
    ] {
        let page = authorize(&server, &authorize_params(client_id, &challenge, &resource)).await;
        assert_eq!(page.status, StatusCode::BAD_GATEWAY, "{client_id}");
        assert!(page.header("location").is_none());
        let answer = page.json();
        assert_eq!(answer["error"], "invalid_client");
        let description = answer["error_description"].as_str().unwrap();
        assert!(
            description.contains("could not be fetched") && description.contains(instead),
            "{description}"
        );
        assert!(!description.contains('\n'), "one line for a terminal");
        let page = at(
            &server,
            &format!(
                "/authorize?{}",
                query(&authorize_params(client_id, &challenge, &resource))
            ),
        )
        .raw(Method::GET, &[("accept", "text/html")], "")
        .await;
        let html = String::from_utf8_lossy(&page.body).to_string();
        assert!(
            html.contains("could not be fetched") && html.contains(instead),
            "{html}"
        );
    }
    for (client_id, why) in [
        (liar, "differs from its URL"),
        ("https://127.0.0.1/client.json", "private address"),
        ("https://[::127.0.0.1]/client.json", "private address"),
        ("https://localhost/client.json", "this computer"),
        ("https://169.254.169.254/latest/meta-data", "private address"),
    ] {
        let before = documents.fetches.load(std::sync::atomic::Ordering::SeqCst);
        let page = authorize(&server, &authorize_params(client_id, &challenge, &resource)).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{client_id}");
        assert!(page.header("location").is_none());
        let text = String::from_utf8_lossy(&page.body).to_string();
        assert!(text.contains(why), "{client_id}: {text}");
        let after = documents.fetches.load(std::sync::atomic::Ordering::SeqCst);
        if why.contains("private") || why.contains("computer") {
            assert_eq!(before, after, "the guard refuses before anything is fetched");
        }
    }
}

/// Claude Code and Codex sign in with a metadata document by default; without a network the fetch
/// fails, so the well-known documents are built in and used without fetching.
#[tokio::test]
async fn well_known_clients_sign_in_without_fetching_their_documents() {
    let documents = std::sync::Arc::new(Documents {
        served: Default::default(),
        fetches: Default::default(),
    });
    let server = TestServer::start_with(journal::server::Options {
        fetcher: documents.clone(),
        ..Default::default()
    })
    .await;
    let code = open_sign_in(&server).await;
    let (verifier, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    for (client_id, name, host) in [
        (
            "https://claude.ai/oauth/claude-code-client-metadata",
            "Claude Code",
            "claude.ai",
        ),
        ("https://chatgpt.com/oauth/codex/client.json", "Codex", "chatgpt.com"),
    ] {
        let page = authorize(&server, &authorize_params(client_id, &challenge, &resource)).await;
        assert_eq!(page.status, StatusCode::OK, "{client_id}");
        let html = String::from_utf8(page.body.to_vec()).unwrap();
        assert!(html.contains(&format!("{name} wants to connect")), "{html}");
        assert!(
            html.contains(&format!("<strong class=\"host\">{host}</strong>")),
            "{html}"
        );
        // A callback outside the client's rule is never redirected to.
        let mut params = authorize_params(client_id, &challenge, &resource);
        params.retain(|(k, _)| *k != "redirect_uri");
        for wrong in [
            "http://127.0.0.1:9/elsewhere",
            "https://evil.example/callback",
            "http://[::1]:9/callback",
        ] {
            let mut with = params.clone();
            with.push(("redirect_uri", wrong));
            let page = authorize(&server, &with).await;
            assert_eq!(page.status, StatusCode::BAD_REQUEST, "{wrong}");
            assert!(page.header("location").is_none());
        }
        let page = authorize(&server, &params).await;
        assert_eq!(
            page.status,
            StatusCode::BAD_REQUEST,
            "a known client names its callback"
        );
    }
    assert_eq!(
        documents.fetches.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "nothing was fetched"
    );
    let claude = "https://claude.ai/oauth/claude-code-client-metadata";
    let auth_code = approved_code(&server, claude, &challenge, &code, &["entities"]).await;
    let tokens = exchange(&server, &auth_code, claude, &verifier).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    let access = tokens.json()["access_token"].as_str().unwrap().to_string();
    let client = Client::connected(&server.url(), &access).await;
    assert!(client.tool_names().await.contains(&"list_entities".to_string()));
    assert_eq!(documents.fetches.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// Only a top-level navigation starts a sign-in: an <img> on any page the owner visits must not
/// start pending sign-ins (from the owner's own address, displacing the owner's open one).
#[tokio::test]
async fn authorize_refuses_sub_resource_requests() {
    let server = TestServer::start().await;
    open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (_, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    let url = format!(
        "/authorize?{}",
        query(&authorize_params(&client_id, &challenge, &resource))
    );
    let pending = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM oauth_pending")
            .fetch_one(&server.journal.db)
            .await
            .unwrap()
    };
    for mode in ["no-cors", "cors", "same-origin", "nested-navigate", "websocket"] {
        let reply = at(&server, &url)
            .raw(
                Method::GET,
                &[("sec-fetch-mode", mode), ("accept", "image/avif,image/webp,*/*")],
                "",
            )
            .await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{mode}");
        assert_eq!(reply.json()["error"], "invalid_request");
    }
    assert_eq!(pending().await, 0, "no sign-in was started");
    let reply = at(&server, &url)
        .raw(
            Method::GET,
            &[("sec-fetch-mode", "navigate"), ("accept", "text/html")],
            "",
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(pending().await, 1);
}

/// Metadata document clients count against the quota of the address that asked, and clients
/// without a grant are forgotten a day after they were made, however often they were used.
#[tokio::test]
async fn metadata_clients_have_a_quota_and_an_expiry() {
    let mut served = std::collections::HashMap::new();
    for n in 0..20 {
        let id = format!("https://agent.example/c{n}.json");
        served.insert(
            id.clone(),
            json!({"client_id": id, "client_name": format!("Agent {n}"), "redirect_uris": [CALLBACK]}).to_string(),
        );
    }
    let server = TestServer::start_with(journal::server::Options {
        fetcher: std::sync::Arc::new(Documents {
            served,
            fetches: Default::default(),
        }),
        ..Default::default()
    })
    .await;
    open_sign_in(&server).await;
    let (_, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    let count = |source: &'static str| {
        let db = server.journal.db.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM oauth_clients WHERE source = ?")
                .bind(source)
                .fetch_one(&db)
                .await
                .unwrap()
        }
    };
    for n in 0..20 {
        let id = format!("https://agent.example/c{n}.json");
        let page = authorize(&server, &authorize_params(&id, &challenge, &resource)).await;
        assert_eq!(page.status, StatusCode::OK, "{n}");
    }
    assert_eq!(
        count("127.0.0.1").await,
        16,
        "16 per source; the oldest without a grant made way"
    );
    let oldest: Option<String> = sqlx::query_scalar("SELECT client_id FROM oauth_clients WHERE client_id = ?")
        .bind("https://agent.example/c0.json")
        .fetch_optional(&server.journal.db)
        .await
        .unwrap();
    assert_eq!(oldest, None);

    // A day later, use does not keep a client without a grant; a waiting sign-in does, for its ten
    // minutes, and so does a grant.
    sqlx::query("UPDATE oauth_clients SET created_at = created_at - 90000, last_used_at = ?")
        .bind(unix_now())
        .execute(&server.journal.db)
        .await
        .unwrap();
    sqlx::query("DELETE FROM oauth_pending WHERE client_id != 'https://agent.example/c19.json'")
        .execute(&server.journal.db)
        .await
        .unwrap();
    register_client(&server).await;
    let left: Vec<String> =
        sqlx::query_scalar("SELECT client_id FROM oauth_clients WHERE source = '127.0.0.1' ORDER BY client_id")
            .fetch_all(&server.journal.db)
            .await
            .unwrap();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.contains(&"https://agent.example/c19.json".to_string()), "{left:?}");
}

/// Strangers' clients cannot be kept alive by touching them (one GET of /authorize a day), and the
/// owner's own registrations are kept.
#[tokio::test]
async fn the_owner_registers_a_client_for_an_app_without_a_document() {
    let server = TestServer::start().await;
    let (client, created) = store::register_client(
        &server.journal.db,
        "Claude Code",
        &["http://localhost/callback".to_string()],
        store::OWNER_SOURCE,
        unix_now() - 100_000,
    )
    .await
    .unwrap()
    .unwrap();
    assert!(created);
    open_sign_in(&server).await;
    register_client(&server).await;
    assert!(
        store::client(&server.journal.db, &client.client_id)
            .await
            .unwrap()
            .is_some(),
        "an owner-registered client is not pruned"
    );
}

/// Sign-in's limits, tried at their edges with bodies that are otherwise valid: 16 KiB of body on
/// /register, /token and the consent form, 16 redirect URIs, a state of 2,048 bytes. Past each
/// edge the request is refused and nothing is stored.
#[tokio::test]
async fn sign_in_limits_hold_at_their_edges() {
    let server = TestServer::start().await;
    let clients = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM oauth_clients")
            .fetch_one(&server.journal.db)
            .await
            .unwrap()
    };
    let uris = |n: usize| (0..n).map(|i| format!("http://127.0.0.1/cb{i}")).collect::<Vec<_>>();
    open_sign_in(&server).await;
    let sixteen = register(&server, json!({"client_name": "Sixteen", "redirect_uris": uris(16)})).await;
    assert_eq!(sixteen.status, StatusCode::CREATED, "{:?}", sixteen.body);
    let before = clients().await;
    let seventeen = register(&server, json!({"client_name": "Seventeen", "redirect_uris": uris(17)})).await;
    assert_eq!(seventeen.status, StatusCode::BAD_REQUEST);
    assert!(String::from_utf8_lossy(&seventeen.body).contains("at most 16 redirect_uris"));
    // A valid registration, padded with JSON whitespace past 16 KiB.
    let padded = format!(
        "{}{}",
        json!({"client_name": "Padded", "redirect_uris": ["http://127.0.0.1/callback"]}),
        " ".repeat(16 * 1024)
    );
    let large = at(&server, "/register")
        .raw(Method::POST, &[("content-type", "application/json")], padded)
        .await;
    let too_large = |reply: &Reply| {
        reply.status.is_client_error() && String::from_utf8_lossy(&reply.body).contains("larger than 16384 bytes")
    };
    assert!(too_large(&large), "{} {:?}", large.status, large.body);
    assert_eq!(clients().await, before, "nothing registered past the limits");

    // /token and the consent form: a well-formed form past 16 KiB (a long unknown parameter).
    let long = "x".repeat(16 * 1024);
    let token_reply = token(
        &server,
        &[("grant_type", "authorization_code"), ("code", "c"), ("padding", &long)],
    )
    .await;
    assert!(too_large(&token_reply), "{} {:?}", token_reply.status, token_reply.body);
    let consent_reply = consent(&server, &[("pending", "p"), ("csrf", "c"), ("padding", &long)]).await;
    assert!(
        too_large(&consent_reply),
        "{} {:?}",
        consent_reply.status,
        consent_reply.body
    );

    // state: 2,048 bytes are carried, 2,049 refused.
    let client_id = register_client(&server).await;
    let (_, challenge) = pkce();
    let resource = format!("http://{}/mcp", server.addr);
    for (len, carried) in [(2048, true), (2049, false)] {
        let state = "s".repeat(len);
        let mut params = authorize_params(&client_id, &challenge, &resource);
        for pair in params.iter_mut() {
            if pair.0 == "state" {
                pair.1 = &state;
            }
        }
        let page = authorize(&server, &params).await;
        if carried {
            assert_eq!(page.status, StatusCode::OK, "state of {len} bytes");
        } else {
            assert_ne!(page.status, StatusCode::OK, "state of {len} bytes");
            let said = format!("{:?} {}", page.header("location"), String::from_utf8_lossy(&page.body));
            assert!(said.contains("state"), "{said}");
        }
    }
}
