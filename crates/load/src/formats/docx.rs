//! DOCX text extraction: `word/document.xml` rendered as Markdown.
//!
//! Headings (found through `word/styles.xml`: outline levels, `heading N` names and ids, localized
//! names) become `#` lines, numbered/bulleted paragraphs become `- ` items indented by level, tables
//! become one line per row (see [`TableBuilder`]). Deleted (tracked-change) text, hidden text, field
//! codes and table-of-contents entries are left out.
//!
//! The archive is never trusted: each member is inflated through a byte limit and members whose
//! declared compression ratio is absurd are refused before inflating ([`ExtractError::ZipBomb`]).
//!
//! This file also holds the Markdown block model and table renderer shared with the HTML extractor.
use std::io::{Cursor, Read};

use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::Reader;
use unicode_normalization::UnicodeNormalization;

use super::{ExtractError, ExtractLimits, Extracted};

const FORMAT: &str = "DOCX";
/// Members larger than this (declared) are checked against `max_ratio` before inflating; small
/// members may compress very well (repetitive XML) without being dangerous.
const RATIO_CHECK_MIN_BYTES: u64 = 1024 * 1024;
/// Deepest `w:basedOn` chain followed (cycles in a hostile styles.xml end here).
const MAX_STYLE_DEPTH: usize = 16;

pub fn extract_docx(bytes: &[u8], limits: &ExtractLimits) -> Result<Extracted, ExtractError> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
        let reason = if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
            "an old Word 97-2003 (.doc) file or a password-protected DOCX, not a DOCX; \
             save it as an unprotected .docx to index it"
                .to_string()
        } else {
            format!("not a DOCX (zip) file ({e})")
        };
        corrupt(reason)
    })?;

    let document_name = match read_member(&mut archive, "word/document.xml", limits)? {
        Some(xml) => Some(("word/document.xml".to_string(), xml)),
        // Some producers name the main part differently; the package relationships say where it is.
        None => match read_member(&mut archive, "_rels/.rels", limits)? {
            Some(rels) => match office_document_target(&xml_text("_rels/.rels", &rels)?) {
                Some(target) => read_member(&mut archive, &target, limits)?.map(|xml| (target, xml)),
                None => None,
            },
            None => None,
        },
    };
    let Some((document_name, document)) = document_name else {
        return Err(corrupt("no word/document.xml: not a Word document".to_string()));
    };
    let document = xml_text(&document_name, &document)?;

    let styles = match read_member(&mut archive, "word/styles.xml", limits)? {
        Some(xml) => Styles::parse(&xml_text("word/styles.xml", &xml)?).unwrap_or_default(),
        None => Styles::default(),
    };
    let core_title = match read_member(&mut archive, "docProps/core.xml", limits)? {
        Some(xml) => xml_text("docProps/core.xml", &xml).ok().and_then(|core| core_title(&core)),
        None => None,
    };

    let blocks = parse_document(&document, &styles)
        .map_err(|e| corrupt(format!("{document_name} is not well-formed XML ({e})")))?;
    let text = normalize_text(&render_blocks(&blocks));
    let title = core_title
        .or_else(|| first_heading(&blocks))
        .map(|t| normalize_text(&clean_inline(&t)))
        .filter(|t| !t.is_empty());
    Ok(Extracted { text, markdown: true, title, ..Default::default() })
}

fn corrupt(reason: String) -> ExtractError {
    ExtractError::Corrupt { format: FORMAT, reason }
}

/// Inflates one archive member without trusting the sizes its header declares.
/// `Ok(None)` when the member does not exist.
fn read_member<R: Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
    name: &str,
    limits: &ExtractLimits,
) -> Result<Option<Vec<u8>>, ExtractError> {
    let member = match archive.by_name(name) {
        Ok(member) => member,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(corrupt(format!("cannot open {name} in the archive ({e})"))),
    };
    let limit = limits.max_inflated_bytes;
    let limit_mb = limit.div_ceil(1024 * 1024);
    let compressed = member.compressed_size().max(1);
    let declared = member.size();
    if declared > limit || (declared > RATIO_CHECK_MIN_BYTES && declared / compressed > limits.max_ratio) {
        return Err(ExtractError::ZipBomb { member: name.to_string(), limit_mb, ratio: declared / compressed });
    }
    let mut out = Vec::with_capacity(declared.min(RATIO_CHECK_MIN_BYTES) as usize);
    member
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| corrupt(format!("cannot inflate {name} ({e})")))?;
    if out.len() as u64 > limit {
        return Err(ExtractError::ZipBomb { member: name.to_string(), limit_mb, ratio: out.len() as u64 / compressed });
    }
    Ok(Some(out))
}

/// The text of an XML part: UTF-8 (BOM allowed) or UTF-16 with a BOM.
fn xml_text(name: &str, bytes: &[u8]) -> Result<String, ExtractError> {
    if let Some((encoding, _)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, _, malformed) = encoding.decode(bytes);
        if !malformed {
            return Ok(text.into_owned());
        }
    } else if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(text.to_string());
    }
    Err(corrupt(format!("{name} is not UTF-8 or UTF-16 text")))
}

/// The `Target` of the officeDocument relationship in `_rels/.rels`, as an archive path.
fn office_document_target(rels: &str) -> Option<String> {
    let mut reader = Reader::from_str(rels);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) if e.local_name().as_ref() == b"Relationship" => {
                let is_main = attr(&e, b"Type").is_some_and(|t| t.ends_with("/officeDocument"));
                if let (true, Some(target)) = (is_main, attr(&e, b"Target")) {
                    return Some(target.trim_start_matches('/').to_string());
                }
            }
            Ok(Event::Eof) | Err(_) => return None,
            _ => {}
        }
    }
}

/// `dc:title` of `docProps/core.xml`, when it says something.
fn core_title(core: &str) -> Option<String> {
    let mut reader = Reader::from_str(core);
    let mut in_title = false;
    let mut title = String::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) if e.local_name().as_ref() == b"title" => in_title = true,
            Ok(Event::End(e)) if e.local_name().as_ref() == b"title" => break,
            Ok(Event::Text(t)) if in_title => title.push_str(&t.decode().ok()?),
            Ok(Event::GeneralRef(r)) if in_title => push_ref(&mut title, &r),
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    let title = clean_inline(&title);
    (!title.is_empty()).then_some(title)
}

/// The value of the attribute with this local name (`w:val` → `val`), unescaped.
fn attr(e: &BytesStart<'_>, local: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == local)
        .map(|a| a.unescape_value().map(|v| v.into_owned()).unwrap_or_default())
}

/// Whether an on/off property (`<w:vanish/>`, `<w:tblHeader w:val="true"/>`) is on.
fn on_off(e: &BytesStart<'_>) -> bool {
    !matches!(attr(e, b"val").as_deref(), Some("0" | "false" | "off"))
}

fn push_ref(out: &mut String, r: &BytesRef<'_>) {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        out.push(c);
    } else if let Ok(name) = r.decode() {
        if let Some(s) = quick_xml::escape::resolve_predefined_entity(&name) {
            out.push_str(s);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Styles
// ---------------------------------------------------------------------------------------------

/// What a paragraph style means for the output.
#[derive(Debug, Clone, Default, PartialEq)]
struct StyleKind {
    heading: Option<u8>,
    /// `Some(level)` when the style numbers its paragraphs (List Bullet, List Number…).
    list: Option<u8>,
    toc: bool,
    code: bool,
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
struct Styles {
    kinds: std::collections::HashMap<String, StyleKind>,
    /// The style of paragraphs without `w:pStyle`.
    default_id: Option<String>,
}

impl Styles {
    fn parse(xml: &str) -> Result<Styles, quick_xml::Error> {
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

    fn kind(&self, id: Option<&str>) -> StyleKind {
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

// ---------------------------------------------------------------------------------------------
// document.xml
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    P,
    PPr,
    NumPr,
    R,
    RPr,
    T,
    Tbl,
    Tr,
    TrPr,
    Tc,
    TcPr,
    Other,
}

#[derive(Default)]
struct Para {
    style: Option<String>,
    num_id: Option<String>,
    ilvl: Option<u8>,
    outline: Option<u8>,
    text: String,
    run: String,
    run_hidden: bool,
}

/// Elements whose whole content is left out: deleted and moved-away text, the fallback copy of
/// alternate content (the preferred copy holds the same text), field codes, comments' anchors.
const SKIPPED: [&[u8]; 7] =
    [b"del", b"moveFrom", b"Fallback", b"instrText", b"delInstrText", b"footnoteReference", b"endnoteReference"];

fn parse_document(xml: &str, styles: &Styles) -> Result<Vec<Block>, quick_xml::Error> {
    let mut reader = Reader::from_str(xml);
    let mut blocks: Vec<Block> = Vec::new();
    let mut tags: Vec<Tag> = Vec::new();
    let mut paras: Vec<Para> = Vec::new();
    let mut tables: Vec<TableBuilder> = Vec::new();
    // Blocks of the table cells being read, innermost last.
    let mut cells: Vec<Vec<Block>> = Vec::new();
    let mut skip_depth = 0usize;
    let mut table_count = 0u32;

    loop {
        let event = reader.read_event()?;
        if skip_depth > 0 {
            match event {
                Event::Start(_) => skip_depth += 1,
                Event::End(_) => skip_depth -= 1,
                Event::Eof => break,
                _ => {}
            }
            continue;
        }
        let (e, empty) = match event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                match tags.pop() {
                    Some(Tag::R) => {
                        if let Some(p) = paras.last_mut() {
                            let run = std::mem::take(&mut p.run);
                            if !p.run_hidden {
                                p.text.push_str(&run);
                            }
                        }
                    }
                    Some(Tag::P) => {
                        if let Some(p) = paras.pop() {
                            let target = cells.last_mut().unwrap_or(&mut blocks);
                            finish_paragraph(p, styles, target);
                        }
                    }
                    Some(Tag::Tc) => {
                        let cell_blocks = cells.pop().unwrap_or_default();
                        if let Some(t) = tables.last_mut() {
                            t.set_last_cell_blocks(cell_blocks);
                        }
                    }
                    Some(Tag::Tbl) => {
                        if let Some(t) = tables.pop() {
                            let target = cells.last_mut().unwrap_or(&mut blocks);
                            target.extend(t.finish());
                        }
                    }
                    _ => {}
                }
                continue;
            }
            Event::Text(t) => {
                if tags.last() == Some(&Tag::T) {
                    if let Some(p) = paras.last_mut() {
                        p.run.push_str(&t.decode().unwrap_or_default());
                    }
                }
                continue;
            }
            Event::GeneralRef(r) => {
                if tags.last() == Some(&Tag::T) {
                    if let Some(p) = paras.last_mut() {
                        push_ref(&mut p.run, &r);
                    }
                }
                continue;
            }
            Event::CData(t) => {
                if tags.last() == Some(&Tag::T) {
                    if let Some(p) = paras.last_mut() {
                        p.run.push_str(&t.decode().unwrap_or_default());
                    }
                }
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };

        let local = e.local_name();
        let name = local.as_ref();
        if SKIPPED.contains(&name) {
            if !empty {
                skip_depth = 1;
            }
            continue;
        }
        let parent = tags.last().copied();
        let tag = match (name, parent) {
            (b"p", _) => {
                if !empty {
                    paras.push(Para::default());
                }
                Tag::P
            }
            (b"pPr", Some(Tag::P)) => Tag::PPr,
            (b"pStyle", Some(Tag::PPr)) => {
                if let Some(p) = paras.last_mut() {
                    p.style = attr(&e, b"val");
                }
                Tag::Other
            }
            (b"outlineLvl", Some(Tag::PPr)) => {
                if let Some(p) = paras.last_mut() {
                    p.outline = attr(&e, b"val").and_then(|v| v.trim().parse().ok());
                }
                Tag::Other
            }
            (b"numPr", Some(Tag::PPr)) => Tag::NumPr,
            (b"ilvl", Some(Tag::NumPr)) => {
                if let Some(p) = paras.last_mut() {
                    p.ilvl = attr(&e, b"val").and_then(|v| v.trim().parse().ok());
                }
                Tag::Other
            }
            (b"numId", Some(Tag::NumPr)) => {
                if let Some(p) = paras.last_mut() {
                    p.num_id = attr(&e, b"val");
                }
                Tag::Other
            }
            (b"r", _) => {
                if let Some(p) = paras.last_mut() {
                    p.run.clear();
                    p.run_hidden = false;
                }
                Tag::R
            }
            (b"rPr", Some(Tag::R)) => Tag::RPr,
            (b"vanish", Some(Tag::RPr)) => {
                if let Some(p) = paras.last_mut() {
                    p.run_hidden = on_off(&e);
                }
                Tag::Other
            }
            (b"t", Some(Tag::R)) => Tag::T,
            (b"tab" | b"ptab", Some(Tag::R)) => {
                if let Some(p) = paras.last_mut() {
                    p.run.push('\t');
                }
                Tag::Other
            }
            (b"br", Some(Tag::R)) => {
                if let Some(p) = paras.last_mut() {
                    if attr(&e, b"type").is_none_or(|t| t == "textWrapping") {
                        p.run.push('\n');
                    }
                }
                Tag::Other
            }
            (b"cr", Some(Tag::R)) => {
                if let Some(p) = paras.last_mut() {
                    p.run.push('\n');
                }
                Tag::Other
            }
            (b"noBreakHyphen", Some(Tag::R)) => {
                if let Some(p) = paras.last_mut() {
                    p.run.push('-');
                }
                Tag::Other
            }
            (b"tbl", _) => {
                if !empty {
                    table_count += 1;
                    tables.push(TableBuilder::new(table_count));
                }
                Tag::Tbl
            }
            (b"tr", Some(Tag::Tbl)) => {
                if let Some(t) = tables.last_mut() {
                    t.start_row();
                }
                Tag::Tr
            }
            (b"trPr", Some(Tag::Tr)) => Tag::TrPr,
            (b"tblHeader", Some(Tag::TrPr)) => {
                if let Some(t) = tables.last_mut() {
                    t.mark_row_header(on_off(&e));
                }
                Tag::Other
            }
            (b"tc", Some(Tag::Tr)) => {
                if let Some(t) = tables.last_mut() {
                    t.add_cell(Cell::default());
                }
                if !empty {
                    cells.push(Vec::new());
                }
                Tag::Tc
            }
            (b"tcPr", Some(Tag::Tc)) => Tag::TcPr,
            (b"gridSpan", Some(Tag::TcPr)) => {
                if let Some(cell) = tables.last_mut().and_then(TableBuilder::last_cell) {
                    cell.colspan = attr(&e, b"val").and_then(|v| v.trim().parse().ok()).unwrap_or(1);
                }
                Tag::Other
            }
            (b"vMerge", Some(Tag::TcPr)) => {
                if let Some(cell) = tables.last_mut().and_then(TableBuilder::last_cell) {
                    cell.continues_above = attr(&e, b"val").is_none_or(|v| v == "continue");
                }
                Tag::Other
            }
            (b"hMerge", Some(Tag::TcPr)) => {
                if let Some(cell) = tables.last_mut().and_then(TableBuilder::last_cell) {
                    cell.continues_left = attr(&e, b"val").is_none_or(|v| v == "continue");
                }
                Tag::Other
            }
            _ => Tag::Other,
        };
        if !empty {
            tags.push(tag);
        }
    }
    Ok(blocks)
}

fn finish_paragraph(p: Para, styles: &Styles, out: &mut Vec<Block>) {
    let kind = styles.kind(p.style.as_deref());
    if kind.toc {
        return;
    }
    let text = p.text.trim();
    if text.is_empty() {
        return;
    }
    let heading = match p.outline {
        Some(level) if level < 9 => Some(level.min(5) + 1),
        Some(_) => None,
        None => kind.heading,
    };
    let list = match p.num_id.as_deref() {
        Some(id) => (id.trim() != "0").then(|| p.ilvl.or(kind.list).unwrap_or(0).min(8)),
        None => kind.list.map(|level| p.ilvl.unwrap_or(level).min(8)),
    };
    let block = if let Some(level) = heading {
        Block::Heading(level, text.to_string())
    } else if let Some(level) = list {
        Block::ListItem(level, text.to_string())
    } else if kind.code {
        // Keep the code's own indentation.
        Block::Code(p.text.trim_end().trim_start_matches('\n').to_string())
    } else {
        Block::Para(text.to_string())
    };
    out.push(block);
}

fn first_heading(blocks: &[Block]) -> Option<String> {
    blocks.iter().find_map(|b| match b {
        Block::Heading(_, text) => Some(text.clone()),
        _ => None,
    })
}

// ---------------------------------------------------------------------------------------------
// Markdown blocks and tables (shared with the HTML extractor)
// ---------------------------------------------------------------------------------------------

/// One block of the Markdown output.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Block {
    /// `#`×level heading (level 1..=6).
    Heading(u8, String),
    Para(String),
    /// `- ` item, indented two spaces per nesting level (0 = top).
    ListItem(u8, String),
    /// Preformatted text, fenced.
    Code(String),
    /// One rendered table row; rows of the same table (same id) are kept on consecutive lines.
    Row(u32, String),
}

impl Block {
    fn text(&self) -> &str {
        match self {
            Block::Heading(_, t) | Block::Para(t) | Block::ListItem(_, t) | Block::Code(t) | Block::Row(_, t) => t,
        }
    }
}

/// Renders blocks as Markdown: blank lines between blocks, single newlines between the items of a
/// list and the rows of a table, consecutive code blocks in one fence.
pub(super) fn render_blocks(blocks: &[Block]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < blocks.len() {
        let block = &blocks[i];
        if i > 0 {
            let tight = matches!((&blocks[i - 1], block), (Block::ListItem(..), Block::ListItem(..)))
                || matches!((&blocks[i - 1], block), (Block::Row(a, _), Block::Row(b, _)) if a == b);
            out.push_str(if tight { "\n" } else { "\n\n" });
        }
        match block {
            Block::Heading(level, text) => {
                out.push_str(&"#".repeat(usize::from((*level).clamp(1, 6))));
                out.push(' ');
                out.push_str(&clean_inline(text));
            }
            Block::Para(text) => out.push_str(&escape_line_starts(text)),
            Block::ListItem(level, text) => {
                out.push_str(&"  ".repeat(usize::from(*level)));
                out.push_str("- ");
                out.push_str(&clean_inline(text));
            }
            Block::Row(_, text) => out.push_str(&escape_line_starts(text)),
            Block::Code(_) => {
                let mut code = Vec::new();
                while let Some(Block::Code(text)) = blocks.get(i) {
                    code.push(text.as_str());
                    i += 1;
                }
                i -= 1;
                let code = code.join("\n");
                let mut fence = "```".to_string();
                while code.contains(&fence) {
                    fence.push('`');
                }
                out.push_str(&fence);
                out.push('\n');
                out.push_str(&code);
                out.push('\n');
                out.push_str(&fence);
            }
        }
        i += 1;
    }
    out
}

/// Keeps text lines that happen to start like Markdown structure (`# `, a code fence) from being
/// read as such by the chunker.
fn escape_line_starts(text: &str) -> String {
    text.lines()
        .map(|line| {
            let t = line.trim_start();
            if (t.starts_with('#') && t.trim_start_matches('#').starts_with([' ', '\t'])) || t.starts_with("```") {
                format!("\\{t}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whitespace runs (tabs, newlines) collapsed to single spaces, trimmed.
pub(super) fn clean_inline(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// NFC, `\n` line endings, no control characters but `\n`/`\t`, no trailing spaces, at most one
/// blank line in a row (outside code fences), no leading/trailing blank lines.
pub(super) fn normalize_text(text: &str) -> String {
    let text: String = text
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .nfc()
        .filter(|&c| c == '\n' || c == '\t' || !c.is_control())
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    let mut in_fence = false;
    for line in text.lines() {
        let line = line.trim_end();
        if line.starts_with("```") {
            in_fence = !in_fence;
        }
        if line.is_empty() && !in_fence {
            blank_run += 1;
            if blank_run > 1 || out.is_empty() {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// A table cell as read from the source.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cell {
    pub blocks: Vec<Block>,
    /// Grid columns the cell spans (HTML `colspan`, DOCX `w:gridSpan`).
    pub colspan: u32,
    /// Rows the cell spans (HTML `rowspan`); DOCX uses `continues_above` instead.
    pub rowspan: u32,
    /// DOCX `w:vMerge` continuation: the cell shows the text of the cell above.
    pub continues_above: bool,
    /// Old DOCX `w:hMerge` continuation: the cell is part of the cell on its left.
    pub continues_left: bool,
    /// HTML `<th>`.
    pub header: bool,
}

impl Default for Cell {
    fn default() -> Self {
        Cell {
            blocks: Vec::new(),
            colspan: 1,
            rowspan: 1,
            continues_above: false,
            continues_left: false,
            header: false,
        }
    }
}

#[derive(Debug, Default)]
struct Row {
    cells: Vec<Cell>,
    /// Marked as a header row by the source (DOCX `w:tblHeader`, HTML `<thead>`).
    header: bool,
}

/// Collects a table's rows and renders them for retrieval.
///
/// A data table becomes one line per row. When the table has a header row, each following row is
/// written as `header: value; header: value`: a chunk holding only some rows of a long table then
/// still says what each value means (the chunker may cut a table anywhere, and "price: 30" is
/// findable by "price" where a bare "30" is not). Without a recognizable header, cells are joined
/// with ` | `. A table used for layout (it holds headings or other tables) or with a single column
/// is not a data table: its cells' blocks are written out in order as ordinary blocks.
#[derive(Debug)]
pub(super) struct TableBuilder {
    id: u32,
    rows: Vec<Row>,
    /// Drawn with `role="presentation"` or similar: never a data table.
    pub layout: bool,
}

const MAX_COLSPAN: u32 = 64;
const MAX_ROWSPAN: u32 = 1000;
const MAX_HEADER_CELL_CHARS: usize = 40;

impl TableBuilder {
    pub(super) fn new(id: u32) -> Self {
        TableBuilder { id, rows: Vec::new(), layout: false }
    }

    pub(super) fn start_row(&mut self) {
        self.rows.push(Row::default());
    }

    pub(super) fn mark_row_header(&mut self, header: bool) {
        if let Some(row) = self.rows.last_mut() {
            row.header = header;
        }
    }

    pub(super) fn add_cell(&mut self, cell: Cell) {
        if self.rows.is_empty() {
            self.start_row();
        }
        if let Some(row) = self.rows.last_mut() {
            row.cells.push(cell);
        }
    }

    pub(super) fn last_cell(&mut self) -> Option<&mut Cell> {
        self.rows.last_mut().and_then(|r| r.cells.last_mut())
    }

    pub(super) fn set_last_cell_blocks(&mut self, blocks: Vec<Block>) {
        if let Some(cell) = self.last_cell() {
            cell.blocks = blocks;
        }
    }

    /// The table as blocks.
    pub(super) fn finish(self) -> Vec<Block> {
        let mut rows = self.rows;
        rows.retain(|r| !r.cells.is_empty());
        let columns = rows.iter().map(|r| r.cells.iter().filter(|c| !c.continues_left).count()).max().unwrap_or(0);
        let nested = rows
            .iter()
            .flat_map(|r| &r.cells)
            .flat_map(|c| &c.blocks)
            .any(|b| matches!(b, Block::Heading(..) | Block::Row(..) | Block::Code(..)));
        if self.layout || nested || columns <= 1 {
            return rows.into_iter().flat_map(|r| r.cells).flat_map(|c| c.blocks).collect();
        }

        // Lay the cells out on the grid: `None` where a cell spans from the left.
        let mut grid: Vec<Vec<Option<String>>> = Vec::with_capacity(rows.len());
        let mut pending: Vec<(u32, String)> = Vec::new(); // per column: rows left, text (rowspan)
        for row in &rows {
            let mut line: Vec<Option<String>> = Vec::new();
            let take_pending = |line: &mut Vec<Option<String>>, pending: &mut Vec<(u32, String)>| {
                while let Some((left, text)) = pending.get_mut(line.len()).filter(|(left, _)| *left > 0) {
                    *left -= 1;
                    line.push(Some(text.clone()));
                }
            };
            for cell in &row.cells {
                take_pending(&mut line, &mut pending);
                if cell.continues_left {
                    line.push(None);
                    continue;
                }
                let col = line.len();
                let text = if cell.continues_above {
                    grid.last().and_then(|above| above.get(col).cloned().flatten()).unwrap_or_default()
                } else {
                    cell_text(&cell.blocks)
                };
                let rowspan = cell.rowspan.clamp(1, MAX_ROWSPAN);
                if rowspan > 1 {
                    if pending.len() <= col {
                        pending.resize(col + 1, (0, String::new()));
                    }
                    pending[col] = (rowspan - 1, text.clone());
                }
                line.push(Some(text));
                for _ in 1..cell.colspan.clamp(1, MAX_COLSPAN) {
                    line.push(None);
                }
            }
            take_pending(&mut line, &mut pending);
            grid.push(line);
        }

        // Header rows: those the source marks, else a first row that looks like one.
        let marked =
            rows.iter().take_while(|r| r.header || (!r.cells.is_empty() && r.cells.iter().all(|c| c.header))).count();
        let header_rows = if marked > 0 && marked < grid.len() {
            marked
        } else if marked == 0 && looks_like_header(&grid) {
            1
        } else {
            0
        };

        let mut out = Vec::new();
        if header_rows == 0 {
            for line in &grid {
                let mut cells: Vec<&str> = line.iter().flatten().map(String::as_str).collect();
                while cells.last() == Some(&"") {
                    cells.pop();
                }
                if !cells.is_empty() {
                    out.push(Block::Row(self.id, cells.join(" | ")));
                }
            }
            return out;
        }
        let width = grid.iter().map(Vec::len).max().unwrap_or(0);
        let mut names = vec![String::new(); width];
        for line in &grid[..header_rows] {
            let mut last = String::new();
            for (col, cell) in line.iter().enumerate() {
                if let Some(text) = cell {
                    last = text.clone();
                }
                if !last.is_empty() && !names[col].split(" / ").any(|n| n == last) {
                    if !names[col].is_empty() {
                        names[col].push_str(" / ");
                    }
                    names[col].push_str(&last);
                }
            }
        }
        for line in &grid[header_rows..] {
            // Repeated header rows (page breaks in the source) say nothing new.
            if line.iter().zip(&names).all(|(c, n)| c.as_deref().is_none_or(|c| c == n)) {
                continue;
            }
            let parts: Vec<String> = line
                .iter()
                .enumerate()
                .filter_map(|(col, cell)| {
                    let value = cell.as_deref().filter(|v| !v.is_empty())?;
                    let name = names.get(col).map(String::as_str).unwrap_or_default();
                    Some(if name.is_empty() || name == value { value.to_string() } else { format!("{name}: {value}") })
                })
                .collect();
            if !parts.is_empty() {
                out.push(Block::Row(self.id, parts.join("; ")));
            }
        }
        out
    }
}

/// An unmarked first row counts as a header when the table has at least three columns (two-column
/// tables are often key/value lists, whose first row is data) and the row's cells are all short
/// labels, none a number.
fn looks_like_header(grid: &[Vec<Option<String>>]) -> bool {
    let Some(first) = grid.first() else { return false };
    let cells: Vec<&String> = first.iter().flatten().collect();
    grid.len() >= 2
        && cells.len() >= 3
        && cells.len() == first.len()
        && cells.iter().all(|c| {
            !c.is_empty()
                && c.chars().count() <= MAX_HEADER_CELL_CHARS
                && c.trim_end_matches('%').replace([',', ' '], "").parse::<f64>().is_err()
        })
}

/// A cell's blocks as one line.
fn cell_text(blocks: &[Block]) -> String {
    blocks.iter().map(|b| clean_inline(b.text())).filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use zip::write::SimpleFileOptions;

    const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;

    fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, data) in members {
            writer.start_file(*name, options).unwrap();
            writer.write_all(data).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    fn docx(body: &str, styles: Option<&str>, core: Option<&str>) -> Vec<u8> {
        let document = format!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {W}><w:body>{body}</w:body></w:document>"#
        );
        let mut members: Vec<(&str, Vec<u8>)> = vec![("word/document.xml", document.into_bytes())];
        if let Some(styles) = styles {
            members.push(("word/styles.xml", format!(r#"<w:styles {W}>{styles}</w:styles>"#).into_bytes()));
        }
        if let Some(title) = core {
            let core = format!(
                r#"<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></cp:coreProperties>"#
            );
            members.push(("docProps/core.xml", core.into_bytes()));
        }
        let members: Vec<(&str, &[u8])> = members.iter().map(|(n, d)| (*n, d.as_slice())).collect();
        zip_of(&members)
    }

    fn p(style: &str, text: &str) -> String {
        format!(
            r#"<w:p><w:pPr><w:pStyle w:val="{style}"/></w:pPr><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>"#
        )
    }

    fn plain(text: &str) -> String {
        format!(r#"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"#)
    }

    fn li(level: u8, text: &str) -> String {
        format!(
            r#"<w:p><w:pPr><w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="3"/></w:numPr></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"#
        )
    }

    fn tc(text: &str) -> String {
        format!("<w:tc><w:tcPr/>{}</w:tc>", plain(text))
    }

    fn extract(bytes: &[u8]) -> Extracted {
        extract_docx(bytes, &ExtractLimits::default()).unwrap()
    }

    // Word: ids `Heading1`, names `heading 1`, outline levels in the styles.
    const WORD_STYLES: &str = r#"
        <w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>
        <w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>
        <w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>
        <w:style w:type="paragraph" w:styleId="TOC1"><w:name w:val="toc 1"/></w:style>
        <w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/><w:pPr><w:numPr><w:numId w:val="7"/></w:numPr></w:pPr></w:style>
        <w:style w:type="character" w:styleId="Heading1Char"><w:name w:val="Heading 1 Char"/></w:style>"#;

    #[test]
    fn headings_lists_and_paragraphs() {
        let body = [
            p("TOC1", "Installation\t3"),
            p("Heading1", "Installation"),
            plain("Run the installer &amp; follow the prompts."),
            li(0, "Download"),
            li(1, "Pick the 64-bit build"),
            p("ListBullet", "Run it"),
            p("Heading2", "Configuration"),
            plain("Edit config.toml."),
        ]
        .concat();
        let out = extract(&docx(&body, Some(WORD_STYLES), None));
        assert!(out.markdown);
        assert_eq!(
            out.text,
            "# Installation\n\nRun the installer & follow the prompts.\n\n- Download\n  - Pick the 64-bit build\n- Run it\n\n## Configuration\n\nEdit config.toml."
        );
        assert_eq!(out.title.as_deref(), Some("Installation"));
        assert!(out.pages.is_empty() && out.faq.is_empty());
    }

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
    fn tables_with_and_without_header() {
        let header_row = format!(r#"<w:tr><w:trPr><w:tblHeader/></w:trPr>{}{}</w:tr>"#, tc("Plan"), tc("Price"));
        let table1 = format!(
            "<w:tbl><w:tblPr/>{header_row}<w:tr>{}{}</w:tr><w:tr>{}{}</w:tr></w:tbl>",
            tc("Basic"),
            tc("10 元"),
            tc("Pro"),
            tc("30 元")
        );
        // No marked header, two columns: a key/value table.
        let table2 =
            format!("<w:tbl><w:tr>{}{}</w:tr><w:tr>{}{}</w:tr></w:tbl>", tc("Name"), tc("Ada"), tc("Age"), tc("36"));
        // Unmarked but clearly a header: three short labels; a vertically merged cell.
        let merged = r#"<w:tc><w:tcPr><w:vMerge/></w:tcPr><w:p/></w:tc>"#;
        let table3 = format!(
            r#"<w:tbl><w:tr>{}{}{}</w:tr><w:tr><w:tc><w:tcPr><w:vMerge w:val="restart"/></w:tcPr>{}</w:tc>{}{}</w:tr><w:tr>{merged}{}{}</w:tr></w:tbl>"#,
            tc("Region"),
            tc("Month"),
            tc("Sales"),
            plain("North"),
            tc("Jan"),
            tc("5"),
            tc("Feb"),
            tc("7"),
        );
        let body = [table1, plain("Between."), table2, table3].concat();
        let out = extract(&docx(&body, None, None));
        assert_eq!(
            out.text,
            "Plan: Basic; Price: 10 元\nPlan: Pro; Price: 30 元\n\nBetween.\n\nName | Ada\nAge | 36\n\n\
             Region: North; Month: Jan; Sales: 5\nRegion: North; Month: Feb; Sales: 7"
        );
    }

    #[test]
    fn layout_and_single_column_tables_keep_their_blocks() {
        let cell = format!("<w:tc>{}{}</w:tc>", p("Heading1", "Inside"), plain("Body text."));
        let body = format!(
            "<w:tbl><w:tr>{cell}{}</w:tr></w:tbl><w:tbl><w:tr>{}</w:tr></w:tbl>",
            tc("Side"),
            tc("Note: boxed.")
        );
        let out = extract(&docx(&body, Some(WORD_STYLES), None));
        assert_eq!(out.text, "# Inside\n\nBody text.\n\nSide\n\nNote: boxed.");
    }

    #[test]
    fn runs_tabs_breaks_deletions_hidden_text_and_fields() {
        let body = r#"<w:p>
            <w:r><w:t xml:space="preserve">Hello </w:t></w:r>
            <w:ins><w:r><w:t>new</w:t></w:r></w:ins>
            <w:del><w:r><w:delText>old</w:delText></w:r></w:del>
            <w:r><w:tab/><w:t>tabbed</w:t><w:br/><w:t>next line</w:t></w:r>
            <w:r><w:rPr><w:vanish/></w:rPr><w:t>hidden</w:t></w:r>
            <w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>HYPERLINK "x"</w:instrText></w:r>
            <w:r><w:fldChar w:fldCharType="separate"/></w:r><w:hyperlink><w:r><w:t>link</w:t></w:r></w:hyperlink>
            <w:r><w:fldChar w:fldCharType="end"/></w:r>
            <w:r><mc:AlternateContent xmlns:mc="m"><mc:Choice><w:drawing><w:txbxContent><w:p><w:r><w:t>In a box</w:t></w:r></w:p></w:txbxContent></w:drawing></mc:Choice>
              <mc:Fallback><w:pict><w:txbxContent><w:p><w:r><w:t>In a box</w:t></w:r></w:p></w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r>
            </w:p><w:p><w:r><w:t># not a heading</w:t></w:r></w:p>"#;
        let out = extract(&docx(body, None, None));
        assert_eq!(out.text, "In a box\n\nHello new\ttabbed\nnext linelink\n\n\\# not a heading");
    }

    #[test]
    fn title_from_core_properties_else_first_heading() {
        let body = [p("Heading1", "Chapter"), plain("x")].concat();
        assert_eq!(extract(&docx(&body, Some(WORD_STYLES), Some("The  Guide"))).title.as_deref(), Some("The Guide"));
        assert_eq!(extract(&docx(&body, Some(WORD_STYLES), Some(" "))).title.as_deref(), Some("Chapter"));
        assert_eq!(extract(&docx(&plain("x"), None, None)).title, None);
    }

    #[test]
    fn code_paragraphs_are_fenced() {
        let styles = r#"<w:style w:type="paragraph" w:styleId="SourceCode"><w:name w:val="Source Code"/></w:style>"#;
        let body =
            [plain("Run:"), p("SourceCode", "cargo build"), p("SourceCode", "  --release"), plain("Done.")].concat();
        assert_eq!(
            extract(&docx(&body, Some(styles), None)).text,
            "Run:\n\n```\ncargo build\n  --release\n```\n\nDone."
        );
    }

    #[test]
    fn not_a_docx() {
        let err = extract_docx(b"plain text, not a zip", &ExtractLimits::default()).unwrap_err();
        assert!(
            matches!(&err, ExtractError::Corrupt { format: "DOCX", reason } if reason.starts_with("not a DOCX (zip) file"))
        );
        let ole = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0, 0];
        let err = extract_docx(&ole, &ExtractLimits::default()).unwrap_err().to_string();
        assert!(err.contains(".doc") && err.contains("save it as"), "{err}");

        let other_zip = zip_of(&[("mimetype", b"application/epub+zip")]);
        assert_eq!(
            extract_docx(&other_zip, &ExtractLimits::default()).unwrap_err(),
            ExtractError::Corrupt { format: "DOCX", reason: "no word/document.xml: not a Word document".into() }
        );
        let bad_xml = zip_of(&[("word/document.xml", b"<w:document><w:body><w:p></w:body>")]);
        let err = extract_docx(&bad_xml, &ExtractLimits::default()).unwrap_err().to_string();
        assert!(err.starts_with("damaged or truncated DOCX: word/document.xml is not well-formed XML"), "{err}");
    }

    #[test]
    fn main_part_found_through_relationships() {
        let document = format!(r#"<w:document {W}><w:body>{}</w:body></w:document>"#, plain("Moved"));
        let rels = br#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="/word/document2.xml"/></Relationships>"#;
        let bytes = zip_of(&[("_rels/.rels", rels), ("word/document2.xml", document.as_bytes())]);
        assert_eq!(extract(&bytes).text, "Moved");
    }

    #[test]
    fn zip_bombs_are_refused() {
        // 100 MB of zeros deflates to ~100 KB: refused on its declared ratio before inflating.
        let zeros = vec![0u8; 100 * 1024 * 1024];
        let bomb = zip_of(&[("word/document.xml", &zeros)]);
        assert!(bomb.len() < 1024 * 1024);
        match extract_docx(&bomb, &ExtractLimits::default()).unwrap_err() {
            ExtractError::ZipBomb { member, limit_mb, ratio } => {
                assert_eq!(member, "word/document.xml");
                assert_eq!(limit_mb, 64);
                assert!(ratio > 200, "{ratio}");
            }
            other => panic!("{other:?}"),
        }
        // With the ratio check out of the way, the inflate limit stops it.
        let limits = ExtractLimits { max_inflated_bytes: 1024 * 1024, max_ratio: u64::MAX };
        let small = zip_of(&[("word/document.xml", &zeros[..3 * 1024 * 1024])]);
        let err = extract_docx(&small, &limits).unwrap_err();
        assert!(matches!(err, ExtractError::ZipBomb { limit_mb: 1, .. }), "{err:?}");
        assert!(err.to_string().contains("looks like a zip bomb"));
    }

    #[test]
    fn lying_zip_header_is_not_trusted() {
        // A deflated member whose headers claim it inflates to 1000 bytes while it inflates to 3 MB:
        // the declared sizes pass every check. The zip crate itself stops at the declared size
        // (→ Corrupt); were it not to, the inflate limit would (→ ZipBomb). Never read unbounded.
        let zeros = vec![0u8; 3 * 1024 * 1024];
        let mut bytes = zip_of(&[("word/document.xml", &zeros)]);
        let real = (zeros.len() as u32).to_le_bytes();
        let mut patched = 0;
        for (signature, offset) in [(b"PK\x03\x04", 22), (b"PK\x01\x02", 24)] {
            let at = bytes.windows(4).position(|w| w == signature).unwrap() + offset;
            assert_eq!(bytes[at..at + 4], real);
            bytes[at..at + 4].copy_from_slice(&1000u32.to_le_bytes());
            patched += 1;
        }
        assert_eq!(patched, 2);
        let limits = ExtractLimits { max_inflated_bytes: 1024 * 1024, max_ratio: 200 };
        let err = extract_docx(&bytes, &limits).unwrap_err();
        assert!(matches!(err, ExtractError::ZipBomb { limit_mb: 1, .. } | ExtractError::Corrupt { .. }), "{err:?}");
    }

    fn testdata(name: &str) -> Vec<u8> {
        let path = format!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/documents/{}"), name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e} (made by scripts/make-test-documents)"))
    }

    #[test]
    fn guide_from_pandoc_and_libreoffice() {
        for name in ["guide.docx", "guide-libreoffice.docx"] {
            let out = extract(&testdata(name));
            let text = &out.text;
            assert_eq!(out.title.as_deref(), Some("Nimbus AX3000 快速指南 Quick Guide"), "{name}");
            for expected in [
                "# 安装 Installation\n\n本指南介绍 Nimbus AX3000 路由器的安装、设置和常见问题。This guide covers",
                "\n## 包装内容 What is in the box\n\n- 路由器一台 One router\n- 电源适配器 Power adapter (12 V, 2 A)\n\
                 - 网线一根 One ethernet cable\n  - 长度 1.5 米 1.5 m long\n\n## 连接步骤 Connecting\n\n\
                 - 把网线一端插入光猫，另一端插入路由器的黄色 WAN 口。\n- Connect the power adapter",
                "\n### 指示灯 LED colours\n\n\
                 指示灯 LED: 白色常亮 Solid white; 含义 Meaning: 正常联网 Online\n\
                 指示灯 LED: 琥珀色常亮 Solid amber; 含义 Meaning: 没有互联网连接 No internet\n\
                 指示灯 LED: 琥珀色闪烁 Blinking amber; 含义 Meaning: 正在恢复出厂设置 Factory reset in progress\n\n\
                 # 常见问题 Troubleshooting\n\n## 恢复出厂设置 Factory reset\n\n用回形针按住背面的 Reset 孔 10 秒",
                "\n## 网速慢 Slow Wi-Fi\n\n把路由器放在房屋中央",
            ] {
                assert!(text.contains(expected), "{name}: {expected:?} not in\n{text}");
            }
            assert!(text.ends_with("to tell a slow internet connection from a Wi-Fi problem."), "{name}:\n{text}");
        }
    }

    #[test]
    fn zip_bomb_from_testdata() {
        let err = extract_docx(&testdata("zip-bomb.docx"), &ExtractLimits::default()).unwrap_err();
        assert!(matches!(&err, ExtractError::ZipBomb { member, .. } if member == "word/document.xml"), "{err:?}");
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
