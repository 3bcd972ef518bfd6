//! Skills as MCP resources and prompts. Each skill's `SKILL.md` is the resource
//! `skill://{id}/SKILL.md`, and each indexed document `skill://{id}/{source}` (its text, as
//! indexing reads it). Each skill is also a prompt, named by its id, that takes a `task` and hands
//! back the skill's compiled context for it (the `compile_context` tool's text).

use crate::error::ApiError;
use crate::paths;
use crate::service::Service;
use axum::http::StatusCode;
use rmcp::model::{GetPromptResult, JsonObject};
use rmcp::model::{
    ListPromptsResult, ListResourcesResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource,
    ResourceContents, Role,
};
use rmcp::ErrorData;
use serde_json::Value;
use skillrag_ask::ContextOptions;
use std::sync::Arc;

/// Resources per page of `resources/list` (a large skill has thousands of documents).
const PAGE: usize = 500;

/// The resource URI of a skill's file.
fn uri(skill: &str, path: &str) -> String {
    format!("skill://{skill}/{path}")
}

fn mime(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase()).as_deref() {
        Some("md" | "markdown") => "text/markdown",
        _ => "text/plain",
    }
}

/// An [`ApiError`] as the MCP error a client expects: a missing skill or document is
/// "resource not found", a malformed name or argument "invalid params".
pub(super) fn protocol_error(e: ApiError) -> ErrorData {
    match e.status {
        StatusCode::NOT_FOUND => ErrorData::resource_not_found(e.message, None),
        s if s.is_client_error() => ErrorData::invalid_params(e.message, None),
        _ => ErrorData::internal_error(e.message, None),
    }
}

/// One page of every skill's `SKILL.md` and indexed documents; `cursor` is the offset of the
/// page, as the previous page's `nextCursor` gave it.
pub(super) async fn list_resources(
    service: &Arc<Service>,
    cursor: Option<&str>,
) -> Result<ListResourcesResult, ApiError> {
    let start = match cursor {
        None => 0,
        Some(c) => c.parse::<usize>().map_err(|_| ApiError::bad_request(format!("invalid cursor `{c}`")))?,
    };
    let mut all: Vec<Resource> = Vec::new();
    for (skill, description, sources) in service.catalog().await? {
        all.push(
            Resource::new(uri(&skill, "SKILL.md"), format!("{skill}/SKILL.md"))
                .with_description(description)
                .with_mime_type("text/markdown"),
        );
        for s in sources {
            all.push(
                Resource::new(uri(&skill, &s.source), format!("{skill}/{}", s.source))
                    .with_title(s.title.clone())
                    .with_mime_type(mime(&s.source))
                    .with_size(s.size),
            );
        }
    }
    let (total, end) = (all.len(), all.len().min(start.saturating_add(PAGE)));
    let mut result = ListResourcesResult::with_all_items(all.into_iter().skip(start).take(PAGE).collect());
    result.next_cursor = (end < total).then(|| end.to_string());
    Ok(result)
}

/// The text of `skill://{id}/SKILL.md` or `skill://{id}/{source}`. The id and the source are
/// checked like any request's, and the source must be one of the skill's knowledge files.
pub(super) async fn read_resource(service: &Arc<Service>, requested: &str) -> Result<ReadResourceResult, ApiError> {
    let not_ours = || ApiError::not_found(format!("no resource `{requested}` (resources are skill://SKILL-ID/PATH)"));
    let (skill, path) =
        requested.strip_prefix("skill://").and_then(|rest| rest.split_once('/')).ok_or_else(not_ours)?;
    paths::skill_id(skill)?;
    let text = if path == "SKILL.md" {
        service.skill_file(skill.to_string()).await?
    } else {
        paths::source_path(path)?;
        service.document_text(skill.to_string(), path.to_string()).await?
    };
    Ok(ReadResourceResult::new(vec![ResourceContents::text(text, requested).with_mime_type(mime(path))]))
}

/// One prompt per skill: its id, its description, and the `task` it takes.
pub(super) async fn list_prompts(service: &Arc<Service>) -> Result<ListPromptsResult, ApiError> {
    let prompts = service
        .catalog()
        .await?
        .into_iter()
        .map(|(skill, description, _)| {
            let task = PromptArgument::new("task")
                .with_description("The task to perform with this skill, in your words")
                .with_required(true);
            Prompt::new(skill.clone(), Some(format!("Work with {skill}: {description}")), Some(vec![task]))
        })
        .collect();
    Ok(ListPromptsResult::with_all_items(prompts))
}

/// The prompt of skill `name` for the given `task`: the skill's compiled context, then the task.
pub(super) async fn get_prompt(
    service: &Arc<Service>,
    name: &str,
    arguments: Option<&JsonObject>,
) -> Result<GetPromptResult, ApiError> {
    paths::skill_id(name)?;
    let task = match arguments.and_then(|a| a.get("task")) {
        Some(Value::String(task)) if !task.trim().is_empty() => task.clone(),
        Some(Value::String(_)) | None => return Err(ApiError::bad_request("the argument `task` is required")),
        Some(other) => return Err(ApiError::bad_request(format!("`task` must be a string, not {other}"))),
    };
    let context = service.context(task.clone(), ContextOptions { skill: Some(name.to_string()), budget: None }).await?;
    let text = format!("{}\n\n# Task\n{task}", context.render());
    let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
    result.description = Some(format!("{name}: the skill's instructions, boundary and context for the task"));
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_served_as_markdown_or_plain_text() {
        assert_eq!(mime("SKILL.md"), "text/markdown");
        assert_eq!(mime("knowledge/FAQ.MD"), "text/markdown");
        assert_eq!(mime("references/pu-erh.txt"), "text/plain");
        assert_eq!(mime("knowledge/manual.pdf"), "text/plain");
    }

    #[test]
    fn missing_resources_and_bad_names_are_told_apart() {
        let missing = protocol_error(ApiError::not_found("gone"));
        let malformed = protocol_error(ApiError::bad_request("`..` is not a skill id"));
        assert_ne!(missing.code, malformed.code);
        assert_eq!(malformed.message, "`..` is not a skill id");
    }
}
