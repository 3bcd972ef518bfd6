//! Writing a `SKILL.md` from its parts (the page's "new skill" form, `POST /v1/skills`), and
//! checking a `SKILL.md` text the way `skillrag lint` would before it is saved.
//!
//! A composed file is in the Agent Skills form (extras under `metadata`), and it must read back
//! as what was asked: the frontmatter is written by the YAML serializer, never by hand, so a
//! description with a colon or a quote stays one value; a heading inside a free-text part is
//! escaped so it cannot open a section of its own; and a trigger that the reader would split
//! (it holds a list separator) is refused rather than silently turned into two.

use crate::lint::{advice_for_text, placeholders};
use crate::parse::{parse_skill_text, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS};
use crate::sections::{split_list, SectionKind};
use crate::SKILL_FILE;
use skillrag_core::Diagnostic;
use std::collections::BTreeMap;
use std::path::Path;

/// The parts of a skill as a form asks for them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillDraft {
    /// The folder name and `name:` of the skill.
    pub name: String,
    pub description: String,
    pub triggers: Vec<String>,
    /// What the skill supports and what it must refuse, as the `## Boundary` section's text.
    pub boundary: String,
    /// Questions the skill answers, one per `## Examples` item.
    pub examples: Vec<String>,
    pub instructions: String,
}

/// Why a draft cannot be written; `field` names the part of the form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct DraftError {
    pub field: &'static str,
    pub message: String,
}

fn refuse(field: &'static str, message: impl Into<String>) -> DraftError {
    DraftError { field, message: message.into() }
}

/// Whether `name` may name a new skill folder: lowercase letters, digits and single hyphens, at
/// most 64 characters (the Agent Skills rule for `name`, which must equal the folder name).
pub fn check_skill_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if valid {
        Ok(())
    } else {
        Err(format!(
            "skill name `{name}` must be lowercase letters, digits and single hyphens, at most \
             {MAX_NAME_CHARS} characters (e.g. `hr-policies`)"
        ))
    }
}

/// The `SKILL.md` text for `draft`, or the first part of it that cannot be written as given.
pub fn compose(draft: &SkillDraft) -> Result<String, DraftError> {
    check_skill_name(&draft.name).map_err(|m| refuse("name", m))?;
    let description = draft.description.trim();
    if description.is_empty() {
        return Err(refuse("description", "say in one or two sentences what this skill answers"));
    }
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(refuse("description", format!("longer than {MAX_DESCRIPTION_CHARS} characters")));
    }
    let triggers = one_line_items("triggers", &draft.triggers)?;
    for trigger in &triggers {
        if split_list(trigger) != [trigger.clone()] {
            return Err(refuse(
                "triggers",
                format!("`{trigger}` would be read as several keywords: leave out `,` `、` `;` `/` `|`"),
            ));
        }
    }
    let examples = one_line_items("examples", &draft.examples)?;

    let mut metadata = BTreeMap::new();
    if !triggers.is_empty() {
        metadata.insert("triggers", triggers.join(", "));
    }
    let frontmatter = Frontmatter { name: &draft.name, description: &one_line(description), metadata };
    let yaml = serde_yaml_ng::to_string(&frontmatter).map_err(|e| refuse("description", e.to_string()))?;

    let mut text = format!("---\n{yaml}---\n# {}\n", skill_title(&draft.name));
    if !draft.boundary.trim().is_empty() {
        text.push_str(&format!("\n## Boundary\n\n{}\n", escape_headings(draft.boundary.trim())));
    }
    if !examples.is_empty() {
        text.push_str("\n## Examples\n\n");
        for example in &examples {
            text.push_str(&format!("- {example}\n"));
        }
    }
    if !draft.instructions.trim().is_empty() {
        text.push_str(&format!("\n## Instructions\n\n{}\n", escape_headings(draft.instructions.trim())));
    }
    Ok(text)
}

#[derive(serde::Serialize)]
struct Frontmatter<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    metadata: BTreeMap<&'static str, String>,
}

/// What `skillrag lint` says of `text` as the `SKILL.md` of the skill folder `dir`: the parser's
/// problems (an error means the skill would not load), placeholders left from `skillrag new`
/// and missing routing material. Nothing is read from disk.
pub fn check_skill_text(dir: &Path, text: &str) -> Vec<Diagnostic> {
    let id = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let parsed = parse_skill_text(dir, id, text);
    let mut diagnostics = parsed.diagnostics;
    match &parsed.skill {
        Some(skill) => diagnostics.extend(advice_for_text(skill, text)),
        None => diagnostics.extend(placeholders(&dir.join(SKILL_FILE), text)),
    }
    diagnostics.sort_by_key(|d| d.line);
    diagnostics
}

/// `text` (a `SKILL.md`) with `question` added as the last item of its examples section (the
/// first heading that means examples, in any of the three forms); a `## Examples` section is
/// added at the end when it has none. The rest of the file is kept byte for byte.
pub fn with_example(text: &str, question: &str) -> String {
    let item = format!("- {}\n", one_line(question));
    let body = match crate::frontmatter::split(text) {
        crate::frontmatter::Split::Frontmatter(fm) => fm.body,
        _ => text,
    };
    let offset = text.len() - body.len();
    let headings = crate::sections::headings(body);
    let examples = headings.iter().position(|h| SectionKind::classify(&h.1) == Some(SectionKind::Examples));
    match examples {
        Some(i) => {
            let end = offset + headings.get(i + 1).map_or(body.len(), |h| h.2);
            let kept = text[..end].trim_end();
            let rest = &text[end..];
            let gap = if rest.is_empty() { "" } else { "\n" };
            format!("{kept}\n{item}{gap}{rest}")
        }
        None => format!("{}\n\n## Examples\n\n{item}", text.trim_end()),
    }
}

/// `text` (a `SKILL.md`) with its `name:` set to `name`, for a skill folder renamed to it; the
/// rest is kept byte for byte. A file without frontmatter names its skill by its folder only.
pub fn with_name(text: &str, name: &str) -> String {
    let crate::frontmatter::Split::Frontmatter(fm) = crate::frontmatter::split(text) else {
        return text.to_string();
    };
    let Some(line) = crate::frontmatter::key_line(&fm, "name") else { return text.to_string() };
    let bom = text.starts_with('\u{feff}');
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = String::with_capacity(text.len() + name.len());
    if bom {
        out.push('\u{feff}');
    }
    for (i, l) in body.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            out.push_str(&format!("name: {name}{}", if l.ends_with('\n') { "\n" } else { "" }));
        } else {
            out.push_str(l);
        }
    }
    out
}

/// Items of a list field, trimmed, empty ones dropped; each must fit on one line.
fn one_line_items(field: &'static str, items: &[String]) -> Result<Vec<String>, DraftError> {
    let mut out: Vec<String> = Vec::new();
    for item in items.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
        if item.contains(['\n', '\r']) {
            return Err(refuse(field, format!("`{}` spans several lines: give one item per line", one_line(item))));
        }
        if !out.iter().any(|o| o == item) {
            out.push(item.to_string());
        }
    }
    Ok(out)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A line of free text that starts like a Markdown heading is escaped (`\#`), so the boundary
/// or instructions cannot open a section the reader would take for another part.
fn escape_headings(text: &str) -> String {
    text.lines()
        .map(|line| match line.trim_start().starts_with('#') {
            true => format!("\\{}", line.trim_start()),
            false => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The heading a new skill's `SKILL.md` opens with: `hr-policies` → "Hr Policies".
pub fn skill_title(name: &str) -> String {
    name.split('-').map(capitalize).collect::<Vec<_>>().join(" ")
}

fn capitalize(word: &str) -> String {
    let mut c = word.chars();
    c.next().map_or_else(String::new, |f| f.to_uppercase().collect::<String>() + c.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn draft() -> SkillDraft {
        SkillDraft {
            name: "hr-policies".into(),
            description: "HR policies: leave, \"expenses\" and travel # not a comment".into(),
            triggers: vec!["annual leave".into(), " 报销 ".into(), "".into()],
            boundary: "Supports: leave and expenses.\nDoes not support: salaries.".into(),
            examples: vec!["How many days of annual leave do I get?".into()],
            instructions: "Answer from the policy.\n# Not a heading".into(),
        }
    }

    fn read_back(text: &str) -> crate::Skill {
        let dir = PathBuf::from("/p/skills/hr-policies");
        let parsed = parse_skill_text(&dir, "hr-policies", text);
        assert!(parsed.diagnostics.iter().all(|d| !d.is_error()), "{:?}\n{text}", parsed.diagnostics);
        parsed.skill.unwrap()
    }

    #[test]
    fn a_composed_skill_reads_back_as_it_was_asked() {
        let text = compose(&draft()).unwrap();
        let skill = read_back(&text);
        assert_eq!(skill.description, "HR policies: leave, \"expenses\" and travel # not a comment");
        assert_eq!(skill.triggers, ["annual leave", "报销"]);
        assert_eq!(skill.examples, ["How many days of annual leave do I get?"]);
        let boundary = skill.boundary.unwrap();
        assert_eq!((boundary.supports.len(), boundary.not_supported.len()), (1, 1), "{boundary:?}");
        let instructions = skill.instructions.unwrap();
        assert!(instructions.contains("Not a heading"), "{instructions}");
        assert_eq!(skill.form, crate::SkillForm::AgentSkills);
        let dir = Path::new("/p/skills/hr-policies");
        assert!(check_skill_text(dir, &text).is_empty(), "{:?}", check_skill_text(dir, &text));
    }

    #[test]
    fn parts_that_would_not_read_back_are_refused_by_field() {
        type Change = fn(&mut SkillDraft);
        let cases: [(Change, &str); 5] = [
            (|d| d.name = "HR Policies".into(), "name"),
            (|d| d.description = "  ".into(), "description"),
            (|d| d.triggers = vec!["leave, expenses".into()], "triggers"),
            (|d| d.examples = vec!["one\ntwo".into()], "examples"),
            (|d| d.description = "x".repeat(MAX_DESCRIPTION_CHARS + 1), "description"),
        ];
        for (change, field) in cases {
            let mut d = draft();
            change(&mut d);
            assert_eq!(compose(&d).unwrap_err().field, field, "{d:?}");
        }
    }

    #[test]
    fn only_the_parts_given_are_written() {
        let d = SkillDraft { name: "bare".into(), description: "Answers little.".into(), ..Default::default() };
        let text = compose(&d).unwrap();
        assert!(!text.contains("## ") && !text.contains("metadata"), "{text}");
        // Lint then says what routing lacks, by name, without an error.
        let checked = check_skill_text(Path::new("/p/skills/bare"), &text);
        assert!(checked.iter().all(|d| !d.is_error()) && checked.len() == 3, "{checked:?}");
    }

    #[test]
    fn checking_a_text_reports_errors_with_lines_and_placeholders() {
        let dir = Path::new("/p/skills/tea");
        let broken = check_skill_text(dir, "---\nname: tea\ndescription: [unclosed\n---\n");
        assert!(broken.iter().any(|d| d.is_error()), "{broken:?}");
        let wrong_name = check_skill_text(dir, "---\nname: coffee\ndescription: d\n---\n");
        assert!(wrong_name.iter().any(|d| d.is_error() && d.message.contains("folder name")), "{wrong_name:?}");
        let template = crate::skill_md_template("tea", "Tea", None);
        let left = check_skill_text(dir, &template);
        assert!(left.iter().any(|d| d.message.contains("placeholder") && d.line.is_some()), "{left:?}");
        assert!(left.iter().all(|d| !d.is_error()), "{left:?}");
    }

    #[test]
    fn an_example_joins_the_examples_section_in_every_form() {
        let dir = Path::new("/p/skills/hr-policies");
        let composed = compose(&draft()).unwrap();
        let added = with_example(&composed, "  Can I carry leave  over? ");
        let skill = read_back(&added);
        assert_eq!(skill.examples, ["How many days of annual leave do I get?", "Can I carry leave over?"]);
        assert!(added.contains("## Instructions"), "the sections after it stay: {added}");
        // Headings only, the section numbered and in Chinese, with a section after it.
        let headings = "# HR\n\n## 1. 描述\n\n人事制度。\n\n## 3. 示例\n\n- 年假几天？\n\n## 4. 边界\n\n不答工资。\n";
        let added = with_example(headings, "病假怎么请？");
        let parsed = parse_skill_text(dir, "hr-policies", &added).skill.unwrap();
        assert_eq!(parsed.examples, ["年假几天？", "病假怎么请？"]);
        assert!(added.ends_with("## 4. 边界\n\n不答工资。\n"), "{added}");
        // No examples section: one is added.
        let bare = "---\nname: hr-policies\ndescription: d\n---\n# HR\n";
        let parsed = parse_skill_text(dir, "hr-policies", &with_example(bare, "Q?")).skill.unwrap();
        assert_eq!(parsed.examples, ["Q?"]);
    }

    #[test]
    fn a_renamed_skill_names_itself_by_its_new_folder() {
        let text = compose(&draft()).unwrap();
        let renamed = with_name(&text, "people-policies");
        let parsed = parse_skill_text(Path::new("/p/skills/people-policies"), "people-policies", &renamed);
        assert!(parsed.diagnostics.iter().all(|d| !d.is_error()), "{:?}", parsed.diagnostics);
        assert_eq!(renamed.replace("name: people-policies", "name: hr-policies"), text, "only the name changed");
        let headings = "# HR\n\n## 描述\n\n人事制度。\n";
        assert_eq!(with_name(headings, "x"), headings);
    }

    #[test]
    fn skill_names_follow_the_agent_skills_rule() {
        for good in ["a", "hr-policies", "v2-docs"] {
            assert!(check_skill_name(good).is_ok(), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a b", "../x", "中文", &"a".repeat(65)] {
            assert!(check_skill_name(bad).is_err(), "{bad}");
        }
    }
}
