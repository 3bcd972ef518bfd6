//! DOCX text extraction: `word/document.xml` rendered as Markdown.
//!
//! Headings (found through `word/styles.xml`: outline levels, `heading N` names and ids, localized
//! names) become `#` lines, numbered/bulleted paragraphs become `- ` items indented by level, tables
//! become one line per row (see [`TableBuilder`](super::markdown::TableBuilder)). Deleted
//! (tracked-change) text, hidden text, field codes and table-of-contents entries are left out.
//!
//! The archive is never trusted: each member is inflated through a byte limit and members whose
//! declared compression ratio is absurd are refused before inflating ([`ExtractError::ZipBomb`]).
//!
//! This module opens the package and wires the parts together: [`archive`] reads members within
//! the limits, [`styles`] says what each paragraph style means, [`document`] reads
//! `word/document.xml` into blocks and [`paragraphs`] decides what each paragraph becomes. The
//! Markdown block model and table renderer are shared with the HTML extractor, in
//! [`super::markdown`].
//!
//! Pictures ([`extract_docx_with_pictures`]): [`pictures`] finds the archive member each picture
//! of the document names; the document is read once to find them, they are read together (see
//! [`super::embedded`]), and it is read again with their text at their places.

mod archive;
mod document;
#[cfg(test)]
pub(crate) mod fixtures;
mod paragraphs;
mod pictures;
mod styles;

use std::io::Cursor;

use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::Reader;

use super::embedded::Pictures;
use super::markdown::{clean_inline, normalize_text, render_blocks, Block};
use super::{ExtractError, ExtractLimits, Extracted};
use archive::{read_member, xml_text};
use document::parse_document;
use styles::Styles;

const FORMAT: &str = "DOCX";

/// The text of a DOCX file as Markdown; its pictures are left out.
pub fn extract_docx(bytes: &[u8], limits: &ExtractLimits) -> Result<Extracted, ExtractError> {
    extract_docx_with_pictures(bytes, limits, &mut Pictures::none())
}

/// The text of a DOCX file as Markdown, with the text of its pictures, read by `pictures`, at
/// their places. A picture that cannot be read is a warning in `pictures`, never an error.
pub fn extract_docx_with_pictures(
    bytes: &[u8],
    limits: &ExtractLimits,
    pictures: &mut Pictures<'_>,
) -> Result<Extracted, ExtractError> {
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

    let parse = |picture: &mut dyn FnMut(&str, Option<&str>) -> Option<String>| {
        parse_document(&document, &styles, picture).map_err(|e| corrupt(format!("{document_name} {e}")))
    };
    let rels = if pictures.active() {
        // Damaged relationships leave the pictures unnamed: each is a warning, the text is read.
        let name = pictures::rels_name(&document_name);
        let xml = read_member(&mut archive, &name, limits).ok().flatten();
        let xml = xml.and_then(|xml| xml_text(&name, &xml).ok()).unwrap_or_default();
        pictures::relationships(&xml, &document_name)
    } else {
        Default::default()
    };
    let mut blocks = parse(&mut |id, alt| {
        pictures::note(pictures, &rels, id, alt);
        None
    })?;
    if pictures.any_found() {
        let picture_limits =
            ExtractLimits { max_inflated_bytes: limits.max_inflated_bytes.min(pictures.limit_bytes()), ..*limits };
        let setting =
            if pictures.limit_bytes() <= limits.max_inflated_bytes { "max_file_mb" } else { "max_inflated_mb" };
        let archive = &archive;
        let mut texts = pictures.read_all(|member| {
            match read_member(&mut archive.clone(), member, &picture_limits) {
                Ok(Some(bytes)) => Ok(bytes),
                Ok(None) => Err("it is not in the archive".to_string()),
                // Not compressed suspiciously: simply large.
                Err(ExtractError::ZipBomb { ratio, limit_mb, .. }) if ratio <= limits.max_ratio => Err(format!(
                    "it is larger than the limit of {limit_mb} MB for a picture (`[index] {setting}` raises it)"
                )),
                Err(e) => Err(e.to_string()),
            }
        });
        if !texts.is_empty() {
            blocks = parse(&mut |id, _| match rels.get(id) {
                Some(pictures::Target::Member(member)) => texts.remove(member),
                _ => None,
            })?;
        }
    }
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

fn first_heading(blocks: &[Block]) -> Option<String> {
    blocks.iter().find_map(|b| match b {
        Block::Heading(_, text) => Some(text.clone()),
        _ => None,
    })
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

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;

    #[test]
    fn title_from_core_properties_else_first_heading() {
        let body = [p("Heading1", "Chapter"), plain("x")].concat();
        assert_eq!(extract(&docx(&body, Some(WORD_STYLES), Some("The  Guide"))).title.as_deref(), Some("The Guide"));
        assert_eq!(extract(&docx(&body, Some(WORD_STYLES), Some(" "))).title.as_deref(), Some("Chapter"));
        assert_eq!(extract(&docx(&plain("x"), None, None)).title, None);
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
    fn hostile_xml_is_refused_with_its_reason() {
        let doc = |xml: &str| zip_of(&[("word/document.xml", xml.as_bytes())]);
        let reason = |xml: &str| extract_docx(&doc(xml), &ExtractLimits::default()).unwrap_err().to_string();
        let body = format!("<w:document {W}><w:body>{}</w:body></w:document>", plain("&e;"));
        let xxe =
            format!(r#"<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY e SYSTEM "file:///etc/passwd">]>{body}"#);
        let err = reason(&xxe);
        assert!(err.contains("declares a DTD") && err.contains("byte 21"), "{err}");
        let laughs =
            format!(r#"<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY e "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>{body}"#);
        assert!(reason(&laughs).contains("declares a DTD"), "{}", reason(&laughs));
        // Without a DTD no entity can be defined: an unknown one is an error, not an empty run.
        let err = reason(&body);
        assert!(err.contains("undefined entity `&e;`"), "{err}");
        // A document cut short says so instead of yielding nothing.
        let err = reason(&format!("<w:document {W}><w:body>{}<w:p><w:r><w:t>cut", plain("kept")));
        assert!(err.contains("still open") && err.contains("truncated"), "{err}");
        // The predefined entities and character references still read.
        assert_eq!(extract(&docx(&plain("a &amp; b &#x4E2D;"), None, None)).text, "a & b 中");
    }

    #[test]
    fn main_part_found_through_relationships() {
        let document = format!(r#"<w:document {W}><w:body>{}</w:body></w:document>"#, plain("Moved"));
        let rels = br#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="/word/document2.xml"/></Relationships>"#;
        let bytes = zip_of(&[("_rels/.rels", rels), ("word/document2.xml", document.as_bytes())]);
        assert_eq!(extract(&bytes).text, "Moved");
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
                 | 指示灯 LED | 含义 Meaning |\n|---|---|\n\
                 | 白色常亮 Solid white | 正常联网 Online |\n\
                 | 琥珀色常亮 Solid amber | 没有互联网连接 No internet |\n\
                 | 琥珀色闪烁 Blinking amber | 正在恢复出厂设置 Factory reset in progress |\n\n\
                 # 常见问题 Troubleshooting\n\n## 恢复出厂设置 Factory reset\n\n用回形针按住背面的 Reset 孔 10 秒",
                "\n## 网速慢 Slow Wi-Fi\n\n把路由器放在房屋中央",
            ] {
                assert!(text.contains(expected), "{name}: {expected:?} not in\n{text}");
            }
            assert!(text.ends_with("to tell a slow internet connection from a Wi-Fi problem."), "{name}:\n{text}");
        }
    }
}
