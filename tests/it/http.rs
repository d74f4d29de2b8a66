//! The HTTP rules of /mcp: credentials, Host and Origin, content type, sizes, JSON, methods.

use std::time::Duration;

use hyper::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::harness::{Client, TestServer};

fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string()
}

#[tokio::test]
async fn refuses_missing_and_wrong_credentials_with_a_challenge() {
    let server = TestServer::start().await;
    for key in [None, Some("jk_not-a-real-key"), Some("garbage")] {
        let client = Client::new(&server.url(), key);
        let reply = client.send(Method::POST, initialize_body()).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{key:?}");
        let challenge = reply.header("www-authenticate").unwrap();
        assert_eq!(
            challenge,
            format!(
                "Bearer realm=\"mcp\", resource_metadata=\"http://{}/.well-known/oauth-protected-resource\"",
                server.addr
            )
        );
        let error = reply.json()["error"].as_str().unwrap().to_string();
        assert_eq!(
            error,
            if key.is_some() {
                "invalid_token"
            } else {
                "invalid_request"
            }
        );
    }
    let key = server.key("ok", &[], None).await;
    let reply = Client::new(&server.url(), None)
        .raw(
            Method::POST,
            &[
                ("content-type", "application/json"),
                ("authorization", &format!("Basic {key}")),
            ],
            initialize_body(),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "only the Bearer scheme");
}

#[tokio::test]
async fn refuses_foreign_hosts_and_origins() {
    let server = TestServer::start().await;
    let key = server.key("k", &[], None).await;
    let auth = format!("Bearer {key}");
    let client = Client::new(&server.url(), Some(&key));
    let wrong_port = format!("127.0.0.1:{}", server.addr.port() + 1);
    // A port a number parser accepts but that is not written as the port is: it would be echoed
    // into the issuer.
    let plus = format!("localhost:+{}", server.addr.port());
    let zero = format!("localhost:0{}", server.addr.port());
    for host in [
        "evil.example:80",
        "localhost.evil.example",
        wrong_port.as_str(),
        "192.168.1.5",
        plus.as_str(),
        zero.as_str(),
    ] {
        let reply = client
            .raw(
                Method::POST,
                &[
                    ("host", host),
                    ("content-type", "application/json"),
                    ("authorization", &auth),
                ],
                initialize_body(),
            )
            .await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{host}");
        assert_eq!(reply.json()["error"], "host_not_allowed");
    }
    for origin in ["https://evil.example", "null", "http://localhost.evil.example:1234"] {
        let reply = client
            .raw(
                Method::POST,
                &[
                    ("origin", origin),
                    ("content-type", "application/json"),
                    ("authorization", &auth),
                ],
                initialize_body(),
            )
            .await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{origin}");
        assert_eq!(reply.json()["error"], "cross_origin_blocked");
    }
    let local_origin = format!("http://localhost:{}", server.addr.port());
    let localhost = format!("localhost:{}", server.addr.port());
    let reply = client
        .raw(
            Method::POST,
            &[
                ("host", &localhost),
                ("origin", &local_origin),
                ("content-type", "application/json"),
                ("authorization", &auth),
            ],
            initialize_body(),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "a loopback Host and Origin are fine");
    // The guard runs before anything else: even an unauthenticated stranger learns nothing more,
    // on every endpoint (the owner app and sign-in too).
    for (method, path) in [
        (Method::POST, "/mcp"),
        (Method::GET, "/app"),
        (Method::GET, "/app/signin"),
        (Method::GET, "/authorize"),
        (Method::POST, "/authorize"),
        (Method::POST, "/token"),
        (Method::POST, "/register"),
        (Method::GET, "/.well-known/oauth-authorization-server"),
    ] {
        let reply = Client::new(&format!("http://{}{path}", server.addr), None)
            .raw(method.clone(), &[("host", "evil.example")], "")
            .await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{method} {path}");
        assert_eq!(reply.json()["error"], "host_not_allowed", "{method} {path}");
    }
}

/// Two Host headers: each guard reads the first, and something in front might read the other.
#[tokio::test]
async fn a_repeated_host_is_refused() {
    let server = TestServer::start().await;
    for path in ["/mcp", "/app", "/.well-known/oauth-authorization-server"] {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
            addr = server.addr
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let answer = read_until_closed(&mut stream, Duration::from_secs(10)).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 400"), "{path}: {answer:.120}");
        assert!(answer.contains("more than one Host header"), "{answer}");
    }
}

#[tokio::test]
async fn refuses_bad_bodies() {
    let server = TestServer::start().await;
    let key = server.key("k", &[], None).await;
    let auth = format!("Bearer {key}");
    let client = Client::new(&server.url(), Some(&key));

    let reply = client
        .raw(
            Method::POST,
            &[("authorization", &auth), ("content-type", "text/plain")],
            initialize_body(),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let reply = client
        .raw(Method::POST, &[("authorization", &auth)], initialize_body())
        .await;
    assert_eq!(reply.status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "no content type");
    let reply = client
        .raw(
            Method::POST,
            &[
                ("authorization", &auth),
                ("content-type", "application/json; charset=utf-8"),
            ],
            initialize_body(),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "parameters are fine");

    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}",
        "a".repeat(70_000)
    );
    let reply = client.send(Method::POST, big).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);

    for (body, code) in [
        ("{not json", -32700),
        ("", -32700),
        ("\u{0}\u{1}", -32700),
        (&format!("{}1{}", "[".repeat(200), "]".repeat(200)), -32700),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", -32700),
    ] {
        let reply = client.send(Method::POST, body.to_string()).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body:.40}");
        assert_eq!(reply.json()["error"]["code"], code, "{body:.40}");
    }
    let invalid_utf8: Vec<u8> = vec![b'{', b'"', 0xff, 0xfe, b'"', b':', b'1', b'}'];
    let reply = client.send(Method::POST, invalid_utf8).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.json()["error"]["code"], -32700);
}

#[tokio::test]
async fn answers_other_methods_and_paths_plainly() {
    let server = TestServer::start().await;
    let key = server.key("k", &[], None).await;
    let client = Client::new(&server.url(), Some(&key));
    for method in [Method::PUT, Method::PATCH] {
        let reply = client.send(method.clone(), "").await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(reply.header("allow").as_deref(), Some("GET, POST, DELETE"), "{method}");
    }
    // GET opens a session's event stream: it needs to accept one, and a session.
    let reply = client.send(Method::GET, "").await;
    assert_eq!(reply.status, StatusCode::NOT_ACCEPTABLE);
    assert!(String::from_utf8_lossy(&reply.body).contains("text/event-stream"));
    let auth = format!("Bearer {key}");
    let reply = client
        .raw(
            Method::GET,
            &[("authorization", &auth), ("accept", "text/event-stream")],
            "",
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "no session");
    let reply = client
        .raw(
            Method::GET,
            &[
                ("authorization", &auth),
                ("accept", "text/event-stream"),
                ("mcp-session-id", "nope"),
            ],
            "",
        )
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "an unknown session");
    let reply = Client::new(&server.url(), None)
        .raw(Method::GET, &[("accept", "text/event-stream")], "")
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "credentials first");
    let other = Client::new(&format!("http://{}/elsewhere", server.addr), Some(&key));
    assert_eq!(other.send(Method::POST, "{}").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn malformed_messages_are_invalid_requests() {
    let server = TestServer::start().await;
    let key = server.key("k", &[], None).await;
    let client = Client::connected(&server.url(), &key).await;
    for body in [
        json!(42),
        json!("ping"),
        json!({"id": 1, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 1}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}),
    ] {
        let reply = client.post(&body).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(reply.json()["error"]["code"], -32600, "{body}");
    }
    let reply = client
        .post(&json!({"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage"}))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json()["error"]["code"], -32601);
    assert_eq!(reply.json()["id"], 9);
    let reply = client.post(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "a response from the client");
    assert!(reply.body.is_empty());
    let pong = client.rpc("ping", Value::Null).await;
    assert_eq!(pong["result"], json!({}));
}

/// Reads what the server sends until it closes the connection (bounded by `limit`).
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> Option<String> {
    let mut received = Vec::new();
    let read = tokio::time::timeout(limit, stream.read_to_end(&mut received)).await;
    read.ok().map(|_| String::from_utf8_lossy(&received).into_owned())
}

#[tokio::test]
async fn oversized_and_slow_request_heads_are_cut_off() {
    let limits = journal::server::ConnectionLimits {
        head_deadline: Duration::from_millis(500),
        ..Default::default()
    };
    let options = journal::server::Options {
        limits,
        ..Default::default()
    };
    let server = TestServer::start_with(options).await;

    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let huge = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nX-Padding: {}\r\n\r\n",
        server.addr,
        "a".repeat(60 * 1024)
    );
    let _ = stream.write_all(huge.as_bytes()).await;
    let answer = read_until_closed(&mut stream, Duration::from_secs(10))
        .await
        .expect("the server answers and closes");
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer:.80}");

    // Cut off at the 500 ms deadline, not the default 5 s: not before it, and well before the
    // default (a generous bound, for a busy machine).
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let closed = read_until_closed(&mut slow, Duration::from_secs(4)).await;
    assert!(
        closed.is_some(),
        "a client that never finishes its head is disconnected at the deadline"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );

    let mut idle = TcpStream::connect(server.addr).await.unwrap();
    let started = std::time::Instant::now();
    let closed = read_until_closed(&mut idle, Duration::from_secs(4)).await;
    assert!(closed.is_some(), "a connection that sends nothing is disconnected too");
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );

    let key = server.key("after", &[], None).await;
    Client::connected(&server.url(), &key).await;
}

/// A kept-alive connection left idle as long as clients keep one themselves (httpx and the Python
/// SDK: 5 s) still answers its next request: the server must not close it first, or a request sent
/// just as it closes is lost without an answer (a client does not resend a POST).
#[tokio::test]
async fn a_connection_idle_as_long_as_clients_keep_one_still_answers() {
    let server = TestServer::start().await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let request = format!(
        "GET /.well-known/oauth-protected-resource HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.addr
    );
    /// One response: its head, then exactly the Content-Length bytes of its body.
    async fn answer(stream: &mut TcpStream) -> String {
        let mut got = Vec::new();
        let mut byte = [0u8; 1];
        while !got.ends_with(b"\r\n\r\n") {
            assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "closed before an answer");
            got.push(byte[0]);
        }
        let head = String::from_utf8(got).unwrap();
        let length: usize = head
            .lines()
            .find_map(|line| {
                line.to_ascii_lowercase()
                    .strip_prefix("content-length: ")
                    .map(str::to_string)
            })
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let mut body = vec![0u8; length];
        stream.read_exact(&mut body).await.unwrap();
        head
    }
    stream.write_all(request.as_bytes()).await.unwrap();
    assert!(answer(&mut stream).await.starts_with("HTTP/1.1 200"));
    tokio::time::sleep(Duration::from_millis(5_500)).await;
    stream.write_all(request.as_bytes()).await.unwrap();
    assert!(
        answer(&mut stream).await.starts_with("HTTP/1.1 200"),
        "the same connection answers"
    );
}

// A client that sends its head but dribbles its body is answered 408 when the body deadline (5 s)
// passes, and the server goes on serving.
#[tokio::test]
async fn a_body_that_does_not_arrive_in_time_is_refused() {
    let server = TestServer::start().await;
    let key = server.key("slow", &[], None).await;
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\":",
        server.addr
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    let started = std::time::Instant::now();
    let mut received = vec![0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(15), slow.read(&mut received)).await;
    let n = read.expect("an answer within 15 s").unwrap();
    let answer = String::from_utf8_lossy(&received[..n]).into_owned();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer:.200}");
    assert!(answer.contains("did not arrive in time"), "{answer}");
    assert!(started.elapsed() >= Duration::from_secs(4), "not before the deadline");
    Client::connected(&server.url(), &key).await;
}
