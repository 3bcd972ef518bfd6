//! `word/document.xml` read into Markdown blocks in one pass over its XML events: paragraphs and
//! their runs, tables (nested ones too) and their cells' spans and merges. Elements whose content
//! is not document text (deletions, field codes, the fallback copy of alternate content) are
//! skipped whole.

use quick_xml::events::Event;
use quick_xml::Reader;

use super::paragraphs::{finish_paragraph, Para};
use super::styles::Styles;
use super::{attr, on_off, push_ref};
use quick_xml::events::BytesRef;

/// A character reference or one of XML's five predefined entities: all a document without a
/// DTD can use.
fn is_known_ref(r: &BytesRef<'_>) -> bool {
    matches!(r.resolve_char_ref(), Ok(Some(_)))
        || r.decode().is_ok_and(|name| quick_xml::escape::resolve_predefined_entity(&name).is_some())
}
use crate::formats::markdown::{Block, Cell, TableBuilder};

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

/// Elements whose whole content is left out: deleted and moved-away text, the fallback copy of
/// alternate content (the preferred copy holds the same text), field codes, comments' anchors.
const SKIPPED: [&[u8]; 7] =
    [b"del", b"moveFrom", b"Fallback", b"instrText", b"delInstrText", b"footnoteReference", b"endnoteReference"];

/// Why `word/document.xml` was not read.
#[derive(Debug, thiserror::Error)]
pub(super) enum DocumentError {
    #[error("is not well-formed XML ({0})")]
    Xml(#[from] quick_xml::Error),
    // OOXML forbids a DTD, and only a DTD can define entities: refusing it means no external
    // entity is fetched and no nested entity is expanded (XXE, billion laughs).
    #[error("declares a DTD (`<!DOCTYPE …>` at byte {0}), which a Word document never has; refused, since its entities could read files or expand without bound")]
    Dtd(u64),
    #[error("uses the undefined entity `&{name};` at byte {at}")]
    UndefinedEntity { name: String, at: u64 },
    #[error("ends with {0} element(s) still open: the file is truncated")]
    Unclosed(usize),
}

/// Reads `word/document.xml` into blocks. `picture(relationship id, alt text)` is asked at each
/// picture, in reading order; the paragraph it returns goes after the paragraph the picture is in.
pub(super) fn parse_document(
    xml: &str,
    styles: &Styles,
    picture: &mut dyn FnMut(&str, Option<&str>) -> Option<String>,
) -> Result<Vec<Block>, DocumentError> {
    let mut reader = Reader::from_str(xml);
    let mut blocks: Vec<Block> = Vec::new();
    let mut tags: Vec<Tag> = Vec::new();
    let mut paras: Vec<Para> = Vec::new();
    let mut tables: Vec<TableBuilder> = Vec::new();
    // Blocks of the table cells being read, innermost last.
    let mut cells: Vec<Vec<Block>> = Vec::new();
    let mut skip_depth = 0usize;
    let mut table_count = 0u32;
    // The alt text of the drawing (or VML shape) being read.
    let mut alt: Option<String> = None;

    loop {
        let at = reader.buffer_position();
        let event = reader.read_event()?;
        match &event {
            Event::DocType(_) => return Err(DocumentError::Dtd(at)),
            Event::GeneralRef(r) if !is_known_ref(r) => {
                let name = r.decode().map(|n| n.into_owned()).unwrap_or_default();
                return Err(DocumentError::UndefinedEntity { name, at });
            }
            Event::Eof if skip_depth + tags.len() > 0 => return Err(DocumentError::Unclosed(skip_depth + tags.len())),
            _ => {}
        }
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
                        if let Some(mut p) = paras.pop() {
                            let target = cells.last_mut().unwrap_or(&mut blocks);
                            let pictures = std::mem::take(&mut p.pictures);
                            finish_paragraph(p, styles, target);
                            target.extend(pictures.into_iter().map(Block::Para));
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
            (b"drawing" | b"pict" | b"object", _) => {
                alt = None;
                Tag::Other
            }
            // The drawing's alt text (`wp:docPr`), then the picture's own (`pic:cNvPr`) when it has one.
            (b"docPr" | b"cNvPr", _) => {
                if let Some(text) = alt_text(&e, b"descr").or_else(|| alt_text(&e, b"title")) {
                    alt = Some(text);
                }
                Tag::Other
            }
            (b"shape", _) => {
                if let Some(text) = alt_text(&e, b"alt") {
                    alt = Some(text);
                }
                Tag::Other
            }
            (b"blip" | b"imagedata", _) => {
                let id = if name == b"blip" { attr(&e, b"embed") } else { attr(&e, b"id") };
                let hidden = paras.last().is_some_and(|p| p.run_hidden);
                if let Some(id) = id.filter(|id| !id.trim().is_empty() && !hidden) {
                    let alt = if name == b"imagedata" { alt_text(&e, b"title").or(alt.clone()) } else { alt.clone() };
                    if let Some(text) = picture(id.trim(), alt.as_deref()) {
                        match paras.last_mut() {
                            Some(p) => p.pictures.push(text),
                            None => cells.last_mut().unwrap_or(&mut blocks).push(Block::Para(text)),
                        }
                    }
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

/// An attribute that says something.
fn alt_text(e: &quick_xml::events::BytesStart<'_>, name: &[u8]) -> Option<String> {
    attr(e, name).filter(|v| !v.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;

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
            "| Plan | Price |\n|---|---|\n| Basic | 10 元 |\n| Pro | 30 元 |\n\nBetween.\n\n\
             |  |  |\n|---|---|\n| Name | Ada |\n| Age | 36 |\n\n\
             | Region | Month | Sales |\n|---|---|---|\n| North | Jan | 5 |\n| North | Feb | 7 |"
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
}
