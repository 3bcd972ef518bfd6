//! Body sections of a `SKILL.md`, recognised by what their heading means.

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

/// What a body section is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionKind {
    Description,
    Triggers,
    Instructions,
    Boundary,
    Examples,
}

/// Heading words per section kind, Chinese and English. Checked in this order, so a
/// heading such as "示例案例" is Examples and "知识边界" is Boundary, not Description.
const KEYWORDS: [(SectionKind, &[&str]); 5] = [
    (
        SectionKind::Boundary,
        &["边界", "范围", "限制", "不支持", "boundary", "boundaries", "scope", "limitation", "limits"],
    ),
    (SectionKind::Examples, &["示例", "例子", "案例", "样例", "例题", "example", "sample question", "samples"]),
    (
        SectionKind::Triggers,
        &["触发", "关键词", "关键字", "trigger", "keyword", "when to use", "when it fires", "何时使用"],
    ),
    (
        SectionKind::Instructions,
        &[
            "核心逻辑",
            "逻辑",
            "指令",
            "指南",
            "步骤",
            "流程",
            "回答要求",
            "回答规则",
            "规则",
            "instruction",
            "guideline",
            "how to answer",
            "workflow",
            "procedure",
            "rules",
            "logic",
            "steps",
        ],
    ),
    (
        SectionKind::Description,
        &["描述", "简介", "概述", "介绍", "说明", "用途", "description", "overview", "about", "summary", "purpose"],
    ),
];

impl SectionKind {
    /// Classifies a heading by meaning; numbering ("2.", "二、", "Step 3:") and emoji are ignored.
    pub fn classify(heading: &str) -> Option<SectionKind> {
        let normalized = strip_numbering(heading).to_lowercase();
        KEYWORDS.iter().find(|(_, words)| words.iter().any(|w| normalized.contains(w))).map(|(kind, _)| *kind)
    }
}

fn strip_numbering(heading: &str) -> &str {
    heading.trim_start_matches(|c: char| {
        c.is_ascii_digit()
            || c.is_whitespace()
            || "一二三四五六七八九十零〇.、．:：)）(（-—#*".contains(c)
            || !(c.is_alphanumeric() || c.is_whitespace()) // emoji and other symbols
    })
}

/// One heading-delimited part of a Markdown body.
#[derive(Debug, Clone)]
pub struct Section {
    pub heading: String,
    /// Raw Markdown between this heading and the next heading of any level.
    pub content: String,
}

/// The first `#` title and the heading-delimited sections of a Markdown body.
pub struct Outline {
    pub title: Option<String>,
    /// Text before the first heading other than the title.
    pub preamble: String,
    pub sections: Vec<Section>,
}

/// Splits a Markdown body into sections at every heading (ATX or setext), ignoring
/// `#` lines inside code blocks.
pub fn outline(body: &str) -> Outline {
    let headings = headings(body);
    let section_end = |i: usize| headings.get(i + 1).map_or(body.len(), |h| h.2);
    let content_of = |i: usize| {
        let end = section_end(i);
        body[headings[i].3.min(end)..end].trim().to_string()
    };
    let has_title = headings.first().is_some_and(|h| h.0 == 1);
    let (title, preamble, first_section) = if has_title {
        (Some(headings[0].1.clone()), content_of(0), 1)
    } else {
        let end = headings.first().map_or(body.len(), |h| h.2);
        (None, body[..end].trim().to_string(), 0)
    };
    let sections = (first_section..headings.len())
        .map(|i| Section { heading: headings[i].1.clone(), content: content_of(i) })
        .collect();
    Outline { title, preamble, sections }
}

/// Every heading of a Markdown body (ATX or setext, none inside code blocks): (level, text,
/// heading start byte, content start byte).
pub(crate) fn headings(body: &str) -> Vec<(u8, String, usize, usize)> {
    let mut headings: Vec<(u8, String, usize, usize)> = Vec::new();
    let mut current: Option<(u8, String, usize)> = None;
    for (event, range) in Parser::new(body).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                current = Some((heading_level(level), String::new(), range.start));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, text, _)) = current.as_mut() {
                    text.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, text, start)) = current.take() {
                    headings.push((level, text.trim().to_string(), start, range.end));
                }
            }
            _ => {}
        }
    }
    headings
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Splits a keyword list written as `a、b、c`, `a, b; c`, or one item per line / bullet.
pub fn split_list(text: &str) -> Vec<String> {
    text.split(['、', ',', '，', ';', '；', '\n', '|', '/']).map(clean_item).filter(|s| !s.is_empty()).collect()
}

/// Strips bullets, numbering, quotes and trailing full stops from one list item.
pub fn clean_item(item: &str) -> String {
    let item = item.trim();
    let item =
        item.strip_prefix("- ").or_else(|| item.strip_prefix("* ")).or_else(|| item.strip_prefix("+ ")).unwrap_or(item);
    let item = strip_ordinal(item);
    item.trim().trim_matches(|c: char| "\"'“”‘’`「」『』".contains(c)).trim_end_matches(['。', '.']).trim().to_string()
}

fn strip_ordinal(item: &str) -> &str {
    let digits = item.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 {
        let rest = &item[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")).or_else(|| rest.strip_prefix('、'))
        {
            return r;
        }
    }
    item
}

/// Trigger keywords from a triggers section: the part after a `关键词：`/`keywords:` label if
/// there is one, else every short list item. Prose sentences are not keywords.
pub fn parse_triggers(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in content.lines() {
        let line = line.trim();
        let labelled = ["关键词", "关键字", "触发词", "keywords", "keyword", "triggers", "trigger words"]
            .iter()
            .find_map(|label| {
                let lower = line.to_lowercase();
                let rest_start = lower.find(label)? + label.len();
                let rest = line.get(rest_start..)?;
                let rest = rest.trim_start().strip_prefix([':', '：'])?;
                Some(rest.to_string())
            });
        if let Some(list) = labelled {
            out.extend(split_list(&list));
        } else if line.starts_with(['-', '*', '+']) || line.split(['、', ',', '，']).count() > 2 {
            out.extend(split_list(line).into_iter().filter(|s| s.chars().count() <= 24));
        }
    }
    dedup(out)
}

/// Example questions: one per bullet or line, with `Q:`/`问：` labels and any answer after
/// `→`/`->`/`答：` removed.
pub fn parse_examples(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in content.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("```") {
            continue;
        }
        let mut item = clean_item(trimmed);
        for label in ["用户问：", "用户：", "问题：", "问：", "Q:", "Q：", "Question:", "User:"] {
            if let Some(rest) = item.strip_prefix(label) {
                item = rest.trim().to_string();
            }
        }
        for sep in ["→", "->", "=>", "答：", "回答：", "A:", "Answer:"] {
            if let Some(i) = item.find(sep) {
                item.truncate(i);
            }
        }
        let item = clean_item(&item);
        let is_label_only = item.ends_with(['：', ':']);
        if !item.is_empty() && !is_label_only {
            out.push(item);
        }
    }
    dedup(out)
}

/// Splits a boundary text into what is supported and what is not. Recognises
/// `支持：…不支持：…`, `Supports: … Does not support: …` and `✅ … ❌ …`.
pub fn parse_boundary(text: &str) -> (Vec<String>, Vec<String>) {
    const NOT: [&str; 7] = ["不支持", "不包括", "不涉及", "does not support", "doesn't support", "not supported", "❌"];
    const YES: [&str; 4] = ["支持", "supports", "supported", "✅"];
    let mut supports = Vec::new();
    let mut not_supported = Vec::new();
    // Walk through the text, switching lists at each marker.
    let lower = text.to_lowercase();
    let mut markers: Vec<(usize, usize, bool)> = Vec::new(); // (start, end, is_not)
    for m in NOT {
        for (i, _) in lower.match_indices(m) {
            markers.push((i, i + m.len(), true));
        }
    }
    for m in YES {
        for (i, _) in lower.match_indices(m) {
            let inside_not = markers.iter().any(|&(s, e, not)| not && i >= s && i < e);
            if !inside_not {
                markers.push((i, i + m.len(), false));
            }
        }
    }
    markers.sort();
    for (k, &(_, end, is_not)) in markers.iter().enumerate() {
        let stop = markers.get(k + 1).map_or(text.len(), |m| m.0);
        // `lower` may differ in byte length from `text` only for non-ASCII case changes,
        // which none of the markers involve; guard anyway.
        let Some(segment) = text.get(end.min(stop)..stop) else { continue };
        let segment = segment.trim_start_matches(['：', ':', ' ']);
        let items = segment
            .split(['；', ';', '\n', '。'])
            .map(|s| clean_item(s.trim_start_matches(['✅', '❌', '-', ' '])))
            .filter(|s| !s.is_empty());
        if is_not {
            not_supported.extend(items);
        } else {
            supports.extend(items);
        }
    }
    (supports, not_supported)
}

fn dedup(items: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items.into_iter().filter(|s| seen.insert(s.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_headings_by_meaning() {
        assert_eq!(SectionKind::classify("2. 触发规则"), Some(SectionKind::Triggers));
        assert_eq!(SectionKind::classify("## 4. 知识边界"), Some(SectionKind::Boundary));
        assert_eq!(SectionKind::classify("5. 示例案例"), Some(SectionKind::Examples));
        assert_eq!(SectionKind::classify("3、核心逻辑"), Some(SectionKind::Instructions));
        assert_eq!(SectionKind::classify("一、技能描述"), Some(SectionKind::Description));
        assert_eq!(SectionKind::classify("Examples"), Some(SectionKind::Examples));
        assert_eq!(SectionKind::classify("🚫 Boundary"), Some(SectionKind::Boundary));
        assert_eq!(SectionKind::classify("Instructions"), Some(SectionKind::Instructions));
        assert_eq!(SectionKind::classify("When to use"), Some(SectionKind::Triggers));
        assert_eq!(SectionKind::classify("History of tea"), None);
    }

    #[test]
    fn parses_trigger_lists() {
        assert_eq!(parse_triggers("关键词：劳动合同、试用期、加班"), vec!["劳动合同", "试用期", "加班"]);
        assert_eq!(parse_triggers("Keywords: refund, invoice; shipping"), vec!["refund", "invoice", "shipping"]);
        assert_eq!(parse_triggers("- 工伤\n- 社保\n"), vec!["工伤", "社保"]);
        assert!(parse_triggers("This skill fires when the user asks about taxes.").is_empty());
    }

    #[test]
    fn parses_examples() {
        let ex = parse_examples(
            "- 试用期不签劳动合同违法吗？\n- Q: How do I reset? → Hold the button.\n1. 问：年假几天？\n",
        );
        assert_eq!(ex, vec!["试用期不签劳动合同违法吗？", "How do I reset?", "年假几天？"]);
    }

    #[test]
    fn parses_boundary() {
        let (yes, no) = parse_boundary("支持：劳动合同订立；工资工时。不支持：刑事、知识产权；个案胜诉判断。");
        assert_eq!(yes, vec!["劳动合同订立", "工资工时"]);
        assert_eq!(no, vec!["刑事、知识产权", "个案胜诉判断"]);
        let (yes, no) = parse_boundary("✅ product setup\n✅ billing\n❌ legal advice\n");
        assert_eq!(yes, vec!["product setup", "billing"]);
        assert_eq!(no, vec!["legal advice"]);
        let (yes, no) = parse_boundary("Supports: facts in the papers. Does not support: medical advice, news.");
        assert_eq!(yes, vec!["facts in the papers"]);
        assert_eq!(no, vec!["medical advice, news"]);
    }

    #[test]
    fn outline_finds_title_and_sections() {
        let body = "# 劳动法\n前言\n## 1. 技能描述\n回答劳动法问题。\n```\n# not a heading\n```\n## 2. 触发规则\n关键词：a、b\n";
        let o = outline(body);
        assert_eq!(o.title.as_deref(), Some("劳动法"));
        assert_eq!(o.preamble, "前言");
        assert_eq!(o.sections.len(), 2);
        assert_eq!(o.sections[0].heading, "1. 技能描述");
        assert!(o.sections[0].content.contains("# not a heading"));
    }
}
