//! A grant, token and pairing code belong to the route that issued them. The LAN route's router is
//! driven in-process here (its listener, TLS and address rules are tested across a real network
//! namespace in tests/python/test_lan.py); the local route is the real server on loopback.

use axum::body::Body;
use http_body_util::BodyExt;
use hyper::{Method, Request, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Client, TestServer};
use journal::clock::unix_now;
use journal::oauth::store;
use journal::routes;

const LAN_ADDR: &str = "192.168.50.2:7660";

/// Sends one request to the LAN route's router, as the listener would after TLS.
async fn lan(
    server: &TestServer,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (StatusCode, Value) {
    let mut router = routes::lan::router(server.state(), LAN_ADDR.parse().unwrap());
    let mut request = Request::builder().method(method).uri(path).header("host", LAN_ADDR);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = tower_service::Service::call(&mut router, request.body(Body::from(body.to_string())).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
           "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string()
}

#[tokio::test]
async fn a_token_of_the_local_route_is_refused_on_the_lan_and_a_key_too() {
    let server = TestServer::start().await;
    let (_, tokens) = crate::oauth::sign_in(&server, &["transcripts"], None).await;
    let access = tokens["access_token"].as_str().unwrap().to_string();
    let key = server.key("script", &["transcripts"], None).await;
    // Both work where they were issued.
    for credential in [&access, &key] {
        let mut client = Client::new(&server.url(), Some(credential));
        assert_eq!(client.initialize("2025-06-18").await.status, StatusCode::OK);
    }
    for credential in [&access, &key] {
        let bearer = format!("Bearer {credential}");
        let (status, _) = lan(
            &server,
            Method::POST,
            "/mcp",
            &[
                ("authorization", &bearer),
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            &initialize(),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{credential}");
    }
    // The LAN route's discovery names its own origin.
    let (status, document) = lan(&server, Method::GET, "/.well-known/oauth-authorization-server", &[], "").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(document["issuer"], format!("https://{LAN_ADDR}"));
    // The owner app is not on the LAN route.
    let (status, _) = lan(&server, Method::GET, "/app", &[], "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = lan(&server, Method::GET, "/app/ca.pem", &[], "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_pairing_code_opens_only_its_own_route() {
    let server = TestServer::start().await;
    let registration = json!({"client_name": "Agent", "redirect_uris": ["http://127.0.0.1/callback"]}).to_string();
    store::open_code(&server.journal.db, "lan", unix_now()).await.unwrap();
    let local = Client::new(&format!("http://{}/register", server.addr), None)
        .raw(
            Method::POST,
            &[("content-type", "application/json")],
            registration.clone(),
        )
        .await;
    assert_eq!(
        local.status,
        StatusCode::FORBIDDEN,
        "a LAN code does not open the local route"
    );
    let (status, _) = lan(
        &server,
        Method::POST,
        "/register",
        &[("content-type", "application/json")],
        &registration,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "it opens the LAN route");
    store::revoke_codes(&server.journal.db, None).await.unwrap();
    store::open_code(&server.journal.db, "local", unix_now()).await.unwrap();
    let (status, _) = lan(
        &server,
        Method::POST,
        "/register",
        &[("content-type", "application/json")],
        &registration,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a local code does not open the LAN route"
    );
}

#[tokio::test]
async fn the_lan_route_answers_only_its_own_address() {
    let server = TestServer::start().await;
    let mut router = routes::lan::router(server.state(), LAN_ADDR.parse().unwrap());
    for host in [
        "192.168.50.3:7660",
        "localhost:7660",
        "journal.example:7660",
        "192.168.50.2",
    ] {
        let request = Request::builder()
            .uri("/.well-known/oauth-protected-resource")
            .header("host", host)
            .body(Body::empty())
            .unwrap();
        let response = tower_service::Service::call(&mut router, request).await.unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{host}");
    }
}

#[tokio::test]
async fn the_connect_page_offers_the_lan_route_only_while_it_serves() {
    use crate::app::{get, text};
    use crate::app_pages::{owner_of, submit};
    use journal::routes::status::LanView;

    let server = TestServer::start().await;
    let owner = owner_of(&server).await;
    let cookie = owner.secret.clone();
    // Off: no certificate to download, the route can't be picked, and no code is made for it.
    let missing = get(&server, "/app/ca.pem", None).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert!(text(&missing).contains("journal route enable lan"));
    let page = get(&server, "/app/connect?route=lan", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        text(&page).contains("The lan route is not serving on this journal"),
        "{}",
        text(&page)
    );
    let refused = submit(&server, &owner, "/app/connect/code", "route=lan").await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        store::code_expiry(&server.journal.db, "lan", unix_now()).await.unwrap(),
        None
    );

    // Serving (as the LAN listener publishes it): its addresses, its CA, codes for it.
    let ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    server.state().routes.set_lan(Some(LanView {
        addresses: vec!["192.168.50.2:7660".parse().unwrap(), "[fd00::2]:7660".parse().unwrap()],
        ca_pem: ca.into(),
        ca_fingerprint: "AB:CD:EF".into(),
    }));
    let download = get(&server, "/app/ca.pem", None).await;
    assert_eq!(download.status, StatusCode::OK);
    assert_eq!(text(&download), ca);
    assert_eq!(
        download.header("content-type").as_deref(),
        Some("application/x-x509-ca-cert")
    );
    assert!(
        download
            .header("content-disposition")
            .unwrap()
            .contains("journal-ca.crt")
    );
    let page = get(&server, "/app/connect?route=lan", Some(&cookie)).await;
    let html = text(&page);
    for expected in [
        "https://192.168.50.2:7660/mcp",
        "https://[fd00::2]:7660/mcp",
        "AB:CD:EF",
        "href=\"/app/ca.pem\"",
        "NODE_EXTRA_CA_CERTS",
        "claude mcp add --scope user --transport http journal https://192.168.50.2:7660/mcp",
    ] {
        assert!(html.contains(expected), "{expected} in {html}");
    }
    let made = submit(&server, &owner, "/app/connect/code", "route=lan").await;
    assert_eq!(made.status, StatusCode::OK);
    assert!(text(&made).contains("on the lan route"));
    assert!(
        store::code_expiry(&server.journal.db, "lan", unix_now())
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        store::code_expiry(&server.journal.db, "local", unix_now())
            .await
            .unwrap(),
        None
    );
    let closed = submit(&server, &owner, "/app/connect/close", "route=lan").await;
    assert_eq!(
        closed.header("location"),
        Some(crate::app::in_session(
            "/app/connect?route=lan&notice=closed",
            &owner.secret
        ))
    );
    assert_eq!(
        store::code_expiry(&server.journal.db, "lan", unix_now()).await.unwrap(),
        None
    );
}

#[test]
fn the_route_commands_change_journal_toml_and_refuse_what_cannot_work() {
    use crate::cli::{fails, ok};

    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("journal.toml");
    let listed = ok(dir.path(), &["route", "list"]);
    assert!(listed.contains("local   on   http://127.0.0.1:7659/mcp"), "{listed}");
    assert!(
        listed.contains("lan     off  turn it on with `journal route enable lan`"),
        "{listed}"
    );
    let off = fails(dir.path(), &["mcp", "pairing", "generate", "--route", "lan"]);
    assert!(off.contains("the lan route is off"), "{off}");

    for (addr, says) in [
        ("8.8.8.8:7660", "not a private address"),
        ("127.0.0.1:7660", "loopback"),
        ("192.168.1.2", "IP:PORT"),
        ("[fe80::1]:7660", "link-local"),
    ] {
        let error = fails(dir.path(), &["route", "enable", "lan", "--addr", addr]);
        assert!(error.contains(says), "{addr}: {error}");
        assert!(!toml.exists(), "a refused command writes nothing");
    }
    let enabled = ok(dir.path(), &["route", "enable", "lan", "--addr", "192.168.50.2:7000"]);
    assert!(enabled.contains("https://192.168.50.2:7000/mcp"), "{enabled}");
    assert!(
        enabled.contains("SHA-256 "),
        "the CA is made and its fingerprint shown: {enabled}"
    );
    assert_eq!(
        std::fs::read_to_string(&toml).unwrap(),
        "[lan]\nenabled = true\naddr = \"192.168.50.2:7000\"\n"
    );
    let listed = ok(dir.path(), &["route", "list"]);
    assert!(
        listed.contains("lan     on   https://192.168.50.2:7000/mcp"),
        "{listed}"
    );
    assert!(listed.contains("not serving: start `journal serve`"), "{listed}");
    assert!(listed.contains("certificate authority: journal private CA"), "{listed}");
    let code = ok(dir.path(), &["mcp", "pairing", "generate", "--route", "lan"]);
    assert!(code.contains("on the lan route"), "{code}");

    let refused = fails(dir.path(), &["route", "disable", "local"]);
    assert!(refused.contains("cannot be turned off"), "{refused}");
    let unknown = fails(dir.path(), &["route", "disable", "moon"]);
    assert!(unknown.contains("unknown route \"moon\""), "{unknown}");
    ok(dir.path(), &["route", "disable", "lan"]);
    assert_eq!(
        std::fs::read_to_string(&toml).unwrap(),
        "[lan]\nenabled = false\naddr = \"192.168.50.2:7000\"\n"
    );
    // Every private address again: the explicit address goes.
    ok(dir.path(), &["route", "enable", "lan"]);
    assert_eq!(std::fs::read_to_string(&toml).unwrap(), "[lan]\nenabled = true\n");

    // A journal.toml that is wrong stops `serve` with a clear line, and is not edited.
    std::fs::write(&toml, "[lan]\nenabled = true\naddr = \"10.0.0.1:0\"\n").unwrap();
    let error = fails(dir.path(), &["serve"]);
    assert!(error.contains("port 0"), "{error}");
    let error = fails(dir.path(), &["route", "list"]);
    assert!(error.contains("port 0"), "{error}");
    // Turning the route off is the way out, so it is allowed.
    ok(dir.path(), &["route", "disable", "lan"]);
    assert!(ok(dir.path(), &["route", "list"]).contains("lan     off"));
    // A file that does not read at all is not edited.
    std::fs::write(&toml, "[lan\n").unwrap();
    let error = fails(dir.path(), &["route", "enable", "lan"]);
    assert!(error.contains("journal.toml"), "{error}");
    assert_eq!(std::fs::read_to_string(&toml).unwrap(), "[lan\n");
}

#[tokio::test]
async fn the_connect_page_offers_the_domain_route_only_while_it_serves() {
    use crate::app::{get, text};
    use crate::app_pages::{owner_of, submit};
    use journal::routes::status::DomainView;

    let server = TestServer::start().await;
    let owner = owner_of(&server).await;
    let cookie = owner.secret.clone();
    let off = text(&get(&server, "/app/connect?route=domain", Some(&cookie)).await);
    assert!(off.contains("The domain route is not serving on this journal"), "{off}");
    assert!(off.contains("journal route enable domain --hostname H"), "{off}");

    // On, but its checks fail: the page says why, and it cannot be picked.
    server.state().routes.set_domain(Some(DomainView {
        mcp_url: "https://journal.example.org/mcp".into(),
        serving: false,
        problem: Some("journal.example.org does not resolve".into()),
    }));
    let failing = get(&server, "/app/connect?route=domain", Some(&cookie)).await;
    let html = text(&failing);
    assert!(
        html.contains("On, but not serving: journal.example.org does not resolve."),
        "{html}"
    );
    let refused = submit(&server, &owner, "/app/connect/code", "route=domain").await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);

    server.state().routes.set_domain(Some(DomainView {
        mcp_url: "https://journal.example.org/mcp".into(),
        serving: true,
        problem: None,
    }));
    let page = get(&server, "/app/connect?route=domain", Some(&cookie)).await;
    let html = text(&page);
    assert!(
        html.contains("claude mcp add --scope user --transport http journal https://journal.example.org/mcp"),
        "{html}"
    );
    assert!(
        html.contains("Settings → Connectors → Add custom connector, with the URL https://journal.example.org/mcp")
    );
    assert!(
        !html.contains("needs a route the internet reaches"),
        "hosted clients can use this route"
    );
    let made = submit(&server, &owner, "/app/connect/code", "route=domain").await;
    assert_eq!(made.status, StatusCode::OK);
    assert!(
        store::code_expiry(&server.journal.db, "domain", unix_now())
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn the_domain_route_answers_only_its_hostname_and_refuses_keys() {
    let server = TestServer::start().await;
    let key = server.key("script", &["transcripts"], None).await;
    let mut local = Client::new(&server.url(), Some(&key));
    assert_eq!(
        local.initialize("2025-06-18").await.status,
        StatusCode::OK,
        "the key works locally"
    );
    let route = journal::context::Route::domain("journal.example.org", 443, "[::]:8443".parse().unwrap());
    let call = |host: &'static str, bearer: Option<String>| {
        let mut router = routes::domain::router(server.state(), route.clone());
        let mut request = Request::builder()
            .method(Method::POST)
            .uri("/mcp")
            .header("host", host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(bearer) = bearer {
            request = request.header("authorization", bearer);
        }
        let request = request.body(Body::from(initialize())).unwrap();
        async move { tower_service::Service::call(&mut router, request).await.unwrap() }
    };
    let wrong_host = call("journal.example.org.evil.com", None).await;
    assert_eq!(wrong_host.status(), StatusCode::FORBIDDEN);
    let keyed = call("journal.example.org", Some(format!("Bearer {key}"))).await;
    assert_eq!(keyed.status(), StatusCode::UNAUTHORIZED);
    let challenge = keyed.headers()["www-authenticate"].to_str().unwrap().to_string();
    assert!(
        challenge.contains("resource_metadata=\"https://journal.example.org/.well-known/oauth-protected-resource\""),
        "{challenge}"
    );
}

#[test]
fn the_domain_route_is_refused_before_anything_is_written() {
    use crate::cli::{fails, ok};

    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["--hostname", "192.168.1.2"], "IP address"),
        (vec!["--hostname", "localhost"], "needs a domain"),
        (vec!["--hostname", "j.example.org", "--listen", "443"], "not IP:PORT"),
        (
            vec![
                "--hostname",
                "j.example.org",
                "--acme-directory",
                "http://acme.example/dir",
            ],
            "not an https URL",
        ),
        (vec!["--hostname", "j.example.org", "--email", "me"], "not an email"),
        (
            vec!["--hostname", "j.example.org", "--resolver", "dns.example"],
            "not IP or IP:PORT",
        ),
        (
            vec!["--hostname", "j.example.org", "--acme-root", "/nonexistent/root.pem"],
            "--acme-root",
        ),
        (
            // Nothing listens there: the ACME directory cannot be reached, and nothing is written.
            vec![
                "--hostname",
                "j.example.org",
                "--acme-directory",
                "https://127.0.0.1:9/dir",
                "--caa-identity",
                "x.test",
            ],
            "could not reach the ACME directory",
        ),
    ] {
        let mut full = vec!["route", "enable", "domain"];
        full.extend(args.iter().copied());
        let error = fails(dir.path(), &full);
        assert!(error.contains(says), "{args:?}: {error}");
        assert!(!dir.path().join("journal.toml").exists(), "{args:?} wrote settings");
    }
    let off = fails(dir.path(), &["mcp", "pairing", "generate", "--route", "domain"]);
    assert!(off.contains("the domain route is off"), "{off}");
    assert!(
        ok(dir.path(), &["route", "list"])
            .contains("domain  off  turn it on with `journal route enable domain --hostname H`")
    );
    ok(dir.path(), &["route", "disable", "domain"]);
    assert!(ok(dir.path(), &["route", "list"]).contains("domain  off"));
}

#[tokio::test]
async fn codes_and_refresh_tokens_are_redeemed_only_on_their_own_route() {
    use crate::oauth::{CALLBACK, approved_code, open_sign_in, pkce, query, register_client};

    let server = TestServer::start().await;
    let pairing = open_sign_in(&server).await;
    let client_id = register_client(&server).await;
    let (verifier, challenge) = pkce();
    let code = approved_code(&server, &client_id, &challenge, &pairing, &["transcripts"]).await;
    let exchange = query(&[
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", CALLBACK),
        ("client_id", &client_id),
        ("code_verifier", &verifier),
    ]);
    let form = [("content-type", "application/x-www-form-urlencoded")];
    let (status, answer) = lan(&server, Method::POST, "/token", &form, &exchange).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["error"], "invalid_grant");
    assert!(answer["error_description"].as_str().unwrap().contains("another route"));
    // Refused elsewhere, the code is not spent: it still works where it was issued.
    let local = Client::new(&format!("http://{}/token", server.addr), None)
        .raw(Method::POST, &form, exchange)
        .await;
    assert_eq!(local.status, StatusCode::OK, "{:?}", local.body);
    let refresh_token = local.json()["refresh_token"].as_str().unwrap().to_string();
    let refresh = query(&[
        ("grant_type", "refresh_token"),
        ("refresh_token", &refresh_token),
        ("client_id", &client_id),
    ]);
    let (status, answer) = lan(&server, Method::POST, "/token", &form, &refresh).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        answer["error_description"].as_str().unwrap().contains("another route"),
        "{answer}"
    );
    let local = Client::new(&format!("http://{}/token", server.addr), None)
        .raw(Method::POST, &form, refresh)
        .await;
    assert_eq!(
        local.status,
        StatusCode::OK,
        "the refresh token still works on its route"
    );
}

/// A port nothing listens on now (the proxy route's listener is given a fixed port, as a tunnel needs).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn the_proxy_route_answers_its_public_name_counts_the_forwarded_client_and_refuses_keys() {
    let listen: std::net::SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let plan = journal::config::ProxyPlan {
        hostname: "journal.tail1234.ts.net".into(),
        public_port: 443,
        listen,
    };
    let server = TestServer::start_with(journal::server::Options {
        proxy: Some(plan),
        ..Default::default()
    })
    .await;
    let key = server.key("script", &["transcripts"], None).await;
    let at = |path: &str| Client::new(&format!("http://{listen}{path}"), None);
    const HOST: (&str, &str) = ("host", "journal.tail1234.ts.net");

    // Discovery names the tunnel's URL, the one agents reach.
    let metadata = at("/.well-known/oauth-authorization-server")
        .raw(Method::GET, &[HOST], "")
        .await;
    assert_eq!(metadata.status, StatusCode::OK);
    assert_eq!(metadata.json()["issuer"], "https://journal.tail1234.ts.net");
    let resource = at("/.well-known/oauth-protected-resource/mcp")
        .raw(Method::GET, &[HOST], "")
        .await;
    assert_eq!(resource.json()["resource"], "https://journal.tail1234.ts.net/mcp");

    // Any other Host is refused: the listener's own address, another name.
    for host in [
        listen.to_string(),
        "journal.tail1234.ts.net.evil.example".into(),
        "localhost".into(),
    ] {
        let refused = at("/.well-known/oauth-authorization-server")
            .raw(Method::GET, &[("host", host.as_str())], "")
            .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{host}");
        assert_eq!(refused.json()["error"], "host_not_allowed");
    }

    // Keys are for the owner's own computer: refused here, with the sign-in to use instead.
    let bearer = format!("Bearer {key}");
    let keyed = at("/mcp")
        .raw(
            Method::POST,
            &[
                HOST,
                ("authorization", bearer.as_str()),
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            initialize(),
        )
        .await;
    assert_eq!(keyed.status, StatusCode::UNAUTHORIZED);
    assert!(
        keyed
            .header("www-authenticate")
            .unwrap()
            .contains("resource_metadata=\"https://journal.tail1234.ts.net/.well-known/oauth-protected-resource\""),
        "{:?}",
        keyed.headers
    );

    // Sign-in opened on the local route stays closed here.
    store::open_code(&server.journal.db, "local", unix_now()).await.unwrap();
    let closed = at("/register")
        .raw(
            Method::POST,
            &[HOST, ("content-type", "application/json")],
            json!({"client_name": "Agent", "redirect_uris": ["http://127.0.0.1/callback"]}).to_string(),
        )
        .await;
    assert_eq!(closed.status, StatusCode::FORBIDDEN, "{:?}", closed.body);

    // The per-source quotas count the client the tunnel names (its last entry), an IPv6 client by its /64.
    let db = server.journal.db.clone();
    let register = |forwarded: &'static str| {
        let db = db.clone();
        async move {
            let reply = at("/register")
                .raw(
                    Method::POST,
                    &[
                        HOST,
                        ("content-type", "application/json"),
                        ("x-forwarded-for", forwarded),
                    ],
                    json!({"client_name": "Agent", "redirect_uris": ["http://127.0.0.1/callback"]}).to_string(),
                )
                .await;
            assert_eq!(reply.status, StatusCode::CREATED, "{forwarded}: {:?}", reply.body);
            let id = reply.json()["client_id"].as_str().unwrap().to_string();
            sqlx::query_scalar::<_, String>("SELECT source FROM oauth_clients WHERE client_id = ?")
                .bind(id)
                .fetch_one(&db)
                .await
                .unwrap()
        }
    };
    store::open_code(&server.journal.db, "proxy", unix_now()).await.unwrap();
    assert_eq!(register("203.0.113.66").await, "203.0.113.66");
    assert_eq!(
        register("10.9.9.9, 198.51.100.7").await,
        "198.51.100.7",
        "what the client wrote is not believed"
    );
    assert_eq!(register("2001:db8:1:2:aaaa::1").await, "2001:db8:1:2::");

    // The route records that it serves, for `journal route list` in another process.
    let recorded = journal::routes::status::read(&server.journal.db, "proxy")
        .await
        .unwrap()
        .unwrap();
    assert!(recorded.serving);
    assert_eq!(recorded.addresses, [listen.to_string()]);
    assert_eq!(
        server.state().routes.proxy().as_deref(),
        Some("https://journal.tail1234.ts.net/mcp")
    );
}

#[test]
fn the_proxy_route_is_turned_on_with_a_public_https_url_and_off_again() {
    use crate::cli::{fails, ok};

    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("journal.toml");
    assert!(
        ok(dir.path(), &["route", "list"])
            .contains("proxy   off  turn it on with `journal route enable proxy --public-url URL`")
    );
    let off = fails(dir.path(), &["mcp", "pairing", "generate", "--route", "proxy"]);
    assert!(off.contains("the proxy route is off"), "{off}");
    for (args, says) in [
        (vec!["--public-url", "http://journal.example.org"], "must be https"),
        (vec!["--public-url", "https://journal.example.org/mcp"], "no path"),
        (vec!["--public-url", "https://198.51.100.7"], "not an IP address"),
        (
            vec![
                "--public-url",
                "https://journal.example.org",
                "--listen",
                "0.0.0.0:7661",
            ],
            "not a loopback address",
        ),
    ] {
        let error = fails(dir.path(), &[&["route", "enable", "proxy"], args.as_slice()].concat());
        assert!(error.contains(says), "{args:?}: {error}");
        assert!(!error.trim_end().contains('\n'), "one line: {error}");
        assert!(!toml.exists(), "a refused command writes nothing");
    }
    let enabled = ok(
        dir.path(),
        &[
            "route",
            "enable",
            "proxy",
            "--public-url",
            "https://Journal.tail1234.ts.net",
        ],
    );
    assert!(enabled.contains("https://journal.tail1234.ts.net/mcp"), "{enabled}");
    assert!(enabled.contains("forward to http://127.0.0.1:7661"), "{enabled}");
    assert_eq!(
        std::fs::read_to_string(&toml).unwrap(),
        "[proxy]\nenabled = true\npublic_url = \"https://Journal.tail1234.ts.net\"\n"
    );
    let listed = ok(dir.path(), &["route", "list"]);
    assert!(
        listed.contains("proxy   on   https://journal.tail1234.ts.net/mcp"),
        "{listed}"
    );
    assert!(listed.contains("not serving: start `journal serve`"), "{listed}");
    let code = ok(dir.path(), &["mcp", "pairing", "generate", "--route", "proxy"]);
    assert!(code.contains("on the proxy route"), "{code}");
    ok(dir.path(), &["route", "disable", "proxy"]);
    assert!(ok(dir.path(), &["route", "list"]).contains("proxy   off"));
}

#[tokio::test]
async fn the_connect_page_offers_the_relay_and_proxy_routes_while_they_serve() {
    use crate::app::{get, text};
    use crate::app_pages::{owner_of, submit};
    use journal::routes::status::DomainView;

    let server = TestServer::start().await;
    let owner = owner_of(&server).await;
    let cookie = owner.secret.clone();
    for (route, says) in [
        ("relay", "journal route enable relay"),
        ("proxy", "journal route enable proxy --public-url URL"),
    ] {
        let off = text(&get(&server, &format!("/app/connect?route={route}"), Some(&cookie)).await);
        assert!(
            off.contains(&format!("The {route} route is not serving on this journal")),
            "{off}"
        );
        assert!(off.contains(says), "{off}");
        let refused = submit(&server, &owner, "/app/connect/code", &format!("route={route}")).await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{route}: no code for a route that is off"
        );
    }

    // The relay route while its tunnel is down: why, and it cannot be picked.
    server.state().routes.set_relay(Some(DomainView {
        mcp_url: "https://alice.relay.example.org/mcp".into(),
        serving: false,
        problem: Some("could not reach the relay relay.example.org:443".into()),
    }));
    let down = text(&get(&server, "/app/connect?route=relay", Some(&cookie)).await);
    assert!(
        down.contains("On, but not serving: could not reach the relay relay.example.org:443."),
        "{down}"
    );

    server.state().routes.set_relay(Some(DomainView {
        mcp_url: "https://alice.relay.example.org/mcp".into(),
        serving: true,
        problem: None,
    }));
    server
        .state()
        .routes
        .set_proxy(Some("https://journal.tail1234.ts.net/mcp".into()));
    for (route, url) in [
        ("relay", "https://alice.relay.example.org/mcp"),
        ("proxy", "https://journal.tail1234.ts.net/mcp"),
    ] {
        let html = text(&get(&server, &format!("/app/connect?route={route}"), Some(&cookie)).await);
        assert!(
            html.contains(&format!("claude mcp add --scope user --transport http journal {url}")),
            "{html}"
        );
        assert!(
            !html.contains("needs a route the internet reaches"),
            "hosted clients can use the {route} route"
        );
        let made = submit(&server, &owner, "/app/connect/code", &format!("route={route}")).await;
        assert_eq!(made.status, StatusCode::OK);
        assert!(
            store::code_expiry(&server.journal.db, route, unix_now())
                .await
                .unwrap()
                .is_some()
        );
    }
}
