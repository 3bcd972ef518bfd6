//! Markdown structure for chunking: sections under their heading path, code block ranges, and
//! tables with their header.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::ops::Range;

/// The text under one heading (up to the next heading of any level).
pub struct Section {
    pub heading: Vec<String>,
    /// Byte range of the section body (without its heading line).
    pub body: Range<usize>,
    /// Byte ranges of code blocks inside the body.
    pub code: Vec<Range<usize>>,
}

/// A GFM table of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// Byte range of the whole table.
    pub range: Range<usize>,
    /// Where its header line and delimiter row end (the first data row starts after).
    pub head_end: usize,
}

/// The sections of a Markdown document, and its tables.
pub fn sections(text: &str) -> (Vec<Section>, Vec<Table>) {
    let options = Options::ENABLE_YAML_STYLE_METADATA_BLOCKS | Options::ENABLE_TABLES;
    let mut sections = Vec::new();
    let mut tables: Vec<Table> = Vec::new();
    let mut path: Vec<(u8, String)> = Vec::new();
    let mut body_start = 0;
    let mut code: Vec<Range<usize>> = Vec::new();
    let mut heading: Option<(u8, String, usize)> = None;
    let mut in_metadata = false;

    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match event {
            Event::Start(Tag::MetadataBlock(_)) => in_metadata = true,
            Event::End(TagEnd::MetadataBlock(_)) => {
                in_metadata = false;
                body_start = range.end;
            }
            Event::Start(Tag::Heading { level, .. }) => heading = Some((level as u8, String::new(), range.start)),
            Event::Text(t) | Event::Code(t) if heading.is_some() => {
                if let Some((_, h, _)) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, title, start)) = heading.take() {
                    push_section(&mut sections, &path, body_start..start, std::mem::take(&mut code));
                    path.retain(|(l, _)| *l < level);
                    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
                    path.push((level, title));
                    body_start = range.end;
                }
            }
            Event::Start(Tag::CodeBlock(_)) if !in_metadata => code.push(range),
            Event::Start(Tag::Table(_)) => tables.push(Table { head_end: range.start, range }),
            Event::End(TagEnd::TableHead) => {
                // The delimiter row is the line after the header's.
                if let Some(table) = tables.last_mut() {
                    table.head_end = line_end(text, line_end(text, range.start) + 1).min(table.range.end);
                }
            }
            _ => {}
        }
    }
    push_section(&mut sections, &path, body_start..text.len(), code);
    (sections, tables)
}

/// The end of the line `at` is on (before its line break).
fn line_end(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text[at..].find('\n').map_or(text.len(), |i| at + i)
}

fn push_section(sections: &mut Vec<Section>, path: &[(u8, String)], body: Range<usize>, code: Vec<Range<usize>>) {
    if body.start >= body.end {
        return;
    }
    let heading = path.iter().map(|(_, t)| t.clone()).filter(|t| !t.is_empty()).collect();
    sections.push(Section { heading, body, code });
}
