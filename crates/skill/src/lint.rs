//! Advice beyond the parser's own checks (`skillrag lint`): what a skill lacks for routing to work.

use crate::Skill;
use skillrag_core::Diagnostic;

/// Warnings for a loaded skill that is missing routing material.
pub fn advice(skill: &Skill) -> Vec<Diagnostic> {
    let file = skill.skill_file();
    let mut diags = Vec::new();
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
    diags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advises_missing_routing_material() {
        let parsed =
            crate::parse_skill_text(std::path::Path::new("/s/bare"), "bare", "---\nname: bare\ndescription: d\n---\n");
        let diags = advice(parsed.skill.as_ref().unwrap());
        assert_eq!(diags.len(), 3, "{diags:?}");
        assert!(diags.iter().all(|d| !d.is_error()));
    }
}
