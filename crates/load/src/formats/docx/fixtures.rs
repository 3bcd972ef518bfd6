//! Test helpers shared by the DOCX modules' tests: small DOCX files built in memory, and the
//! committed test documents.

use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;

use super::extract_docx;
use crate::formats::{ExtractLimits, Extracted};

pub(crate) const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;

pub(crate) fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in members {
        writer.start_file(*name, options).unwrap();
        writer.write_all(data).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

pub(crate) fn docx(body: &str, styles: Option<&str>, core: Option<&str>) -> Vec<u8> {
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

pub(crate) fn p(style: &str, text: &str) -> String {
    format!(r#"<w:p><w:pPr><w:pStyle w:val="{style}"/></w:pPr><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>"#)
}

pub(crate) fn plain(text: &str) -> String {
    format!(r#"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"#)
}

pub(crate) fn li(level: u8, text: &str) -> String {
    format!(
        r#"<w:p><w:pPr><w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="3"/></w:numPr></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"#
    )
}

pub(crate) fn tc(text: &str) -> String {
    format!("<w:tc><w:tcPr/>{}</w:tc>", plain(text))
}

pub(crate) fn extract(bytes: &[u8]) -> Extracted {
    extract_docx(bytes, &ExtractLimits::default()).unwrap()
}

// Word: ids `Heading1`, names `heading 1`, outline levels in the styles.
pub(crate) const WORD_STYLES: &str = r#"
    <w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>
    <w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>
    <w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>
    <w:style w:type="paragraph" w:styleId="TOC1"><w:name w:val="toc 1"/></w:style>
    <w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/><w:pPr><w:numPr><w:numId w:val="7"/></w:numPr></w:pPr></w:style>
    <w:style w:type="character" w:styleId="Heading1Char"><w:name w:val="Heading 1 Char"/></w:style>"#;

pub(crate) fn testdata(name: &str) -> Vec<u8> {
    let path = format!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/documents/{}"), name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e} (made by scripts/make-test-documents)"))
}

pub(crate) const R: &str = r#"xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships""#;

/// A DrawingML picture (as Word writes it) of relationship `rid`, with `descr` as its alt text.
pub(crate) fn drawing_xml(rid: &str, descr: &str) -> String {
    format!(
        r#"<w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><wp:extent cx="952500" cy="952500"/><wp:docPr id="1" name="Picture 1" descr="{descr}"/><a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="0" name="Picture 1"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip {R} r:embed="{rid}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing>"#
    )
}

/// A run holding a DrawingML picture.
pub(crate) fn drawing(rid: &str, descr: &str) -> String {
    format!("<w:r>{}</w:r>", drawing_xml(rid, descr))
}

/// A VML picture (Word 2003, and the fallback copy of newer files), `title` its alt text.
pub(crate) fn vml_xml(rid: &str, title: &str) -> String {
    format!(
        r#"<w:pict><v:shape xmlns:v="urn:schemas-microsoft-com:vml" style="width:75pt;height:75pt"><v:imagedata {R} xmlns:o="urn:schemas-microsoft-com:office:office" r:id="{rid}" o:title="{title}"/></v:shape></w:pict>"#
    )
}

/// A run holding a VML picture.
pub(crate) fn vml(rid: &str, title: &str) -> String {
    format!("<w:r>{}</w:r>", vml_xml(rid, title))
}

/// `word/_rels/document.xml.rels` with these (id, target) image relationships.
pub(crate) fn rels_xml(rels: &[(&str, &str)]) -> String {
    let rels: String = rels
        .iter()
        .map(|(id, target)| {
            format!(
                r#"<Relationship Id="{id}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="{target}"/>"#
            )
        })
        .collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}</Relationships>"#
    )
}

/// A DOCX whose `body` shows pictures: `rels` names them, `media` holds their bytes.
pub(crate) fn docx_with_media(body: &str, rels: &[(&str, &str)], media: &[(&str, &[u8])]) -> Vec<u8> {
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {W} {R}><w:body>{body}</w:body></w:document>"#
    );
    let rels = rels_xml(rels);
    let mut members: Vec<(&str, &[u8])> =
        vec![("word/document.xml", document.as_bytes()), ("word/_rels/document.xml.rels", rels.as_bytes())];
    members.extend_from_slice(media);
    zip_of(&members)
}
