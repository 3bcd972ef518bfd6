//! The MCP server: the tools `list_skills`, `get_skill`, `compile_context`,
//! `search_knowledge_base`, `ask` and `list_sources`, served over stdio (`skillrag mcp`) and
//! streamable HTTP (`/mcp` under `skillrag serve`). Each tool is read-only, validates its
//! arguments against its declared schema, and returns readable text for the model and the same
//! data as `structuredContent`, described by its `outputSchema`. Skills are also resources and
//! prompts (`catalog`).

use crate::error::ApiError;
use crate::paths;
use crate::service::{SearchQuery, Service};
use rmcp::handler::server::common::schema_for_input;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::schemars::JsonSchema;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use skillrag_ask::{AskOptions, ContextOptions};
use skillrag_core::{Hit, Mode};
use skillrag_engine::{Freshness, SkillCard};
use std::sync::{Arc, LazyLock};

mod catalog;
mod http;
mod jsonrpc;
pub mod stdio;

pub use http::{http_service, MAX_SESSIONS};

#[derive(Clone)]
pub struct SkillragMcp {
    service: Arc<Service>,
}

impl SkillragMcp {
    pub fn new(service: Arc<Service>) -> SkillragMcp {
        SkillragMcp { service }
    }
}

// The tools' arguments. Their input schemas are generated from these types (schemars, as
// rmcp's own tool macros do), and the arguments a client sends are read through the same types,
// so what is declared is what is enforced.

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct NoArguments {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct SearchArguments {
    /// The question or keywords.
    query: String,
    /// Search only this skill (an id from list_skills); default every skill.
    skill: Option<String>,
    /// Number of passages (default 5).
    #[schemars(range(min = 1, max = 50))]
    k: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct AskArguments {
    /// The question.
    query: String,
    /// Answer from this skill only (an id from list_skills); default: routed.
    skill: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct SkillArguments {
    /// A skill id from list_skills.
    skill: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct ContextArguments {
    /// The task the agent is about to perform, in the user's words.
    task: String,
    /// Compile this skill's context (an id from list_skills); default: routed like `ask`.
    skill: Option<String>,
    /// The context budget in the server's unit (the local LLM's tokens, else characters);
    /// default the configured one.
    #[schemars(range(min = 1, max = 1_000_000))]
    budget: Option<u64>,
}

fn object(v: Value) -> Arc<Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(Map::new()),
    }
}

/// The input schema of an argument type (always an object: these are structs).
fn input<T: JsonSchema + 'static>() -> Arc<Map<String, Value>> {
    schema_for_input::<T>().unwrap_or_else(|_| object(json!({"type": "object"})))
}

/// A read-only tool of this server: it never changes the project, and calling it twice gives
/// the same result on the same index.
fn tool(
    name: &'static str,
    title: &str,
    description: &'static str,
    input: Arc<Map<String, Value>>,
    output: Value,
) -> Tool {
    let mut tool = Tool::new(name, description, input);
    tool.annotations =
        Some(ToolAnnotations::with_title(title).read_only(true).destructive(false).idempotent(true).open_world(false));
    tool.output_schema = Some(object(output));
    tool
}

/// The tools, built once: their schemas are generated and read on every call.
static TOOLS: LazyLock<Vec<Tool>> = LazyLock::new(tools);

/// The help of `skillrag mcp`: the tools as `tools/list` gives them, and a client config that
/// passes on the embedding model the index was built with (docs/agents.md).
pub fn stdio_help() -> String {
    let width = TOOLS.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let tools: Vec<String> = TOOLS
        .iter()
        .map(|t| {
            let title = t.annotations.as_ref().and_then(|a| a.title.as_deref()).unwrap_or_default();
            format!("  {:width$}  {title}", t.name)
        })
        .collect();
    format!(
        "Tools ({}, all read-only):\n{}\n\nSkills are also resources (skill://SKILL-ID/SKILL.md) and prompts (one per skill).\n\n\
         Config for Claude Code, Cursor or Claude Desktop (absolute paths):\n  \
         {{\"mcpServers\": {{\"skillrag\": {{\"command\": \"skillrag\", \"args\": [\"-C\", \"/path/to/project\", \"mcp\"],\n    \
         \"env\": {{\"SKILLRAG_EMBED_MODEL\": \"/path/to/model\"}}}}}}}}\n\
         SKILLRAG_EMBED_MODEL: the embedding model the index was built with. More: docs/agents.md.",
        TOOLS.len(),
        tools.join("\n")
    )
}

/// The output schemas describe the top level of each tool's `structuredContent` (the same JSON
/// as the HTTP API's; docs/http-api.md has every field).
fn tools() -> Vec<Tool> {
    let array = json!({"type": "array"});
    let text = json!({"type": "string"});
    let nullable = |t: &str| json!({"type": [t, "null"]});
    vec![
        tool(
            "list_skills",
            "List skills",
            "List the knowledge skills: what each answers, its triggers, and its index state.",
            input::<NoArguments>(),
            json!({"type": "object", "properties": {"skills": {"type": "array", "items": {"type": "object",
                "properties": {"skill": text, "description": text, "files": {"type": "integer"},
                    "chunks": {"type": "integer"}},
                "required": ["skill", "description", "files", "chunks"]}}}, "required": ["skills"]}),
        ),
        tool(
            "get_skill",
            "Get a skill",
            "What one skill says about itself before you use it: description, triggers, instructions (rules to \
             follow), boundary (what it must not answer), examples, and a summary of its knowledge (documents per \
             tier, chunks, whether the index is fresh).",
            input::<SkillArguments>(),
            json!({"type": "object", "properties": {"skill": text, "name": text, "description": text,
                "triggers": array, "instructions": text, "boundary": {"type": "object"}, "examples": array,
                "uses": array, "knowledge": {"type": "object"}},
                "required": ["skill", "name", "description", "triggers", "examples", "knowledge"]}),
        ),
        tool(
            "compile_context",
            "Compile a skill's context for a task",
            "Before you perform a task, get what the right skill says about it: the task is routed like `ask` \
             (or goes to the given skill), and you get the skill's instructions and boundary and its knowledge \
             in tier order — rules (must follow), then examples, then references — under a budget, each piece \
             labelled [n] with its source, plus what was left out. Cite the [n] sources in your work. A task \
             no skill covers is refused with a reason, exactly as `ask` refuses it.",
            input::<ContextArguments>(),
            json!({"type": "object", "properties": {"task": text, "route": {"type": "object"},
                "refusal": {"type": "object"}, "skills": array, "context": {"type": "object",
                    "properties": {"pieces": array, "dropped": array, "budget": {"type": "integer"},
                        "used": {"type": "integer"}, "unit": text},
                    "required": ["pieces", "dropped", "budget", "used", "unit"]},
                "warnings": array, "timings_ms": {"type": "object"}},
                "required": ["task", "route", "skills", "context"]}),
        ),
        tool(
            "search_knowledge_base",
            "Search the knowledge",
            "Retrieve passages from the skills' knowledge bases (hybrid BM25 + vector search), best first, with \
             source, heading and which retrieval lists found them. Use it to find evidence; cite the source.",
            input::<SearchArguments>(),
            json!({"type": "object", "properties": {"query": text, "terms": array, "hits": {"type": "array",
                "items": {"type": "object", "properties": {"skill": text, "source": text, "heading": text,
                    "text": text}, "required": ["skill", "source", "text"]}},
                "query_visibility": nullable("number"), "skills": array, "timings_ms": {"type": "object"}},
                "required": ["query", "hits"]}),
        ),
        tool(
            "ask",
            "Ask",
            "Answer a question from the knowledge bases: routed to the right skill, answered only from retrieved \
             text with [n] citations, or refused with a reason (out_of_scope, not_found, ambiguous, boundary).",
            input::<AskArguments>(),
            json!({"type": "object", "properties": {"query": text, "answer": text, "route": {"type": "object"},
                "citations": array, "refusal": {"type": ["object", "null"]}, "hits": array},
                "required": ["query", "answer", "route", "citations"]}),
        ),
        tool(
            "list_sources",
            "List a skill's documents",
            "List the indexed documents of one skill with their chunk counts.",
            input::<SkillArguments>(),
            json!({"type": "object", "properties": {"skill": text, "sources": {"type": "array", "items":
                {"type": "object", "properties": {"source": text, "title": text, "chunks": {"type": "integer"}},
                    "required": ["source", "chunks"]}}}, "required": ["skill", "sources"]}),
        ),
    ]
}

/// The arguments of a call, read as the tool's input schema says. serde checks the types, the
/// required arguments and unknown ones, and `serde_path_to_error` names the argument at fault;
/// the numeric bounds are read from the same schema. (A general JSON Schema validator would be a
/// large dependency for the one keyword these schemas add to their types.)
fn arguments<T: DeserializeOwned>(tool: &Tool, mut args: Map<String, Value>) -> Result<T, ApiError> {
    let properties = tool.input_schema.get("properties").and_then(Value::as_object);
    for (name, value) in &mut args {
        if let Some(read) = properties.and_then(|p| p.get(name)).and_then(|declared| from_string(declared, value)) {
            *value = read;
        }
    }
    for (name, value) in &args {
        let (Some(n), Some(declared)) = (value.as_f64(), properties.and_then(|p| p.get(name))) else { continue };
        if let Some(min) = declared.get("minimum").and_then(Value::as_f64).filter(|min| n < *min) {
            return Err(ApiError::bad_request(format!("`{name}` must be at least {min}, not {value}")));
        }
        if let Some(max) = declared.get("maximum").and_then(Value::as_f64).filter(|max| n > *max) {
            return Err(ApiError::bad_request(format!("`{name}` must be at most {max}, not {value}")));
        }
    }
    serde_path_to_error::deserialize(Value::Object(args)).map_err(|e| {
        let at = e.path().to_string();
        match at.as_str() {
            "." => ApiError::bad_request(format!("invalid arguments: {}", e.into_inner())),
            _ => ApiError::bad_request(format!("`{at}`: {}", e.into_inner())),
        }
    })
}

/// A string argument read as the number or boolean its schema declares, as clients that fill
/// arguments from text send them (the MCP Inspector CLI sends `"k": "2"`). Only a string that
/// parses whole as the declared type is read; anything else is left for serde to refuse.
fn from_string(declared: &Value, value: &Value) -> Option<Value> {
    let text = value.as_str()?;
    let types: Vec<&str> = match declared.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    if types.contains(&"string") {
        return None;
    }
    if types.contains(&"integer") {
        if let Ok(n) = text.parse::<u64>() {
            return Some(Value::from(n));
        }
        if let Ok(n) = text.parse::<i64>() {
            return Some(Value::from(n));
        }
    }
    if types.contains(&"number") {
        if let Some(n) = text.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
            return Some(Value::Number(n));
        }
    }
    if types.contains(&"boolean") {
        if let Ok(b) = text.parse::<bool>() {
            return Some(Value::Bool(b));
        }
    }
    None
}

fn ok(text: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

fn checked_skill(skill: Option<String>) -> Result<Option<String>, ApiError> {
    if let Some(s) = &skill {
        paths::skill_id(s)?;
    }
    Ok(skill)
}

/// Which retrieval lists found a hit and where: what an agent can read, unlike a fused RRF score.
fn found_by(h: &Hit) -> String {
    let mut lists = Vec::new();
    if let Some(r) = h.ranks.bm25 {
        lists.push(format!("keywords #{r}"));
    }
    if let Some(r) = h.ranks.dense {
        lists.push(format!("meaning #{r}"));
    }
    if lists.is_empty() {
        String::new()
    } else {
        format!(" (found by {})", lists.join(", "))
    }
}

impl SkillragMcp {
    async fn call(&self, name: &str, args: Map<String, Value>) -> Result<CallToolResult, ApiError> {
        let Some(tool) = TOOLS.iter().find(|t| t.name == name) else {
            return Err(ApiError::not_found(format!("unknown tool `{name}`")));
        };
        match name {
            "list_skills" => {
                let NoArguments {} = arguments(tool, args)?;
                self.list_skills().await
            }
            "get_skill" => {
                let SkillArguments { skill } = arguments(tool, args)?;
                paths::skill_id(&skill)?;
                let card = self.service.skill_card(skill).await?;
                Ok(ok(card_text(&card), serde_json::to_value(&card).unwrap_or(Value::Null)))
            }
            "compile_context" => {
                let ContextArguments { task, skill, budget } = arguments(tool, args)?;
                let budget = budget.map(|b| usize::try_from(b).unwrap_or(usize::MAX));
                let options = ContextOptions { skill: checked_skill(skill)?, budget };
                let context = self.service.context(task, options).await?;
                Ok(ok(context.render(), serde_json::to_value(&context).unwrap_or(Value::Null)))
            }
            "search_knowledge_base" => {
                let SearchArguments { query, skill, k } = arguments(tool, args)?;
                self.search_knowledge_base(query, skill, k).await
            }
            "ask" => {
                let AskArguments { query, skill } = arguments(tool, args)?;
                let options = AskOptions { skill: checked_skill(skill)?, id: None, ..Default::default() };
                let (answer, _) = self.service.ask(query, options, Vec::new()).await?;
                Ok(ok(crate::openai::content_of(&answer), serde_json::to_value(&*answer).unwrap_or(Value::Null)))
            }
            "list_sources" => {
                let SkillArguments { skill } = arguments(tool, args)?;
                paths::skill_id(&skill)?;
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

    async fn list_skills(&self) -> Result<CallToolResult, ApiError> {
        // An agent is shown the skills it can ask; a disabled one is the owner's business.
        let mut skills = self.service.skills().await?;
        skills.retain(|s| s.enabled);
        let text = skills
            .iter()
            .map(|s| {
                let state = state_of(&s.index);
                format!("{} — {} ({} documents, {} chunks, {state})", s.skill, s.description, s.files, s.chunks)
            })
            .collect::<Vec<_>>()
            .join("\n");
        Ok(ok(text, json!({"skills": skills})))
    }

    async fn search_knowledge_base(
        &self,
        query: String,
        skill: Option<String>,
        k: Option<u64>,
    ) -> Result<CallToolResult, ApiError> {
        let k = k.map_or(5, |k| k.clamp(1, 50) as usize);
        let skills = checked_skill(skill)?.into_iter().collect();
        let q = SearchQuery {
            query,
            skills,
            k: Some(k),
            mode: Mode::Hybrid,
            filter: skillrag_core::Filter::none(),
            weights: None,
        };
        let (result, _) = self.service.search(q, None).await?;
        let text = if result.hits.is_empty() {
            "No passages found.".to_string()
        } else {
            result
                .hits
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    format!(
                        "[{}] {} › {}{}\n{}",
                        i + 1,
                        skillrag_core::cited_path(&h.skill, &h.location()),
                        h.heading,
                        found_by(h),
                        h.text
                    )
                })
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        Ok(ok(text, serde_json::to_value(&result).unwrap_or(Value::Null)))
    }
}

/// An index's freshness as its JSON names it (`fresh`, `stale`, `not_indexed`, `damaged`).
fn state_of(freshness: &Freshness) -> String {
    serde_json::to_value(freshness)
        .ok()
        .and_then(|v| v.get("state").and_then(Value::as_str).map(String::from))
        .unwrap_or_default()
}

/// A skill card as an agent reads it: what to follow and where the skill stops first.
fn card_text(card: &SkillCard) -> String {
    let mut out = vec![format!("# {} ({})\n{}", card.name, card.skill, card.description)];
    if !card.triggers.is_empty() {
        out.push(format!("Triggers: {}", card.triggers.join(", ")));
    }
    if let Some(instructions) = &card.instructions {
        out.push(format!("## Instructions\n{}", instructions.trim()));
    }
    if let Some(boundary) = &card.boundary {
        out.push(format!("## Boundary\n{}", boundary.text.trim()));
    }
    if !card.examples.is_empty() {
        let examples: Vec<String> = card.examples.iter().map(|e| format!("- {e}")).collect();
        out.push(format!("## Examples\n{}", examples.join("\n")));
    }
    if !card.uses.is_empty() {
        out.push(format!("Uses the knowledge of: {}", card.uses.join(", ")));
    }
    let k = &card.knowledge;
    let tiers: Vec<String> = k.tiers.iter().map(|(tier, n)| format!("{n} {tier}")).collect();
    let state = state_of(&k.index);
    out.push(format!(
        "## Knowledge\n{} documents ({}), {} chunks, index {state}",
        k.documents,
        if tiers.is_empty() { "none indexed".to_string() } else { tiers.join(", ") },
        k.chunks
    ));
    out.join("\n\n")
}

impl ServerHandler for SkillragMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().enable_prompts().build())
            .with_server_info(Implementation::new("skillrag", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Knowledge bases organised as skills. Call `ask` for a cited answer; before you perform a task \
                 yourself, call `compile_context` for the right skill's rules, examples and references; \
                 `search_knowledge_base` gives raw passages; `list_skills` and `get_skill` say what each skill \
                 covers and where it stops.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(TOOLS.clone()))
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

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        catalog::list_resources(&self.service, cursor.as_deref()).await.map_err(catalog::protocol_error)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let result = catalog::read_resource(&self.service, &request.uri).await.map_err(catalog::protocol_error)?;
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        catalog::list_prompts(&self.service).await.map_err(catalog::protocol_error)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let arguments = request.arguments.as_ref();
        let result =
            catalog::get_prompt(&self.service, &request.name, arguments).await.map_err(catalog::protocol_error)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn search_tool() -> &'static Tool {
        TOOLS.iter().find(|t| t.name == "search_knowledge_base").expect("the search tool")
    }

    fn search(args: Value) -> Result<SearchArguments, String> {
        let Value::Object(args) = args else { panic!("not an object") };
        arguments::<SearchArguments>(search_tool(), args).map_err(|e| e.message)
    }

    #[test]
    fn a_number_sent_as_a_string_is_read_as_the_declared_number() {
        assert_eq!(search(json!({"query": "q", "k": "2"})).map(|a| a.k), Ok(Some(2)));
        // The bounds apply to the number read.
        assert_eq!(search(json!({"query": "q", "k": "0"})).map(|a| a.k), Err("`k` must be at least 1, not 0".into()));
        for bad in [json!("two"), json!("2.5"), json!(" 2"), json!(""), json!(true)] {
            let refused = search(json!({"query": "q", "k": bad})).map(|a| a.k);
            assert!(refused.as_ref().is_err_and(|e| e.starts_with("`k`")), "{bad}: {refused:?}");
        }
        // A declared string stays a string.
        assert_eq!(search(json!({"query": "5", "k": 3})).map(|a| a.query), Ok("5".to_string()));
    }

    #[test]
    fn strings_are_read_as_each_declared_type() {
        let int = json!({"type": ["integer", "null"]});
        assert_eq!(from_string(&int, &json!("-3")), Some(json!(-3)));
        assert_eq!(from_string(&json!({"type": "number"}), &json!("2.5")), Some(json!(2.5)));
        assert_eq!(from_string(&json!({"type": "number"}), &json!("NaN")), None);
        assert_eq!(from_string(&json!({"type": "boolean"}), &json!("true")), Some(json!(true)));
        assert_eq!(from_string(&json!({"type": ["string", "integer"]}), &json!("2")), None);
        assert_eq!(from_string(&int, &json!(2)), None);
    }

    #[test]
    fn the_stdio_help_names_every_tool() {
        let help = stdio_help();
        for tool in TOOLS.iter() {
            assert!(help.contains(tool.name.as_ref()), "{help}");
        }
        assert!(help.contains("SKILLRAG_EMBED_MODEL"), "{help}");
    }
}
