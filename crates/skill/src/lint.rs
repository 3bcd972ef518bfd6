//! `skillrag lint`: everything the parser reports, plus advice that makes routing work.

use crate::parse::parse_skill;
use skillrag_core::Diagnostic;
use std::path::Path;

/// Checks one skill folder's `SKILL.md` against the Agent Skills rules and our own advice.
pub fn lint_skill_file(dir: &Path) -> Vec<Diagnostic> {
    let parsed = parse_skill(dir);
    let mut diags = parsed.diagnostics;
    if let Some(skill) = parsed.skill {
        let file = skill.skill_file();
        if skill.triggers.is_empty() {
            diags.push(Diagnostic::warning(
                &file,
                None,
                "no triggers: add `metadata.triggers` (comma-separated keywords) so questions route here",
            ));
        }
        if skill.examples.is_empty() {
            diags.push(Diagnostic::warning(
                &file,
                None,
                "no examples: add an `## Examples` section; routing thresholds are fitted from them",
            ));
        }
        if skill.boundary.is_none() {
            diags.push(Diagnostic::warning(
                &file,
                None,
                "no boundary: add a `## Boundary` section saying what the skill does not answer",
            ));
        }
    }
    diags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advises_missing_routing_material() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bare");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), "---\nname: bare\ndescription: d\n---\n").unwrap();
        let diags = lint_skill_file(&dir);
        assert_eq!(diags.len(), 3, "{diags:?}");
        assert!(diags.iter().all(|d| !d.is_error()));
    }
}
