//! MCP JSON-RPC over stdio: the input bytes as stdin of `skillrag_server::mcp::stdio::GuardedStdio`,
//! read to the end through rmcp's `Transport::receive` (which classifies every line and writes
//! the `-32700`/`-32600` answers), the answers drained into a sink. Nothing sits behind the
//! transport, so this fuzzes the line reader and classifier, not the tools.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use skillrag_server::mcp::stdio::GuardedStdio;
use std::sync::OnceLock;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_current_thread().build().expect("a tokio runtime"))
}

fuzz_target!(|data: &[u8]| {
    runtime().block_on(async {
        let (mut transport, writer) = GuardedStdio::new(tokio::io::BufReader::new(data), tokio::io::sink());
        while Transport::<RoleServer>::receive(&mut transport).await.is_some() {}
        drop(transport);
        let _ = writer.await;
    });
});
