//! Advice beyond the parser's own checks (`skillrag lint`): what a skill lacks for routing to work.

use crate::Skill;
use skillrag_core::Diagnostic;

/// The texts `skillrag new` writes for the author to replace. Lint warns while any is left:
/// they read like real triggers, examples and a boundary, so routing would be fitted on them.
pub const PLACEHOLDERS: [&str; 5] = [
    "Say in one or two sentences what this skill answers.",
    "first keyword, second keyword",
    "the questions this knowledge answers.",
    "what it must refuse.",
    "A question this skill should answer?",
];

/// The `SKILL.md` that `skillrag new` writes: every part lint looks for, with [`PLACEHOLDERS`]
/// to fill in (`description` replaces the first).
pub fn skill_md_template(name: &str, title: &str, description: Option<&str>) -> String {
    let [describe, triggers, supports, refuses, example] = PLACEHOLDERS;
    let description = description.unwrap_or(describe);
    format!(
        "---\nname: {name}\ndescription: {description}\nmetadata:\n  triggers: {triggers}\n---\n\
         # {title}\n\n## Boundary\n\nSupports: {supports}\nDoes not support: {refuses}\n\n## Examples\n\n\
         - {example}\n\n## Instructions\n\nAnswer only from the retrieved knowledge and cite it as [n].\n"
    )
}

/// A warning for each line of `text` (a `SKILL.md` at `file`) that still holds a placeholder.
pub fn placeholders(file: &std::path::Path, text: &str) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for placeholder in PLACEHOLDERS.iter().filter(|p| line.contains(*p)) {
            diags.push(Diagnostic::warning(
                file,
                Some(i + 1),
                format!("placeholder text from `skillrag new` is still here: replace \"{placeholder}\""),
            ));
        }
    }
    diags
}

/// Warnings for a loaded skill that is missing routing material or still holds placeholders.
pub fn advice(skill: &Skill) -> Vec<Diagnostic> {
    // Read again for line numbers; the parser has read it already, so a failure here is a race
    // that the next run reports.
    let text = std::fs::read_to_string(skill.skill_file()).unwrap_or_default();
    advice_for_text(skill, &text)
}

/// [`advice`] for `skill` as read from `text`, its `SKILL.md` (a text not yet saved).
pub fn advice_for_text(skill: &Skill, text: &str) -> Vec<Diagnostic> {
    let file = skill.skill_file();
    let mut diags = placeholders(&file, text);
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

    #[test]
    fn warns_while_the_placeholders_of_new_are_there() {
        let file = std::path::Path::new("/s/fresh/SKILL.md");
        let text = skill_md_template("fresh", "Fresh", None);
        let diags = placeholders(file, &text);
        assert_eq!(diags.len(), PLACEHOLDERS.len(), "{diags:?}");
        assert!(diags.iter().all(|d| !d.is_error() && d.line.is_some()), "{diags:?}");
        let described = skill_md_template("fresh", "Fresh", Some("Answers questions about fresh things."));
        assert_eq!(placeholders(file, &described).len(), PLACEHOLDERS.len() - 1);
        let filled = text.replace("first keyword, second keyword", "wifi, router");
        assert_eq!(placeholders(file, &filled).len(), PLACEHOLDERS.len() - 1);
    }
}
