//! The owner app's pages and forms over HTTP: connecting an agent (pairing codes), minting keys,
//! editing and revoking grants, the activity log, and the owner passphrase; with every refusal
//! (no session, a wrong or missing form token, a form from another page, fields no page sends),
//! each checked to have changed nothing.

use hyper::{Method, StatusCode};
use serde_json::json;

use crate::app::{cookie_name, csrf_of, get, own_origin, post_form, sign_in, text};
use crate::harness::{Client, TestServer};
use journal::auth::{connections, owner};
use journal::clock::unix_now;
use journal::oauth::{pairing, store};

/// A signed-in owner: the session secret and its form token.
pub(crate) struct Owner {
    pub(crate) secret: String,
    csrf: String,
}

pub(crate) async fn owner_of(server: &TestServer) -> Owner {
    let secret = sign_in(server).await;
    let csrf = csrf_of(&get(server, "/app", Some(&secret)).await);
    Owner { secret, csrf }
}

/// Posts a form of the app as its own page does.
pub(crate) async fn submit(server: &TestServer, owner: &Owner, path: &str, fields: &str) -> crate::harness::Reply {
    let form = format!("csrf={}&{fields}", owner.csrf);
    post_form(server, path, Some(&owner.secret), Some(&own_origin(server)), &form).await
}

async fn stored_code_digest(server: &TestServer) -> Option<Vec<u8>> {
    sqlx::query_scalar("SELECT digest FROM pairing_codes WHERE route = 'local'")
        .fetch_optional(&server.journal.db)
        .await
        .unwrap()
}

/// Every form of the app that changes something, with fields a page would send (for the key `key_id`).
fn every_form(key_id: &str) -> [(String, &'static str); 8] {
    [
        ("/app/connect/code".to_string(), "route=local"),
        ("/app/connect/close".into(), "route=local"),
        ("/app/connections/mint".into(), "label=sneaky"),
        ("/app/connections/clear".into(), ""),
        (
            format!("/app/connections/{key_id}/grant"),
            "category=entities&scope=journal",
        ),
        (format!("/app/connections/{key_id}/revoke"), ""),
        ("/app/graph/c-aaaaaaaaaa/disconnect".into(), "item=Inbox.md"),
        ("/app/graph/c-aaaaaaaaaa/note".into(), "item=Inbox.md&text=x"),
    ]
}

#[tokio::test]
async fn no_page_or_form_answers_without_a_session() {
    let server = TestServer::start().await;
    server.key("script", &["transcripts"], None).await;
    let key = connections::find_key(&server.journal.db, "script").await.unwrap();
    // An open code: a refused form must neither replace nor close it.
    store::open_code(&server.journal.db, "local", unix_now()).await.unwrap();
    let code = stored_code_digest(&server).await;
    let pages = [
        "/app/connect".to_string(),
        "/app/connections".into(),
        format!("/app/connections/{}", key.id),
        "/app/activity".into(),
        "/app/graph?item=Inbox.md".into(),
    ];
    for path in &pages {
        let reply = get(&server, path, None).await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER, "{path}");
        assert_eq!(reply.header("location").as_deref(), Some("/app/signin"));
        assert_eq!(get(&server, path, Some("forged")).await.status, StatusCode::SEE_OTHER);
    }
    let origin = own_origin(&server);
    for (path, form) in every_form(&key.id) {
        let reply = post_form(&server, &path, None, Some(&origin), &format!("csrf=x&{form}")).await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER, "{path}");
    }
    assert_eq!(
        stored_code_digest(&server).await,
        code,
        "the open code is neither replaced nor closed"
    );
    let keys = connections::list_keys(&server.journal.db).await.unwrap();
    assert_eq!(keys.len(), 1, "nothing minted, nothing revoked");
    assert_eq!(keys[0].grant, key.grant, "the grant is unchanged");
}

#[tokio::test]
async fn forms_without_their_token_or_from_another_page_change_nothing() {
    let server = TestServer::start().await;
    server.key("script", &["transcripts"], None).await;
    let key = connections::find_key(&server.journal.db, "script").await.unwrap();
    let owner = owner_of(&server).await;
    store::open_code(&server.journal.db, "local", unix_now()).await.unwrap();
    let code = stored_code_digest(&server).await;
    let other_page = format!("http://127.0.0.1:{}", server.addr.port().wrapping_add(1));
    for (path, fields) in every_form(&key.id) {
        for form in [format!("csrf=wrong&{fields}"), fields.to_string()] {
            let reply = post_form(&server, &path, Some(&owner.secret), Some(&own_origin(&server)), &form).await;
            assert_eq!(reply.status, StatusCode::FORBIDDEN, "{path} {form}");
            assert!(text(&reply).contains("Nothing was changed"));
        }
        let form = format!("csrf={}&{fields}", owner.csrf);
        let foreign = post_form(&server, &path, Some(&owner.secret), Some(&other_page), &form).await;
        assert_eq!(foreign.status, StatusCode::FORBIDDEN, "{path} from another page");
        let cookie = format!("{}={}", cookie_name(&server), owner.secret);
        let not_a_form = crate::app::at(&server, &crate::app::in_session(&path, &owner.secret))
            .raw(
                Method::POST,
                &[("content-type", "application/json"), ("cookie", &cookie)],
                form,
            )
            .await;
        assert_eq!(not_a_form.status, StatusCode::BAD_REQUEST, "{path} as JSON");
    }
    assert_eq!(
        stored_code_digest(&server).await,
        code,
        "the open code is neither replaced nor closed"
    );
    let keys = connections::list_keys(&server.journal.db).await.unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].grant, key.grant);
}

#[tokio::test]
async fn the_connect_page_makes_and_closes_pairing_codes() {
    let server = TestServer::start().await;
    let owner = owner_of(&server).await;
    let address = format!("http://127.0.0.1:{}/mcp", server.addr.port());

    let page = get(&server, "/app/connect", Some(&owner.secret)).await;
    assert_eq!(page.status, StatusCode::OK);
    let body = text(&page);
    assert!(
        body.contains(&format!(
            "claude mcp add --scope user --transport http journal {address}"
        )),
        "{body}"
    );
    assert!(body.contains(&format!("codex mcp add journal --url {address}")));
    assert!(body.contains(&format!("gemini mcp add -s user --transport http journal {address}")));
    assert!(body.contains("Sign-in is closed"));
    assert!(
        page.header("content-security-policy")
            .unwrap()
            .contains("script-src 'nonce-")
    );

    let made = submit(&server, &owner, "/app/connect/code", "route=local").await;
    assert_eq!(made.status, StatusCode::OK);
    let body = text(&made);
    let start = body.find("id=\"pairing-code\">").expect("the code is shown") + "id=\"pairing-code\">".len();
    let shown = &body[start..start + 9];
    let normalized = pairing::normalize(shown).unwrap();
    assert_eq!(
        stored_code_digest(&server).await,
        Some(pairing::digest(&normalized)),
        "the code shown is the code that opens sign-in"
    );
    assert!(body.contains(&format!("data-seconds=\"{}\"", pairing::LIFETIME_SECONDS)));
    assert!(store::code_open(&server.journal.db, "local", unix_now()).await.unwrap());

    let again = text(&get(&server, "/app/connect", Some(&owner.secret)).await);
    assert!(again.contains("A pairing code is open until"), "{again}");
    assert!(!again.contains(shown), "a code is shown only once");

    let wrong_route = submit(&server, &owner, "/app/connect/close", "route=lan").await;
    assert_eq!(wrong_route.status, StatusCode::BAD_REQUEST);
    assert!(store::code_open(&server.journal.db, "local", unix_now()).await.unwrap());

    let closed = submit(&server, &owner, "/app/connect/close", "route=local").await;
    assert_eq!(closed.status, StatusCode::SEE_OTHER);
    let location = closed.header("location").unwrap();
    assert_eq!(
        location,
        crate::app::in_session("/app/connect?route=local&notice=closed", &owner.secret)
    );
    assert!(!store::code_open(&server.journal.db, "local", unix_now()).await.unwrap());
    assert!(text(&get(&server, &location, Some(&owner.secret)).await).contains("Sign-in is closed: the pairing code"));

    let lan = get(&server, "/app/connect?route=lan", Some(&owner.secret)).await;
    assert_eq!(lan.status, StatusCode::OK);
    assert!(text(&lan).contains("The lan route is not serving on this journal"));
    assert_eq!(
        get(&server, "/app/connect?route=moon", Some(&owner.secret))
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    let other = submit(&server, &owner, "/app/connect/code", "route=domain").await;
    assert_eq!(other.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        stored_code_digest(&server).await,
        None,
        "no code for a route this server does not serve"
    );
}

#[tokio::test]
async fn a_minted_key_is_shown_once_and_works() {
    let server = TestServer::start().await;
    let owner = owner_of(&server).await;
    let minted = submit(&server, &owner, "/app/connections/mint", "label=web+script").await;
    assert_eq!(minted.status, StatusCode::OK);
    assert_eq!(minted.header("cache-control").as_deref(), Some("no-store"));
    let body = text(&minted);
    // The key: "jk_" where a word starts (random tokens on the page, a nonce or a form token, may
    // hold "jk_" inside them).
    let base64url = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let start = body
        .match_indices("jk_")
        .map(|(at, _)| at)
        .find(|&at| !body[..at].ends_with(base64url))
        .expect("the key is shown");
    let key: String = body[start..].chars().take_while(|c| base64url(*c)).collect();
    assert!(
        body.contains(&format!("export JOURNAL_KEY={key}")),
        "the key goes into the variable"
    );
    assert!(
        body.contains("--bearer-token-env-var JOURNAL_KEY") && body.contains("Bearer ${JOURNAL_KEY}"),
        "the lines that use it name the variable"
    );
    let client = Client::connected(&server.url(), &key).await;
    assert_eq!(
        client.tool_names().await.len(),
        3,
        "a new key holds only its own memory"
    );

    let list = text(&get(&server, "/app/connections", Some(&owner.secret)).await);
    assert!(list.contains("web script"));
    assert!(!list.contains(&key), "the key is never shown again");

    let duplicate = submit(&server, &owner, "/app/connections/mint", "label=WEB+Script").await;
    assert_eq!(duplicate.status, StatusCode::BAD_REQUEST);
    assert!(text(&duplicate).contains("already exists"), "{}", text(&duplicate));
    let bad = submit(&server, &owner, "/app/connections/mint", "label=-dash").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(text(&bad).contains("is not allowed"));
    let twice = submit(&server, &owner, "/app/connections/mint", "label=a&label=b").await;
    assert_eq!(twice.status, StatusCode::BAD_REQUEST);
    assert_eq!(connections::list_keys(&server.journal.db).await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_edited_grant_applies_to_the_next_call_of_an_open_session() {
    let server = TestServer::start().await;
    let key = server.key("agent", &[], None).await;
    let id = connections::find_key(&server.journal.db, "agent").await.unwrap().id;
    let owner = owner_of(&server).await;
    let client = Client::connected(&server.url(), &key).await;
    assert_eq!(client.tool_names().await.len(), 3);

    let page = text(&get(&server, &format!("/app/connections/{id}"), Some(&owner.secret)).await);
    assert!(page.contains("its own notes only"), "{page}");
    assert!(
        page.contains("value=\"notes\""),
        "the notes category can be granted here"
    );
    let path = format!("/app/connections/{id}/grant");
    let saved = submit(
        &server,
        &owner,
        &path,
        "category=transcripts&category=entities&category=facets&category=notes&scope=journal",
    )
    .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER);
    let location = saved.header("location").unwrap();
    assert_eq!(
        location,
        crate::app::in_session(&format!("/app/connections/{id}?notice=saved"), &owner.secret)
    );
    assert_eq!(
        client.tool_names().await.len(),
        14,
        "the open session sees the new grant"
    );
    let page = text(&get(&server, &location, Some(&owner.secret)).await);
    assert!(page.contains("Saved."));
    assert!(page.contains("<code>get_entity</code>"), "the tools it is offered");
    assert!(page.contains("<code>note_read</code>"), "{page}");
    assert!(page.contains("name=\"write\" value=\"none\" checked"), "{page}");
    assert!(
        page.contains("name=\"write\" value=\"force\"") && page.contains("Warning: its changes are made at once"),
        "force is offered here, with a plain warning"
    );

    let forced = submit(&server, &owner, &path, "category=notes&scope=journal&write=force").await;
    assert_eq!(forced.status, StatusCode::SEE_OTHER);
    let grant = connections::load(&server.journal.db, &id).await.unwrap().unwrap().grant;
    assert_eq!(grant.write_mode, journal::auth::WriteMode::Force);
    let page = text(&get(&server, &format!("/app/connections/{id}"), Some(&owner.secret)).await);
    assert!(
        page.contains("can change notes and connections directly, without review"),
        "{page}"
    );
    assert!(page.contains("name=\"write\" value=\"force\" checked"), "{page}");
    let list = text(&get(&server, "/app/connections", Some(&owner.secret)).await);
    assert!(
        list.contains("can change notes and connections directly"),
        "the list says who may change notes: {list}"
    );
    for bad in ["write=FORCE", "write=yes", "write=none&write=force"] {
        let refused = submit(&server, &owner, &path, &format!("category=notes&scope=journal&{bad}")).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{bad}");
    }
    let still = connections::load(&server.journal.db, &id).await.unwrap().unwrap().grant;
    assert_eq!(
        still.write_mode,
        journal::auth::WriteMode::Force,
        "a refused form changes nothing"
    );
    let proposing = submit(&server, &owner, &path, "category=notes&scope=journal&write=propose").await;
    assert_eq!(proposing.status, StatusCode::SEE_OTHER);
    let grant = connections::load(&server.journal.db, &id).await.unwrap().unwrap().grant;
    assert_eq!(grant.write_mode, journal::auth::WriteMode::Propose);

    let work = server.facet_id("work");
    let narrowed = submit(
        &server,
        &owner,
        &path,
        &format!("category=entities&scope=facets&facet={work}"),
    )
    .await;
    assert_eq!(narrowed.status, StatusCode::SEE_OTHER);
    let entities = client.tool("list_entities").await;
    assert_eq!(entities["inputSchema"]["properties"]["facet"]["enum"], json!([work]));
    assert!(!client.tool_names().await.contains(&"get_transcript".to_string()));

    let before = connections::load(&server.journal.db, &id).await.unwrap().unwrap().grant;
    let none_ticked = submit(&server, &owner, &path, "category=entities&scope=facets").await;
    assert_eq!(none_ticked.status, StatusCode::BAD_REQUEST);
    assert!(text(&none_ticked).contains("Tick at least one facet"));
    for bad in [
        "category=pictures&scope=journal",
        "category=entities&scope=everything",
        "category=entities&scope=journal&scope=facets",
    ] {
        assert_eq!(
            submit(&server, &owner, &path, bad).await.status,
            StatusCode::BAD_REQUEST,
            "{bad}"
        );
    }
    let deleted_facet = submit(&server, &owner, &path, "category=entities&scope=facets&facet=gone").await;
    assert_eq!(deleted_facet.status, StatusCode::BAD_REQUEST);
    let after = connections::load(&server.journal.db, &id).await.unwrap().unwrap().grant;
    assert_eq!(after, before, "a refused form changes nothing");

    let cleared = submit(&server, &owner, &path, "scope=journal").await;
    assert_eq!(cleared.status, StatusCode::SEE_OTHER);
    assert_eq!(
        client.tool_names().await.len(),
        3,
        "nothing ticked: its own memory only"
    );

    let unknown = submit(&server, &owner, "/app/connections/no-such-id/grant", "scope=journal").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(
        get(&server, "/app/connections/no-such-id", Some(&owner.secret))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn revoking_ends_a_key_and_a_signed_in_app_at_once() {
    let server = TestServer::start().await;
    let key = server.key("doomed", &["entities"], None).await;
    let key_id = connections::find_key(&server.journal.db, "doomed").await.unwrap().id;
    let (client_id, tokens) = crate::oauth::sign_in(&server, &["transcripts"], None).await;
    let access = tokens["access_token"].as_str().unwrap().to_string();
    let app_id = store::connection_for_client(&server.journal.db, &client_id)
        .await
        .unwrap()[0]
        .clone();
    let owner = owner_of(&server).await;
    let key_client = Client::connected(&server.url(), &key).await;
    let app_client = Client::connected(&server.url(), &access).await;

    let page = text(&get(&server, &format!("/app/connections/{app_id}"), Some(&owner.secret)).await);
    assert!(page.contains(&client_id), "an app's page names its client id");
    app_client.ok("list_transcripts", json!({})).await;
    let calls = crate::cli::ok(server.root(), &["mcp", "activity", "--client", &client_id]);
    assert_eq!(calls.lines().count(), 1, "{calls}");
    assert!(calls.contains("list_transcripts"), "{calls}");

    for (id, client) in [(&key_id, &key_client), (&app_id, &app_client)] {
        let revoked = submit(&server, &owner, &format!("/app/connections/{id}/revoke"), "").await;
        assert_eq!(revoked.status, StatusCode::SEE_OTHER);
        assert_eq!(
            revoked.header("location"),
            Some(crate::app::in_session("/app/connections?notice=revoked", &owner.secret))
        );
        let refused = client
            .try_post(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
            .await
            .unwrap();
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "its next request is refused");
        assert_eq!(
            get(&server, &format!("/app/connections/{id}"), Some(&owner.secret))
                .await
                .status,
            StatusCode::NOT_FOUND
        );
        let again = submit(&server, &owner, &format!("/app/connections/{id}/revoke"), "").await;
        assert_eq!(again.status, StatusCode::NOT_FOUND);
    }
    let list = text(&get(&server, "/app/connections?notice=revoked", Some(&owner.secret)).await);
    assert!(list.contains("Revoked."));
    assert!(list.contains("Nothing is connected yet"));
}

#[tokio::test]
async fn sign_ins_that_can_never_answer_are_marked_and_removed_in_one_click() {
    let server = TestServer::start().await;
    let db = &server.journal.db;
    server.key("unused-script", &["entities"], None).await;
    let (client_id, _) = crate::oauth::sign_in(&server, &["transcripts"], None).await;
    let live = store::connection_for_client(db, &client_id).await.unwrap()[0].clone();
    // The same app approved again, its code not yet exchanged: still signing in, not stale.
    let pairing = crate::oauth::open_sign_in(&server).await;
    let (_, challenge) = crate::oauth::pkce();
    crate::oauth::approved_code(&server, &client_id, &challenge, &pairing, &["entities"]).await;
    let ids = store::connection_for_client(db, &client_id).await.unwrap();
    assert_eq!(ids.len(), 2, "the waiting sign-in replaces nothing yet");
    let waiting = ids.into_iter().find(|id| *id != live).unwrap();
    let owner = owner_of(&server).await;

    let page = text(&get(&server, "/app/connections", Some(&owner.secret)).await);
    assert!(!page.contains("never finished"), "{page}");
    assert!(!page.contains("/app/connections/clear") && !page.contains("connections/clear"));
    assert!(
        page.contains("registered here"),
        "where the app's name comes from: {page}"
    );

    // Its code expired unused: the app never came back, so that row can never answer.
    sqlx::query("UPDATE oauth_codes SET expires_at = ?")
        .bind(unix_now())
        .execute(db)
        .await
        .unwrap();
    let page = text(&get(&server, "/app/connections", Some(&owner.secret)).await);
    assert_eq!(page.matches(">never finished<").count(), 1, "one row marked: {page}");
    assert!(page.contains("One sign-in has ended or never finished"), "{page}");
    assert_eq!(
        page.matches("Remove").count(),
        2,
        "the clear button and the stale row's: {page}"
    );
    let cli = crate::cli::ok(server.root(), &["mcp", "oauth", "list"]);
    assert_eq!(cli.matches("never finished").count(), 1, "{cli}");

    let cleared = submit(&server, &owner, "/app/connections/clear", "").await;
    assert_eq!(cleared.status, StatusCode::SEE_OTHER);
    assert_eq!(
        cleared.header("location"),
        Some(crate::app::in_session("/app/connections?notice=cleared", &owner.secret))
    );
    assert!(
        connections::load(db, &waiting).await.unwrap().is_none(),
        "the stale one went"
    );
    assert!(
        connections::load(db, &live).await.unwrap().is_some(),
        "the live sign-in stays"
    );
    assert_eq!(
        connections::list_keys(db).await.unwrap().len(),
        1,
        "an unused key stays"
    );
    let page = text(&get(&server, "/app/connections?notice=cleared", Some(&owner.secret)).await);
    assert!(page.contains("Removed: the sign-ins that had ended or never finished are gone"));
    assert!(
        !page.contains(">never finished<") && !page.contains("Remove it"),
        "{page}"
    );

    // Nothing stale: the button removes nothing.
    let again = submit(&server, &owner, "/app/connections/clear", "").await;
    assert_eq!(again.status, StatusCode::SEE_OTHER);
    assert!(connections::load(db, &live).await.unwrap().is_some());

    // The live one's thirty days pass: it is marked ended, with its own Remove button.
    sqlx::query("UPDATE oauth_grants SET expires_at = ?")
        .bind(unix_now())
        .execute(db)
        .await
        .unwrap();
    let page = text(&get(&server, "/app/connections", Some(&owner.secret)).await);
    assert!(page.contains(">ended<"), "{page}");
    let removed = submit(&server, &owner, &format!("/app/connections/{live}/revoke"), "").await;
    assert_eq!(removed.status, StatusCode::SEE_OTHER);
    assert!(connections::load(db, &live).await.unwrap().is_none());
    assert_eq!(connections::list_keys(db).await.unwrap().len(), 1);
}

#[tokio::test]
async fn activity_filters_pages_and_charts_the_log() {
    let server = TestServer::start().await;
    let busy = server.key("busy", &[], None).await;
    let quiet = server.key("quiet", &[], None).await;
    let busy_id = connections::find_key(&server.journal.db, "busy").await.unwrap().id;
    let busy = Client::connected(&server.url(), &busy).await;
    for i in 0..52 {
        busy.ok(
            "save_memory",
            json!({"content": "note", "operation_id": format!("op-{i}")}),
        )
        .await;
    }
    let quiet = Client::connected(&server.url(), &quiet).await;
    quiet.refused("get_entity", json!({"reference": "forged"})).await;
    connections::revoke_key(&server.journal.db, "quiet").await.unwrap();
    let owner = owner_of(&server).await;

    let all = get(&server, "/app/activity", Some(&owner.secret)).await;
    assert_eq!(all.status, StatusCode::OK);
    let body = text(&all);
    assert!(body.contains("<svg class=\"chart\""), "the charts");
    assert!(body.contains("Calls per day by connection"));
    assert!(body.contains("53 calls in all"), "the chart counts every call");
    assert!(body.contains("quiet (revoked)"), "revoked connections stay filterable");
    assert_eq!(
        body.matches("<code>save_memory</code>").count(),
        49,
        "a page holds 50 calls"
    );
    let older = body.find("Older calls").expect("a link to older calls");
    let href_start = body[..older].rfind("href=\"").unwrap() + 6;
    let href = body[href_start..].split('"').next().unwrap().replace("&amp;", "&");
    let rest = text(&get(&server, &href, Some(&owner.secret)).await);
    assert_eq!(rest.matches("<code>save_memory</code>").count(), 3);
    assert!(!rest.contains("Older calls"));

    let refused = text(&get(&server, "/app/activity?outcome=refused", Some(&owner.secret)).await);
    assert!(refused.contains("<code>get_entity</code>"));
    assert!(!refused.contains("<code>save_memory</code>"));
    let only_busy = text(
        &get(
            &server,
            &format!("/app/activity?connection={busy_id}&tool=save_memory"),
            Some(&owner.secret),
        )
        .await,
    );
    assert!(!only_busy.contains("<code>get_entity</code>"));
    assert!(only_busy.contains("52 calls in all"));
    // A day long before these calls (a day relative to today could meet them across midnight).
    let long_ago = "2020-01-01";
    let none = text(&get(&server, &format!("/app/activity?day={long_ago}"), Some(&owner.secret)).await);
    assert!(none.contains("No calls match these filters"), "{none}");
    for bad in ["outcome=maybe", "day=2026-02-30", "before=soon", "tool=a&tool=b"] {
        let reply = get(&server, &format!("/app/activity?{bad}"), Some(&owner.secret)).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{bad}");
    }

    // The CLI reads the same log through the same filters.
    let root = server.root();
    let refused = crate::cli::ok(root, &["mcp", "activity", "--outcome", "refused"]);
    assert_eq!(refused.lines().count(), 1, "{refused}");
    assert!(refused.contains("quiet  get_entity  refused"), "{refused}");
    let five = crate::cli::ok(
        root,
        &[
            "mcp",
            "activity",
            "--token",
            "busy",
            "--tool",
            "save_memory",
            "--limit",
            "5",
        ],
    );
    assert_eq!(five.lines().count(), 5, "{five}");
    assert!(
        five.lines().all(|line| line.contains("busy  save_memory  served")),
        "{five}"
    );
    let none = crate::cli::ok(root, &["mcp", "activity", "--day", long_ago]);
    assert!(none.contains("no tool calls match these filters"), "{none}");
    assert!(crate::cli::fails(root, &["mcp", "activity", "--outcome", "maybe"]).contains("unknown outcome"));
    assert!(crate::cli::fails(root, &["mcp", "activity", "--day", "2026-02-30"]).contains("not a real calendar day"));
    assert!(crate::cli::fails(root, &["mcp", "activity", "--tool", "nope"]).contains("no tool named nope"));
    assert!(crate::cli::fails(root, &["mcp", "activity", "--client", "jc_nobody"]).contains("no signed-in app"));
}

/// Runs the CLI with `input` on standard input; answers (success, stdout, stderr).
fn cli_with_input(dir: &std::path::Path, args: &[&str], input: &str) -> (bool, String, String) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_journal"))
        .arg("--journal")
        .arg(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_passphrase_is_asked_after_the_link_and_wrong_ones_use_it_up() {
    let server = TestServer::start().await;
    let earlier = owner_of(&server).await;
    let root = server.root().to_path_buf();

    let (ok, _, stderr) = cli_with_input(&root, &["app", "passphrase", "set"], "short\n");
    assert!(!ok);
    assert!(
        stderr.starts_with("error: ") && stderr.contains("at least 8"),
        "{stderr}"
    );
    let (ok, stdout, stderr) = cli_with_input(&root, &["app", "passphrase", "set"], "correct horse\n");
    assert!(ok, "{stderr}");
    assert!(stdout.contains("1 session signed out"), "{stdout}");
    assert_eq!(
        get(&server, "/app", Some(&earlier.secret)).await.status,
        StatusCode::SEE_OTHER
    );
    let stored: String = sqlx::query_scalar("SELECT phc FROM owner_passphrase")
        .fetch_one(&server.journal.db)
        .await
        .unwrap();
    assert!(stored.starts_with("$argon2id$") && !stored.contains("correct horse"));

    let addr = server.addr.to_string();
    let printed = crate::cli::ok(&root, &["app", "--no-open", "--local-addr", &addr]);
    assert!(printed.contains("asks for your owner passphrase"), "{printed}");

    // Presses "Sign in" with the link and, when given, a passphrase (a form-encoded value).
    let press = |token: String, passphrase: Option<&'static str>| {
        let form = match passphrase {
            Some(passphrase) => format!("t={token}&passphrase={passphrase}"),
            None => format!("t={token}"),
        };
        let server = &server;
        async move { post_form(server, "/app/signin", None, Some(&own_origin(server)), &form).await }
    };
    let token = owner::create_link(&server.journal.db, unix_now()).await.unwrap();
    let page = text(&get(&server, &format!("/app/signin?t={token}"), None).await);
    assert!(page.contains("type=\"password\""), "the page asks for the passphrase");
    let link_only = press(token.clone(), None).await;
    assert_eq!(link_only.status, StatusCode::BAD_REQUEST);
    assert!(link_only.header("set-cookie").is_none());
    assert!(
        text(&link_only).contains("Type your owner passphrase"),
        "{}",
        text(&link_only)
    );
    let empty = press(token.clone(), Some("")).await;
    assert_eq!(
        empty.status,
        StatusCode::BAD_REQUEST,
        "an empty field spends no try either"
    );
    let first = press(token.clone(), Some("nope")).await;
    assert_eq!(first.status, StatusCode::FORBIDDEN);
    assert!(text(&first).contains("4 tries left"), "{}", text(&first));
    for _ in 0..3 {
        assert_eq!(press(token.clone(), Some("nope")).await.status, StatusCode::FORBIDDEN);
    }
    let last = press(token.clone(), Some("nope")).await;
    assert!(text(&last).contains("wrong too many times"), "{}", text(&last));
    let right_too_late = press(token, Some("correct+horse")).await;
    assert_eq!(right_too_late.status, StatusCode::FORBIDDEN, "the link is used up");

    let fresh = owner::create_link(&server.journal.db, unix_now()).await.unwrap();
    let signed_in = press(fresh, Some("correct+horse")).await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER);
    assert!(signed_in.header("set-cookie").is_some());

    let (ok, stdout, _) = cli_with_input(&root, &["app", "passphrase", "clear"], "");
    assert!(ok && stdout.contains("removed"), "{stdout}");
    let (ok, stdout, _) = cli_with_input(&root, &["app", "passphrase", "clear"], "");
    assert!(ok && stdout.contains("no passphrase was set"), "{stdout}");
    sign_in(&server).await;
}

#[tokio::test]
async fn passphrases_sent_together_get_no_more_tries_than_one_after_another() {
    let server = TestServer::start().await;
    let root = server.root().to_path_buf();
    let (ok, _, stderr) = cli_with_input(&root, &["app", "passphrase", "set"], "correct horse\n");
    assert!(ok, "{stderr}");
    let token = owner::create_link(&server.journal.db, unix_now()).await.unwrap();
    let origin = own_origin(&server);
    let mut guesses = tokio::task::JoinSet::new();
    for i in 0..12 {
        let client = crate::app::at(&server, "/app/signin");
        let (origin, form) = (origin.clone(), format!("t={token}&passphrase=guess-{i}"));
        guesses.spawn(async move {
            let headers = [
                ("content-type", "application/x-www-form-urlencoded"),
                ("origin", origin.as_str()),
            ];
            client.raw(Method::POST, &headers, form).await
        });
    }
    let replies = guesses.join_all().await;
    assert!(replies.iter().all(|r| r.status == StatusCode::FORBIDDEN));
    let weighed = replies
        .iter()
        .filter(|r| text(r).contains("That passphrase is not right") || text(r).contains("wrong too many times"))
        .count();
    let not_right = replies
        .iter()
        .filter(|r| text(r).contains("That passphrase is not right"))
        .count();
    assert_eq!(
        not_right,
        journal::auth::passphrase::TRIES_PER_LINK as usize - 1,
        "exactly the link's tries were weighed, the last one voiding it"
    );
    assert!(weighed > not_right, "the last try was weighed too");
    assert_eq!(
        owner::check_link(&server.journal.db, &token, unix_now()).await.unwrap(),
        Err(owner::LinkRefusal::Unknown),
        "the link is used up"
    );
    let right_after = post_form(
        &server,
        "/app/signin",
        None,
        Some(&origin),
        &format!("t={token}&passphrase=correct+horse"),
    )
    .await;
    assert_eq!(right_after.status, StatusCode::FORBIDDEN);
}

/// The README, docs/oauth.md, the Connect page and `serve --demo` show one set of client lines: the
/// ones `web::clients` makes (checked against the clients' help, and run by tests/clients/).
#[test]
fn the_readme_and_the_docs_show_the_lines_the_app_shows() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let oauth = std::fs::read_to_string(root.join("docs/oauth.md")).unwrap();
    let address = "http://127.0.0.1:7659/mcp";
    for client in journal::web::clients::for_route("local", address)
        .iter()
        .filter(|c| c.is_command)
    {
        assert!(readme.contains(&client.add), "README.md lacks: {}", client.add);
        assert!(
            oauth.contains(&format!("`{}`", client.add)),
            "docs/oauth.md lacks: {}",
            client.add
        );
    }
    let lines = journal::web::clients::with_key(address, "jk_...");
    for line in &lines[..4] {
        assert!(readme.contains(&line.line), "README.md lacks: {}", line.line);
    }
}

/// The proposals and changes pages over HTTP: what they list, and every form refusal (fields no
/// page sends, unknown ids, a stale note, a forged form), each checked to have changed nothing;
/// accept-all leaves a proposal whose note changed since waiting, and says so.
#[tokio::test]
async fn proposal_and_undo_forms_decide_and_refuse_without_changing_anything_else() {
    use journal::journal::notes::history;
    use journal::journal::proposals;
    let server = TestServer::start().await;
    let (client, id) = server.writer("helper", journal::auth::WriteMode::Propose).await;
    let first = client
        .ok("note_append", json!({"path": "Inbox.md", "text": "- one"}))
        .await["proposal_id"]
        .as_i64()
        .unwrap();
    let owner = owner_of(&server).await;
    let pending = |server: &TestServer, id: i64| {
        let db = server.journal.db.clone();
        async move { proposals::get(&db, id).await.unwrap().unwrap().status == proposals::Status::Pending }
    };

    let overview = text(&get(&server, "/app", Some(&owner.secret)).await);
    assert!(
        overview.contains("<strong>1</strong></a><span class=\"muted\">proposal waits"),
        "{overview}"
    );
    let page = text(&get(&server, "/app/proposals", Some(&owner.secret)).await);
    assert!(
        page.contains("<span class=\"add\">+- one</span>") && page.contains("Accept all of helper"),
        "{page}"
    );
    assert_eq!(
        get(&server, "/app/proposals?status=maybe", Some(&owner.secret))
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(get(&server, "/app/proposals", None).await.status, StatusCode::SEE_OTHER);

    let accept = format!("/app/proposals/{first}/accept");
    let refusals = [
        (accept.clone(), "onto=not-a-hash".to_string(), StatusCode::BAD_REQUEST),
        (
            "/app/proposals/9999/accept".into(),
            String::new(),
            StatusCode::NOT_FOUND,
        ),
        (
            format!("/app/proposals/{first}/reject"),
            format!("reason={}", "x".repeat(1001)),
            StatusCode::CONFLICT,
        ),
        (
            format!("/app/proposals/by/{id}/explode"),
            String::new(),
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (path, fields, status) in &refusals {
        let reply = submit(&server, &owner, path, fields).await;
        assert_eq!(reply.status, *status, "{path} {fields}: {}", text(&reply));
        assert!(pending(&server, first).await, "{path}");
    }
    let forged = post_form(
        &server,
        &accept,
        Some(&owner.secret),
        Some(&own_origin(&server)),
        "csrf=wrong",
    )
    .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let stale_onto = format!("onto={}", "0".repeat(64));
    let stale = submit(&server, &owner, &accept, &stale_onto).await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    assert!(text(&stale).contains("changed since this was proposed"));
    assert!(pending(&server, first).await);
    assert!(
        !std::fs::read_to_string(server.root().join("notes/Inbox.md"))
            .unwrap()
            .contains("- one")
    );

    // Accept all: the one whose note changed since stays, and the notice says so.
    let second = client
        .ok("note_append", json!({"path": "Ideas.md", "text": "- two"}))
        .await["proposal_id"]
        .as_i64()
        .unwrap();
    let inbox = server.root().join("notes/Inbox.md");
    let edited = format!("{}\n- the owner's own line\n", std::fs::read_to_string(&inbox).unwrap());
    std::fs::write(&inbox, &edited).unwrap();
    let all = submit(&server, &owner, &format!("/app/proposals/by/{id}/accept"), "").await;
    assert_eq!(all.status, StatusCode::SEE_OTHER);
    assert!(all.header("location").unwrap().ends_with("/proposals?notice=left"));
    assert!(pending(&server, first).await, "the stale one waits");
    assert!(!pending(&server, second).await);
    assert!(
        std::fs::read_to_string(server.root().join("notes/Ideas.md"))
            .unwrap()
            .ends_with("- two")
    );
    let page = text(&get(&server, "/app/proposals?notice=left", Some(&owner.secret)).await);
    assert!(page.contains("The note changed since this was proposed") && page.contains("Accept onto the current note"));
    let rejected = submit(&server, &owner, &format!("/app/proposals/by/{id}/reject"), "").await;
    assert!(rejected.header("location").unwrap().ends_with("notice=rejected"));
    assert!(!pending(&server, first).await);
    assert_eq!(std::fs::read_to_string(&inbox).unwrap(), edited);

    // Undo: a form for another note, or over a note changed since the page, changes nothing.
    let version = history::of_path(&server.journal.db, "Ideas.md", 1).await.unwrap()[0].id;
    let ideas = std::fs::read_to_string(server.root().join("notes/Ideas.md")).unwrap();
    let revert = format!("/app/changes/{version}/revert");
    let other = submit(&server, &owner, &revert, "path=Inbox.md&seen=").await;
    assert_eq!(other.status, StatusCode::BAD_REQUEST);
    let stale = submit(
        &server,
        &owner,
        &revert,
        &format!("path=Ideas.md&seen={}", "0".repeat(64)),
    )
    .await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    assert!(text(&stale).contains("changed since this page was shown"));
    assert_eq!(
        std::fs::read_to_string(server.root().join("notes/Ideas.md")).unwrap(),
        ideas
    );
    for bad in ["/app/changes/note", "/app/changes/note?path=../x.md"] {
        assert_eq!(
            get(&server, bad, Some(&owner.secret)).await.status,
            StatusCode::BAD_REQUEST,
            "{bad}"
        );
    }
    let changes = text(&get(&server, "/app/changes", Some(&owner.secret)).await);
    assert!(
        changes.contains("changes/note?path=Ideas.md") && changes.contains("proposal #"),
        "{changes}"
    );
    let note = text(&get(&server, "/app/changes/note?path=Ideas.md", Some(&owner.secret)).await);
    let seen = journal::journal::notes::note::hash_hex(ideas.as_bytes());
    assert!(note.contains(&format!("name=\"seen\" value=\"{seen}\"")), "{note}");
    let undone = submit(&server, &owner, &revert, &format!("path=Ideas.md&seen={seen}")).await;
    assert_eq!(undone.status, StatusCode::SEE_OTHER);
    assert!(
        !std::fs::read_to_string(server.root().join("notes/Ideas.md"))
            .unwrap()
            .contains("- two")
    );
}

#[tokio::test]
async fn the_trash_on_the_changes_page_restores_a_deletion_once_and_never_over_a_taken_path() {
    let server = TestServer::start().await;
    let (client, _) = server.writer("tidier", journal::auth::WriteMode::Force).await;
    let ideas = server.root().join("notes/Ideas.md");
    let original = std::fs::read(&ideas).unwrap();
    client
        .ok("note_delete", json!({"path": "Ideas.md", "confirm": true}))
        .await;
    assert!(!ideas.exists());
    let owner = owner_of(&server).await;
    let page = text(&get(&server, "/app/changes", Some(&owner.secret)).await);
    let change = journal::journal::notes::history::deletions(&server.journal.db, 1)
        .await
        .unwrap()[0]
        .0;
    let restore = format!("/app/trash/{change}/restore");
    assert!(
        page.contains(&format!("/trash/{change}/restore\"")) && page.contains("<code>Ideas.md</code>"),
        "{page}"
    );

    // Taken again by the owner's own note: nothing restored, nothing replaced.
    std::fs::write(&ideas, "the owner's new ideas\n").unwrap();
    let taken = submit(&server, &owner, &restore, "").await;
    assert_eq!(taken.status, StatusCode::CONFLICT);
    assert!(text(&taken).contains("Ideas.md is taken again"), "{}", text(&taken));
    assert_eq!(std::fs::read_to_string(&ideas).unwrap(), "the owner's new ideas\n");
    let missing = submit(&server, &owner, "/app/trash/99999/restore", "").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let forged = post_form(
        &server,
        &restore,
        Some(&owner.secret),
        Some(&own_origin(&server)),
        "csrf=wrong",
    )
    .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);

    std::fs::remove_file(&ideas).unwrap();
    let restored = submit(&server, &owner, &restore, "").await;
    assert_eq!(restored.status, StatusCode::SEE_OTHER);
    assert!(
        restored
            .header("location")
            .unwrap()
            .ends_with("/changes?notice=restored")
    );
    assert_eq!(std::fs::read(&ideas).unwrap(), original, "back, byte for byte");
    let page = text(&get(&server, "/app/changes?notice=restored", Some(&owner.secret)).await);
    assert!(
        page.contains("Restored: the deleted notes are back") && page.contains("back in place"),
        "{page}"
    );
    assert!(!page.contains(&format!("/trash/{change}/restore\"")));
}
