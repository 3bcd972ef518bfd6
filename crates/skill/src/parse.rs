//! Reading one `SKILL.md` into a [`Skill`], collecting every problem as a [`Diagnostic`].

use crate::frontmatter::{self, Frontmatter, Split};
use crate::sections::{self, outline, parse_boundary, parse_examples, parse_triggers, SectionKind};
use crate::{Boundary, Skill, SkillForm, SkillSettings, SKILL_FILE};
use serde_yaml_ng::Value;
use skillrag_chunk::MIN_CHUNK_SIZE;
use skillrag_core::{Diagnostic, DocType};
use skillrag_load::Confinement;
use std::collections::BTreeMap;
use std::path::Path;

/// Keys we understand, under `metadata` (canonical) or at the top level (lenient).
pub(crate) const EXTRA_KEYS: [&str; 11] = [
    "triggers",
    "boundary",
    "examples",
    "knowledge",
    "top_k",
    "chunk_size",
    "chunk_overlap",
    "doc_type",
    "instructions",
    "faq_examples",
    "uses",
];

pub const MAX_NAME_CHARS: usize = 64;
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// The result of reading one skill folder.
#[derive(Debug)]
pub struct ParsedSkill {
    /// `None` when a fatal problem makes the skill unusable; it is then skipped.
    pub skill: Option<Skill>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads `dir/SKILL.md`. The skill id is the folder name.
pub fn parse_skill(dir: &Path) -> ParsedSkill {
    let id = match dir.file_name().and_then(|n| n.to_str()) {
        Some(id) => id.to_string(),
        None => {
            return fatal(Diagnostic::error(dir, None, "skill folder name is not valid UTF-8; rename the folder"));
        }
    };
    let text = match read_skill_file(dir, &id) {
        Ok(text) => text,
        Err(refused) => return fatal(refused),
    };
    parse_skill_text(dir, &id, &text)
}

/// The text of a skill folder's `SKILL.md`, read with the refusals of loading it (a symlink out
/// of the project, a FIFO, a missing file, invalid UTF-8): what [`parse_skill`] parses, and what
/// MCP serves as the skill's `skill://{id}/SKILL.md` resource.
pub fn read_skill_file(dir: &Path, id: &str) -> Result<String, Diagnostic> {
    let file = dir.join(SKILL_FILE);
    if let Some(refused) = refuse_skill_file(dir, &file) {
        return Err(refused);
    }
    let bytes = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let hint = case_variant(dir).map_or(String::new(), |f| format!(" (found `{f}`: rename it to SKILL.md)"));
            return Err(Diagnostic::error(
                dir,
                None,
                format!("skill folder has no {SKILL_FILE}{hint}; skipped (`skillrag new {id}` scaffolds one)"),
            ));
        }
        Err(e) => return Err(Diagnostic::error(&file, None, format!("cannot read: {e}"))),
    };
    String::from_utf8(bytes).map_err(|e| {
        let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count();
        Diagnostic::error(&file, Some(line), "SKILL.md is not valid UTF-8; save it as UTF-8")
    })
}

/// Why `SKILL.md` must not be opened: a symlink that leaves the project (`SKILL.md ->
/// /etc/passwd` would become the skill's description), or not a regular file (opening a FIFO
/// blocks every command). `None` when it may be read, or is missing (reported by the caller).
fn refuse_skill_file(dir: &Path, file: &Path) -> Option<Diagnostic> {
    let link = std::fs::symlink_metadata(file).ok()?;
    if link.file_type().is_symlink() {
        if let Err(escape) = Confinement::for_skill(dir, &[]).check(file) {
            return Some(Diagnostic::error(file, None, format!("{SKILL_FILE} {escape}; the skill is not loaded")));
        }
    }
    let meta = std::fs::metadata(file).ok()?;
    (!meta.is_file()).then(|| {
        let kind = skillrag_load::file_kind(&meta.file_type());
        Diagnostic::error(file, None, format!("{SKILL_FILE} is a {kind}, not a regular file; the skill is not loaded"))
    })
}

fn fatal(d: Diagnostic) -> ParsedSkill {
    ParsedSkill { skill: None, diagnostics: vec![d] }
}

fn case_variant(dir: &Path) -> Option<String> {
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let name = e.file_name().into_string().ok()?;
        (name != SKILL_FILE && name.eq_ignore_ascii_case(SKILL_FILE)).then_some(name)
    })
}

/// Parses the text of a `SKILL.md` for the skill folder `dir` with id `id`.
pub fn parse_skill_text(dir: &Path, id: &str, text: &str) -> ParsedSkill {
    let file = dir.join(SKILL_FILE);
    let mut diags = Vec::new();
    let mut fields = Fields::default();

    let (form, body) = match frontmatter::split(text) {
        Split::Unterminated => {
            return fatal(Diagnostic::error(&file, Some(1), "frontmatter opened with `---` is never closed"));
        }
        Split::NoFrontmatter => {
            diags.push(Diagnostic::warning(
                &file,
                Some(1),
                "no YAML frontmatter: read in the headings-only form (not a spec-valid Agent Skills file)",
            ));
            (SkillForm::HeadingsOnly, text.strip_prefix('\u{feff}').unwrap_or(text))
        }
        Split::Frontmatter(fm) => {
            let lenient = match read_frontmatter(&fm, &file, &mut fields, &mut diags) {
                Ok(lenient) => lenient,
                Err(d) => return fatal(d),
            };
            let form = if lenient { SkillForm::Lenient } else { SkillForm::AgentSkills };
            (form, fm.body)
        }
    };

    let outline = outline(body);
    let mut instructions = Vec::new();
    let mut section_description = None;
    for section in &outline.sections {
        match SectionKind::classify(&section.heading) {
            Some(SectionKind::Triggers) => fields.triggers.extend(parse_triggers(&section.content)),
            Some(SectionKind::Examples) => fields.examples.extend(parse_examples(&section.content)),
            Some(SectionKind::Boundary) => fields.boundary.push(section.content.clone()),
            Some(SectionKind::Instructions) => instructions.push(section.content.clone()),
            Some(SectionKind::Description) => {
                section_description.get_or_insert_with(|| section.content.clone());
            }
            None => {}
        }
    }
    // In Agent Skills the body is the instructions; keep unlabelled sections as such too.
    if instructions.is_empty() {
        if !outline.preamble.is_empty() {
            instructions.push(outline.preamble.clone());
        }
        for section in outline.sections.iter().filter(|s| SectionKind::classify(&s.heading).is_none()) {
            instructions.push(format!("{}\n{}", section.heading, section.content));
        }
    }
    if let Some(i) = fields.instructions.take() {
        instructions.insert(0, i);
    }

    let name = match fields.name.take() {
        Some((name, line)) => {
            check_name(&name, id, &file, line, &mut diags);
            if name != id {
                return ParsedSkill { skill: None, diagnostics: diags };
            }
            name
        }
        None => {
            if form != SkillForm::HeadingsOnly {
                diags.push(Diagnostic::error(
                    &file,
                    Some(1),
                    format!("missing `name` (must be `{id}`, the folder name)"),
                ));
            }
            id.to_string()
        }
    };

    let description = match fields.description.take() {
        Some((d, line)) => {
            check_description(&d, &file, Some(line), &mut diags);
            d
        }
        None => {
            if form != SkillForm::HeadingsOnly {
                diags.push(Diagnostic::error(&file, Some(1), "missing `description` (1–1024 characters)"));
            }
            let fallback = section_description
                .or_else(|| first_paragraph(&outline.preamble))
                .or_else(|| outline.title.clone())
                .unwrap_or_default();
            if fallback.is_empty() {
                diags.push(Diagnostic::warning(
                    &file,
                    None,
                    "no description found: routing to this skill will rely on triggers and examples only",
                ));
            }
            fallback
        }
    };

    let boundary = (!fields.boundary.is_empty()).then(|| {
        let text = fields.boundary.join("\n");
        let (supports, not_supported) = parse_boundary(&text);
        Boundary { text, supports, not_supported }
    });

    let skill = Skill {
        id: id.to_string(),
        dir: dir.to_path_buf(),
        name,
        description,
        triggers: dedup(fields.triggers),
        examples: dedup(fields.examples),
        boundary,
        instructions: (!instructions.is_empty()).then(|| instructions.join("\n\n")),
        title: outline.title,
        license: fields.license,
        compatibility: fields.compatibility,
        allowed_tools: fields.allowed_tools,
        metadata: fields.metadata,
        form,
        settings: fields.settings,
    };
    ParsedSkill { skill: Some(skill), diagnostics: diags }
}

#[derive(Default)]
struct Fields {
    name: Option<(String, usize)>,
    description: Option<(String, usize)>,
    license: Option<String>,
    compatibility: Option<String>,
    allowed_tools: Option<String>,
    metadata: BTreeMap<String, String>,
    triggers: Vec<String>,
    examples: Vec<String>,
    boundary: Vec<String>,
    instructions: Option<String>,
    settings: SkillSettings,
    chunk_overlap_line: usize,
}

/// Reads the YAML frontmatter into `fields`. Returns whether lenient top-level extras were used;
/// an error is fatal (the YAML cannot be read).
fn read_frontmatter(
    fm: &Frontmatter<'_>,
    file: &Path,
    fields: &mut Fields,
    diags: &mut Vec<Diagnostic>,
) -> Result<bool, Diagnostic> {
    if let Err(e) = frontmatter::check_limits(fm) {
        return Err(Diagnostic::error(file, Some(e.line()), e.to_string()));
    }
    let value: Value = match serde_yaml_ng::from_str(fm.yaml) {
        Ok(v) => v,
        Err(e) => {
            // The parser may notice a problem only at the end of the block; point inside it.
            let last_line = fm.first_line + fm.yaml.lines().count().saturating_sub(1);
            let line = e.location().map(|l| (fm.first_line + l.line().saturating_sub(1)).min(last_line));
            let msg = e.to_string();
            // serde_yaml_ng appends "at line X column Y" relative to the block; drop it, we give file lines.
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            return Err(Diagnostic::error(
                file,
                line.or(Some(fm.first_line)),
                format!("malformed YAML frontmatter: {msg}"),
            ));
        }
    };
    let map = match value {
        Value::Mapping(m) => m,
        Value::Null => serde_yaml_ng::Mapping::new(),
        _ => {
            return Err(Diagnostic::error(
                file,
                Some(fm.first_line),
                "frontmatter must be a YAML mapping of `key: value`",
            ));
        }
    };
    let mut lenient = false;
    for (key, value) in map {
        let Some(key) = key.as_str().map(str::to_string) else {
            diags.push(Diagnostic::warning(file, Some(fm.first_line), "non-string frontmatter key ignored"));
            continue;
        };
        let line = frontmatter::key_line(fm, &key).unwrap_or(fm.first_line);
        match key.as_str() {
            "name" => match scalar(&value) {
                Some(s) => fields.name = Some((s, line)),
                None => diags.push(Diagnostic::error(file, Some(line), "`name` must be a string")),
            },
            "description" => match scalar(&value) {
                Some(s) => fields.description = Some((s.trim().to_string(), line)),
                None => diags.push(Diagnostic::error(file, Some(line), "`description` must be a string")),
            },
            "license" => fields.license = scalar(&value),
            "compatibility" => {
                fields.compatibility = scalar(&value);
                if fields.compatibility.as_ref().is_some_and(|c| c.chars().count() > 500) {
                    diags.push(Diagnostic::error(file, Some(line), "`compatibility` is longer than 500 characters"));
                }
            }
            "allowed-tools" => fields.allowed_tools = scalar(&value).or_else(|| list(&value).map(|l| l.join(" "))),
            "metadata" => read_metadata(&value, fm, file, line, fields, diags),
            other if EXTRA_KEYS.contains(&other) => {
                lenient = true;
                diags.push(Diagnostic::warning(
                    file,
                    Some(line),
                    format!("`{other}` is not an Agent Skills top-level key; accepted, but move it under `metadata` as a string"),
                ));
                apply_extra(other, &value, file, line, fields, diags);
            }
            other => {
                lenient = true;
                diags.push(Diagnostic::warning(file, Some(line), format!("unknown top-level key `{other}` ignored")));
            }
        }
    }
    // Checked once both are read, whatever their order: the same rule as the chunker's.
    if let (Some(size), Some(overlap)) = (fields.settings.chunk_size, fields.settings.chunk_overlap) {
        if overlap * 2 > size {
            let message = format!("`chunk_overlap` ({overlap}) must be at most half of `chunk_size` ({size}); ignored");
            diags.push(Diagnostic::warning(file, Some(fields.chunk_overlap_line), message));
            fields.settings.chunk_overlap = None;
        }
    }
    Ok(lenient)
}

fn read_metadata(
    value: &Value,
    fm: &Frontmatter<'_>,
    file: &Path,
    line: usize,
    fields: &mut Fields,
    diags: &mut Vec<Diagnostic>,
) {
    let Value::Mapping(map) = value else {
        diags.push(Diagnostic::error(file, Some(line), "`metadata` must be a mapping of string keys to string values"));
        return;
    };
    for (k, v) in map {
        let Some(k) = k.as_str() else { continue };
        let key_line = fm
            .yaml
            .lines()
            .enumerate()
            .skip(line - fm.first_line)
            .find(|(_, l)| l.trim_start().starts_with(&format!("{k}:")))
            .map_or(line, |(i, _)| fm.first_line + i);
        let as_string = match v {
            Value::String(s) => Some(s.clone()),
            _ => {
                let converted = scalar(v).or_else(|| list(v).map(|l| l.join(", ")));
                if converted.is_some() {
                    diags.push(Diagnostic::warning(
                        file,
                        Some(key_line),
                        format!("metadata `{k}` should be a string (Agent Skills metadata is string → string)"),
                    ));
                }
                converted
            }
        };
        let Some(s) = as_string else {
            diags.push(Diagnostic::warning(file, Some(key_line), format!("metadata `{k}` is not a string; ignored")));
            continue;
        };
        if EXTRA_KEYS.contains(&k) {
            apply_extra(k, &Value::String(s.clone()), file, key_line, fields, diags);
        }
        fields.metadata.insert(k.to_string(), s);
    }
}

/// Applies one of our extra keys, from `metadata` or the top level.
fn apply_extra(key: &str, value: &Value, file: &Path, line: usize, fields: &mut Fields, diags: &mut Vec<Diagnostic>) {
    let items = || list(value).unwrap_or_else(|| scalar(value).map(|s| sections::split_list(&s)).unwrap_or_default());
    let number = |diags: &mut Vec<Diagnostic>| -> Option<usize> {
        let s = scalar(value)?;
        match s.trim().parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                diags.push(Diagnostic::warning(
                    file,
                    Some(line),
                    format!("`{key}` must be a positive integer, got `{s}`; ignored"),
                ));
                None
            }
        }
    };
    match key {
        "triggers" => fields.triggers.extend(items()),
        "examples" => {
            let examples = list(value).unwrap_or_else(|| {
                scalar(value).map(|s| s.split(['\n', '|']).map(str::to_string).collect()).unwrap_or_default()
            });
            fields.examples.extend(examples.into_iter().map(|e| sections::clean_item(&e)).filter(|e| !e.is_empty()));
        }
        "boundary" => fields.boundary.extend(scalar(value).or_else(|| list(value).map(|l| l.join("\n")))),
        "instructions" => fields.instructions = scalar(value),
        "knowledge" => {
            let paths = list(value).unwrap_or_else(|| scalar(value).map(|s| split_paths(&s)).unwrap_or_default());
            fields.settings.knowledge.extend(paths);
        }
        "uses" => {
            fields.settings.uses.extend(items().into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()));
            fields.settings.uses_line = line;
        }
        "top_k" => fields.settings.top_k = number(diags),
        "chunk_size" => {
            fields.settings.chunk_size = match number(diags) {
                Some(n) if n < MIN_CHUNK_SIZE => {
                    let message =
                        format!("`chunk_size` must be at least {MIN_CHUNK_SIZE} characters, got {n}; ignored");
                    diags.push(Diagnostic::warning(file, Some(line), message));
                    None
                }
                other => other,
            };
        }
        "chunk_overlap" => {
            let s = scalar(value).unwrap_or_default();
            match s.trim().parse::<usize>() {
                Ok(n) => (fields.settings.chunk_overlap, fields.chunk_overlap_line) = (Some(n), line),
                Err(_) => diags.push(Diagnostic::warning(
                    file,
                    Some(line),
                    format!("`chunk_overlap` must be an integer, got `{s}`; ignored"),
                )),
            }
        }
        "faq_examples" => {
            let s = scalar(value).unwrap_or_default();
            match s.trim().to_ascii_lowercase().as_str() {
                "true" | "yes" | "1" => fields.settings.faq_examples = Some(true),
                "false" | "no" | "0" => fields.settings.faq_examples = Some(false),
                _ => diags.push(Diagnostic::warning(
                    file,
                    Some(line),
                    format!("`faq_examples` must be true or false, got `{s}`; ignored"),
                )),
            }
        }
        "doc_type" => {
            let s = scalar(value).unwrap_or_default();
            match DocType::parse(&s) {
                Some(d) => fields.settings.doc_type = Some(d),
                None => diags.push(Diagnostic::warning(
                    file,
                    Some(line),
                    format!("unknown doc_type `{s}` (expected general, faq, legal or technical); ignored"),
                )),
            }
        }
        _ => {}
    }
}

/// Splits a comma-separated list of paths or globs, keeping commas inside `{a,b}` braces.
fn split_paths(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && matches!(c, ',' | '，' | ';' | '\n') {
            out.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    out.push(current);
    out.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn list(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::Sequence(seq) => {
            Some(seq.iter().filter_map(scalar).map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
        }
        _ => None,
    }
}

pub(crate) fn check_name(name: &str, id: &str, file: &Path, line: usize, diags: &mut Vec<Diagnostic>) {
    if name != id {
        diags.push(Diagnostic::error(
            file,
            Some(line),
            format!("name `{name}` does not match the folder name `{id}`; skipped (rename one so they agree)"),
        ));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        diags.push(Diagnostic::error(file, Some(line), format!("name is longer than {MAX_NAME_CHARS} characters")));
    }
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if !valid {
        diags.push(Diagnostic::error(
            file,
            Some(line),
            format!("name `{name}` must be lowercase letters, digits and single hyphens (e.g. `labor-law`)"),
        ));
    }
}

fn check_description(d: &str, file: &Path, line: Option<usize>, diags: &mut Vec<Diagnostic>) {
    let n = d.chars().count();
    if n == 0 {
        diags.push(Diagnostic::error(
            file,
            line,
            "`description` is empty; say what the skill answers (1–1024 characters)",
        ));
    } else if n > MAX_DESCRIPTION_CHARS {
        diags.push(Diagnostic::error(
            file,
            line,
            format!("`description` is {n} characters; the limit is {MAX_DESCRIPTION_CHARS}"),
        ));
    }
}

fn first_paragraph(text: &str) -> Option<String> {
    text.split("\n\n").map(str::trim).find(|p| !p.is_empty() && !p.starts_with("```")).map(str::to_string)
}

fn dedup(items: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items.into_iter().filter(|s| seen.insert(s.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillrag_core::Severity;

    fn parse(id: &str, text: &str) -> ParsedSkill {
        parse_skill_text(Path::new("/skills").join(id).as_path(), id, text)
    }

    #[test]
    fn chunk_settings_that_cannot_work_are_warned_and_ignored() {
        let with = |metadata: &str| {
            parse("s", &format!("---\nname: s\ndescription: A skill.\nmetadata:\n{metadata}---\n# S\n"))
        };
        let p = with("  chunk_size: \"1\"\n");
        assert_eq!(p.skill.as_ref().unwrap().settings.chunk_size, None);
        assert!(
            p.diagnostics.iter().any(|d| d.message.contains("at least 16") && d.line == Some(5)),
            "{:?}",
            p.diagnostics
        );
        let p = with("  chunk_size: \"100\"\n  chunk_overlap: \"80\"\n");
        let settings = &p.skill.as_ref().unwrap().settings;
        assert_eq!((settings.chunk_size, settings.chunk_overlap), (Some(100), None));
        assert!(p.diagnostics.iter().any(|d| d.message.contains("half of `chunk_size` (100)")), "{:?}", p.diagnostics);
        let p = with("  chunk_size: \"300\"\n  chunk_overlap: \"60\"\n");
        assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    }

    #[test]
    fn reads_spec_valid_frontmatter() {
        let p = parse(
            "labor-law",
            "---\nname: labor-law\ndescription: 中国劳动法规知识库。\nlicense: MIT\nmetadata:\n  triggers: 劳动合同, 试用期、经济补偿\n  top_k: \"5\"\n  chunk_size: \"300\"\n---\n# 劳动法规\n## Boundary\n支持：合同。不支持：刑事。\n## Examples\n- 试用期不签劳动合同违法吗？\n## Instructions\n引用条号。\n",
        );
        assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
        let s = p.skill.unwrap();
        assert_eq!(s.form, SkillForm::AgentSkills);
        assert_eq!(s.triggers, vec!["劳动合同", "试用期", "经济补偿"]);
        assert_eq!(s.settings.top_k, Some(5));
        assert_eq!(s.settings.chunk_size, Some(300));
        assert_eq!(s.examples, vec!["试用期不签劳动合同违法吗？"]);
        assert_eq!(s.boundary.unwrap().not_supported, vec!["刑事"]);
        assert_eq!(s.instructions.as_deref(), Some("引用条号。"));
        assert_eq!(s.title.as_deref(), Some("劳动法规"));
    }

    #[test]
    fn reads_lenient_top_level_keys_with_warnings() {
        let p = parse(
            "covid",
            "---\nname: covid\ndescription: \"Papers.\"\ntriggers:\n  - \"coronavirus\"\n  - \"R0\"\nboundary: \"Supports: facts. Does not support: medical advice.\"\nversion: 2\n---\n# Covid\n## Examples\n- What is R0?\n",
        );
        let s = p.skill.unwrap();
        assert_eq!(s.form, SkillForm::Lenient);
        assert_eq!(s.triggers, vec!["coronavirus", "R0"]);
        assert_eq!(s.boundary.unwrap().not_supported, vec!["medical advice"]);
        let lines: Vec<_> = p.diagnostics.iter().map(|d| (d.line, d.severity)).collect();
        assert_eq!(
            lines,
            vec![(Some(4), Severity::Warning), (Some(7), Severity::Warning), (Some(8), Severity::Warning)]
        );
    }

    #[test]
    fn reads_headings_only_form() {
        let p = parse(
            "tea",
            "# 茶艺\n## 1. 技能描述\n介绍中国茶的冲泡方法。\n## 2. 触发规则\n关键词：绿茶、红茶、冲泡\n## 3. 核心逻辑\n先说水温。\n## 4. 知识边界\n✅ 冲泡方法\n❌ 医疗功效\n## 5. 示例案例\n- 绿茶用多少度的水？\n",
        );
        let s = p.skill.unwrap();
        assert_eq!(s.form, SkillForm::HeadingsOnly);
        assert_eq!(s.name, "tea");
        assert_eq!(s.description, "介绍中国茶的冲泡方法。");
        assert_eq!(s.triggers, vec!["绿茶", "红茶", "冲泡"]);
        assert_eq!(s.instructions.as_deref(), Some("先说水温。"));
        assert_eq!(s.boundary.unwrap().not_supported, vec!["医疗功效"]);
        assert_eq!(s.examples, vec!["绿茶用多少度的水？"]);
    }

    #[test]
    fn malformed_yaml_is_fatal_with_line() {
        let p = parse("x", "---\nname: x\ndescription: [unclosed\n---\nbody\n");
        assert!(p.skill.is_none());
        assert_eq!(p.diagnostics.len(), 1);
        assert!(p.diagnostics[0].message.contains("malformed YAML"), "{}", p.diagnostics[0]);
        assert!(p.diagnostics[0].line.is_some_and(|l| (2..=4).contains(&l)));
    }

    #[test]
    fn name_mismatch_is_fatal() {
        let p = parse("labor-law", "---\nname: labour\ndescription: d\n---\n");
        assert!(p.skill.is_none());
        assert_eq!(p.diagnostics[0].line, Some(2));
        assert!(p.diagnostics[0].message.contains("does not match the folder name"));
    }

    #[test]
    fn spec_violations_are_reported_but_skill_loads() {
        let long = "x".repeat(1100);
        let p = parse("Bad_Name", &format!("---\nname: Bad_Name\ndescription: {long}\n---\n"));
        assert!(p.skill.is_some());
        let msgs: Vec<_> = p.diagnostics.iter().map(|d| d.message.clone()).collect();
        assert!(msgs.iter().any(|m| m.contains("lowercase")), "{msgs:?}");
        assert!(msgs.iter().any(|m| m.contains("1100 characters")), "{msgs:?}");
    }

    #[test]
    fn knowledge_paths_keep_brace_globs() {
        assert_eq!(split_paths("docs/**/*.{md,txt}, faq.md"), vec!["docs/**/*.{md,txt}", "faq.md"]);
    }
}
