//! The official Rust MCP SDK's client (rmcp, pinned) against the journal at 2026-07-28, over HTTP and
//! over stdio (`journal mcp stdio` as a child process): it asks `server/discover` and then sends each
//! request on its own. The connection's grant decides what it sees; expected values come from files.

use rmcp::model::{CallToolRequestParams, ProtocolVersion, ReadResourceRequestParams};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, service::RunningService};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::harness::TestServer;
use journal::mcp::resources::uri_of;

fn pinned() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// What every 2026-07-28 connection shows, whichever transport carries it.
async fn exercise(client: &RunningService<RoleClient, ()>, server: &TestServer) {
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"note_read") && !names.contains(&"list_entities"),
        "{names:?}"
    );
    let arguments = json!({"path": "Inbox.md"}).as_object().unwrap().clone();
    let read = client
        .call_tool(CallToolRequestParams::new("note_read").with_arguments(arguments))
        .await
        .unwrap();
    assert_ne!(read.is_error, Some(true));
    let inbox = std::fs::read(server.root().join("notes/Inbox.md")).unwrap();
    let structured = read.structured_content.clone().unwrap();
    assert_eq!(structured["hash"], format!("{:x}", Sha256::digest(&inbox)));
    let resource = client
        .read_resource(ReadResourceRequestParams::new(uri_of("Inbox.md")))
        .await
        .unwrap();
    assert_eq!(resource.contents.len(), 1);
    let prompts = client.list_prompts(None).await.unwrap();
    assert!(prompts.prompts.iter().any(|p| p.name == "weekly-review"));
    let hidden = json!({"path": journal::journal::demo_notes::PRIVATE_NOTE})
        .as_object()
        .unwrap()
        .clone();
    let refused = client
        .call_tool(CallToolRequestParams::new("note_read").with_arguments(hidden))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true), "private = missing");
}

#[tokio::test]
async fn the_rust_sdk_pinned_to_2026_07_28_over_http() {
    let server = TestServer::start().await;
    let key = server.key("rust", &["notes", "transcripts"], None).await;
    let config = StreamableHttpClientTransportConfig::with_uri(server.url()).auth_header(key);
    let transport = StreamableHttpClientTransport::from_config(config);
    let client = ().serve_with_lifecycle(transport, pinned()).await.unwrap();
    exercise(&client, &server).await;
    client.cancel().await.unwrap();
    let log = journal::auth::audit::recent(&server.journal.db, 10, None)
        .await
        .unwrap();
    assert!(
        log.iter()
            .any(|r| r.connection_label == "rust" && r.tool == "note_read")
    );
}

#[tokio::test]
async fn the_rust_sdk_pinned_to_2026_07_28_over_stdio() {
    let server = TestServer::start().await;
    server.key("rust-local", &["notes"], None).await;
    let root = server.root().to_path_buf();
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_journal")).configure(|c| {
        c.arg("--journal")
            .arg(&root)
            .args(["mcp", "stdio", "--agent", "rust-local"])
            .stderr(std::process::Stdio::null());
    });
    let child = TokioChildProcess::new(command).unwrap();
    let client = ().serve_with_lifecycle(child, pinned()).await.unwrap();
    exercise(&client, &server).await;
    client.cancel().await.unwrap();
}
