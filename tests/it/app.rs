//! The owner app over HTTP: signing in with a one-time link, the session cookie, the overview, and
//! every refusal (no session, a reused, expired or made-up link, a form from elsewhere or without
//! its anti-forgery token).

use hyper::{Method, StatusCode};

use crate::harness::{Client, Reply, TestServer};
use journal::auth::owner;
use journal::clock::unix_now;

pub(crate) fn at(server: &TestServer, path: &str) -> Client {
    Client::new(&format!("http://{}{path}", server.addr), None)
}

pub(crate) fn cookie_name(server: &TestServer) -> String {
    format!("journal_owner_{}", server.addr.port())
}

/// A path of the app as the session `secret` finds it: its pages are under `/app/<place>`, so
/// `/app/connect` becomes `/app/<place>/connect` (a path already there, or the sign-in page, stays).
pub(crate) fn in_session(path: &str, secret: &str) -> String {
    let base = format!("/app/{}", owner::place(secret));
    if path.starts_with(&base) || path.starts_with("/app/signin") {
        return path.to_string();
    }
    match path.strip_prefix("/app") {
        Some("") => format!("{base}/"),
        Some(rest) if rest.starts_with('/') || rest.starts_with('?') => format!("{base}{rest}"),
        _ => path.to_string(),
    }
}

/// GETs `path`; with a session's cookie, at that session's place (see `in_session`).
pub(crate) async fn get(server: &TestServer, path: &str, cookie: Option<&str>) -> Reply {
    let path = cookie.map_or_else(|| path.to_string(), |secret| in_session(path, secret));
    let path = path.as_str();
    let cookie = cookie.map(|c| format!("{}={c}", cookie_name(server)));
    let mut headers = Vec::new();
    if let Some(cookie) = &cookie {
        headers.push(("cookie", cookie.as_str()));
    }
    at(server, path).raw(Method::GET, &headers, "").await
}

pub(crate) async fn post_form(
    server: &TestServer,
    path: &str,
    cookie: Option<&str>,
    origin: Option<&str>,
    form: &str,
) -> Reply {
    let path = cookie.map_or_else(|| path.to_string(), |secret| in_session(path, secret));
    let path = path.as_str();
    let cookie = cookie.map(|c| format!("{}={c}", cookie_name(server)));
    let mut headers = vec![("content-type", "application/x-www-form-urlencoded")];
    if let Some(cookie) = &cookie {
        headers.push(("cookie", cookie.as_str()));
    }
    if let Some(origin) = origin {
        headers.push(("origin", origin));
    }
    at(server, path).raw(Method::POST, &headers, form.to_string()).await
}

pub(crate) fn own_origin(server: &TestServer) -> String {
    format!("http://{}", server.addr)
}

/// Signs in the way a browser does; answers the session secret from the cookie.
pub(crate) async fn sign_in(server: &TestServer) -> String {
    let token = owner::create_link(&server.journal.db, unix_now()).await.unwrap();
    let page = get(server, &format!("/app/signin?t={token}"), None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(text(&page).contains("Sign in to your journal"));
    let reply = post_form(
        server,
        "/app/signin",
        None,
        Some(&own_origin(server)),
        &format!("t={token}"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER, "{}", text(&reply));
    let set = reply.header("set-cookie").expect("a session cookie");
    let prefix = format!("{}=", cookie_name(server));
    let secret = set
        .strip_prefix(&prefix)
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    // The session's pages, and its cookie only there: never to all of /app, which any other
    // server on this computer would receive too (browsers ignore ports for cookies).
    let base = format!("/app/{}", owner::place(&secret));
    assert_eq!(reply.header("location"), Some(format!("{base}/")));
    for attribute in [
        "HttpOnly".to_string(),
        "SameSite=Strict".into(),
        format!("Path={base};"),
    ] {
        assert!(set.contains(&attribute), "{set}");
    }
    secret
}

/// A page's HTML, with the word spans of its command lines taken out (`<span class="word">`, which
/// keep a word of a command on one line), so that a test reads a command as it is copied.
pub(crate) fn text(reply: &Reply) -> String {
    let html = String::from_utf8_lossy(&reply.body);
    let mut out = String::with_capacity(html.len());
    let mut rest = html.as_ref();
    while let Some(at) = rest.find("<span class=\"word\">") {
        out.push_str(&rest[..at]);
        rest = &rest[at + "<span class=\"word\">".len()..];
        let end = rest.find("</span>").unwrap_or(rest.len());
        out.push_str(&rest[..end]);
        rest = rest.get(end + "</span>".len()..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

pub(crate) fn csrf_of(page: &Reply) -> String {
    let body = text(page);
    let start = body.find("name=\"csrf\" value=\"").expect("a form token") + "name=\"csrf\" value=\"".len();
    body[start..].split('"').next().unwrap().to_string()
}

#[tokio::test]
async fn nothing_answers_without_a_session() {
    let server = TestServer::start().await;
    for path in ["/app", "/app/"] {
        let reply = get(&server, path, None).await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER, "{path}");
        assert_eq!(reply.header("location").as_deref(), Some("/app/signin"));
        let forged = get(&server, path, Some("not-a-session")).await;
        assert_eq!(forged.status, StatusCode::SEE_OTHER, "{path}");
    }
    let signout = post_form(&server, "/app/signout", None, Some(&own_origin(&server)), "csrf=x").await;
    assert_eq!(signout.status, StatusCode::SEE_OTHER);
    let explained = get(&server, "/app/signin", None).await;
    assert_eq!(explained.status, StatusCode::OK);
    assert!(text(&explained).contains("journal app"), "{}", text(&explained));
    assert_eq!(explained.header("x-frame-options").as_deref(), Some("DENY"));
    assert_eq!(explained.header("cache-control").as_deref(), Some("no-store"));
}

#[tokio::test]
async fn a_link_signs_in_once_and_the_overview_shows_the_journal() {
    let server = TestServer::start().await;
    server.key("nightly-script", &["transcripts"], None).await;
    let secret = sign_in(&server).await;
    let overview = get(&server, "/app", Some(&secret)).await;
    assert_eq!(overview.status, StatusCode::OK);
    let body = text(&overview);
    assert!(body.contains("nightly-script"), "{body}");
    assert!(body.contains(&format!("http://127.0.0.1:{}/mcp", server.addr.port())));
    assert!(!body.contains(&secret), "the session secret must not appear in a page");
    let csp = overview.header("content-security-policy").unwrap();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(overview.header("x-frame-options").as_deref(), Some("DENY"));
}

#[tokio::test]
async fn used_expired_and_made_up_links_are_refused() {
    let server = TestServer::start().await;
    let db = &server.journal.db;
    let origin = own_origin(&server);
    let token = owner::create_link(db, unix_now()).await.unwrap();
    let first = post_form(&server, "/app/signin", None, Some(&origin), &format!("t={token}")).await;
    assert_eq!(first.status, StatusCode::SEE_OTHER);
    let again = post_form(&server, "/app/signin", None, Some(&origin), &format!("t={token}")).await;
    assert_eq!(again.status, StatusCode::FORBIDDEN);
    assert!(again.header("set-cookie").is_none());
    assert!(text(&again).contains("already used"), "{}", text(&again));
    let shown_again = get(&server, &format!("/app/signin?t={token}"), None).await;
    assert_eq!(shown_again.status, StatusCode::FORBIDDEN);

    let old = owner::create_link(db, unix_now() - owner::LINK_LIFETIME_SECONDS - 1)
        .await
        .unwrap();
    let expired = post_form(&server, "/app/signin", None, Some(&origin), &format!("t={old}")).await;
    assert_eq!(expired.status, StatusCode::FORBIDDEN);
    assert!(text(&expired).contains("expired"), "{}", text(&expired));
    let no_token = post_form(&server, "/app/signin", None, Some(&origin), "").await;
    assert_eq!(no_token.status, StatusCode::BAD_REQUEST);
    assert!(text(&no_token).contains("journal app"), "{}", text(&no_token));
    let made_up = post_form(&server, "/app/signin", None, Some(&origin), "t=guess").await;
    assert_eq!(made_up.status, StatusCode::FORBIDDEN);
    assert!(made_up.header("set-cookie").is_none());
}

#[tokio::test]
async fn forms_from_elsewhere_or_without_their_token_change_nothing() {
    let server = TestServer::start().await;
    let secret = sign_in(&server).await;
    let overview = get(&server, "/app", Some(&secret)).await;
    let csrf = csrf_of(&overview);
    let origin = own_origin(&server);
    // Another local tool's page is the same site to the browser, so the cookie is sent: the
    // Origin check and the form token refuse it.
    let other_port = format!("http://127.0.0.1:{}", server.addr.port().wrapping_add(1));
    for (origin, form) in [
        (Some(origin.as_str()), "csrf=wrong".to_string()),
        (Some(origin.as_str()), String::new()),
        (Some(other_port.as_str()), format!("csrf={csrf}")),
    ] {
        let refused = post_form(&server, "/app/signout", Some(&secret), origin, &form).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{form}");
        assert_eq!(
            get(&server, "/app", Some(&secret)).await.status,
            StatusCode::OK,
            "still signed in"
        );
    }
    // A browser that says the form came from another site is refused even without an Origin.
    let cookie = format!("{}={secret}", cookie_name(&server));
    let cross_site = at(&server, &in_session("/app/signout", &secret))
        .raw(
            Method::POST,
            &[
                ("content-type", "application/x-www-form-urlencoded"),
                ("cookie", &cookie),
                ("sec-fetch-site", "cross-site"),
            ],
            format!("csrf={csrf}"),
        )
        .await;
    assert_eq!(cross_site.status, StatusCode::FORBIDDEN);
    assert_eq!(
        get(&server, "/app", Some(&secret)).await.status,
        StatusCode::OK,
        "still signed in"
    );
    // A link used from another page is refused too, and stays unused.
    let token = owner::create_link(&server.journal.db, unix_now()).await.unwrap();
    let foreign = post_form(&server, "/app/signin", None, Some(&other_port), &format!("t={token}")).await;
    assert_eq!(foreign.status, StatusCode::FORBIDDEN);
    assert_eq!(
        owner::check_link(&server.journal.db, &token, unix_now()).await.unwrap(),
        Ok(())
    );

    let signed_out = post_form(
        &server,
        "/app/signout",
        Some(&secret),
        Some(&origin),
        &format!("csrf={csrf}"),
    )
    .await;
    assert_eq!(signed_out.status, StatusCode::OK);
    assert!(signed_out.header("set-cookie").unwrap().contains("Max-Age=0"));
    assert_eq!(get(&server, "/app", Some(&secret)).await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn the_cli_prints_a_link_that_signs_in_and_signs_everyone_out() {
    let server = TestServer::start().await;
    let secret = sign_in(&server).await;
    let addr = server.addr.to_string();
    let printed = crate::cli::ok(server.root(), &["app", "--no-open", "--local-addr", &addr]);
    let link = printed.lines().last().unwrap().to_string();
    let prefix = format!("http://{addr}/app/signin?t=");
    assert!(link.starts_with(&prefix), "{printed}");
    let page = get(&server, link.strip_prefix(&format!("http://{addr}")).unwrap(), None).await;
    assert_eq!(page.status, StatusCode::OK);

    let out = crate::cli::ok(server.root(), &["app", "signout"]);
    assert!(out.contains("1 session ended"), "{out}");
    assert_eq!(get(&server, "/app", Some(&secret)).await.status, StatusCode::SEE_OTHER);
    let token = link.strip_prefix(&prefix).unwrap();
    assert_eq!(
        owner::check_link(&server.journal.db, token, unix_now()).await.unwrap(),
        Err(owner::LinkRefusal::Unknown),
        "signout voids unused links"
    );
}

/// Browsers send cookies to every port of a host, so the session cookie is scoped to the session's
/// own pages (`/app/<place>`), and the cookie alone opens nothing elsewhere under `/app`.
#[tokio::test]
async fn the_session_cookie_opens_only_its_own_pages() {
    let server = TestServer::start().await;
    let secret = sign_in(&server).await;
    let cookie = format!("{}={secret}", cookie_name(&server));
    let place = owner::place(&secret);
    let own = at(&server, &format!("/app/{place}/connections"))
        .raw(Method::GET, &[("cookie", &cookie)], "")
        .await;
    assert_eq!(own.status, StatusCode::OK);
    let other_place = format!("/app/{}/connections", owner::place("another session"));
    for path in ["/app/connections", "/app/connect", other_place.as_str(), "/app/signout"] {
        let reply = at(&server, path).raw(Method::GET, &[("cookie", &cookie)], "").await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER, "{path}");
        assert_eq!(reply.header("location").as_deref(), Some("/app/signin"), "{path}");
    }
    // Links in the pages lead to the session's own place.
    let page = text(&own);
    assert!(page.contains(&format!("href=\"/app/{place}/activity\"")), "{page}");
    assert!(!page.contains("href=\"/app/activity\""));
}
