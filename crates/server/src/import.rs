//! A document imported from a URL (`POST /v1/skills/{skill}/import`): one page fetched over
//! HTTP(S) — the server's own network decides what it can reach — then saved and indexed exactly
//! as an upload of the same bytes: the same name, type, content and size checks, the same
//! staging and re-index.

use crate::documents::Uploaded;
use crate::error::ApiError;
use crate::service::{blocking, IndexJob, Service};
use axum::http::StatusCode;
use std::sync::Arc;
use std::time::Duration;

/// The longest wait for the page.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// The extension a `Content-Type` is saved with, when the URL's own name has none indexing reads.
fn extension_for(content_type: &str) -> Option<&'static str> {
    Some(match content_type {
        "text/html" | "application/xhtml+xml" => "html",
        "application/pdf" => "pdf",
        "text/markdown" | "text/x-markdown" => "md",
        "text/plain" => "txt",
        "text/csv" => "csv",
        "application/json" => "json",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => "docx",
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/webp" => "webp",
        "image/tiff" => "tiff",
        _ => return None,
    })
}

/// The file name a fetched page is saved under: the URL's last path segment when its extension
/// is one indexing reads, else that segment (or the host) with the extension of its type.
fn file_name(url: &str, content_type: &str) -> Result<String, ApiError> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let last = path.rsplit('/').find(|s| !s.is_empty()).unwrap_or("");
    let last = percent_decoded(last);
    let known = std::path::Path::new(&last)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| skillrag_load::Format::EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
    if known {
        return Ok(last);
    }
    let ext = extension_for(content_type).ok_or_else(|| {
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "{url} is `{}`, which indexing does not read",
                if content_type.is_empty() { "of no stated type" } else { content_type }
            ),
        )
    })?;
    let stem = if last.is_empty() { host.split(':').next().unwrap_or(host).replace('.', "-") } else { last };
    Ok(format!("{stem}.{ext}"))
}

/// `%XX` escapes of a URL path segment decoded (an invalid one is kept as written). Written by
/// hand: one small loop, for a file name that the upload checks refuse anyway when odd.
fn percent_decoded(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| segment.to_string())
}

impl Service {
    /// Fetches `url` and saves it into the skill's knowledge (as `name` when given), then
    /// re-indexes the skill, as an upload does.
    pub async fn import_url(
        self: &Arc<Self>,
        skill: String,
        url: String,
        name: Option<String>,
        replace: bool,
        tier: skillrag_core::Tier,
    ) -> Result<(Vec<Uploaded>, IndexJob), ApiError> {
        let target = self.upload_target(skill, replace, tier).await?;
        let limit = target.limit();
        let fetched = blocking(move || {
            skillrag_http::fetch(&url, FETCH_TIMEOUT, limit).map_err(|e| {
                let status = match &e {
                    skillrag_http::HttpError::Protocol { message, .. } if message.contains("larger") => {
                        StatusCode::PAYLOAD_TOO_LARGE
                    }
                    _ => StatusCode::BAD_GATEWAY,
                };
                ApiError::new(status, format!("cannot import: {e}"))
            })
        })
        .await?;
        let chosen = match name {
            Some(n) => n,
            None => file_name(&fetched.url, &fetched.content_type)?,
        };
        let mut seen = std::collections::HashSet::new();
        let name = target.check_name(&chosen, &mut seen)?;
        let mut staged = target.stage(name).await?;
        staged.write(&fetched.bytes).await?;
        let staged = staged.finish().await?;
        self.upload(target, vec![staged]).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fetched_page_is_named_by_its_url_and_type() {
        let name = |url: &str, ty: &str| file_name(url, ty).map_err(|e| e.status);
        assert_eq!(name("https://example.com/docs/guide.pdf?x=1", "application/octet-stream"), Ok("guide.pdf".into()));
        assert_eq!(name("https://example.com/docs/faq", "text/html"), Ok("faq.html".into()));
        assert_eq!(name("https://example.com/", "text/html"), Ok("example-com.html".into()));
        assert_eq!(name("http://127.0.0.1:8080", "text/plain"), Ok("127-0-0-1.txt".into()));
        assert_eq!(name("https://example.com/%E8%AF%95%E7%94%A8%E6%9C%9F.md", ""), Ok("试用期.md".into()));
        assert_eq!(name("https://example.com/app", "application/zip"), Err(StatusCode::UNSUPPORTED_MEDIA_TYPE));
    }
}
