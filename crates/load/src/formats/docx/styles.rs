//! Paragraph styles of `word/styles.xml`: which styles are headings (outline levels, `heading N`
//! names and ids in many languages), lists, table-of-contents entries or code, resolved through
//! their `w:basedOn` chains. Producers disagree on how they name things (Word, LibreOffice, WPS,
//! localized Word), so every hint a style gives is used.

use quick_xml::events::Event;
use quick_xml::Reader;

use super::attr;

/// Deepest `w:basedOn` chain followed (cycles in a hostile styles.xml end here).
const MAX_STYLE_DEPTH: usize = 16;

/// What a paragraph style means for the output.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct StyleKind {
    pub(super) heading: Option<u8>,
    /// `Some(level)` when the style numbers its paragraphs (List Bullet, List Number…).
    pub(super) list: Option<u8>,
    pub(super) toc: bool,
    pub(super) code: bool,
}

#[derive(Debug, Clone, Default)]
struct RawStyle {
    name: String,
    based_on: Option<String>,
    outline: Option<u8>,
    /// `Some(numbered)` when the style has a `w:numPr` (numId 0 switches numbering off).
    numbered: Option<bool>,
    ilvl: Option<u8>,
}

#[derive(Debug, Default)]
pub(super) struct Styles {
    kinds: std::collections::HashMap<String, StyleKind>,
    /// The style of paragraphs without `w:pStyle`.
    default_id: Option<String>,
}

impl Styles {
    pub(super) fn parse(xml: &str) -> Result<Styles, quick_xml::Error> {
        let mut raw: std::collections::HashMap<String, RawStyle> = Default::default();
        let mut default_id = None;
        let mut reader = Reader::from_str(xml);
        let mut current: Option<(String, RawStyle)> = None;
        let mut path: Vec<Vec<u8>> = Vec::new();
        loop {
            let (e, empty) = match reader.read_event()? {
                Event::Start(e) => (e, false),
                Event::Empty(e) => (e, true),
                Event::End(_) => {
                    if let Some(tag) = path.pop() {
                        if tag == b"style" {
                            if let Some((id, style)) = current.take() {
                                raw.insert(id, style);
                            }
                        }
                    }
                    continue;
                }
                Event::Eof => break,
                _ => continue,
            };
            let name = e.local_name().as_ref().to_vec();
            let parent = path.last().map(Vec::as_slice);
            match (name.as_slice(), parent) {
                (b"style", _) if !empty => {
                    let paragraph = attr(&e, b"type").is_none_or(|t| t == "paragraph");
                    let id = attr(&e, b"styleId").unwrap_or_default();
                    if paragraph && attr(&e, b"default").is_some_and(|d| d == "1" || d == "true") {
                        default_id = Some(id.clone());
                    }
                    current = paragraph.then(|| (id, RawStyle::default()));
                }
                (b"name", Some(b"style")) => {
                    if let Some((_, s)) = current.as_mut() {
                        s.name = attr(&e, b"val").unwrap_or_default();
                    }
                }
                (b"basedOn", Some(b"style")) => {
                    if let Some((_, s)) = current.as_mut() {
                        s.based_on = attr(&e, b"val");
                    }
                }
                (b"outlineLvl", Some(b"pPr")) => {
                    if let Some((_, s)) = current.as_mut() {
                        s.outline = attr(&e, b"val").and_then(|v| v.trim().parse().ok());
                    }
                }
                (b"numId", Some(b"numPr")) => {
                    if let Some((_, s)) = current.as_mut() {
                        s.numbered = Some(attr(&e, b"val").is_some_and(|v| v.trim() != "0"));
                    }
                }
                (b"ilvl", Some(b"numPr")) => {
                    if let Some((_, s)) = current.as_mut() {
                        s.ilvl = attr(&e, b"val").and_then(|v| v.trim().parse().ok());
                    }
                }
                _ => {}
            }
            if !empty {
                path.push(name);
            }
        }
        let kinds = raw.keys().map(|id| (id.clone(), resolve_style(&raw, id))).collect();
        Ok(Styles { kinds, default_id })
    }

    pub(super) fn kind(&self, id: Option<&str>) -> StyleKind {
        id.or(self.default_id.as_deref()).and_then(|id| self.kinds.get(id)).cloned().unwrap_or_default()
    }
}

/// Resolves a style through its `w:basedOn` chain: the nearest style that says something wins.
fn resolve_style(raw: &std::collections::HashMap<String, RawStyle>, id: &str) -> StyleKind {
    let own = raw.get(id);
    let name = own.map(|s| s.name.as_str()).unwrap_or_default();
    let toc = is_toc_style(name) || is_toc_style(id);
    let code = is_code_style(name) || is_code_style(id);
    let mut heading = None;
    let mut list = None;
    let mut current = Some(id);
    for _ in 0..MAX_STYLE_DEPTH {
        let Some(style) = current.and_then(|id| raw.get(id)) else { break };
        if heading.is_none() {
            heading = match style.outline {
                Some(level) if level < 9 => Some(level.min(5) + 1),
                // Outline level 9 is body text: stop looking for a heading.
                Some(_) => Some(0),
                None => heading_level_from_name(&style.name)
                    .or_else(|| heading_level_from_name(current.unwrap_or_default())),
            };
        }
        if list.is_none() {
            list = style.numbered.map(|numbered| numbered.then(|| style.ilvl.unwrap_or(0).min(8)));
        }
        current = style.based_on.as_deref();
    }
    StyleKind { heading: heading.filter(|&l| l > 0), list: list.flatten(), toc, code }
}

/// `heading 1`, `Heading1`, `Überschrift 1` (id `berschrift1`), `标题 1`, `Titre 1`… → 1; `Title` → 1.
fn heading_level_from_name(name: &str) -> Option<u8> {
    const PREFIXES: [&str; 14] = [
        "heading",
        "标题",
        "標題",
        "überschrift",
        "berschrift",
        "titre",
        "título",
        "titulo",
        "titolo",
        "kop",
        "rubrik",
        "заголовок",
        "見出し",
        "제목",
    ];
    let compact: String = name.chars().filter(|c| !c.is_whitespace() && *c != '_' && *c != '-').collect();
    let compact = compact.to_lowercase();
    if compact == "title" {
        return Some(1);
    }
    let rest = PREFIXES.iter().find_map(|p| compact.strip_prefix(p))?;
    let level: u8 = rest.parse().ok().filter(|_| !rest.is_empty() && rest.len() <= 2)?;
    (level >= 1).then_some(level.min(6))
}

fn is_toc_style(name: &str) -> bool {
    let n = name.to_lowercase().replace([' ', '_'], "");
    let rest = n.strip_prefix("toc").or_else(|| n.strip_prefix("contents"));
    rest.is_some_and(|r| r.is_empty() || r == "heading" || r.chars().all(|c| c.is_ascii_digit()))
}

fn is_code_style(name: &str) -> bool {
    let n = name.to_lowercase().replace([' ', '_', '-'], "");
    matches!(n.as_str(), "sourcecode" | "code" | "htmlpreformatted" | "preformattedtext" | "codeblock" | "plaintext")
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

    #[test]
    fn heading_styles_by_name_id_and_localized_names() {
        // LibreOffice: ids `Heading1` without outline levels; Chinese Word/WPS: numeric ids,
        // `heading 1` names; custom style with only an outline level; German id without name.
        let styles = r#"
            <w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="Heading 1"/><w:basedOn w:val="Heading"/></w:style>
            <w:style w:type="paragraph" w:styleId="2"><w:name w:val="heading 2"/></w:style>
            <w:style w:type="paragraph" w:styleId="a5"><w:name w:val="标题 3"/></w:style>
            <w:style w:type="paragraph" w:styleId="MyChapter"><w:name w:val="My Chapter"/><w:pPr><w:outlineLvl w:val="3"/></w:pPr></w:style>
            <w:style w:type="paragraph" w:styleId="berschrift5"><w:name w:val="Überschrift 5 Custom"/></w:style>
            <w:style w:type="paragraph" w:styleId="Sub"><w:name w:val="Sub"/><w:basedOn w:val="MyChapter"/></w:style>
            <w:style w:type="paragraph" w:styleId="Heading"><w:name w:val="Heading"/></w:style>"#;
        let body = [
            p("Heading1", "One"),
            p("2", "Two"),
            p("a5", "三"),
            p("MyChapter", "Four"),
            p("berschrift5", "Five"),
            p("Sub", "Inherited"),
            p("Heading", "Not a level"),
            p("Unknown", "Body"),
        ]
        .concat();
        let out = extract(&docx(&body, Some(styles), None));
        assert_eq!(
            out.text,
            "# One\n\n## Two\n\n### 三\n\n#### Four\n\n##### Five\n\n#### Inherited\n\nNot a level\n\nBody"
        );
    }

    #[test]
    fn heading_level_names() {
        assert_eq!(heading_level_from_name("heading 1"), Some(1));
        assert_eq!(heading_level_from_name("Heading3"), Some(3));
        assert_eq!(heading_level_from_name("标题 2"), Some(2));
        assert_eq!(heading_level_from_name("Titre 9"), Some(6));
        assert_eq!(heading_level_from_name("Title"), Some(1));
        assert_eq!(heading_level_from_name("Heading"), None);
        assert_eq!(heading_level_from_name("Heading 1 Char"), None);
        assert_eq!(heading_level_from_name("Subtitle"), None);
        assert!(is_toc_style("toc 2") && is_toc_style("TOC Heading") && is_toc_style("Contents 1"));
        assert!(!is_toc_style("Tocantins"));
    }
}
