//! The baseline: a minimal axum handler on loopback that answers every POST with a fixed JSON body of
//! a given size. Nothing a real MCP server does can be faster on this machine, so its figures are the
//! ceiling the journal's are compared with.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, header};
use axum::routing::post;
use tokio::net::TcpListener;

/// The request header that asks the baseline for a body of that many bytes (see `--baseline-url`).
pub const SIZE_HEADER: &str = "x-bench-body-bytes";

/// Starts the baseline server on `addr` (port 0: any free port); answers its address. It answers
/// `body_bytes` bytes, or the size a request asks for in `SIZE_HEADER`, and runs until the runtime
/// ends.
pub async fn start(addr: SocketAddr, body_bytes: usize) -> std::io::Result<SocketAddr> {
    // The last body made, so that a run of requests of one size allocates nothing per request.
    let made = Arc::new(Mutex::new((body_bytes, Bytes::from(fixed_body(body_bytes)))));
    let router = Router::new().route(
        "/mcp",
        post(move |headers: HeaderMap| {
            let made = Arc::clone(&made);
            async move {
                let wanted = headers
                    .get(SIZE_HEADER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<usize>().ok())
                    .map(|n| n.min(16 << 20));
                let body = {
                    let mut made = made.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    if let Some(wanted) = wanted
                        && wanted != made.0
                    {
                        *made = (wanted, Bytes::from(fixed_body(wanted)));
                    }
                    made.1.clone()
                };
                ([(header::CONTENT_TYPE, "application/json")], body)
            }
        }),
    );
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(addr)
}

/// A JSON-RPC result of about `bytes` bytes.
pub fn fixed_body(bytes: usize) -> String {
    let envelope = r#"{"jsonrpc":"2.0","id":1,"result":{"pad":""}}"#;
    let pad = "x".repeat(bytes.saturating_sub(envelope.len()));
    format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"pad":"{pad}"}}}}"#)
}

#[cfg(test)]
mod tests {
    #[test]
    fn bodies_have_the_asked_size_and_are_json() {
        for size in [0, 10, 200, 5000] {
            let body = super::fixed_body(size);
            assert!(serde_json::from_str::<serde_json::Value>(&body).is_ok());
            assert_eq!(body.len(), size.max(44));
        }
    }
}
