//! Concurrent MCP clients: each opens its own session (keep-alive, one connection) and runs a
//! weighted mix of calls until the run's request count is spent or its time limit passes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

use super::stats::Samples;

/// One kind of request in the mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    Ping,
    ToolsList,
    Search,
    Fetch,
    SaveMemory,
    NotesList,
    NoteRead,
    BaseQuery,
    /// search with inline filters over notes (`tag:`, `[status:is ...]`, `path:`).
    SearchNotes,
    /// The baseline's only request: a POST answered with a fixed body.
    Plain,
}

impl Op {
    pub fn parse(name: &str) -> Option<Op> {
        match name {
            "ping" => Some(Op::Ping),
            "tools/list" | "tools_list" => Some(Op::ToolsList),
            "search" => Some(Op::Search),
            "fetch" => Some(Op::Fetch),
            "save_memory" => Some(Op::SaveMemory),
            "notes_list" => Some(Op::NotesList),
            "note_read" => Some(Op::NoteRead),
            "base_query" => Some(Op::BaseQuery),
            "search_notes" => Some(Op::SearchNotes),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::Ping => "ping",
            Op::ToolsList => "tools/list",
            Op::Search => "search",
            Op::Fetch => "fetch",
            Op::SaveMemory => "save_memory",
            Op::NotesList => "notes_list",
            Op::NoteRead => "note_read",
            Op::BaseQuery => "base_query",
            Op::SearchNotes => "search_notes",
            Op::Plain => "baseline",
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub url: String,
    /// Bearer credentials, given to the clients in turn (a credential may hold 16 sessions); empty for
    /// the baseline.
    pub keys: Vec<String>,
    pub clients: usize,
    /// Requests in all, shared by the clients.
    pub requests: u64,
    /// A hard limit on the run's length.
    pub limit: Duration,
    /// (op, weight)
    pub mix: Vec<(Op, u32)>,
    pub seed: u64,
    /// What `search` asks for, drawn at random; empty for the built-in words (`QUERIES`).
    pub queries: Arc<Vec<String>>,
    /// The name of the search tool (another server's may differ); it takes a `query` argument.
    pub search_tool: String,
    /// More arguments for every search (`mode`, `category`, ...), beside `query`.
    pub search_arguments: serde_json::Map<String, Value>,
    /// For a baseline in another process: the size of body to ask it for (`baseline::SIZE_HEADER`).
    pub body_bytes: Option<usize>,
    /// Speak 2026-07-28: no session, each request with its `_meta` and the standard headers.
    pub stateless: bool,
}

/// What a run measured.
#[derive(Debug, Default)]
pub struct LoadReport {
    pub per_op: BTreeMap<Op, Samples>,
    pub elapsed: Duration,
}

impl LoadReport {
    pub fn total(&self) -> Samples {
        let mut all = Samples::default();
        for samples in self.per_op.values() {
            all.merge(samples.clone());
        }
        all
    }

    pub fn throughput(&self) -> f64 {
        self.total().count() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Words searched for when no query file is given: frequent and rare ones, as agents would.
const QUERIES: [&str; 8] = [
    "lease renewal",
    "dashboard",
    "knee exercises",
    "linen thread",
    "pancakes",
    "quarterly planning",
    "warehouse",
    "Okafor",
];

/// Runs the load; errors only for a setup that cannot work (no session, no references to fetch).
pub async fn run(options: &LoadOptions) -> Result<LoadReport, String> {
    let budget = Arc::new(AtomicU64::new(options.requests));
    let deadline = Instant::now() + options.limit;
    // References are bound to the connection that searched: one list per key.
    let mut per_key = Vec::new();
    if options.mix.iter().any(|(op, _)| *op == Op::Fetch) {
        for index in 0..options.keys.len().max(1) {
            per_key.push(references(options, index).await?);
        }
    }
    let references = Arc::new(per_key);
    let notes = if options.mix.iter().any(|(op, _)| *op == Op::NoteRead) {
        Arc::new(note_paths(options).await?)
    } else {
        Arc::new(Vec::new())
    };
    let started = Instant::now();
    let mut workers = Vec::new();
    for worker in 0..options.clients {
        let (options, budget, references, notes) = (options.clone(), budget.clone(), references.clone(), notes.clone());
        workers.push(tokio::spawn(async move {
            let mine = references
                .get(worker % references.len().max(1))
                .cloned()
                .unwrap_or_default();
            client_loop(&options, worker, &budget, deadline, &mine, &notes).await
        }));
    }
    let mut report = LoadReport::default();
    for worker in workers {
        let per_op = worker.await.map_err(|e| e.to_string())??;
        for (op, samples) in per_op {
            report.per_op.entry(op).or_default().merge(samples);
        }
    }
    report.elapsed = started.elapsed();
    Ok(report)
}

struct Session {
    http: HttpClient<HttpConnector, Full<Bytes>>,
    url: String,
    key: Option<String>,
    session: Option<String>,
    body_bytes: Option<String>,
    stateless: bool,
}

impl Session {
    async fn open(options: &LoadOptions, worker: usize) -> Result<Session, String> {
        let http = HttpClient::builder(TokioExecutor::new())
            .pool_max_idle_per_host(1)
            .build_http();
        let key = (!options.keys.is_empty()).then(|| options.keys[worker % options.keys.len()].clone());
        let mut session = Session {
            http,
            url: options.url.clone(),
            key,
            session: None,
            body_bytes: options.body_bytes.map(|n| n.to_string()),
            stateless: options.stateless,
        };
        if session.key.is_some() && !session.stateless {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "journal-bench", "version": "1"}}});
            let (status, headers, _) = session.post(&init).await?;
            if status == 429 {
                return Err(
                    "initialize answered 429: a key holds at most 16 sessions; give more keys (--key, repeated)".into(),
                );
            }
            if status != 200 {
                return Err(format!("initialize answered {status}: is the key right?"));
            }
            session.session = headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            session
                .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await?;
        }
        Ok(session)
    }

    async fn post(&self, body: &Value) -> Result<(u16, hyper::HeaderMap, Bytes), String> {
        let mut request = hyper::Request::post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        let stateless_body;
        let body = if self.stateless {
            let (headers, with_meta) = stateless(body);
            for (name, value) in headers {
                request = request.header(name, value);
            }
            stateless_body = with_meta;
            &stateless_body
        } else {
            body
        };
        if let Some(key) = &self.key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        if let Some(size) = &self.body_bytes {
            request = request.header(super::baseline::SIZE_HEADER, size);
        }
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| e.to_string())?;
        let response = self.http.request(request).await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok((status, headers, bytes))
    }

    async fn end(&self) {
        if self.session.is_none() {
            return;
        }
        let mut request = hyper::Request::delete(&self.url);
        if let Some(key) = &self.key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        if let Ok(request) = request.body(Full::new(Bytes::new())) {
            let _ = self.http.request(request).await;
        }
    }
}

/// A request as 2026-07-28 sends it: the standard headers, and its version and (no) capabilities in
/// `_meta`.
fn stateless(body: &Value) -> (Vec<(&'static str, String)>, Value) {
    let mut body = body.clone();
    let method = body["method"].as_str().unwrap_or_default().to_string();
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28".to_string()),
        ("mcp-method", method.clone()),
    ];
    if body.get("id").is_some() {
        if !body["params"].is_object() {
            body["params"] = json!({});
        }
        body["params"]["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        if method == "tools/call"
            && let Some(name) = body["params"]["name"].as_str()
        {
            headers.push(("mcp-name", name.to_string()));
        }
    }
    (headers, body)
}

/// Paths of notes to read, from one listing of the newest thousand.
async fn note_paths(options: &LoadOptions) -> Result<Vec<String>, String> {
    let session = Session::open(options, 0).await?;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "notes_list", "arguments": {"limit": 1000}}});
    let (_, _, body) = session.post(&call).await?;
    session.end().await;
    let value: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
    let paths: Vec<String> = value["result"]["structuredContent"]["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["path"].as_str().map(str::to_string))
        .collect();
    if paths.is_empty() {
        return Err("notes_list found no notes to read: does the key's grant include notes?".into());
    }
    Ok(paths)
}

/// One of `items`, drawn from the client's stream.
fn pick(rng: &mut u64, items: &[&'static str]) -> &'static str {
    items[(next(rng) % items.len() as u64) as usize]
}

/// Notes' tags and statuses the note requests draw from (those of `journal demo --notes`).
const NOTE_TAGS: [&str; 6] = ["project", "idea", "meeting", "reading", "travel", "garden"];
const STATUSES: [&str; 4] = ["todo", "active", "done", "someday"];

/// References to fetch, from a few searches.
async fn references(options: &LoadOptions, key_index: usize) -> Result<Vec<String>, String> {
    // Session::open picks the key by `worker % keys`, so the key index doubles as a worker number.
    let session = Session::open(options, key_index).await?;
    let mut found = Vec::new();
    for query in QUERIES {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": query, "limit": 20}}});
        let (_, _, body) = session.post(&call).await?;
        let value: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
        for hit in value["result"]["structuredContent"]["results"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(reference) = hit["reference"].as_str() {
                found.push(reference.to_string());
            }
        }
    }
    session.end().await;
    if found.is_empty() {
        return Err("no search found anything to fetch: does the key's grant cover the journal's content?".into());
    }
    Ok(found)
}

async fn client_loop(
    options: &LoadOptions,
    worker: usize,
    budget: &AtomicU64,
    deadline: Instant,
    references: &[String],
    notes: &[String],
) -> Result<BTreeMap<Op, Samples>, String> {
    let session = Session::open(options, worker).await?;
    let mut rng = options.seed ^ (worker as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let total_weight: u32 = options.mix.iter().map(|(_, w)| *w).sum::<u32>().max(1);
    let mut per_op: BTreeMap<Op, Samples> = BTreeMap::new();
    let mut n: u64 = 0;
    while Instant::now() < deadline
        && budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| b.checked_sub(1))
            .is_ok()
    {
        n += 1;
        let mut pick = (next(&mut rng) % u64::from(total_weight)) as u32;
        let op = options
            .mix
            .iter()
            .find(|(_, w)| {
                if pick < *w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .map_or(Op::Ping, |(op, _)| *op);
        let inputs = Inputs {
            references,
            notes,
            queries: &options.queries,
            search_tool: &options.search_tool,
            search_arguments: &options.search_arguments,
        };
        let body = request(op, n, worker, &mut rng, &inputs);
        let started = Instant::now();
        let outcome = session.post(&body).await;
        let micros = started.elapsed().as_micros();
        let samples = per_op.entry(op).or_default();
        match outcome {
            Ok((200, _, bytes)) if !is_error(json_payload(&bytes)) => samples.record(micros, bytes.len()),
            Ok(_) | Err(_) => samples.errors += 1,
        }
    }
    session.end().await;
    Ok(per_op)
}

/// The JSON-RPC message of a reply: the body itself, or the last `data:` line of a server-sent event
/// stream (servers that answer every POST as a stream, such as the Python SDK's by default).
fn json_payload(bytes: &[u8]) -> &[u8] {
    let trimmed = bytes.trim_ascii_start();
    if trimmed.starts_with(b"{") {
        return bytes;
    }
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| line.strip_prefix(b"data:"))
        .map(<[u8]>::trim_ascii)
        .rfind(|data| !data.is_empty())
        .unwrap_or(bytes)
}

/// True when a reply is not valid JSON, is a JSON-RPC error or an `isError` tool result. The check
/// reads the reply without building it as a tree (`IgnoredAny`), so a large reply of many small
/// objects costs the load generator no more than the baseline's reply of one long string does: the
/// comparison measures the servers, not the client's allocations.
fn is_error(bytes: &[u8]) -> bool {
    use serde::de::IgnoredAny;
    #[derive(serde::Deserialize)]
    struct Reply {
        error: Option<IgnoredAny>,
        result: Option<ReplyResult>,
    }
    #[derive(serde::Deserialize)]
    struct ReplyResult {
        #[serde(rename = "isError")]
        is_error: Option<bool>,
    }
    serde_json::from_slice::<Reply>(bytes).map_or(true, |reply| {
        reply.error.is_some() || reply.result.is_some_and(|r| r.is_error == Some(true))
    })
}

struct Inputs<'a> {
    references: &'a [String],
    notes: &'a [String],
    queries: &'a [String],
    search_tool: &'a str,
    search_arguments: &'a serde_json::Map<String, Value>,
}

fn request(op: Op, n: u64, worker: usize, rng: &mut u64, inputs: &Inputs) -> Value {
    let Inputs {
        references,
        notes,
        queries,
        search_tool,
        search_arguments,
    } = *inputs;
    let id = n;
    let call = |name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    match op {
        Op::Ping | Op::Plain => json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
        Op::ToolsList => json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}),
        Op::Search => {
            let draw = next(rng);
            let query = match queries.len() {
                0 => QUERIES[(draw % QUERIES.len() as u64) as usize],
                n => queries[(draw % n as u64) as usize].as_str(),
            };
            let mut arguments = search_arguments.clone();
            arguments.insert("query".into(), json!(query));
            call(search_tool, Value::Object(arguments))
        }
        Op::Fetch => {
            let reference = &references[(next(rng) % references.len().max(1) as u64) as usize];
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "fetch", "arguments": {"reference": reference}}})
        }
        Op::SaveMemory => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "save_memory",
            "arguments": {"content": format!("benchmark note {n} from client {worker}"), "operation_id": format!("bench-{worker}-{n}-{}", next(rng))}}}),
        Op::NotesList => match n % 2 {
            0 => call("notes_list", json!({"limit": 50})),
            _ => call("notes_list", json!({"limit": 50, "tag": pick(rng, &NOTE_TAGS)})),
        },
        Op::NoteRead => {
            let path = &notes[(next(rng) % notes.len().max(1) as u64) as usize];
            call("note_read", json!({"path": path}))
        }
        Op::BaseQuery => {
            let dsl = format!("where status is \"{}\"\nsort due desc\nlimit 50", pick(rng, &STATUSES));
            call("base_query", json!({"dsl": dsl}))
        }
        Op::SearchNotes => {
            let query = match n % 3 {
                0 => format!(
                    "{} tag:{}",
                    pick(rng, &["report", "garden", "meeting", "budget"]),
                    pick(rng, &NOTE_TAGS)
                ),
                1 => format!(
                    "{} [status:is \"{}\"]",
                    pick(rng, &["schedule", "coffee", "kitchen", "deadline"]),
                    pick(rng, &STATUSES)
                ),
                _ => {
                    let folder = next(rng) % 10;
                    format!(
                        "path:Generated/00{folder}/ {}",
                        pick(rng, &["weekend", "timeline", "report"])
                    )
                }
            };
            call("search", json!({"query": query}))
        }
    }
}

/// splitmix64: a repeatable stream per client.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stateless_request_carries_its_version_and_the_standard_headers() {
        let call =
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search", "arguments": {}}});
        let (headers, body) = stateless(&call);
        assert_eq!(
            headers,
            [
                ("mcp-protocol-version", "2026-07-28".to_string()),
                ("mcp-method", "tools/call".to_string()),
                ("mcp-name", "search".to_string())
            ]
        );
        assert_eq!(
            body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(body["params"]["name"], "search");
        let (headers, body) = stateless(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}));
        assert_eq!(headers.len(), 2);
        assert!(body["params"]["_meta"].is_object());
    }

    #[test]
    fn errors_are_told_from_answers() {
        assert!(!is_error(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(!is_error(
            br#"{"jsonrpc":"2.0","id":1,"result":{"isError":false,"content":[{"a":[1,{"b":null}]}]}}"#
        ));
        assert!(!is_error(br#"{"jsonrpc":"2.0","id":1,"result":{"pad":"xxxx"}}"#));
        assert!(is_error(br#"{"jsonrpc":"2.0","id":1,"result":{"isError":true}}"#));
        assert!(is_error(
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no"}}"#
        ));
        assert!(is_error(b"not json"));
        assert!(is_error(br#"{"jsonrpc":"2.0","id":1,"result":{"isError":"yes"}}"#));
    }

    #[test]
    fn a_streamed_reply_is_read_from_its_last_data_line() {
        let plain = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert_eq!(json_payload(plain), plain);
        let streamed = b"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"isError\":true}}\r\n\r\n";
        assert_eq!(
            json_payload(streamed),
            br#"{"jsonrpc":"2.0","id":1,"result":{"isError":true}}"#
        );
        assert!(is_error(json_payload(streamed)));
        assert!(is_error(json_payload(b"event: message\n\n")));
    }

    #[test]
    fn searches_draw_from_the_query_file_when_one_is_given() {
        let queries = vec!["alpha beta".to_string(), "\"a phrase\"".to_string()];
        let inputs = Inputs {
            references: &[],
            notes: &[],
            queries: &queries,
            search_tool: "find",
            search_arguments: &serde_json::Map::from_iter([("mode".to_string(), json!("lexical"))]),
        };
        let mut rng = 7;
        let mut seen = std::collections::BTreeSet::new();
        for n in 0..50 {
            let body = request(Op::Search, n, 0, &mut rng, &inputs);
            assert_eq!(body["params"]["name"], "find");
            assert_eq!(body["params"]["arguments"]["mode"], "lexical");
            seen.insert(body["params"]["arguments"]["query"].as_str().unwrap().to_string());
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["\"a phrase\"", "alpha beta"]);
    }
}
