//! Skill ids and source paths taken from requests. They are only ever looked up among the
//! discovered skills and in an index's manifest, never joined onto a filesystem path; these
//! checks additionally refuse anything shaped like an escape (`..`, absolute paths, encoded
//! separators) with a 400 so probing is visible in logs rather than a silent 404.

use crate::error::ApiError;

/// A skill id: the folder name of a skill.
pub fn skill_id(raw: &str) -> Result<&str, ApiError> {
    let ok = !raw.is_empty()
        && raw != "."
        && raw != ".."
        && raw.len() <= 128
        && raw.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(raw)
    } else {
        Err(ApiError::bad_request(format!("`{raw}` is not a skill id (letters, digits, `-`, `_`, `.`)")))
    }
}

/// A source path as the index records it: relative to the skill folder (`knowledge/faq.md`), or
/// with one leading `/` for a document of a project folder the skill shares
/// (`/shared/style-guide/tone.md`). Either is only looked up among the skill's own sources.
pub fn source_path(raw: &str) -> Result<&str, ApiError> {
    let bad = |why: &str| Err(ApiError::bad_request(format!("unsafe source path `{raw}`: {why}")));
    let inside = raw.strip_prefix('/').unwrap_or(raw);
    if inside.is_empty() {
        return bad("empty");
    }
    if inside.starts_with('/') || inside.as_bytes().get(1) == Some(&b':') {
        return bad("absolute paths are not accepted");
    }
    if raw.contains(['\\', '\0']) {
        return bad("backslashes and NUL are not accepted");
    }
    let lower = raw.to_ascii_lowercase();
    if ["%2e", "%2f", "%5c", "%00"].iter().any(|e| lower.contains(e)) {
        return bad("encoded dots and separators are not accepted");
    }
    if inside.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return bad("`.`, `..` and empty components are not accepted");
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escapes() {
        for bad in [
            "../etc/passwd",
            "//etc/passwd",
            "/../x",
            "/",
            "a/../../b",
            "a//b",
            "%2e%2e/x",
            "..%2Fx",
            "a\\..\\b",
            "C:/x",
            "/C:/x",
            "./a",
        ] {
            assert!(source_path(bad).is_err(), "{bad}");
        }
        assert_eq!(source_path("knowledge/faq.md").unwrap(), "knowledge/faq.md");
        assert_eq!(source_path("知识/常见问题.md").unwrap(), "知识/常见问题.md");
        // A shared folder's document, as the index records it; looked up among the skill's sources.
        assert_eq!(source_path("/shared/style-guide/tone.md").unwrap(), "/shared/style-guide/tone.md");
        for bad in ["..", ".", "a/b", "", "a b", "x%2f"] {
            assert!(skill_id(bad).is_err(), "{bad}");
        }
        assert!(skill_id("labor-law").is_ok());
    }
}
