//! Shared helpers: a server over a small demo journal, and an MCP client speaking raw HTTP so that
//! tests can send anything, including what a well-behaved client never would.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{HeaderMap, Method, Request, StatusCode};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

use journal::auth::{Category, WriteMode, connections};
use journal::journal::Journal;
use journal::journal::day::Day;
use journal::journal::demo::{self, DemoOptions};
use journal::server::{self, Running};

/// The last day of the demo journal the tests use.
pub const LAST_DAY: &str = "2026-11-30";

pub struct TestServer {
    pub dir: tempfile::TempDir,
    pub journal: Arc<Journal>,
    pub addr: SocketAddr,
    running: Option<Running>,
}

impl TestServer {
    /// A server over a fresh demo journal: 4 facets, 10 entities, 3 days of 3 segments.
    pub async fn start() -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let options = DemoOptions {
            days: 3,
            segments_per_day: 3,
            seed: 11,
            end: Day::parse(LAST_DAY).unwrap(),
            notes: 0,
        };
        demo::write(dir.path(), &options).unwrap();
        TestServer::start_in(dir).await
    }

    pub async fn start_in(dir: tempfile::TempDir) -> TestServer {
        TestServer::start_in_with(dir, server::Options::default()).await
    }

    /// A demo server with these options (connection limits, a fixture fetcher).
    pub async fn start_with(options: server::Options) -> TestServer {
        let server = TestServer::start().await;
        let dir = server.dir;
        let mut running = server.running;
        running.take().unwrap().stop().await.unwrap();
        drop(server.journal);
        TestServer::start_in_with(dir, options).await
    }

    async fn start_in_with(dir: tempfile::TempDir, options: server::Options) -> TestServer {
        let root = dir.path().to_path_buf();
        TestServer::start_at(dir, &root, options).await
    }

    /// A server over the journal at `root`, somewhere in `dir` (which the server keeps).
    pub async fn start_at(dir: tempfile::TempDir, root: &Path, options: server::Options) -> TestServer {
        let journal = Journal::open(root).await.unwrap();
        let running = server::start_with(journal.clone(), "127.0.0.1:0".parse().unwrap(), options)
            .await
            .unwrap();
        TestServer {
            dir,
            addr: running.local_addr,
            journal,
            running: Some(running),
        }
    }

    /// Stops the server and starts a new one (a new process's worth of state) on the same journal.
    pub async fn restart(mut self) -> TestServer {
        self.running.take().unwrap().stop().await.unwrap();
        let dir = self.dir;
        drop(self.journal);
        TestServer::start_in(dir).await
    }

    pub fn root(&self) -> &Path {
        self.journal.root()
    }

    /// The state the server's routes share (to drive another route's router in-process).
    pub fn state(&self) -> journal::app::AppState {
        self.running.as_ref().unwrap().state.clone()
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Mints a key with the given categories, over the whole journal or the named facets.
    pub async fn key(&self, label: &str, categories: &[&str], facets: Option<&[&str]>) -> String {
        let (connection, key) = connections::create_key(&self.journal.db, label).await.unwrap();
        self.grant(&connection.id, categories, facets).await;
        key
    }

    pub async fn grant(&self, connection_id: &str, categories: &[&str], facets: Option<&[&str]>) {
        let categories: BTreeSet<Category> = categories.iter().map(|c| Category::parse(c).unwrap()).collect();
        let ids: Option<Vec<String>> = facets.map(|names| names.iter().map(|n| self.facet_id(n)).collect());
        connections::set_grant(
            &self.journal.db,
            connection_id,
            &categories,
            ids.as_deref(),
            WriteMode::None,
        )
        .await
        .unwrap();
    }

    /// A key granted notes with the write mode `mode`, connected; answers (client, connection id).
    pub async fn writer(&self, label: &str, mode: WriteMode) -> (Client, String) {
        let key = self.key(label, &["notes"], None).await;
        let id = connections::find_key(&self.journal.db, label).await.unwrap().id;
        self.set_write_mode(&id, mode).await;
        (Client::connected(&self.url(), &key).await, id)
    }

    /// Grants the connection notes with the write mode `mode`.
    pub async fn set_write_mode(&self, connection_id: &str, mode: WriteMode) {
        let notes = [Category::Notes].into_iter().collect();
        connections::set_grant(&self.journal.db, connection_id, &notes, None, mode)
            .await
            .unwrap();
    }

    pub async fn grant_by_label(&self, label: &str, categories: &[&str], facets: Option<&[&str]>) {
        let connection = connections::find_key(&self.journal.db, label).await.unwrap();
        self.grant(&connection.id, categories, facets).await;
    }

    pub fn facet_id(&self, name: &str) -> String {
        self.journal.facet(name).unwrap_or_else(|| panic!("no facet {name}")).id
    }
}

/// What came back.
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).map(|v| v.to_str().unwrap().to_string())
    }
}

pub struct Client {
    http: HttpClient<HttpConnector, Full<Bytes>>,
    pub url: String,
    pub key: Option<String>,
    pub session: Option<String>,
    pub version: Option<String>,
    next_id: std::sync::atomic::AtomicU64,
}

impl Client {
    pub fn new(url: &str, key: Option<&str>) -> Client {
        Client {
            http: HttpClient::builder(TokioExecutor::new()).build_http(),
            url: url.to_string(),
            key: key.map(str::to_string),
            session: None,
            version: None,
            next_id: std::sync::atomic::AtomicU64::new(1),
        }
    }

    /// The same client, connecting from `local` (any address of 127.0.0.0/8 is this machine's, so a
    /// test can be another source without a second machine).
    pub fn bound_to(mut self, local: std::net::IpAddr) -> Client {
        let mut connector = HttpConnector::new();
        connector.set_local_address(Some(local));
        self.http = HttpClient::builder(TokioExecutor::new()).build(connector);
        self
    }

    /// Sends a request with exactly these headers (plus Host) and body.
    pub async fn raw(&self, method: Method, headers: &[(&str, &str)], body: impl Into<Bytes>) -> Reply {
        let mut request = Request::builder().method(method).uri(&self.url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = self
            .http
            .request(request.body(Full::new(body.into())).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        Reply { status, headers, body }
    }

    /// Like `raw`, but a failed connection is an error rather than a panic (the server may be killed).
    pub async fn try_raw(
        &self,
        method: Method,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Result<Reply, String> {
        let mut request = Request::builder().method(method).uri(&self.url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(Full::new(body.into())).map_err(|e| e.to_string())?;
        let response = self.http.request(request).await.map_err(|e| e.to_string())?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok(Reply { status, headers, body })
    }

    /// The headers a well-behaved client sends.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if let Some(key) = &self.key {
            headers.push(("authorization".into(), format!("Bearer {key}")));
        }
        if let Some(session) = &self.session {
            headers.push(("mcp-session-id".into(), session.clone()));
        }
        if let Some(version) = &self.version {
            headers.push(("mcp-protocol-version".into(), version.clone()));
        }
        headers
    }

    pub async fn post(&self, body: &Value) -> Reply {
        self.send(Method::POST, body.to_string()).await
    }

    /// Like `post`, but a failed connection is an error rather than a panic (the server may be killed).
    pub async fn try_post(&self, body: &Value) -> Result<Reply, String> {
        let headers = self.headers();
        let pairs: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        self.try_raw(Method::POST, &pairs, body.to_string()).await
    }

    pub async fn send(&self, method: Method, body: impl Into<Bytes>) -> Reply {
        let headers = self.headers();
        let pairs: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        self.raw(method, &pairs, body).await
    }

    /// Initializes with `version`, keeping the session id and the negotiated version.
    pub async fn initialize(&mut self, version: &str) -> Reply {
        let reply = self
            .post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "it", "version": "1"}}}))
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
        self.session = reply.header("mcp-session-id");
        self.version = Some(reply.json()["result"]["protocolVersion"].as_str().unwrap().to_string());
        let note = self
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(note.status, StatusCode::ACCEPTED);
        reply
    }

    /// A connected client on the latest protocol version.
    pub async fn connected(url: &str, key: &str) -> Client {
        let mut client = Client::new(url, Some(key));
        client.initialize("2025-11-25").await;
        client
    }

    /// A request; answers the whole JSON-RPC response.
    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        let id = self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let reply = self
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "{method}: {:?}",
            String::from_utf8_lossy(&reply.body)
        );
        let value = reply.json();
        assert_eq!(value["id"], json!(id));
        value
    }

    /// A tool call; answers its result object (content, structuredContent, isError).
    pub async fn call(&self, tool: &str, arguments: Value) -> Value {
        let response = self
            .rpc("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert!(response.get("error").is_none(), "{tool}: {response}");
        response["result"].clone()
    }

    /// A tool call that must succeed; answers its structured content (and checks the text copy).
    pub async fn ok(&self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments).await;
        assert_eq!(result["isError"], false, "{tool}: {result}");
        let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        if let Some(structured) = result.get("structuredContent") {
            assert_eq!(&text, structured, "the text block repeats the structured content");
        }
        text
    }

    /// A tool call that must fail as an isError result; answers its text.
    pub async fn refused(&self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments).await;
        assert_eq!(result["isError"], true, "{tool} should have failed: {result}");
        result["content"][0]["text"].as_str().unwrap().to_string()
    }

    pub async fn tool_names(&self) -> Vec<String> {
        let list = self.rpc("tools/list", json!({})).await;
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    pub async fn tool(&self, name: &str) -> Value {
        let list = self.rpc("tools/list", json!({})).await;
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or(Value::Null)
    }
}

/// Polls `check` up to `tries` times, 100 ms apart; true once it holds. Bounded by construction.
pub async fn eventually<F, Fut>(tries: usize, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..tries {
        if check().await {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    false
}

/// An open event stream (`text/event-stream`): its messages one at a time, comment lines skipped.
pub struct Events {
    pub status: StatusCode,
    pub headers: HeaderMap,
    body: hyper::body::Incoming,
    buffer: String,
}

impl Events {
    /// Opens a stream with `method`, these headers and `body`.
    pub async fn open(url: &str, method: Method, headers: &[(&str, &str)], body: String) -> Events {
        let client: HttpClient<HttpConnector, Full<Bytes>> = HttpClient::builder(TokioExecutor::new()).build_http();
        let mut request = Request::builder().method(method).uri(url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = client
            .request(request.body(Full::new(Bytes::from(body))).unwrap())
            .await
            .unwrap();
        let (parts, body) = response.into_parts();
        Events {
            status: parts.status,
            headers: parts.headers,
            body,
            buffer: String::new(),
        }
    }

    /// The next message, or None when the stream ended or `wait` passed without one.
    pub async fn next(&mut self, wait: std::time::Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if !data.is_empty() {
                    return Some(serde_json::from_str(&data.join("\n")).unwrap());
                }
            }
            let frame = tokio::time::timeout_at(deadline, self.body.frame()).await.ok()??.ok()?;
            if let Ok(data) = frame.into_data() {
                self.buffer.push_str(&String::from_utf8_lossy(&data));
            }
        }
    }

    /// Whether the stream ends (rather than goes on) within `wait`, whatever messages come first.
    pub async fn ends_within(&mut self, wait: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(deadline, self.body.frame()).await {
                Err(_) => return false,
                Ok(None) | Ok(Some(Err(_))) => return true,
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.push_str(&String::from_utf8_lossy(&data));
                    }
                }
            }
        }
    }
}
