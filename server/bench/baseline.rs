//! The baseline: a minimal axum handler on loopback that answers every POST with a fixed JSON body of
//! a given size. Nothing a real MCP server does can be faster on this machine, so its figures are the
//! ceiling the journal's are compared with.

use std::net::SocketAddr;

use axum::Router;
use axum::http::header;
use axum::routing::post;
use tokio::net::TcpListener;

/// Starts the baseline server; answers its address. It runs until the runtime ends.
pub async fn start(body_bytes: usize) -> std::io::Result<SocketAddr> {
    let body = fixed_body(body_bytes);
    let router = Router::new().route(
        "/mcp",
        post(move || {
            let body = body.clone();
            async move { ([(header::CONTENT_TYPE, "application/json")], body) }
        }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await?;
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
