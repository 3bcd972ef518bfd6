//! The MCP server: the tools `list_skills`, `search_knowledge_base`, `ask` and `list_sources`,
//! served over stdio (`skillrag mcp`) and streamable HTTP (`/mcp` under `skillrag serve`).
//! Each tool returns readable text for the model and the same data as `structuredContent`.

use crate::error::ApiError;
use crate::paths;
use crate::service::Service;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};
use skillrag_ask::AskOptions;
use skillrag_store::hybrid::Mode;
use std::sync::Arc;

pub mod stdio;

#[derive(Clone)]
pub struct SkillragMcp {
    service: Arc<Service>,
}

impl SkillragMcp {
    pub fn new(service: Arc<Service>) -> SkillragMcp {
        SkillragMcp { service }
    }
}

fn schema(properties: Value, required: &[&str]) -> Arc<Map<String, Value>> {
    let v = json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false});
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(Map::new()),
    }
}

fn tools() -> Vec<Tool> {
    let skill = json!({"type": "string", "description": "A skill id from list_skills"});
    vec![
        Tool::new(
            "list_skills",
            "List the knowledge skills: what each answers, its triggers, and its index state.",
            schema(json!({}), &[]),
        ),
        Tool::new(
            "search_knowledge_base",
            "Retrieve passages from the skills' knowledge bases (hybrid BM25 + vector search), with source, \
             heading and scores. Use it to find evidence; cite the source.",
            schema(
                json!({
                    "query": {"type": "string", "description": "The question or keywords"},
                    "skill": skill,
                    "k": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Number of passages (default 5)"},
                }),
                &["query"],
            ),
        ),
        Tool::new(
            "ask",
            "Answer a question from the knowledge bases: routed to the right skill, answered only from retrieved \
             text with [n] citations, or refused with a reason (out_of_scope, not_found, ambiguous, boundary).",
            schema(json!({"query": {"type": "string"}, "skill": skill}), &["query"]),
        ),
        Tool::new(
            "list_sources",
            "List the indexed documents of one skill with their chunk counts.",
            schema(json!({"skill": skill}), &["skill"]),
        ),
    ]
}

fn text_arg(args: &Map<String, Value>, name: &str) -> Option<String> {
    args.get(name).and_then(Value::as_str).map(str::to_string)
}

fn ok(text: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

impl SkillragMcp {
    async fn call(&self, name: &str, args: Map<String, Value>) -> Result<CallToolResult, ApiError> {
        let skill = text_arg(&args, "skill");
        if let Some(s) = &skill {
            paths::skill_id(s)?;
        }
        match name {
            "list_skills" => {
                let skills = self.service.skills().await?;
                let text = skills
                    .iter()
                    .map(|s| {
                        let state = serde_json::to_value(&s.index)
                            .ok()
                            .and_then(|v| v.get("state").and_then(Value::as_str).map(String::from))
                            .unwrap_or_default();
                        format!("{} — {} ({} documents, {} chunks, {state})", s.skill, s.description, s.files, s.chunks)
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                Ok(ok(text, json!({"skills": skills})))
            }
            "search_knowledge_base" => {
                let query = text_arg(&args, "query").ok_or_else(|| ApiError::bad_request("`query` is required"))?;
                let k = args.get("k").and_then(Value::as_u64).map_or(5, |k| k.clamp(1, 50) as usize);
                let result = self.service.search(query, skill.into_iter().collect(), Some(k), Mode::Hybrid).await?;
                let text = if result.hits.is_empty() {
                    "No passages found.".to_string()
                } else {
                    result
                        .hits
                        .iter()
                        .enumerate()
                        .map(|(i, h)| {
                            format!(
                                "[{}] {}/{} › {} (score {:.4})\n{}",
                                i + 1,
                                h.skill,
                                h.location(),
                                h.heading,
                                h.scores.fused,
                                h.text
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n\n")
                };
                Ok(ok(text, serde_json::to_value(&result).unwrap_or(Value::Null)))
            }
            "ask" => {
                let query = text_arg(&args, "query").ok_or_else(|| ApiError::bad_request("`query` is required"))?;
                let (answer, _) = self.service.ask(query, AskOptions { skill, id: None }, Vec::new()).await?;
                Ok(ok(crate::openai::content_of(&answer), serde_json::to_value(&*answer).unwrap_or(Value::Null)))
            }
            "list_sources" => {
                let skill = skill.ok_or_else(|| ApiError::bad_request("`skill` is required"))?;
                let sources = self.service.sources(skill.clone()).await?;
                let text = sources
                    .iter()
                    .map(|s| format!("{} — {} ({} chunks)", s.source, s.title, s.chunks))
                    .collect::<Vec<_>>()
                    .join("\n");
                Ok(ok(text, json!({"skill": skill, "sources": sources})))
            }
            other => Err(ApiError::not_found(format!("unknown tool `{other}`"))),
        }
    }
}

impl ServerHandler for SkillragMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("skillrag", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Knowledge bases organised as skills. Call `ask` for a cited answer, or `search_knowledge_base` \
                 for raw passages; `list_skills` says what each skill covers.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        // Failures the caller should read (unknown skill, empty query) are tool errors, not
        // protocol errors, so the client shows the message.
        let result = match self.call(&request.name, args).await {
            Ok(r) => r,
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.message)]),
        };
        Ok(result.into())
    }
}

/// Serves MCP over stdin/stdout until the client disconnects.
pub async fn serve_stdio(service: Arc<Service>) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt;
    let (transport, writer) =
        stdio::GuardedStdio::new(tokio::io::BufReader::new(tokio::io::stdin()), tokio::io::stdout());
    let running = SkillragMcp::new(service).serve(transport).await.map_err(|e| std::io::Error::other(e.to_string()))?;
    running.waiting().await.map_err(|e| std::io::Error::other(e.to_string()))?;
    // The transport is gone with the service; let the writer put out the last answers.
    let _ = writer.await;
    Ok(())
}
